"""User hooks: scripts that see each call as JSON; a pre-hook may veto, and one that fails vetoes.

Each hook runs in a process group of its own, killed whole when the hook ends or times out: a
check must not leave programs behind, and a child holding the output pipe cannot stall a call.
"""

from __future__ import annotations

import json
import logging
import os
import re
import signal
import subprocess
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from intentd.daemon.policy.config import Hook

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class HookVeto:
    hook: str
    reason: str


def matching(hooks: Sequence[Hook], tool: str) -> list[Hook]:
    return [h for h in hooks if h.matcher is None or re.fullmatch(h.matcher, tool)]


def run_pre_hooks(hooks: Sequence[Hook], payload: dict[str, Any], cwd: str) -> HookVeto | None:
    """The first veto wins. Crashes, garbage output and timeouts veto too: fail closed."""
    for hook in matching(hooks, str(payload["tool"])):
        veto = _run_pre_hook(hook, payload, cwd)
        if veto is not None:
            return veto
    return None


def _run_pre_hook(hook: Hook, payload: dict[str, Any], cwd: str) -> HookVeto | None:
    try:
        out = _run(hook, payload, cwd)
    except subprocess.TimeoutExpired:
        return HookVeto(hook.command, f"pre-hook timed out after {hook.timeout:g} s")
    except OSError as exc:
        return HookVeto(hook.command, f"pre-hook could not start: {exc}")
    if out.returncode != 0:
        return HookVeto(hook.command, f"pre-hook failed with exit code {out.returncode}: "
                                      f"{out.stderr.strip()[:200]}")
    text = out.stdout.strip()
    if not text:
        return None
    try:
        answer = json.loads(text)
    except json.JSONDecodeError:
        return HookVeto(hook.command, f"pre-hook printed something that is not JSON: {text[:100]!r}")
    if not isinstance(answer, dict) or answer.get("decision", "allow") not in ("allow", "deny"):
        return HookVeto(hook.command, f"pre-hook answered {text[:100]!r}; expected "
                                      '{"decision": "allow"|"deny", "reason": ...}')
    if answer.get("decision") == "deny":
        return HookVeto(hook.command, str(answer.get("reason") or "vetoed by a pre-hook"))
    return None


def run_post_hooks(hooks: Sequence[Hook], payload: dict[str, Any], cwd: str) -> list[str]:
    """Post-hooks see the result and cannot undo it; their failures are only reported."""
    problems = []
    for hook in matching(hooks, str(payload["tool"])):
        try:
            out = _run(hook, payload, cwd)
            if out.returncode != 0:
                problems.append(f"post-hook {hook.command!r} exited {out.returncode}")
        except (subprocess.TimeoutExpired, OSError) as exc:
            problems.append(f"post-hook {hook.command!r} failed: {exc}")
    for problem in problems:
        log.warning(problem)
    return problems


_running: set[int] = set()  # process groups of the hooks running now
_running_lock = threading.Lock()


def _run(hook: Hook, payload: dict[str, Any], cwd: str) -> subprocess.CompletedProcess[str]:
    process = subprocess.Popen(
        ["bash", "-c", hook.command], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, cwd=cwd, text=True, errors="replace", start_new_session=True)
    with _running_lock:
        _running.add(process.pid)
    try:
        out, err = process.communicate(json.dumps(payload, default=str), timeout=hook.timeout)
    except subprocess.TimeoutExpired:
        _kill_group(process.pid)
        try:
            process.communicate(timeout=1)  # the group is gone: the pipes close
        except subprocess.TimeoutExpired:  # held open by a child that left the group (setsid)
            for pipe in (process.stdin, process.stdout, process.stderr):
                if pipe is not None:
                    pipe.close()
            process.wait()
        raise
    finally:
        _kill_group(process.pid)
        with _running_lock:
            _running.discard(process.pid)
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def kill_running_hooks() -> None:
    """At shutdown: no hook, nor anything it started, outlives the daemon."""
    with _running_lock:
        groups = list(_running)
    for pgid in groups:
        _kill_group(pgid)
