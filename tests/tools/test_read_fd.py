"""read_fd: sized by the file, bounded by the limit, and reading on past a size that grew."""

from __future__ import annotations

import os
from pathlib import Path

from intentd.daemon.tools.fileio import sha256_file
from intentd.daemon.utils.reading import read_fd, read_regular


def test_reads_to_the_end_and_never_past_the_limit(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"abc\n" * 100_000)  # 400 KB: more than one read's buffer
    fd = os.open(path, os.O_RDONLY)
    try:
        assert read_fd(fd, 10, 1 << 30) == path.read_bytes()  # a stale, smaller size: read on
        os.lseek(fd, 0, os.SEEK_SET)
        assert read_fd(fd, os.fstat(fd).st_size, 7) == b"abc\nabc"
        os.lseek(fd, 0, os.SEEK_SET)
        assert read_fd(fd, 0, 0) == b""
    finally:
        os.close(fd)
    assert read_regular(path, 5) == b"abc\na"
    assert read_regular(tmp_path / "f") == path.read_bytes()


def test_sha256_file_of_a_file_a_folder_and_a_fifo(tmp_path: Path) -> None:
    import hashlib

    (tmp_path / "f").write_bytes(b"x" * 3_000_000)
    assert sha256_file(str(tmp_path / "f")) == hashlib.sha256(b"x" * 3_000_000).hexdigest()
    os.mkfifo(tmp_path / "pipe")
    assert sha256_file(str(tmp_path / "pipe")) is None
    assert sha256_file(str(tmp_path)) is None
    assert sha256_file(str(tmp_path / "missing")) is None
