"""The HTTP hook's secret: a token in a 0600 file of the user's own, and the port it is sent to.

Claude Code's HTTP hook sends `Authorization: Bearer $INTENTD_HOOK_TOKEN`; the person exports
that variable from this file (`intentd hook token` prints it). The file keeps the token from
other local users. It does not keep it from the agent, which runs as the same user: that is
why the HTTP hook carries only agent-side methods (docs/agents.md).
"""

from __future__ import annotations

import hmac
import os
import secrets
import stat
from pathlib import Path

from intentd.daemon.utils.statedir import ensure_private, state_home

TOKEN_ENV = "INTENTD_HOOK_TOKEN"   # the variable named in the hook's allowedEnvVars
TOKEN_BYTES = 32
PORT_BASE = 47000
PORT_SPREAD = 997  # a prime: uids 0, 1000, 1001, … land on different ports
MAX_TOKEN_FILE = 4096


class TokenError(Exception):
    """The token file is not safe to use (another owner, readable by others, not a file)."""


def hook_dir(home: Path | None = None) -> Path:
    return (home or state_home()) / "http-hook"


def token_path(home: Path | None = None) -> Path:
    return hook_dir(home) / "token"


def default_port(uid: int | None = None) -> int:
    """A port of this user's own: two users' daemons on one machine do not collide."""
    return PORT_BASE + (os.getuid() if uid is None else uid) % PORT_SPREAD


def load_or_create(home: Path | None = None) -> str:
    """The token, made on first use: born 0600 (O_EXCL, no window where others may read it)."""
    path = token_path(home)
    ensure_private(path.parent, home)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError:
        return read_token(path)
    token = secrets.token_urlsafe(TOKEN_BYTES)
    try:
        os.write(fd, (token + "\n").encode())
        os.fsync(fd)
    finally:
        os.close(fd)
    return token


def read_token(path: Path | None = None) -> str:
    """The token from its file, refused unless the file is a regular file of ours, 0600."""
    path = path or token_path()
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        raise TokenError(f"cannot open {path}: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise TokenError(f"{path} is not a regular file")
        if info.st_uid != os.getuid():
            raise TokenError(f"{path} belongs to another user (uid {info.st_uid})")
        if stat.S_IMODE(info.st_mode) & 0o077:
            raise TokenError(f"{path} can be read by others (mode "
                             f"{stat.S_IMODE(info.st_mode):o}); remove it and restart the daemon "
                             "to make a new one")
        raw = os.read(fd, MAX_TOKEN_FILE)
    finally:
        os.close(fd)
    token = raw.decode("ascii", errors="replace").strip()
    if len(token) < 32:
        raise TokenError(f"{path} holds no usable token; remove it and restart the daemon")
    return token


def matches(expected: str, header: str | None) -> bool:
    """`Authorization: Bearer <token>`, compared in constant time."""
    if not header or not header.startswith("Bearer "):
        return False
    offered = header[len("Bearer "):].strip().encode("utf-8", errors="replace")
    return hmac.compare_digest(offered, expected.encode())
