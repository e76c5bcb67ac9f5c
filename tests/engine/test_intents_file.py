"""Loading `.orchestration/active_intents.yaml`: valid files, and every bad input named by line."""

from __future__ import annotations

from pathlib import Path

import pytest

from intentd.daemon.engine.intents import load_intents
from intentd.daemon.utils.yamlfile import ConfigError


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "active_intents.yaml"
    path.write_text(text)
    return path


def test_valid_file_loads_every_field(tmp_path: Path) -> None:
    path = write(tmp_path, """\
active_intents:
  - id: INT-1
    name: Build the engine
    status: IN_PROGRESS
    owned_scope: ["daemon/**", "!daemon/secret.py"]
    constraints: ["no new dependencies"]
    acceptance_criteria: ["tests pass"]
""")
    intents = load_intents(path)
    intent = intents.get("INT-1")
    assert intent is not None
    assert intent.owned_scope == ("daemon/**", "!daemon/secret.py")
    assert intent.constraints == ("no new dependencies",)
    assert intent.owns("daemon/engine/x.py") and not intent.owns("daemon/secret.py")
    assert not intent.owns("gui/app.py")


def test_missing_file_is_an_empty_set(tmp_path: Path) -> None:
    assert load_intents(tmp_path / "nope.yaml").intents == ()


@pytest.mark.parametrize(("text", "line", "fragment"), [
    ("active_intents:\n  - id: A\n    name: [unclosed\n", 4, "invalid YAML"),
    ("active_intents:\n  - id: A\n    name: x\n    status: IN_PROGRESS\n    owned_scope: src\n",
     5, "owned_scope must be a list"),
    ("active_intents:\n  - name: x\n    status: IN_PROGRESS\n", 2, "no `id`"),
    ("active_intents:\n  - {id: A, name: x, status: DONE}\n  - {id: A, name: y, status: DONE}\n",
     3, "duplicate intent id 'A' (first at line 2)"),
    ("active_intents: {id: A}\n", 1, "active_intents must be a list"),
    ("intents: []\n", 1, "missing the top-level `active_intents:`"),
    ("active_intents:\n  - {id: A, name: x, status: DONE, constraints: [1, [2]]}\n", 2,
     "must be text"),
    ("- just\n- a list\n", 1, "the file must be a mapping"),
])
def test_bad_file_names_file_line_and_problem(tmp_path: Path, text: str, line: int,
                                              fragment: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        load_intents(path)
    assert caught.value.line == line
    assert fragment in caught.value.message
    assert str(caught.value).startswith(f"{path}:{line}: ")


def test_unknown_keys_are_kept_and_warned_about(tmp_path: Path) -> None:
    path = write(tmp_path, "owner: me\nactive_intents:\n"
                           "  - {id: A, name: x, status: IN_PROGRESS, priority: high}\n")
    intents = load_intents(path)
    intent = intents.get("A")
    assert intent is not None and intent.extra == {"priority": "high"}
    assert any("'priority'" in w and ":3:" in w for w in intents.warnings)
    assert any("'owner'" in w for w in intents.warnings)


def test_empty_scope_owns_nothing(tmp_path: Path) -> None:
    path = write(tmp_path, "active_intents:\n  - {id: A, name: x, status: IN_PROGRESS}\n")
    intent = load_intents(path).get("A")
    assert intent is not None and not intent.owns("anything.txt")


def test_alias_bomb_is_refused_not_expanded(tmp_path: Path) -> None:
    levels = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    levels += [f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 10)}]"
               for i in range(8)]
    path = write(tmp_path, "\n".join(levels) + "\nactive_intents: []\n")
    with pytest.raises(ConfigError, match="too many values"):
        load_intents(path)
