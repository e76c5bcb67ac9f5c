"""The edits themselves, as splices of the file's text: only the lines an edit is about change."""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field

from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from intentd.daemon.intents_edit.layout import IntentsLayout, LayoutError, get, last_line
from intentd.daemon.intents_edit.render import scalar

NESTED_OFFSET = 2  # `- item` two columns right of its key, unless the file does otherwise
NULL_TAG = "tag:yaml.org,2002:null"
LIST_KEYS = ("owned_scope", "constraints", "acceptance_criteria")


@dataclass(frozen=True)
class NewIntent:
    id: str
    name: str
    status: str
    owned_scope: tuple[str, ...] = ()
    constraints: tuple[str, ...] = ()
    acceptance_criteria: tuple[str, ...] = ()


@dataclass
class Splices:
    """Replacements of (start, end) character spans of the original text, applied at once."""

    text: str
    lines: list[str]
    parts: list[tuple[int, int, str]] = field(default_factory=list)

    def offset(self, line: int, column: int = 0) -> int:
        return sum(len(x) for x in self.lines[:line]) + column

    def replace(self, start: int, end: int, new: str) -> None:
        self.parts.append((start, end, new))

    def lines_span(self, first: int, last: int, new: str = "") -> None:
        """Replace whole lines first..last (0-based, inclusive)."""
        self.replace(self.offset(first), self.offset(last + 1), new)

    def insert_lines(self, before_line: int, new: str) -> None:
        at = self.offset(before_line)
        if at == len(self.text) and self.text and not self.text.endswith("\n"):
            new = "\n" + new  # the file's last line had no newline of its own
        self.replace(at, at, new)

    def apply(self) -> str:
        out = self.text
        for start, end, new in sorted(self.parts, key=lambda p: (p[0], p[1]), reverse=True):
            out = out[:start] + new + out[end:]
        return out


def _node_span(s: Splices, node: Node) -> tuple[int, int]:
    return (s.offset(node.start_mark.line, node.start_mark.column),
            s.offset(node.end_mark.line, node.end_mark.column))


def _key_indent(intent: MappingNode) -> str:
    return " " * int(intent.value[0][0].start_mark.column)


def _after_colon(s: Splices, key: ScalarNode) -> int:
    line = s.lines[key.end_mark.line]
    colon = line.index(":", key.end_mark.column)
    return s.offset(key.end_mark.line, colon + 1)


def _nested_offset(layout: IntentsLayout) -> int:
    """How far right of its key a list's `-` sits in this file."""
    for intent in layout.intents():
        for key, value in intent.value:
            if isinstance(value, SequenceNode) and not value.flow_style and value.value:
                before, _ = layout.dash_prefix(value.value[0])
                return max(0, len(before) - int(key.start_mark.column))
    return NESTED_OFFSET


def _block_items(indent: str, values: tuple[str, ...] | list[str], between: str = " ") -> str:
    return "".join(f"{indent}-{between}{scalar(v)}\n" for v in values)


def set_list(text: str, index: int, key_name: str, values: list[str]) -> str:
    """Make the intent's list `key_name` exactly `values`, changing only the lines that differ."""
    layout = IntentsLayout.of(text)
    s = Splices(text, layout.lines)
    intent = layout.intent(index)
    found = get(intent, key_name)
    if found is None:
        indent = _key_indent(intent)
        body = (f"{indent}{key_name}:\n" + _block_items(indent + " " * _nested_offset(layout), values)
                if values else f"{indent}{key_name}: []\n")
        s.insert_lines(last_line(intent) + 1, body)
        return s.apply()
    key, node = found
    if isinstance(node, SequenceNode) and node.flow_style:
        start, end = _node_span(s, node)
        s.replace(start, end, "[" + ", ".join(scalar(v, flow=True) for v in values) + "]")
    elif isinstance(node, SequenceNode) and node.value:
        _set_block_list(s, layout, key, node, values)
    elif isinstance(node, ScalarNode) and node.tag == NULL_TAG:  # `key:`, `key: ~`
        start, end = _node_span(s, node)
        start, end = (start, end) if text[start:end].strip() else (_after_colon(s, key),) * 2
        if values:
            indent = " " * (key.start_mark.column + _nested_offset(layout))
            s.replace(start, end, "")
            s.insert_lines(last_line(key) + 1, _block_items(indent, values))
        else:
            s.replace(start, end, "[]" if end > start else " []")
    else:
        raise LayoutError(f"line {node.start_mark.line + 1}: {key_name} is not a list")
    return s.apply()


