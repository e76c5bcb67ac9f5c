"""docs/protocol.md and the protocol's code cannot drift: the generated tables are current, and
every method and notification the code has is documented, and nothing else is."""

from __future__ import annotations

import re
from pathlib import Path

from intentd.daemon import protocol
from intentd.daemon.protocol import doc, messages

DOC = Path(__file__).resolve().parents[2] / "docs" / "protocol.md"
NAME = re.compile(r"`([a-z_]+/[a-z_]+|initialize)`")


def text() -> str:
    return DOC.read_text(encoding="utf-8")


def section(title: str) -> str:
    """The text of one `## title` section."""
    body = text().split(f"\n## {title}\n", 1)[1]
    return body.split("\n## ", 1)[0]


def test_the_generated_tables_are_current() -> None:
    for block in doc.BLOCKS:
        assert f"<!-- generated: {block} -->" in text() and f"<!-- end: {block} -->" in text()
    assert doc.render(text()) == text(), \
        "run: python -m intentd.daemon.protocol.doc --write docs/protocol.md"


def test_every_method_has_its_section_and_every_section_a_method() -> None:
    headings = [line for line in text().splitlines() if line.startswith("### ")]
    documented = {name for line in headings for name in NAME.findall(line)}
    assert documented == set(protocol.METHOD_SIDES)


def test_every_notification_is_documented_and_nothing_else_is() -> None:
    body = section("Notifications")
    named = set(NAME.findall(body))
    assert named == set(protocol.NOTIFICATIONS)
    # one without a typed shape is described in words below the table
    below = body.split("<!-- end: notifications -->", 1)[1]
    untyped = set(protocol.NOTIFICATIONS) - set(messages.NOTIFICATION_PARAMS)
    assert untyped <= set(NAME.findall(below))


def test_every_name_constant_is_a_method_or_a_notification() -> None:
    names = {value for key, value in vars(protocol).items()
             if key.isupper() and isinstance(value, str) and NAME.fullmatch(f"`{value}`")}
    assert names == set(protocol.METHOD_SIDES) | set(protocol.NOTIFICATIONS)
    assert set(messages.RESULTS) <= set(protocol.METHOD_SIDES)
    assert set(messages.NOTIFICATION_PARAMS) <= set(protocol.NOTIFICATIONS)


def test_every_shape_a_method_section_names_is_declared() -> None:
    declared = {shape.__name__ for shape in doc.shapes()}
    for method, shape in messages.RESULTS.items():
        heading = f"### `{method}`\n"
        body = text().split(heading, 1)[1].split("\n### ", 1)[0]
        assert shape.__name__ in body, f"{method}'s section should name its answer, {shape.__name__}"
    assert {shape.__name__ for shape in messages.RESULTS.values()} <= declared


def test_a_drifted_table_is_caught() -> None:
    """The check above can fail: a table with a field missing is rendered afresh."""
    stale = text().replace('`"native_prompt"`: bool', "", 1)
    assert stale != text() and doc.render(stale) == text()
