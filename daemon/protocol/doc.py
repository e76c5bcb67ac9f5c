"""docs/protocol.md's generated tables: every method with its side and typed answer, and every
typed shape with its fields, rendered from the code so the two cannot drift.

`python -m intentd.daemon.protocol.doc --write docs/protocol.md` rewrites the generated blocks
(between `<!-- generated: NAME -->` and `<!-- end: NAME -->`); a test fails while they differ.
"""

from __future__ import annotations

import dataclasses
import re
import sys
import types
import typing
from pathlib import Path
from typing import Any

from intentd.daemon import protocol
from intentd.daemon.protocol import messages
from intentd.daemon.protocol.codec import Shape, field_types

_BLOCK = re.compile(r"(<!-- generated: (\w+) -->\n)(.*?)(<!-- end: \2 -->)", re.S)


def shapes() -> list[type[Shape]]:
    """Every shape the protocol declares, in the order of the module."""
    return [value for value in vars(messages).values()
            if isinstance(value, type) and issubclass(value, Shape)
            and value.__module__ == messages.__name__]


def type_text(hint: Any) -> str:
    """A field's type as the document writes it: text, int, [text], Intent|null, ..."""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        inner = [arg for arg in typing.get_args(hint) if arg is not type(None)]
        return "|".join(type_text(arg) for arg in inner) + "|null"
    origin = typing.get_origin(hint)
    if origin is tuple:
        args = typing.get_args(hint)
        if len(args) == 2 and args[1] is Ellipsis:
            return f"[{type_text(args[0])}...]"
        return "[" + ", ".join(type_text(arg) for arg in args) + "]"
    if origin is dict:
        _, value = typing.get_args(hint)
        return "{...}" if value is Any else f"{{text: {type_text(value)}}}"
    names = {str: "text", int: "int", float: "number", bool: "bool"}
    if hint in names:
        return names[hint]
    if isinstance(hint, type) and issubclass(hint, Shape):
        return hint.__name__
    return "any"


def fields_text(shape: type[Shape]) -> str:
    parts = []
    types_of = field_types(shape)
    for item in dataclasses.fields(shape):  # type: ignore[arg-type]
        optional = "?" if item.metadata.get("omit_empty") else ""
        kind = type_text(types_of[item.name]).replace("|", "\\|")  # a table cell: escaped
        parts.append(f'`"{item.name}"{optional}`: {kind}')
    return ", ".join(parts)


def shapes_table() -> str:
    rows = ["| shape | fields (`?`: left out when empty) |", "|---|---|"]
    rows += [f"| **{shape.__name__}** | {fields_text(shape)} |" for shape in shapes()]
    return "\n".join(rows) + "\n"


def methods_table() -> str:
    rows = ["| method | who may call it | answer |", "|---|---|---|"]
    for method, side in protocol.METHOD_SIDES.items():
        answer = messages.RESULTS.get(method)
        rows.append(f"| `{method}` | {side} | {answer.__name__ if answer else 'its section'} |")
    return "\n".join(rows) + "\n"


def notifications_table() -> str:
    rows = ["| notification | params |", "|---|---|"]
    for name in protocol.NOTIFICATIONS:
        params = messages.NOTIFICATION_PARAMS.get(name)
        rows.append(f"| `{name}` | {params.__name__ if params else 'below the table'} |")
    return "\n".join(rows) + "\n"


BLOCKS = {"methods": methods_table, "notifications": notifications_table, "shapes": shapes_table}


def render(text: str) -> str:
    """`text` with every generated block rendered afresh."""
    return _BLOCK.sub(lambda match: match.group(1) + BLOCKS[match.group(2)]() + match.group(4),
                      text)


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] != "--write":
        print("usage: python -m intentd.daemon.protocol.doc --write docs/protocol.md",
              file=sys.stderr)
        return 2
    path = Path(argv[1])
    path.write_text(render(path.read_text(encoding="utf-8")), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
