"""Doctor checks of a workspace's `.orchestration/` files and checkpoint store, with the daemon's
own loaders."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from intentd.daemon.setup.doctor.result import CheckResult, fail, ok, private_problem, skip, warn

DEFAULT_STATUSES = ("IN_PROGRESS",)


def check_workspace(root: Path) -> list[CheckResult]:
    """policy.yaml first: its `selectable_statuses` decide which intents count as selectable."""
    if not root.is_dir():
        return [fail("workspace", f"{root} is not a folder",
                     "pass an existing folder to --workspace")]
    try:
        # Imported here so that a broken engine module fails these checks, not the whole doctor.
        from intentd.daemon.engine.intents import INTENTS_FILE
        from intentd.daemon.policy.config import POLICY_FILE
    except ImportError as exc:
        return [fail("workspace", f"intentd's policy code does not import: {exc}",
                     "reinstall intentd")]
    policy_result, statuses = _check_policy(root / POLICY_FILE)
    return [_check_intents(root, root / INTENTS_FILE, statuses), policy_result,
            _check_ignore(root)]


def check_checkpoints(root: Path, home: Path | None = None) -> CheckResult:
    """The workspace's checkpoint store, if it has one: private, writable, and readable."""
    from intentd.daemon.checkpoints import CheckpointError, CheckpointStore
    from intentd.daemon.utils.statedir import checkpoints_dir

    if not root.is_dir():
        return skip("checkpoints", f"{root} is not a folder")
    root = root.resolve()
    store = checkpoints_dir(root, home)
    try:
        st = store.stat()
    except FileNotFoundError:
        return ok("checkpoints", "none yet: the first tool call that changes something makes them")
    except OSError as exc:
        return fail("checkpoints", f"{store}: {exc.strerror}", f"check the permissions of {store.parent}")
    if not stat.S_ISDIR(st.st_mode):
        return fail("checkpoints", f"{store} is not a folder", f"move it aside: `mv {store} {store}.old`")
    problem = private_problem(store, st, 0o700)
    if problem:
        return fail("checkpoints", problem[0] + " (it holds copies of your files)", problem[1])
    if not os.access(store, os.R_OK | os.W_OK | os.X_OK):
        return fail("checkpoints", f"{store} is not writable", f"`chmod -R u+rwX {store}`")
    aside = (f"move it aside (`mv {store} {store}.broken`): the next checkpoint starts a new "
             "store, and the old one stays readable with git")
    try:
        with CheckpointStore(root, store, watch=False) as opened:
            count = len(opened.list())
    except CheckpointError as exc:
        return fail("checkpoints", str(exc), aside)
    except (OSError, ValueError) as exc:
        return fail("checkpoints", f"{store} cannot be opened: {exc}", aside)
    return ok("checkpoints", f"{store}: {count} checkpoint(s)")


def check_tree_listing() -> CheckResult:
    """How a full scan lists the tree (when the watcher cannot watch a folder, or is off): the
    native lister, GNU find, or the Python walk, slowest on big trees."""
    from intentd.daemon.checkpoints import listing

    name = "full-scan listing"
    kind = listing.lister()
    if kind == "native":
        return ok(name, "listed in C by intentd's native lister")
    rebuild = ("reinstall intentd where a C compiler and Python's headers are installed "
               "(`apt install gcc python3-dev`), so that its native lister is built")
    if kind == "find":
        return warn(name, "listed by GNU find: the native lister was not built (full scans take "
                          "about half as long again)", rebuild)
    return warn(name, "walked in Python: neither the native lister nor GNU find is here (full "
                      "scans of big trees are several times slower)",
                f"{rebuild}, or install GNU findutils")


WATCH_FIX = ("raise the limit: `sudo sysctl fs.inotify.max_user_watches=524288`, and put that line in "
             "/etc/sysctl.d/90-inotify.conf to keep it; until then the folders not watched are "
             "scanned at every command checkpoint (correct, but slower)")


def check_watch_coverage(root: Path) -> CheckResult:
    """Whether the checkpoint watcher can watch every folder of the workspace: its folder count
    against the inotify watches this user has left (the daemon's own count as free)."""
    name = "checkpoint watcher"
    if not root.is_dir():
        return skip(name, f"{root} is not a folder")
    limit = _watch_limit()
    if limit is None:
        return skip(name, "no inotify here: the watcher has no per-folder limit")
    folders = _count_folders(root)
    used, ours = _watches_in_use()
    free = limit - used + ours
    detail = (f"{folders:,} folders to watch; {free:,} of {limit:,} inotify watches free for this "
              f"user ({used - ours:,} held by other programs)")
    if folders > free:
        return warn(name, f"{detail}: {folders - free:,} folder(s) would be scanned, not watched",
                    WATCH_FIX)
    return ok(name, detail)


