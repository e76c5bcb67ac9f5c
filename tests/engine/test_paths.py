"""Path resolution agrees with realpath on every mix of `..`, `.`, symlinks and missing parts,
or refuses a path that `..` after a symlink makes read two ways."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from intentd.daemon.utils.paths import PathRefused, resolve


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> str:
    base = os.path.realpath(tmp_path_factory.mktemp("tree"))
    os.makedirs(f"{base}/ws/src/a")
    os.makedirs(f"{base}/out")
    os.symlink(f"{base}/out", f"{base}/ws/src/out")
    os.symlink("../..", f"{base}/ws/src/a/up")
    os.symlink("a", f"{base}/ws/src/rel")
    os.symlink("loop2", f"{base}/ws/loop1")
    os.symlink("loop1", f"{base}/ws/loop2")
    return f"{base}/ws"


PARTS = st.sampled_from(["src", "a", "out", "up", "rel", "..", ".", "", "x.py", "loop1", "ws"])


@settings(max_examples=300, deadline=None)
@given(parts=st.lists(PARTS, min_size=1, max_size=7))
def test_resolution_matches_realpath(tree: str, parts: list[str]) -> None:
    raw = "/".join(parts)
    if not raw.strip():
        return
    kernel = os.path.realpath(os.path.join(tree, raw))
    if ".." in parts and kernel != os.path.realpath(os.path.normpath(os.path.join(tree, raw))):
        with pytest.raises(PathRefused, match="'..' after a symlink"):
            resolve(tree, raw)  # read two ways: by the kernel, and by `..` dropped as text
        return
    resolved = resolve(tree, raw)
    assert resolved.absolute == kernel
    inside = resolved.absolute == tree or resolved.absolute.startswith(tree + "/")
    assert resolved.inside == inside


def test_escapes_through_symlinks_are_external(tree: str) -> None:
    assert resolve(tree, "src/out/secret").relative is None
    with pytest.raises(PathRefused):  # the kernel: outside; `..` dropped as text: src/a/out/x
        resolve(tree, "src/a/up/../out/x")
    assert resolve(tree, "src/rel/file").relative == "src/a/file"


@pytest.mark.parametrize("raw", ["", "  ", "a\x00b", "x" * 5000])
def test_unusable_paths_are_refused(tree: str, raw: str) -> None:
    with pytest.raises(PathRefused):
        resolve(tree, raw)


def test_relative_to_a_cwd_inside(tree: str) -> None:
    assert resolve(tree, "../a/x", cwd=str(Path(tree) / "src" / "a")).relative == "src/a/x"
