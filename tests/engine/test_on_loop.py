"""Brief work runs on the daemon's event loop only on a few small files: a big one is read and
hashed on a tool thread while the loop serves the other sessions."""

from __future__ import annotations

from pathlib import Path

from intentd.daemon.engine.engine import ON_LOOP_BYTES, ON_LOOP_FILES, small_enough
from intentd.daemon.utils.paths import ResolvedPath, resolve


def paths(root: Path, *names: str) -> tuple[ResolvedPath, ...]:
    return tuple(resolve(str(root), name) for name in names)


def test_a_few_small_or_new_files_are_small_enough(tmp_path: Path) -> None:
    (tmp_path / "small.py").write_text("x = 1\n")
    (tmp_path / "edge.bin").write_bytes(b"\0" * ON_LOOP_BYTES)
    assert small_enough(paths(tmp_path, "small.py", "edge.bin", "not-yet-written.py"))


def test_a_big_file_or_many_files_are_not(tmp_path: Path) -> None:
    (tmp_path / "small.py").write_text("x = 1\n")
    (tmp_path / "big.bin").write_bytes(b"\0" * (ON_LOOP_BYTES + 1))
    assert not small_enough(paths(tmp_path, "small.py", "big.bin"))
    names = [f"f{n}.py" for n in range(ON_LOOP_FILES + 1)]
    for name in names:
        (tmp_path / name).write_text("x = 1\n")
    assert small_enough(paths(tmp_path, *names[:ON_LOOP_FILES]))
    assert not small_enough(paths(tmp_path, *names))


def test_a_file_that_cannot_be_looked_at_is_not(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x\n")
    (tmp_path / "loop").symlink_to("loop")  # stat fails with ELOOP: not known to be small
    assert not small_enough(paths(tmp_path, "file", "loop"))
