"""A checkpoint taken while one of intentd's own writes is under way leaves its temporary file
out: the file is renamed over its target a moment later, and would otherwise show in every diff
and restore since. A file an agent gives the same kind of name, or the very same name in another
folder, is recorded as any other."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from intentd.daemon.checkpoints import CheckpointStore
from intentd.daemon.tools.fileio import atomic_write
from intentd.daemon.utils.inflight import is_ours, temporary_name


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "app.py").write_text("print('hi')\n")
    return ws


@pytest.mark.parametrize("watch", [False, True])
def test_a_write_under_way_is_left_out_of_checkpoints(root: Path, tmp_path: Path, watch: bool) -> None:
    agents_own = root / "src" / ".intentd-0123456789abcdef.tmp"  # not a write of intentd's
    (root / "docs").mkdir()
    with CheckpointStore(root, tmp_path / "state", watch=watch) as store:
        with temporary_name(str(root / "src")) as name:
            (root / "src" / name).write_text("half of a write\n")
            baseline = store.create(None, label="baseline")
            agents_own.write_text("the agent's\n")
            (root / "docs" / name).write_text("the agent's, named as the write's\n")
            (root / "src" / "app.py").write_text("changed\n")
            command = store.create(None, label="before command")
            (root / "src" / name).unlink()
        assert not is_ours(str(root / "src" / name))
        assert f"src/{name}" not in baseline.files and "src/app.py" in baseline.files
        assert set(command.files) == {"src/app.py", "src/.intentd-0123456789abcdef.tmp",
                                      f"docs/{name}"}
        assert store.create(None, label="after").files == ()


def test_the_daemons_own_atomic_writes_use_a_registered_name(root: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[bool] = []
    real_replace = os.replace

    def replace(src: str, dst: str) -> None:
        seen.append(is_ours(os.path.abspath(src)))  # registered while the file exists
        real_replace(src, dst)

    monkeypatch.setattr("intentd.daemon.tools.fileio.os.replace", replace)
    atomic_write(str(root / "src" / "app.py"), "new\n")
    assert seen == [True] and (root / "src" / "app.py").read_text() == "new\n"
    assert [p.name for p in (root / "src").iterdir()] == ["app.py"]
