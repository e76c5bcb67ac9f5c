"""Where Codex's hooks go (`.codex/hooks.json`), the entries intentd adds, and their trust.

Codex runs a hook that is not managed by an administrator only once the person has trusted it:
an untrusted hook is skipped without a word, so intentd's gate would silently not be there.
Trust is recorded in the user's `$CODEX_HOME/config.toml` as `[hooks.state."KEY"]
trusted_hash = "sha256:…"`, KEY being `<hooks.json path>:<event>:<group>:<handler>` and the hash
one Codex computes from the hook's definition. `intentd hook install codex` trusts exactly the
entries it writes, with hashes asked from Codex itself (`codex app-server`, `hooks/list`: what
Codex's own `/hooks` screen shows and trusts), never computed here. Without a `codex` program
on PATH the hooks are written untrusted, and `intentd doctor` says to trust them in `/hooks`.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from intentd.daemon.agents.hooks.install import (
    Change,
    HookCommand,
    InstallError,
    Scope,
    Wiring,
    is_intentd_hook,
    read_text,
)
from intentd.daemon.agents.hooks.json_hooks import JsonHooksInstaller
from intentd.daemon.agents.hooks.jsonedit import JsonEditError, parse

AGENT = "codex"
HOOK_TIMEOUT = 120   # seconds Codex gives PreToolUse; the hook's own deadline is set to match
APPROVAL_TIMEOUT = 110  # of those, how long a person has to answer (the deadline cuts it anyway)
QUICK_TIMEOUT = 30   # the other events: no person is waited for
END_TIMEOUT = 3      # Codex caps a SessionEnd hook at 3 s
APP_SERVER_TIMEOUT = 30.0
# The hook process failing to start or crashing must not let the call through (Codex treats
# any exit but 0 and 2 as "no decision"): the shell turns that into exit 2 with a reason.
GUARD = ' || { echo "intentd: the hook could not run; the call is refused" >&2; exit 2; }'
EVENT_KEYS = {"PreToolUse": "pre_tool_use", "PermissionRequest": "permission_request",
              "PostToolUse": "post_tool_use", "SessionStart": "session_start",
              "SessionEnd": "session_end"}


def codex_home(scope: Scope) -> Path:
    """The user's Codex folder: $CODEX_HOME, else ~/.codex."""
    configured = os.environ.get("CODEX_HOME")
    return Path(configured) if configured else scope.home / ".codex"


def hooks_path(scope: Scope) -> Path:
    return (scope.root / ".codex" if scope.root is not None else codex_home(scope)) / "hooks.json"


def command_entries(command: HookCommand) -> dict[str, list[Any]]:
    def hook(event: str, timeout: int, guarded: bool) -> dict[str, Any]:
        extra = ["--hook-timeout", str(timeout)]
        if event == "PreToolUse":  # a person gets nearly all of the hook's time to answer
            extra += ["--approval-timeout", str(APPROVAL_TIMEOUT)]
        line = command.line(AGENT, event, *extra)
        return {"type": "command", "command": line + (GUARD if guarded else ""),
                "timeout": timeout}

    return {
        "SessionStart": [{"hooks": [hook("SessionStart", QUICK_TIMEOUT, False)]}],
        "PreToolUse": [{"matcher": "*", "hooks": [hook("PreToolUse", HOOK_TIMEOUT, True)]}],
        "PermissionRequest": [{"matcher": "*",
                               "hooks": [hook("PermissionRequest", QUICK_TIMEOUT, True)]}],
        "PostToolUse": [{"matcher": "*", "hooks": [hook("PostToolUse", QUICK_TIMEOUT, False)]}],
        # the session's keeper stops with it (else it lingers until it has been idle for hours)
        "SessionEnd": [{"hooks": [hook("SessionEnd", END_TIMEOUT, False)]}],
    }


