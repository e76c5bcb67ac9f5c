"""Edits of a JSON file's text that leave every byte they do not touch as it was.

An agent's settings file is the user's: re-serialising it would reorder, re-indent and re-escape
what they wrote. So the file is parsed with the position of every value, and an edit inserts or
cuts text at those positions: an item appended to an array (or a member to an object, creating
the path), and items removed again. Removing what was appended gives back the original bytes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

_DECODER = json.JSONDecoder()
_SPACE = re.compile(r"[ \t\n\r]*")
# JSON with comments (Gemini CLI's settings.json): comments count as space, kept as written
_SPACE_AND_COMMENTS = re.compile(r"(?:[ \t\n\r]+|//[^\n]*|/\*.*?\*/)*", re.DOTALL)


class JsonEditError(ValueError):
    """The text is not JSON, or a value on the path is not the kind the edit needs."""


@dataclass
class Node:
    """One value: its span in the text, and its members or items with theirs."""

    start: int
    end: int
    value: Any
    members: dict[str, tuple[int, Node]] = field(default_factory=dict)  # key -> (key start, node)
    items: list[Node] = field(default_factory=list)

    @property
    def is_object(self) -> bool:
        return isinstance(self.value, dict)

    @property
    def is_array(self) -> bool:
        return isinstance(self.value, list)


def parse(text: str, comments: bool = False) -> Node:
    """The document's root value, with positions; JsonEditError when it is not JSON (with
    `comments`, `//` and `/* */` comments are allowed where space is)."""
    space = _SPACE_AND_COMMENTS if comments else _SPACE
    start = 1 if text.startswith("\ufeff") else 0  # a byte-order mark some editors write
    try:
        node = _value(text, _skip(text, start, space), space)
    except (ValueError, IndexError) as exc:
        raise JsonEditError(f"not valid JSON: {exc}") from None
    end = _skip(text, node.end, space)
    if end != len(text):
        raise JsonEditError(f"not valid JSON: extra data at character {end}")
    return node


def _skip(text: str, at: int, space: re.Pattern[str]) -> int:
    match = space.match(text, at)
    return match.end() if match else at


def _value(text: str, at: int, space: re.Pattern[str]) -> Node:
    if text[at] == "{":
        return _object(text, at, space)
    if text[at] == "[":
        return _array(text, at, space)
    value, end = _DECODER.raw_decode(text, at)
    return Node(at, end, value)


def _object(text: str, start: int, space: re.Pattern[str]) -> Node:
    node = Node(start, start, {})
    at = _skip(text, start + 1, space)
    if text[at] == "}":
        node.end = at + 1
        return node
    while True:
        if text[at] != '"':
            raise ValueError(f"expected a key at character {at}")
        key, after = _DECODER.raw_decode(text, at)
        colon = _skip(text, after, space)
        if text[colon] != ":":
            raise ValueError(f"expected ':' at character {colon}")
        child = _value(text, _skip(text, colon + 1, space), space)
        if key in node.members:
            raise ValueError(f"the key {key!r} appears twice")
        node.members[key] = (at, child)
        node.value[key] = child.value
        at = _skip(text, child.end, space)
        if text[at] == "}":
            node.end = at + 1
            return node
        if text[at] != ",":
            raise ValueError(f"expected ',' or '}}' at character {at}")
        at = _skip(text, at + 1, space)


def _array(text: str, start: int, space: re.Pattern[str]) -> Node:
    node = Node(start, start, [])
    at = _skip(text, start + 1, space)
    if text[at] == "]":
        node.end = at + 1
        return node
    while True:
        child = _value(text, at, space)
        node.items.append(child)
        node.value.append(child.value)
        at = _skip(text, child.end, space)
        if text[at] == "]":
            node.end = at + 1
            return node
        if text[at] != ",":
            raise ValueError(f"expected ',' or ']' at character {at}")
        at = _skip(text, at + 1, space)


def _line_indent(text: str, at: int) -> str:
    """The whitespace that starts the line `at` is on."""
    line_start = text.rfind("\n", 0, at) + 1
    return _SPACE.match(text, line_start).group().lstrip("\n\r")  # type: ignore[union-attr]


def _unit(text: str) -> str:
    """The file's indentation step (two spaces when it shows none)."""
    for match in re.finditer(r"\n([ \t]+)\S", text):
        return match.group(1)
    return "  "


def _render(value: Any, indent: str, unit: str, pretty: bool, newline: str) -> str:
    if not pretty:
        return json.dumps(value, ensure_ascii=False)
    return json.dumps(value, indent=unit, ensure_ascii=False).replace("\n", newline + indent)


