"""Landlock through ctypes: the ABI probe, building a rule set, and restricting a process."""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import sys
from typing import Any

# The syscall numbers are the same on every architecture Linux added them to at once (5.13).
SYS_CREATE_RULESET, SYS_ADD_RULE, SYS_RESTRICT_SELF = 444, 445, 446
PR_SET_NO_NEW_PRIVS = 38
CREATE_RULESET_VERSION = 1 << 0
RULE_PATH_BENEATH = 1

# File system rights (uapi/linux/landlock.h), with the ABI that introduced them.
FS_WRITE_FILE = 1 << 1
FS_REMOVE_DIR = 1 << 4
FS_REMOVE_FILE = 1 << 5
FS_MAKE_CHAR = 1 << 6
FS_MAKE_DIR = 1 << 7
FS_MAKE_REG = 1 << 8
FS_MAKE_SOCK = 1 << 9
FS_MAKE_FIFO = 1 << 10
FS_MAKE_BLOCK = 1 << 11
FS_MAKE_SYM = 1 << 12
FS_REFER = 1 << 13      # ABI 2
FS_TRUNCATE = 1 << 14   # ABI 3
FS_IOCTL_DEV = 1 << 15  # ABI 5
NET_BIND_TCP = 1 << 0     # ABI 4
NET_CONNECT_TCP = 1 << 1  # ABI 4
SCOPE_ABSTRACT_UNIX = 1 << 0  # ABI 6
SCOPE_SIGNAL = 1 << 1         # ABI 6

# Only writing is handled, so reading and executing stay open everywhere.
_WRITE_V1 = (FS_WRITE_FILE | FS_REMOVE_DIR | FS_REMOVE_FILE | FS_MAKE_CHAR | FS_MAKE_DIR
             | FS_MAKE_REG | FS_MAKE_SOCK | FS_MAKE_FIFO | FS_MAKE_BLOCK | FS_MAKE_SYM)
# What a single file (or device) is granted: writing, never ioctl, so the terminal takes output
# but no TIOCSTI (typing into the person's shell).
_FILE_RIGHTS = FS_WRITE_FILE | FS_TRUNCATE

FORCE_ABI_ENV = "INTENTD_TEST_LANDLOCK_ABI"  # for tests only: pretend the kernel has this ABI


class LandlockError(OSError):
    """A Landlock syscall failed."""


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1  # __attribute__((packed)) in the kernel header
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


_libc: ctypes.CDLL | None = None


def _syscall() -> Any:
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    func = _libc.syscall
    func.restype = ctypes.c_long
    return func


def _check(result: int, what: str) -> int:
    if result < 0:
        code = ctypes.get_errno()
        raise LandlockError(code, f"{what}: {os.strerror(code)}")
    return result


def kernel_abi() -> int:
    """The Landlock ABI version the kernel offers; 0 when there is none (or not Linux)."""
    forced = os.environ.get(FORCE_ABI_ENV)
    if forced is not None:
        return int(forced) if forced.isdigit() else 0
    if not sys.platform.startswith("linux"):
        return 0
    try:
        version = _syscall()(SYS_CREATE_RULESET, None, ctypes.c_size_t(0),
                             ctypes.c_uint32(CREATE_RULESET_VERSION))
    except (OSError, AttributeError):
        return 0
    return max(int(version), 0)


def unavailable_reason() -> str:
    """Why kernel_abi() is 0, in words for a person."""
    if os.environ.get(FORCE_ABI_ENV) is not None:
        return f"Landlock disabled by {FORCE_ABI_ENV} (a test setting)"
    if not sys.platform.startswith("linux"):
        return f"Landlock is a Linux feature; this is {platform.system() or sys.platform}"
    try:
        _syscall()(SYS_CREATE_RULESET, None, ctypes.c_size_t(0),
                   ctypes.c_uint32(CREATE_RULESET_VERSION))
        code = ctypes.get_errno()
    except OSError as exc:
        code = exc.errno or 0
    if code == errno.EOPNOTSUPP:
        return "Landlock is built into this kernel but not enabled (add landlock to the lsm= boot option)"
    if code == errno.ENOSYS:
        return (f"the Landlock system calls are missing (kernel {platform.release()} before 5.13, "
                "or blocked by a seccomp filter, as some containers do)")
    return f"Landlock did not answer on this kernel ({platform.release()}): {os.strerror(code)}"


def dir_rights(abi: int) -> int:
    """Every write right the ABI knows: what a writable folder is granted, and what is handled."""
    rights = _WRITE_V1
    if abi >= 2:
        rights |= FS_REFER
    if abi >= 3:
        rights |= FS_TRUNCATE
    if abi >= 5:
        rights |= FS_IOCTL_DEV
    return rights


def file_rights(abi: int) -> int:
    return dir_rights(abi) & _FILE_RIGHTS


class Ruleset:
    """A Landlock rule set under construction; its fd is what restrict_self applies."""

    def __init__(self, abi: int, *, deny_tcp: bool) -> None:
        self.abi = abi
        attr = _RulesetAttr(dir_rights(abi), 0, 0)
        size = 8
        if abi >= 4 and deny_tcp:
            attr.handled_access_net = NET_BIND_TCP | NET_CONNECT_TCP
            size = 16
        if abi >= 6:  # signals to processes outside the sandbox (the daemon, the app) are refused
            attr.scoped = SCOPE_SIGNAL | (SCOPE_ABSTRACT_UNIX if deny_tcp else 0)
            size = 24
        self.network_enforced = bool(attr.handled_access_net)
        self.fd = _check(_syscall()(SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size),
                                    ctypes.c_uint32(0)), "landlock_create_ruleset")

    def allow_writes(self, fd: int, is_dir: bool) -> None:
        """Grant writing beneath the folder (or to the file) that fd, an O_PATH fd, names."""
        rights = dir_rights(self.abi) if is_dir else file_rights(self.abi)
        attr = _PathBeneathAttr(rights, fd)
        _check(_syscall()(SYS_ADD_RULE, ctypes.c_int(self.fd), ctypes.c_int(RULE_PATH_BENEATH),
                          ctypes.byref(attr), ctypes.c_uint32(0)), "landlock_add_rule")

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def restrict_self(ruleset_fd: int) -> None:
    """Confine the calling process (and all it starts) to the rule set; for the child, after fork.

    No new privileges is what lets an unprivileged process do this, and it stops a setuid
    program from running with more rights than its confined parent."""
    libc = _libc if _libc is not None else ctypes.CDLL(None, use_errno=True)
    _check(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(PR_SET_NO_NEW_PRIVS)")
    _check(_syscall()(SYS_RESTRICT_SELF, ctypes.c_int(ruleset_fd), ctypes.c_uint32(0)),
           "landlock_restrict_self")