class CodexInstaller:
    """hooks.json through the shared JSON installer; trust entries in config.toml beside it."""

    def __init__(self) -> None:
        self.hooks = JsonHooksInstaller(AGENT, hooks_path, command_entries)

    def install(self, scope: Scope, command: HookCommand) -> list[Change]:
        path = hooks_path(scope)
        before = read_text(path) or ""
        changes = self.hooks.install(scope, command)
        after = changes[0].text or ""
        keys = our_keys(path, after)
        config = codex_home(scope) / "config.toml"
        config_before = read_text(config) or ""
        text = remove_trust(config_before, [k for k in our_keys(path, before) if k not in keys])
        text = rename_trust(text, moved_keys(path, before, after))
        hashes = codex_hashes(command_entries(command))
        if hashes is not None:  # else `intentd doctor` will say they await trust
            text = set_trust(text, {key: hashes[call] for key, call in keys.items()
                                    if call in hashes})
        if text != config_before:
            changes.append(Change(config, text, mode=0o600))
        return changes

    def uninstall(self, scope: Scope) -> list[Change]:
        path = hooks_path(scope)
        before = read_text(path)
        changes = self.hooks.uninstall(scope)
        config = codex_home(scope) / "config.toml"
        config_before = read_text(config)
        if before is None or config_before is None:
            return changes
        left = changes[0].text if changes else before
        text = remove_trust(config_before, list(our_keys(path, before)))
        text = rename_trust(text, moved_keys(path, before, left or ""))
        if text != config_before:
            changes.append(Change(config, text if text.strip() else None))
        return changes

    def inspect(self, scope: Scope) -> list[Wiring]:
        found = self.hooks.inspect(scope)
        path = hooks_path(scope)
        text = read_text(path) if path.exists() else None
        if not found or text is None or not found[0].wired:
            return found
        keys = our_keys(path, text)
        config = read_text(codex_home(scope) / "config.toml") or ""
        trusted = trusted_keys(config)
        untrusted = sorted(key for key in keys if key not in trusted)
        problems = list(found[0].problems)
        if untrusted:
            problems.append(f"{len(untrusted)} of intentd's Codex hooks are not trusted (Codex "
                            "skips them): open Codex, run /hooks and trust them, or run "
                            "`intentd hook install codex` again with `codex` on PATH")
        if hooks_turned_off(config):
            problems.append("Codex's hooks are turned off in its config.toml ([features] hooks "
                            "= false): intentd's gate is not there")
        if scope.root is not None and not project_trusted(config, scope.root):
            problems.append(f"Codex reads {scope.root}/.codex/ only in a project you trusted: "
                            "trust it when Codex asks, or run `codex exec --trust` there once")
        return [Wiring(path, True, tuple(problems)), *found[1:]]


def hooks_turned_off(config: str) -> bool:
    try:
        features = tomllib.loads(config).get("features", {})
    except tomllib.TOMLDecodeError:
        return False
    return isinstance(features, dict) and False in (features.get("hooks"),
                                                   features.get("codex_hooks"))


def project_trusted(config: str, root: Path) -> bool:
    """Whether config.toml trusts the project at `root` or a folder above it."""
    try:
        projects = tomllib.loads(config).get("projects", {})
    except tomllib.TOMLDecodeError:
        return False
    trusted = {os.path.realpath(folder) for folder, entry in projects.items()
               if isinstance(entry, dict) and entry.get("trust_level") == "trusted"}
    here = Path(os.path.realpath(root))
    return any(str(folder) in trusted for folder in (here, *here.parents))


def our_keys(path: Path, text: str) -> dict[str, tuple[str, str]]:
    """Codex's trust key of each of intentd's hooks in the file -> (event, command)."""
    try:
        document = parse(text).value
    except JsonEditError:
        return {}
    hooks = document.get("hooks") if isinstance(document, dict) else None
    keys: dict[str, tuple[str, str]] = {}
    for event, groups in (hooks.items() if isinstance(hooks, dict) else []):
        if event not in EVENT_KEYS or not isinstance(groups, list):
            continue
        for group_index, group in enumerate(groups):
            handlers = group.get("hooks") if isinstance(group, dict) else None
            for handler_index, handler in enumerate(handlers or []):
                command = handler.get("command") if isinstance(handler, dict) else None
                if isinstance(command, str) and is_intentd_hook(command, AGENT):
                    key = f"{path}:{EVENT_KEYS[event]}:{group_index}:{handler_index}"
                    keys[key] = (event, command)
    return keys


def moved_keys(path: Path, before: str, after: str) -> list[tuple[str, str]]:
    """The trust keys of the user's own hooks whose place in the file changed (intentd's
    entries taken out before theirs): (old key, new key), in an order safe to rename in."""
    def places(text: str) -> dict[str, list[tuple[int, int]]]:
        try:
            document = parse(text).value if text.strip() else {}
        except JsonEditError:
            return {}
        hooks = document.get("hooks") if isinstance(document, dict) else None
        found: dict[str, list[tuple[int, int]]] = {}
        for event, groups in (hooks.items() if isinstance(hooks, dict) else []):
            if event in EVENT_KEYS and isinstance(groups, list):
                found[event] = [(index, len(group.get("hooks") or []))
                                for index, group in enumerate(groups)
                                if isinstance(group, dict) and not INSTALLER.hooks.ours(group)]
        return found

    old, new = places(before), places(after)
    moves = []
    for event, groups in old.items():
        for (was, count), (now, _) in zip(groups, new.get(event, []), strict=False):
            if was != now:
                moves += [(f"{path}:{EVENT_KEYS[event]}:{was}:{h}",
                           f"{path}:{EVENT_KEYS[event]}:{now}:{h}") for h in range(count)]
    return moves


