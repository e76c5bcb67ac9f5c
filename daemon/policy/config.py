"""The policy file `.orchestration/policy.yaml`: validated settings with safe defaults."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from intentd.daemon.policy.command.rules import CommandRules
from intentd.daemon.utils.yamlfile import ConfigError, Node, expect, load_yaml, string_list

POLICY_FILE = Path(".orchestration") / "policy.yaml"


@dataclass(frozen=True)
class AutoApprove:
    read: bool = True
    read_external: bool = False
    edit: bool = False
    edit_external: bool = False
    safe_commands: bool = True
    all_commands: bool = False
    mcp: bool = False
    max_consecutive: int = 20


@dataclass(frozen=True)
class Hook:
    command: str
    matcher: str | None = None  # regex over the tool name; None matches every tool
    timeout: float = 10.0


@dataclass(frozen=True)
class Hooks:
    pre_tool: tuple[Hook, ...] = ()
    post_tool: tuple[Hook, ...] = ()


@dataclass(frozen=True)
class SandboxSettings:
    # TCP for commands that run unasked; a command a person approved may always connect
    network: str = "deny"  # "allow" | "deny"


SCOPE_AUDIT_MODES = ("restore", "report", "off")


@dataclass(frozen=True)
class Policy:
    commands: CommandRules = field(default_factory=CommandRules)
    auto_approve: AutoApprove = field(default_factory=AutoApprove)
    repetition_limit: int = 3
    selectable_statuses: tuple[str, ...] = ("IN_PROGRESS",)
    hooks: Hooks = field(default_factory=Hooks)
    sandbox: SandboxSettings = field(default_factory=SandboxSettings)
    scope_audit: str = "restore"  # after a command: undo out-of-scope changes, only tell, or nothing

    def __post_init__(self) -> None:
        # The command rules decide whether read-only commands need an allow rule; they
        # follow auto_approve.safe_commands however the policy was built or replaced.
        if self.commands.read_only_auto != self.auto_approve.safe_commands:
            object.__setattr__(self, "commands", replace(
                self.commands, read_only_auto=self.auto_approve.safe_commands))

    def to_json(self) -> dict[str, Any]:
        rules = self.commands
        return {
            "commands": {"allow": list(rules.allow), "ask": list(rules.ask), "deny": list(rules.deny),
                         "default": rules.default, "allow_redirects": rules.allow_redirects},
            "auto_approve": {f.name: getattr(self.auto_approve, f.name)
                             for f in fields(AutoApprove)},
            "repetition": {"limit": self.repetition_limit},
            "intents": {"selectable_statuses": list(self.selectable_statuses)},
            "hooks": {stage: [{"command": h.command, "matcher": h.matcher, "timeout": h.timeout}
                              for h in getattr(self.hooks, stage)]
                      for stage in ("pre_tool", "post_tool")},
            "sandbox": {"network": self.sandbox.network},
            "scope_audit": self.scope_audit,
        }


# Used when the policy file is invalid: nothing runs without a person, unmatched commands refused.
SAFEST_POLICY = Policy(
    commands=CommandRules(default="deny"),
    auto_approve=AutoApprove(read=True, safe_commands=False, max_consecutive=1),
)


def load_policy(path: Path) -> Policy:
    """Load and validate the policy file; a missing file gives the defaults. Raises ConfigError."""
    if not path.exists():
        return Policy()
    root = load_yaml(path)
    return Policy() if root is None else parse_policy(root, path)


def parse_policy(root: Node, path: Path | str) -> Policy:
    top = expect(root, dict, "the policy file", path)
    sections = {"commands", "auto_approve", "repetition", "intents", "hooks", "sandbox",
                "scope_audit"}
    for key, node in top.items():
        if key not in sections:
            raise ConfigError(path, node.line, f"unknown section {key!r} (known: {sorted(sections)})")
    policy = Policy()
    if "commands" in top:
        policy = replace(policy, commands=_commands(top["commands"], path))
    if "auto_approve" in top:
        policy = replace(policy, auto_approve=_auto_approve(top["auto_approve"], path))
    if "repetition" in top:
        limit = _int(_section(top["repetition"], "repetition", {"limit"}, path), "limit",
                     "repetition.limit", path, default=3)
        policy = replace(policy, repetition_limit=limit)
    if "intents" in top:
        section = _section(top["intents"], "intents", {"selectable_statuses"}, path)
        if "selectable_statuses" in section:
            statuses = string_list(section["selectable_statuses"], "intents.selectable_statuses", path)
            policy = replace(policy, selectable_statuses=statuses)
    if "hooks" in top:
        policy = replace(policy, hooks=_hooks(top["hooks"], path))
    if "sandbox" in top:
        section = _section(top["sandbox"], "sandbox", {"network"}, path)
        if "network" in section:
            network = _choice(section["network"], "sandbox.network", ("allow", "deny"), path)
            policy = replace(policy, sandbox=SandboxSettings(network))
    if "scope_audit" in top:
        node = top["scope_audit"]
        # YAML 1.1 reads a bare `off` (the documented spelling) as false
        mode = "off" if node.value is False else _choice(node, "scope_audit", SCOPE_AUDIT_MODES, path)
        policy = replace(policy, scope_audit=mode)
    return policy


def _choice(node: Node, what: str, choices: tuple[str, ...], path: Path | str) -> str:
    value = expect(node, str, what, path)
    if value not in choices:
        raise ConfigError(path, node.line, f"{what} must be {' or '.join(choices)}, got {value!r}")
    return str(value)


def _section(node: Node, name: str, known: set[str], path: Path | str) -> dict[str, Node]:
    if node.value is None:
        return {}
    section: dict[str, Node] = expect(node, dict, name, path)
    for key, value in section.items():
        if key not in known:
            raise ConfigError(path, value.line, f"unknown key {name}.{key} (known: {sorted(known)})")
    return section


def _commands(node: Node, path: Path | str) -> CommandRules:
    known = {"allow", "ask", "deny", "default", "allow_redirects"}
    section = _section(node, "commands", known, path)
    rules = {key: string_list(section[key], f"commands.{key}", path)
             for key in ("allow", "ask", "deny") if key in section}
    default = "ask"
    if "default" in section:
        default = expect(section["default"], str, "commands.default", path)
        if default not in ("ask", "deny"):
            raise ConfigError(path, section["default"].line,
                              f"commands.default must be ask or deny, got {default!r}")
    redirects = _bool(section, "allow_redirects", "commands", path, default=False)
    return CommandRules(default=default, allow_redirects=redirects, **rules)  # type: ignore[arg-type]


def _auto_approve(node: Node, path: Path | str) -> AutoApprove:
    names = {f.name for f in fields(AutoApprove)}
    section = _section(node, "auto_approve", names, path)
    values: dict[str, Any] = {}
    for key in section:
        if key == "max_consecutive":
            values[key] = _int(section, key, "auto_approve.max_consecutive", path, default=20)
        else:
            values[key] = _bool(section, key, "auto_approve", path, default=False)
    return AutoApprove(**values)


def _hooks(node: Node, path: Path | str) -> Hooks:
    section = _section(node, "hooks", {"pre_tool", "post_tool"}, path)
    built: dict[str, tuple[Hook, ...]] = {}
    for stage, value in section.items():
        entries = expect(value, list, f"hooks.{stage}", path) if value.value is not None else []
        built[stage] = tuple(_hook(entry, f"hooks.{stage}", path) for entry in entries)
    return Hooks(**built)


def _hook(node: Node, where: str, path: Path | str) -> Hook:
    if isinstance(node.value, str):
        return Hook(command=node.value)
    entry = _section(node, where, {"command", "matcher", "timeout"}, path)
    if "command" not in entry:
        raise ConfigError(path, node.line, f"each entry of {where} needs a `command`")
    command = expect(entry["command"], str, f"{where}.command", path)
    matcher = expect(entry["matcher"], str, f"{where}.matcher", path) if "matcher" in entry else None
    if matcher is not None:
        try:
            re.compile(matcher)
        except re.error as exc:
            raise ConfigError(path, entry["matcher"].line,
                              f"matcher is not a valid regex: {exc}") from None
    timeout = 10.0
    if "timeout" in entry:
        timeout = float(expect(entry["timeout"], (int, float), f"{where}.timeout", path))
        if not 0 < timeout <= 600:
            raise ConfigError(path, entry["timeout"].line, f"{where}.timeout must be in (0, 600]")
    return Hook(command=command, matcher=matcher, timeout=timeout)


def _bool(section: dict[str, Node], key: str, where: str, path: Path | str, default: bool) -> bool:
    if key not in section:
        return default
    return bool(expect(section[key], bool, f"{where}.{key}", path))


def _int(section: dict[str, Node], key: str, what: str, path: Path | str, default: int) -> int:
    if key not in section:
        return default
    value = int(expect(section[key], int, what, path))
    if value < 0:
        raise ConfigError(path, section[key].line, f"{what} must be ≥ 0, got {value}")
    return value