def _insert(text: str, container: Node, piece: Any, key: str | None) -> str:
    """`piece` as the last item (or the member `key`) of `container`."""
    children = ([child for _, child in container.members.values()] if key is not None
                else container.items)
    firsts = ([start for start, _ in container.members.values()] if key is not None
              else [child.start for child in container.items])
    pretty = "\n" in text[container.start:container.end] or not children and "\n" in text
    unit = _unit(text)
    nl = "\r\n" if "\r\n" in text else "\n"  # the file's own line ends
    if children:
        indent = _line_indent(text, firsts[-1]) if pretty else ""
    else:
        indent = _line_indent(text, container.start) + unit if pretty else ""
    head = f"{json.dumps(key, ensure_ascii=False)}: " if key is not None else ""
    body = head + _render(piece, indent, unit, pretty, nl)
    if children:
        at = children[-1].end
        joint = f",{nl}{indent}" if pretty else ", "
        return text[:at] + joint + body + text[at:]
    close = container.end - 1
    inner = f"{nl}{indent}{body}{nl}{_line_indent(text, container.start)}" if pretty else body
    return text[:container.start + 1] + inner + text[close:]


def add_member(text: str, key: str, value: Any, comments: bool = False) -> str:
    """A member added at the end of the root object (e.g. Cursor's `"version": 1`)."""
    root = parse(text, comments)
    if not root.is_object:
        raise JsonEditError("the file is not a JSON object")
    if key in root.members:
        raise JsonEditError(f"{key!r} is already there")
    return _insert(text, root, value, key)


def append_item(text: str, path: tuple[str, ...], item: Any, comments: bool = False) -> str:
    """`item` appended to the array at `path` (object keys from the root), creating the path."""
    node = parse(text, comments)
    for depth, key in enumerate(path):
        if not node.is_object:
            raise JsonEditError(f"{'.'.join(path[:depth]) or 'the file'} is not a JSON object")
        if key not in node.members:
            rest: Any = [item]
            for name in reversed(path[depth + 1:]):
                rest = {name: rest}
            return _insert(text, node, rest, key)
        node = node.members[key][1]
    if not node.is_array:
        raise JsonEditError(f"{'.'.join(path)} is not a JSON array")
    return _insert(text, node, item, None)


def _cut(text: str, container: Node, index: int, spans: list[tuple[int, int]]) -> str:
    """Removes child `index` (its span in `spans`) with the separator that joined it."""
    start, end = spans[index]
    if len(spans) == 1:
        return text[:container.start + 1] + text[container.end - 1:]
    if index > 0:
        return text[:spans[index - 1][1]] + text[end:]
    return text[:start] + text[spans[1][0]:]


def remove_items(text: str, path: tuple[str, ...], ours: Callable[[Any], bool],
                 comments: bool = False) -> str:
    """Every item of the arrays that are members of the object at `path` for which `ours` is
    true, removed; an array left empty by that, and then the object's own member when it is
    left empty too, removed as well. The text as it was when nothing is ours."""
    emptied: set[str] = set()
    while True:
        root = parse(text, comments)
        holder = _find(root, path)
        if holder is None or not holder.is_object:
            return text
        target = next(((name, i) for name, (_, array) in holder.members.items() if array.is_array
                       for i, item in enumerate(array.items) if ours(item.value)), None)
        if target is None:
            break
        name, index = target
        array = holder.members[name][1]
        text = _cut(text, array, index, [(item.start, item.end) for item in array.items])
        if len(array.items) == 1:
            emptied.add(name)
    for name in emptied:
        text = remove_member(text, path, name, only_if_empty=True, comments=comments)
    if path and emptied:
        text = remove_member(text, path[:-1], path[-1], only_if_empty=True, comments=comments)
    return text


def remove_member(text: str, path: tuple[str, ...], key: str, only_if_empty: bool = False,
                  comments: bool = False) -> str:
    """The member `key` of the object at `path` removed (only when its value is empty)."""
    holder = _find(parse(text, comments), path)
    if holder is None or not holder.is_object or key not in holder.members:
        return text
    if only_if_empty and holder.members[key][1].value not in ({}, []):
        return text
    keys = list(holder.members)
    spans = [(start, child.end) for start, child in holder.members.values()]
    return _cut(text, holder, keys.index(key), spans)


def _find(node: Node, path: tuple[str, ...]) -> Node | None:
    for key in path:
        if not node.is_object or key not in node.members:
            return None
        node = node.members[key][1]
    return node
