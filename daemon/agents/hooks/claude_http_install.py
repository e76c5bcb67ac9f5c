"""`intentd hook install claude-code --http`: Claude Code's hooks aimed at the daemon's HTTP hook.

Tool events go to the daemon over loopback (no process per call); SessionStart stays a command
hook, since Claude Code runs no HTTP hook there. Blocking on failure (`onFailure`) needs Claude
Code 2.1.295 or later; HTTP hooks, 2.1.63. Older versions: install the command hooks.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

from intentd.daemon.agents.hooks.claude_install import AGENT, settings_path
from intentd.daemon.agents.hooks.install import HookCommand, Scope, is_intentd_hook
from intentd.daemon.agents.hooks.json_hooks import JsonHooksInstaller
from intentd.daemon.server import hook_token

HTTP_TIMEOUT = 300  # seconds: a person has ~5 minutes to answer (the daemon ends the wait first)
PATH = "/claude-code"
LOCAL_HOSTS = ("127.0.0.1", "localhost")


def hook_url(port: int, timeout: int = HTTP_TIMEOUT, workspace: Path | None = None) -> str:
    """The URL, with the hook's timeout (the daemon ends a person's wait 2 s before it)."""
    query = f"timeout={timeout}"
    if workspace is not None:
        query += f"&workspace={quote(str(workspace), safe='/')}"
    return f"http://127.0.0.1:{port}{PATH}?{query}"


def current_port(home: Path | None = None) -> int:
    """The port the daemon serves on (its status file), else this user's default."""
    try:
        status = json.loads((hook_token.hook_dir(home) / "status.json").read_text())
        port = int(status["port"])
        if 0 < port < 65536:
            return port
    except (OSError, ValueError, KeyError, TypeError):
        pass
    return hook_token.default_port()


def http_entries(port: int | None = None, workspace: Path | None = None) -> Any:
    """The entries, for `port` (None: the daemon's, looked up when they are computed)."""
    def entries(command: HookCommand) -> dict[str, list[Any]]:
        url = hook_url(port or current_port(), workspace=workspace)

        def http(**extra: Any) -> dict[str, Any]:
            return {"type": "http", "url": url, "timeout": HTTP_TIMEOUT,
                    "headers": {"Authorization": f"Bearer ${hook_token.TOKEN_ENV}"},
                    "allowedEnvVars": [hook_token.TOKEN_ENV], **extra}

        every = {"matcher": "*"}
        return {
            # Claude Code runs no HTTP hook at SessionStart: the handshake comes from a command
            "SessionStart": [{"hooks": [{"type": "command", "command": command.line(AGENT)}]}],
            "PreToolUse": [{**every, "hooks": [http(onFailure="block")]}],
            "PostToolUse": [{**every, "hooks": [http()]}],
            "PostToolUseFailure": [{**every, "hooks": [http()]}],
            "SessionEnd": [{"hooks": [http()]}],
        }
    return entries


def is_intentd_http(hook: Any) -> bool:
    """An HTTP hook entry aimed at intentd's hook on loopback."""
    if not isinstance(hook, dict) or hook.get("type") != "http":
        return False
    try:
        url = urlsplit(str(hook.get("url", "")))
    except ValueError:
        return False
    return url.hostname in LOCAL_HOSTS and url.path == PATH


def ours(entry: Any) -> bool:
    """A hook of intentd's (the command or the HTTP kind), or a matcher group of only such."""
    if not isinstance(entry, dict):
        return False
    if "hooks" in entry and "type" not in entry:
        inner = entry.get("hooks")
        return isinstance(inner, list) and bool(inner) and all(ours(h) for h in inner)
    return is_intentd_http(entry) or is_intentd_hook(entry.get("command"), AGENT)


def validate(document: Any) -> list[str]:
    """What would make the HTTP hook fail open or be refused."""
    problems: list[str] = []
    hooks = document.get("hooks") if isinstance(document, dict) else None
    for group in (hooks or {}).get("PreToolUse", []) if isinstance(hooks, dict) else []:
        for hook in group.get("hooks", []) if isinstance(group, dict) else []:
            if is_intentd_http(hook):
                if hook.get("onFailure") != "block":
                    problems.append('PreToolUse: the HTTP hook lacks "onFailure": "block" (it '
                                    "would let calls through while the daemon is down)")
                if hook_token.TOKEN_ENV not in (hook.get("allowedEnvVars") or []):
                    problems.append(f"PreToolUse: allowedEnvVars lacks {hook_token.TOKEN_ENV} "
                                    "(the token would be sent empty and refused)")
                problems += timeout_problems(hook)
                problems += port_problems(str(hook.get("url", "")))
    return problems


def timeout_problems(hook: dict[str, Any]) -> list[str]:
    """The daemon ends a person's wait by the URL's timeout; past Claude Code's own (600 s
    when unset) Claude Code gives up first, and the wait ends in a block, not an answer."""
    try:
        query = parse_qs(urlsplit(str(hook.get("url", ""))).query)
        asked = float(query["timeout"][0]) if "timeout" in query else 600.0
    except (ValueError, KeyError):
        return ["PreToolUse: the HTTP hook's URL has a timeout that is not a number"]
    given = hook.get("timeout", 600)
    if isinstance(given, int | float) and not isinstance(given, bool) and asked > given:
        return [f"PreToolUse: the URL asks the daemon to wait {asked:g} s, longer than the "
                f"hook's timeout of {given:g} s; set both to the same value"]
    return []


def port_problems(url: str) -> list[str]:
    """Another user's program listening where the hook posts would read the token and could
    answer "allow" to everything: said loudly (a daemon that is down is no config problem)."""
    from intentd.daemon.trust.tcp_peer import listener_uid  # only for `doctor`

    try:
        port = urlsplit(url).port
    except ValueError:
        return [f"the HTTP hook's URL {url!r} is not valid"]
    holder = listener_uid(port) if port else None
    if holder is None or holder == os.getuid():
        return []
    return [f"port {port} of the HTTP hook is held by ANOTHER USER (uid {holder}): they would "
            "receive the hook token and could answer for intentd. Stop using the HTTP hook "
            "(install the command hooks) or move it (INTENTD_HTTP_HOOK=PORT), then install again"]


def installer(port: int | None = None, workspace: Path | None = None) -> JsonHooksInstaller:
    return JsonHooksInstaller(AGENT, settings_path, http_entries(port, workspace),
                              ours=ours, validate=validate)


def settings(scope: Scope, command: HookCommand, port: int | None = None) -> str:
    """The settings text `install --http` writes for `scope` (for tests and `--dry-run`)."""
    change = installer(port).install(scope, command)[0]
    return change.text or ""


INSTALLER = installer()
