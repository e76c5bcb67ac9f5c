"""Reading YAML config files with line numbers, so every error names file, line and problem."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

MAX_CONFIG_BYTES = 1 << 20  # a config file larger than this is refused, not parsed
MAX_NODES = 100_000  # aliases can expand a small file exponentially ("billion laughs")


class ConfigError(ValueError):
    """A config file is malformed; str() is `file:line: what is wrong`."""

    def __init__(self, path: Path | str, line: int | None, message: str) -> None:
        self.path = str(path)
        self.line = line
        self.message = message
        where = f"{self.path}:{line}" if line is not None else self.path
        super().__init__(f"{where}: {message}")

    def to_json(self) -> dict[str, Any]:
        return {"file": self.path, "line": self.line, "message": self.message}


class ConfigErrors(ConfigError):
    """Every problem found in one file, so a person fixes them in one go; str() is one
    `file:line: what is wrong` per line, and the first problem is this error's own."""

    def __init__(self, problems: list[ConfigError]) -> None:
        first = problems[0]
        super().__init__(first.path, first.line, first.message)
        self.problems = tuple(problems)
        self.args = ("\n".join(str(problem) for problem in problems),)

    def to_json(self) -> dict[str, Any]:
        more = "".join(f"; line {p.line}: {p.message}" for p in self.problems[1:])
        return {**super().to_json(), "message": self.message + more}


@dataclass(frozen=True)
class Node:
    """A YAML value with the (1-based) line it starts on."""

    value: Any  # str | int | float | bool | None | list[Node] | dict[str, Node]
    line: int

    def plain(self) -> Any:
        """The value with line numbers stripped, as plain Python data."""
        if isinstance(self.value, list):
            return [item.plain() for item in self.value]
        if isinstance(self.value, dict):
            return {key: item.plain() for key, item in self.value.items()}
        return self.value


def load_yaml(path: Path) -> Node | None:
    """Parse `path` into Nodes; None for an empty document. Raises ConfigError."""
    try:
        size = path.stat().st_size
        if size > MAX_CONFIG_BYTES:
            raise ConfigError(path, None, f"file is {size} bytes, larger than {MAX_CONFIG_BYTES}")
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(path, None, f"not UTF-8 text ({exc.reason})") from None
    except OSError as exc:
        raise ConfigError(path, None, f"cannot read: {exc.strerror or exc}") from None
    return parse_yaml(text, path)


def parse_yaml(text: str, path: Path | str) -> Node | None:
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        raise ConfigError(path, line, f"invalid YAML: {exc.problem or exc}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(path, None, f"invalid YAML: {exc}") from None
    except RecursionError:
        raise ConfigError(path, None, "invalid YAML: nested too deeply") from None
    return None if root is None else _convert(root, path, depth=0, budget=[MAX_NODES])


def _convert(node: yaml.Node, path: Path | str, depth: int, budget: list[int]) -> Node:
    line = node.start_mark.line + 1
    budget[0] -= 1
    if depth > 50 or budget[0] < 0:
        raise ConfigError(path, line, "nested too deeply or too many values (alias expansion?)")
    if isinstance(node, yaml.MappingNode):
        out: dict[str, Node] = {}
        for key_node, value_node in node.value:
            key = _scalar(key_node, path)
            if not isinstance(key, str):
                raise ConfigError(path, key_node.start_mark.line + 1, f"key {key!r} must be text")
            if key in out:
                raise ConfigError(path, key_node.start_mark.line + 1, f"duplicate key {key!r}")
            out[key] = _convert(value_node, path, depth + 1, budget)
        return Node(out, line)
    if isinstance(node, yaml.SequenceNode):
        return Node([_convert(item, path, depth + 1, budget) for item in node.value], line)
    return Node(_scalar(node, path), line)


def _scalar(node: yaml.Node, path: Path | str) -> Any:
    if not isinstance(node, yaml.ScalarNode):
        raise ConfigError(path, node.start_mark.line + 1, "a key must be a plain value")
    try:
        return yaml.SafeLoader("").construct_object(node)  # type: ignore[no-untyped-call,unused-ignore]  # stubs differ
    except yaml.YAMLError as exc:
        raise ConfigError(path, node.start_mark.line + 1, f"invalid value: {exc}") from None


def expect(node: Node, kind: type | tuple[type, ...], what: str, path: Path | str) -> Any:
    """Return node.value when it has the expected type, else a ConfigError at its line."""
    ok = isinstance(node.value, kind) and not (isinstance(node.value, bool) and bool not in _tuple(kind))
    if not ok:
        raise ConfigError(path, node.line, f"{what} must be {_kind_name(kind)}, got {_yaml_type(node.value)}")
    return node.value


def string_list(node: Node, what: str, path: Path | str) -> tuple[str, ...]:
    items = expect(node, list, what, path)
    return tuple(expect(item, str, f"each entry of {what}", path) for item in items)


def _tuple(kind: type | tuple[type, ...]) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)


def _kind_name(kind: type | tuple[type, ...]) -> str:
    names = {str: "text", list: "a list", dict: "a mapping", bool: "true or false", int: "a number"}
    return " or ".join(names.get(k, k.__name__) for k in _tuple(kind))


def _yaml_type(value: Any) -> str:
    if value is None:
        return "nothing (null)"
    return _kind_name(type(value)) if type(value) in (str, list, dict, bool, int) else type(value).__name__
