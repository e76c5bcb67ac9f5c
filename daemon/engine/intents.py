"""The intents file `.orchestration/active_intents.yaml`: schema, validation and scope matching."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from intentd.daemon.policy.globs import PatternList
from intentd.daemon.utils.yamlfile import ConfigError, ConfigErrors, Node, expect, load_yaml, string_list

INTENTS_FILE = Path(".orchestration") / "active_intents.yaml"
KNOWN_KEYS = ("id", "name", "status", "owned_scope", "constraints", "acceptance_criteria")


@dataclass(frozen=True)
class Intent:
    id: str
    name: str
    status: str
    owned_scope: tuple[str, ...]
    constraints: tuple[str, ...] = ()
    acceptance_criteria: tuple[str, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict, compare=False)
    line: int = 0
    scope: PatternList = field(init=False, repr=False, compare=False)
    _caseless_scope: list[PatternList] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Gitignore semantics: `src/`, `**/*.py` and `!` negation behave as in .gitignore.
        object.__setattr__(self, "scope", PatternList(self.owned_scope))
        object.__setattr__(self, "_caseless_scope", [])

    def owns(self, relative_path: str, fold_case: bool = False) -> bool:
        """True when the workspace-relative posix path falls in owned_scope. `fold_case`: the
        workspace's file system ignores case, so `SRC/Secret.py` is `src/secret.py`."""
        if not self.owned_scope:
            return False
        if not fold_case:
            return self.scope.matches(relative_path)
        if not self._caseless_scope:  # built when first needed; a race builds it twice, harmlessly
            self._caseless_scope.append(PatternList(self.owned_scope, fold_case=True))
        return self._caseless_scope[0].matches(relative_path)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "status": self.status,
            "owned_scope": list(self.owned_scope),
            "constraints": list(self.constraints),
            "acceptance_criteria": list(self.acceptance_criteria),
            **({"extra": self.extra} if self.extra else {}),
        }


@dataclass(frozen=True)
class IntentSet:
    intents: tuple[Intent, ...] = ()
    warnings: tuple[str, ...] = ()
    exists: bool = False

    def get(self, intent_id: str) -> Intent | None:
        for intent in self.intents:
            if intent.id == intent_id:
                return intent
        return None

    def selectable(self, statuses: tuple[str, ...]) -> tuple[Intent, ...]:
        return tuple(intent for intent in self.intents if intent.status in statuses)


def load_intents(path: Path) -> IntentSet:
    """Load and validate the intents file; a missing file is an empty set. Raises ConfigError."""
    if not path.exists():
        return IntentSet()
    root = load_yaml(path)
    if root is None:
        return IntentSet(exists=True)
    return parse_intents(root, path)


def parse_intents(root: Node, path: Path | str) -> IntentSet:
    top = expect(root, dict, "the file", path)
    warnings = [f"{path}:{node.line}: unknown key {key!r} ignored" for key, node in top.items()
                if key != "active_intents"]
    if "active_intents" not in top:
        raise ConfigError(path, root.line, "missing the top-level `active_intents:` list")
    entries = top["active_intents"]
    if entries.value is None:
        return IntentSet((), tuple(warnings), exists=True)
    items = expect(entries, list, "active_intents", path)
    intents: list[Intent] = []
    problems: list[ConfigError] = []  # every intent is checked: all problems are told at once
    seen: dict[str, int] = {}
    for node in items:
        try:
            intent = _parse_intent(node, path, warnings)
        except ConfigError as exc:
            problems.append(exc)
            continue
        if intent.id in seen:
            problems.append(ConfigError(path, node.line, f"duplicate intent id {intent.id!r} "
                                                         f"(first at line {seen[intent.id]})"))
        seen[intent.id] = node.line
        intents.append(intent)
    if problems:
        raise problems[0] if len(problems) == 1 else ConfigErrors(problems)
    return IntentSet(tuple(intents), tuple(warnings), exists=True)


def _parse_intent(node: Node, path: Path | str, warnings: list[str]) -> Intent:
    fields = expect(node, dict, "each intent", path)
    if "id" not in fields:
        raise ConfigError(path, node.line, "intent has no `id`")
    intent_id = _text(fields["id"], "id", path)
    label = f"intent {intent_id!r}"
    for key in ("name", "status"):
        if key not in fields:
            raise ConfigError(path, node.line, f"{label} has no `{key}`")
    extra = {key: value.plain() for key, value in fields.items() if key not in KNOWN_KEYS}
    warnings.extend(f"{path}:{fields[key].line}: unknown key {key!r} in {label} kept"
                    for key in extra)
    scope = _list(fields, "owned_scope", label, path)
    try:
        return Intent(
            id=intent_id,
            name=_text(fields["name"], f"{label}: name", path),
            status=_text(fields["status"], f"{label}: status", path),
            owned_scope=scope,
            constraints=_list(fields, "constraints", label, path),
            acceptance_criteria=_list(fields, "acceptance_criteria", label, path),
            extra=extra,
            line=node.line,
        )
    except ConfigError:
        raise
    except ValueError as exc:  # a scope line that is no pattern at all, such as a lone `!`
        raise ConfigError(path, fields["owned_scope"].line, f"{label}: owned_scope: {exc}") from None


def _text(node: Node, what: str, path: Path | str) -> str:
    value = expect(node, (str, int), what, path)
    text = str(value).strip()
    if not text:
        raise ConfigError(path, node.line, f"{what} must not be empty")
    return text


def _list(fields: dict[str, Node], key: str, label: str, path: Path | str) -> tuple[str, ...]:
    node = fields.get(key)
    if node is None or node.value is None:
        return ()
    return string_list(node, f"{label}: {key}", path)
