"""Where things are in the intents file's text: ruamel.yaml's round-trip composer gives each node's
place, so an edit can change those lines and leave every other byte as the person wrote it."""

from __future__ import annotations

from dataclasses import dataclass

from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError
from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode


class LayoutError(ValueError):
    """The file is laid out in a way an edit cannot change line by line (say, in flow style)."""


def compose(text: str) -> Node | None:
    try:
        root: Node | None = YAML(typ="rt").compose(text)
    except YAMLError as exc:  # the loader has already named the line; this is a second opinion
        raise LayoutError(f"invalid YAML: {exc}") from None
    return root


def last_line(node: Node) -> int:
    """The last line (0-based) holding the node's own text, not the comments or blank lines
    that a block collection's end mark runs on to."""
    if isinstance(node, ScalarNode) or getattr(node, "flow_style", False):
        end = node.end_mark
        line: int = end.line if end.column > 0 or end.line == node.start_mark.line else end.line - 1
        return line
    children: list[Node] = []
    if isinstance(node, MappingNode):
        for key, value in node.value:
            children += [key, value]
    elif isinstance(node, SequenceNode):
        children = list(node.value)
    return max((last_line(c) for c in children), default=node.start_mark.line)


def get(mapping: MappingNode, key: str) -> tuple[ScalarNode, Node] | None:
    for key_node, value in mapping.value:
        if isinstance(key_node, ScalarNode) and key_node.value == key:
            return key_node, value
    return None


@dataclass
class IntentsLayout:
    """The parsed text and the nodes an edit needs."""

    lines: list[str]
    root: MappingNode | None          # None: an empty file (or only comments)
    key: ScalarNode | None            # the `active_intents` key
    items: Node | None                # its value: a sequence, or a null scalar

    @classmethod
    def of(cls, text: str) -> IntentsLayout:
        lines = text.splitlines(keepends=True)
        root = compose(text)
        if root is None:
            return cls(lines, None, None, None)
        if not isinstance(root, MappingNode):
            raise LayoutError("the file is not a mapping")
        found = get(root, "active_intents")
        if found is None:
            return cls(lines, root, None, None)
        return cls(lines, root, found[0], found[1])

    def intents(self) -> list[MappingNode]:
        if not isinstance(self.items, SequenceNode):
            return []
        return [item for item in self.items.value if isinstance(item, MappingNode)]

    def intent(self, index: int) -> MappingNode:
        intents = self.intents()
        if not 0 <= index < len(intents) or getattr(intents[index], "flow_style", False):
            raise LayoutError("that intent is written in flow style ({...}); edit it by hand")
        return intents[index]

    def dash_prefix(self, item: Node) -> tuple[str, str]:
        """(text before the `-`, text between the `-` and the value) of a block sequence item."""
        line = self.lines[item.start_mark.line]
        column = item.start_mark.column
        dash = line.rfind("-", 0, column)
        if dash < 0:
            raise LayoutError(f"line {item.start_mark.line + 1}: no `-` before the item")
        before = line[:dash]
        return (before if not before.strip() else " " * dash), line[dash + 1:column] or " "