def codex_hashes(entries: dict[str, list[Any]]) -> dict[tuple[str, str], str] | None:
    """Codex's hash of each entry, asked from `codex app-server` on a scratch CODEX_HOME that
    holds only these entries (a hash depends on the definition, not on the file or position).
    None when there is no codex, or it does not answer."""
    program = shutil.which("codex")
    if program is None:
        return None
    with tempfile.TemporaryDirectory(prefix="intentd-codex-") as scratch:
        Path(scratch, "hooks.json").write_text(json.dumps({"hooks": entries}))
        try:
            listed = _hooks_list(program, scratch)
        except (OSError, ValueError, subprocess.SubprocessError):
            return None
    names = {key[0].lower() + key[1:]: key for key in EVENT_KEYS}  # "preToolUse" -> "PreToolUse"
    hashes: dict[tuple[str, str], str] = {}
    for hook in listed:
        event = names.get(str(hook.get("eventName")))
        if event and isinstance(hook.get("command"), str) and isinstance(
                hook.get("currentHash"), str):
            hashes[(event, hook["command"])] = hook["currentHash"]
    return hashes or None


def _hooks_list(program: str, home: str) -> list[dict[str, Any]]:
    """`initialize`, `initialized`, `hooks/list` over the app server's stdio (JSON lines)."""
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"clientInfo": {"name": "intentd", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "hooks/list", "params": {"cwds": [home]}},
    ]
    process = subprocess.Popen(
        [program, "app-server"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL, text=True, cwd=home,
        env={**os.environ, "CODEX_HOME": home})
    try:
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write("".join(json.dumps(r) + "\n" for r in requests))
        process.stdin.flush()
        timer = _Timer(process, APP_SERVER_TIMEOUT)
        try:
            for line in process.stdout:
                message = json.loads(line)
                if isinstance(message, dict) and message.get("id") == 2:
                    data = (message.get("result") or {}).get("data") or []
                    return [h for entry in data for h in entry.get("hooks") or []
                            if isinstance(h, dict)]
        finally:
            timer.cancel()
        raise ValueError("codex app-server ended without answering hooks/list")
    finally:
        process.kill()
        process.wait()


class _Timer:
    """Kills the app server when it takes too long (reading its stdout then ends)."""

    def __init__(self, process: subprocess.Popen[str], seconds: float) -> None:
        self._timer = threading.Timer(seconds, process.kill)
        self._timer.daemon = True
        self._timer.start()

    def cancel(self) -> None:
        self._timer.cancel()


def _table(key: str, value: str) -> str:
    return f"\n[hooks.state.{json.dumps(key)}]\ntrusted_hash = {json.dumps(value)}\n"


def _table_pattern(key: str) -> re.Pattern[str]:
    """One of these tables as written by `_table` (or by Codex: the same two lines)."""
    return re.compile(r"\n?^\[hooks\.state\." + re.escape(json.dumps(key)) + r"\]\n"
                      r"trusted_hash = \"[^\"\n]*\"\n?", re.MULTILINE)


def set_trust(text: str, trust: dict[str, str]) -> str:
    """config.toml with a trust table per key (replacing earlier ones of intentd's), checked to
    still be TOML Codex can read."""
    wanted = dict(trust)
    text = remove_trust(text, list(wanted))
    if text and not text.endswith("\n"):
        text += "\n"
    text += "".join(_table(key, value) for key, value in wanted.items())
    try:
        states = tomllib.loads(text).get("hooks", {}).get("state", {})
    except tomllib.TOMLDecodeError as exc:
        raise InstallError(f"cannot add hook trust to Codex's config.toml ({exc}); trust "
                           "intentd's hooks in Codex's /hooks instead") from None
    if any(states.get(key, {}).get("trusted_hash") != value for key, value in wanted.items()):
        raise InstallError("Codex's config.toml keeps hook trust in a form intentd cannot edit; "
                           "trust intentd's hooks in Codex's /hooks instead")
    return text


def remove_trust(text: str, keys: list[str]) -> str:
    for key in keys:
        text = _table_pattern(key).sub("", text)
    return text


def rename_trust(text: str, moves: list[tuple[str, str]]) -> str:
    """Each (old, new) trust table header renamed, nothing else touched."""
    for old, new in moves:
        header = re.compile(r"^\[hooks\.state\." + re.escape(json.dumps(old)) + r"\][ \t]*$",
                            re.MULTILINE)
        text = header.sub(_literal(f"[hooks.state.{json.dumps(new)}]"), text)
    return text


def _literal(line: str) -> Callable[[re.Match[str]], str]:
    """A replacement taken as is (a path's backslashes are not group references)."""
    return lambda _: line


def trusted_keys(text: str) -> dict[str, str]:
    try:
        states = tomllib.loads(text).get("hooks", {}).get("state", {})
    except tomllib.TOMLDecodeError:
        return {}
    return {key: value["trusted_hash"] for key, value in states.items()
            if isinstance(value, dict) and isinstance(value.get("trusted_hash"), str)}


INSTALLER = CodexInstaller()