def _set_block_list(s: Splices, layout: IntentsLayout, key: ScalarNode, node: SequenceNode,
                    values: list[str]) -> None:
    items = list(node.value)
    if not all(isinstance(i, ScalarNode) for i in items):
        raise LayoutError(f"line {node.start_mark.line + 1}: {key.value} holds more than text")
    before, between = layout.dash_prefix(items[0])
    old = [str(i.value) for i in items]
    matcher = difflib.SequenceMatcher(None, old, values, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        new = _block_items(before, values[j1:j2], between)
        if tag in ("delete", "replace"):
            s.lines_span(items[i1].start_mark.line, last_line(items[i2 - 1]), new)
        elif tag == "insert":
            s.insert_lines(last_line(items[i1 - 1]) + 1 if i1 else items[0].start_mark.line, new)
    if not values:
        at = _after_colon(s, key)
        s.replace(at, at, " []")


def set_status(text: str, index: int, status: str) -> str:
    layout = IntentsLayout.of(text)
    s = Splices(text, layout.lines)
    found = get(layout.intent(index), "status")
    if found is None or not isinstance(found[1], ScalarNode):
        raise LayoutError("the intent has no status to change")
    node = found[1]
    start, end = _node_span(s, node)
    style = node.style if node.style in ("'", '"') else None
    s.replace(start, end, scalar(status, style=style))
    return s.apply()


def remove(text: str, index: int) -> str:
    layout = IntentsLayout.of(text)
    s = Splices(text, layout.lines)
    intent = layout.intent(index)
    layout.dash_prefix(intent)  # the `-` is on the intent's first line, or this is no simple item
    first, last = intent.start_mark.line, last_line(intent)
    lines = layout.lines
    if first > 0 and not lines[first - 1].strip() and (last + 1 >= len(lines)
                                                       or not lines[last + 1].strip()):
        first -= 1  # the blank line that set it apart goes with it, as it came with an add
    s.lines_span(first, last)
    return s.apply()


def add(text: str, intent: NewIntent) -> str:
    layout = IntentsLayout.of(text)
    s = Splices(text, layout.lines)
    intents = layout.intents()
    if intents:
        before, between = layout.dash_prefix(intents[0])
        gap = "\n" if len(intents) > 1 and not layout.lines[intents[1].start_mark.line - 1].strip() \
            else ""
        s.insert_lines(last_line(intents[-1]) + 1,
                       gap + _render(intent, before, between, _nested_offset(layout)))
    elif layout.key is not None:
        items = layout.items
        if isinstance(items, SequenceNode) and items.value:
            raise LayoutError("active_intents is written in flow style ([...]); edit it by hand")
        if isinstance(items, SequenceNode):  # `active_intents: []`
            start, end = _node_span(s, items)
            s.replace(start, end, "")
        s.insert_lines(last_line(layout.key) + 1, _render(intent, "  ", " ", NESTED_OFFSET))
    elif layout.root is None or not layout.root.value:
        s.insert_lines(len(layout.lines),
                       "active_intents:\n" + _render(intent, "  ", " ", NESTED_OFFSET))
    else:
        raise LayoutError("the file has no `active_intents:` list")
    return s.apply()


def _render(intent: NewIntent, before: str, between: str, offset: int) -> str:
    inner = " " * (len(before) + 1 + len(between))
    out = (f"{before}-{between}id: {scalar(intent.id)}\n"
           f"{inner}name: {scalar(intent.name)}\n"
           f"{inner}status: {scalar(intent.status)}\n")
    for key in LIST_KEYS:
        values: tuple[str, ...] = getattr(intent, key)
        if values:
            out += f"{inner}{key}:\n" + _block_items(inner + " " * offset, values)
        elif key == "owned_scope":
            out += f"{inner}{key}: []\n"
    return out
