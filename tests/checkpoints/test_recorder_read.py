"""The recorder reads a file by its stat size, and still sees all of a file that grew since."""

from __future__ import annotations

import os
from pathlib import Path

from intentd.daemon.checkpoints.recorder import Recorder


def read(path: Path, stat_size: int, cap: int) -> bytes:
    recorder = Recorder(str(path.parent), None, cap)  # type: ignore[arg-type]  # no blobs needed
    fd = os.open(path, os.O_RDONLY)
    try:
        return recorder._read(fd, stat_size)
    finally:
        os.close(fd)


def test_a_file_that_grew_since_its_stat_is_read_whole_up_to_the_cap(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"0123456789" * 10)
    assert read(path, 100, 1000) == b"0123456789" * 10
    assert read(path, 10, 1000) == b"0123456789" * 10  # grew from 10 to 100 bytes
    assert read(path, 0, 1000) == b"0123456789" * 10
    assert read(path, 10, 50) == (b"0123456789" * 10)[:51]  # past the cap: one byte more shows it
    assert read(path, 200, 1000) == b"0123456789" * 10  # shrank