def _watch_limit() -> int | None:
    for path in ("/proc/sys/user/max_inotify_watches", "/proc/sys/fs/inotify/max_user_watches"):
        try:
            return int(Path(path).read_text())
        except (OSError, ValueError):
            continue
    return None


def _count_folders(root: Path) -> int:
    """The folders the watcher watches: all but .git folders (and what is under them)."""
    count = 1
    stack = [str(root)]
    while stack:
        try:
            with os.scandir(stack.pop()) as entries:
                for entry in entries:
                    if entry.name != ".git" and entry.is_dir(follow_symlinks=False):
                        count += 1
                        stack.append(entry.path)
        except OSError:
            continue
    return count


def _watches_in_use() -> tuple[int, int]:
    """inotify watches held by this user's processes, and how many of them intentd's daemon holds."""
    total = ours = 0
    uid = os.getuid()
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            if os.stat(f"/proc/{pid}").st_uid != uid:
                continue
            count = _process_watches(pid)
            if count and b"intentd" in Path(f"/proc/{pid}/cmdline").read_bytes():
                ours += count
            total += count
        except OSError:  # gone, or not ours to read
            continue
    return total, ours


def _process_watches(pid: str) -> int:
    count = 0
    folder = f"/proc/{pid}/fdinfo"
    for fd in os.listdir(folder):
        try:
            with open(f"{folder}/{fd}", "rb") as handle:
                count += handle.read().count(b"inotify wd:")
        except OSError:
            continue
    return count


def _check_policy(path: Path) -> tuple[CheckResult, tuple[str, ...]]:
    from intentd.daemon.policy.config import load_policy
    from intentd.daemon.utils.yamlfile import ConfigError

    if not path.exists():
        return ok("policy file", f"no {path}: the defaults apply"), DEFAULT_STATUSES
    try:
        policy = load_policy(path)
    except ConfigError as exc:
        return fail("policy file", str(exc),
                    "fix that line; until then the safest policy is in force (the commented "
                    "defaults: `intentd init --print policy.yaml`)"), DEFAULT_STATUSES
    return ok("policy file", f"{path} is valid"), tuple(policy.selectable_statuses)


def _check_intents(root: Path, path: Path, statuses: tuple[str, ...]) -> CheckResult:
    from intentd.daemon.engine.intents import load_intents
    from intentd.daemon.utils.yamlfile import ConfigError

    if not path.exists():
        return fail("intents file", f"no {path}: every tool that changes something is refused",
                    f"`intentd init --workspace {root}` writes a commented one to edit")
    try:
        intents = load_intents(path)
    except ConfigError as exc:  # every problem of the file, not only the first
        return fail("intents file", "; ".join(str(exc).splitlines()),
                    "fix those lines; until then the last good intents (if any) stay in force")
    selectable = intents.selectable(statuses)
    if intents.warnings:
        return warn("intents file", f"{path} loads, with warnings: " + "; ".join(intents.warnings),
                    "check the keys named (a misspelt key is ignored)")
    if not selectable:
        return warn("intents file",
                    f"{path} lists {len(intents.intents)} intent(s), none selectable "
                    f"(status {' or '.join(statuses)}): agents can only read",
                    "set `status: IN_PROGRESS` on the intent an agent should work on")
    ids = ", ".join(intent.id for intent in selectable)
    return ok("intents file", f"{path}: {len(intents.intents)} intent(s); selectable: {ids}")


def _check_ignore(root: Path) -> CheckResult:
    from intentd.daemon.policy.ignore import load_ignore_rules

    try:
        rules = load_ignore_rules(root)
    except OSError as exc:
        return fail("ignore file", f"cannot read an ignore file: {exc}",
                    "make it readable (`chmod u+r`), or remove it")
    if not rules.sources:
        return ok("ignore file", "none: tools may read every file of the workspace "
                                 "(`intentd init` writes one that hides common secrets)")
    count = sum(1 for line in rules.patterns if line.strip() and not line.lstrip().startswith("#"))
    return ok("ignore file", f"{count} pattern(s) from {', '.join(rules.sources)}")
