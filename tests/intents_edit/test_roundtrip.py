"""After each edit the file differs from the person's only in the lines the edit is about."""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest

from intentd.daemon.engine.intents import load_intents
from intentd.daemon.intents_edit import store
from intentd.daemon.intents_edit.edits import NewIntent
from intentd.daemon.intents_edit.store import EditRefused, IntentsFileEditor
from tests.intents_edit.conftest import HAND_WRITTEN


def changed_lines(before: str, after: str) -> tuple[list[str], list[str]]:
    """(lines removed, lines added), as difflib sees them."""
    removed, added = [], []
    for line in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0):
        if line.startswith(("---", "+++", "@@")):
            continue
        (removed if line.startswith("-") else added).append(line[1:])
    return removed, added


@pytest.fixture
def editor(tmp_path: Path) -> IntentsFileEditor:
    path = tmp_path / ".orchestration" / "active_intents.yaml"
    path.parent.mkdir()
    path.write_text(HAND_WRITTEN)
    return IntentsFileEditor(path)


def edit(editor: IntentsFileEditor, change: store.Change, *statuses: str) -> str:
    before = editor.read()
    editor.edit(before.sha256, change, statuses)
    return editor.path.read_text()


CASES = [
    ("scope add to a block list", store.scope_add("AUTH", ["src/api/**"]),
     [], ["      - src/api/**"]),
    ("scope add to a flow list", store.scope_add("DOCS", ["docs/**", "!docs/private/**"]),
     ["    owned_scope: []"], ["    owned_scope: [docs/**, '!docs/private/**']"]),
    ("scope remove keeps the next item's comment", store.scope_remove("AUTH", ["tests/auth/**"]),
     ["      - 'tests/auth/**'   # the tests too"], []),
    ("scope set inserts in the middle", store.set_scope(
        "AUTH", ["src/auth/**", "!src/auth/secret/**", "tests/auth/**", "docs/auth.md"]),
     [], ["      - '!src/auth/secret/**'"]),
    ("status keeps the quoting around it", store.update_status("AUTH", "COMPLETED"),
     ["    status: IN_PROGRESS"], ["    status: COMPLETED"]),
    ("status of the folded one", store.update_status("DOCS", "ABANDONED"),
     ["    status: PENDING"], ["    status: ABANDONED"]),
    ("remove the second intent, keeping the trailing comment", store.remove("DOCS"),
     ["", "  - id: DOCS     # second", "    name: >-", "      A folded", "      name",
      "    status: PENDING", "    owned_scope: []", "    owner: ann    # unknown key kept"], []),
]


@pytest.mark.parametrize(("label", "change", "removed", "added"), CASES,
                         ids=[c[0] for c in CASES])
def test_only_the_intended_lines_change(editor: IntentsFileEditor, label: str,
                                        change: store.Change, removed: list[str],
                                        added: list[str]) -> None:
    statuses = ("COMPLETED", "ABANDONED") if "status" in label else ()
    after = edit(editor, change, *statuses)
    gone, new = changed_lines(HAND_WRITTEN, after)
    assert (sorted(gone), new) == (sorted(removed), added)  # blank lines may pair either way
    assert after.startswith("# The person's intents.   Keep this header!\n\n")
    assert after.endswith("# trailing comment")  # still no newline of its own


def test_add_then_edit_then_remove_returns_the_file_byte_for_byte(
        editor: IntentsFileEditor) -> None:
    new = NewIntent("NEW-1", "New: a thing", "PENDING", ("lib/**", "yes"), ("no deps",))
    after = edit(editor, store.create(new), "PENDING")
    removed, added = changed_lines(HAND_WRITTEN, after)
    # After the last intent, set apart by a blank line as DOCS is from AUTH (difflib may pair
    # that blank line either way); "yes" quoted, or the loader would read true.
    new_lines = ["", "  - id: NEW-1", "    name: 'New: a thing'", "    status: PENDING",
                 "    owned_scope:", "      - lib/**", '      - "yes"', "    constraints:",
                 "      - no deps"]
    assert (removed, sorted(added)) == ([], sorted(new_lines))
    assert "owner: ann    # unknown key kept\n" + "\n".join(new_lines) + "\n\n# trailing" in after
    assert after.endswith("# trailing comment")
    loaded = load_intents(editor.path).get("NEW-1")
    assert loaded is not None and loaded.owned_scope == ("lib/**", "yes")
    edit(editor, store.scope_add("NEW-1", ["bin/**"]))
    edit(editor, store.update_status("NEW-1", "IN_PROGRESS"), "IN_PROGRESS")
    assert edit(editor, store.remove("NEW-1")) == HAND_WRITTEN
    auth = load_intents(editor.path).get("AUTH")
    assert auth is not None and auth.constraints == ("keep the API", "no new deps")


def test_emptying_a_block_list_writes_an_empty_one(editor: IntentsFileEditor) -> None:
    after = edit(editor, store.set_scope("AUTH", []))
    removed, added = changed_lines(HAND_WRITTEN, after)
    assert added == ["    owned_scope: []"] and len(removed) == 4
    assert "      # - src/legacy/**   (not yet)" in after.splitlines()


@pytest.mark.parametrize(("change", "statuses", "message"), [
    (store.create(NewIntent("AUTH", "again", "PENDING")), ("PENDING",),
     ":28: duplicate intent id 'AUTH' (first at line 6)"),
    (store.create(NewIntent("  ", "no id", "PENDING")), ("PENDING",),
     ":28: id must not be empty"),
    (store.update_status("DOCS", "DONE"), ("DONE",),
     ":24: status 'DONE' is not one the policy knows"),
    (store.scope_add("AUTH", ["!"]), (), "owned_scope"),
])
def test_an_edit_that_would_break_the_file_is_refused_with_file_and_line(
        editor: IntentsFileEditor, change: store.Change, statuses: tuple[str, ...],
        message: str) -> None:
    with pytest.raises(EditRefused) as refused:
        edit(editor, change, *statuses)
    assert f"{editor.path}" in refused.value.message and message in refused.value.message
    assert editor.path.read_text() == HAND_WRITTEN


def test_an_absent_file_is_created(tmp_path: Path) -> None:
    editor = IntentsFileEditor(tmp_path / ".orchestration" / "active_intents.yaml")
    edit(editor, store.create(NewIntent("A", "first", "IN_PROGRESS", ("src/**",))), "IN_PROGRESS")
    intent = load_intents(editor.path).get("A")
    assert intent is not None and intent.owned_scope == ("src/**",)


def test_a_file_broken_by_hand_is_not_edited_until_it_is_fixed(editor: IntentsFileEditor) -> None:
    broken = HAND_WRITTEN.replace("    status: PENDING\n", "    status: [PENDING\n")
    editor.path.write_text(broken)
    with pytest.raises(EditRefused) as refused:
        editor.read()
    assert "fix it by hand first" in refused.value.message
    assert refused.value.error is not None and refused.value.error.line is not None
    assert editor.path.read_text() == broken


def test_a_linked_intents_file_is_not_edited(tmp_path: Path, editor: IntentsFileEditor) -> None:
    elsewhere = tmp_path / "elsewhere.yaml"
    elsewhere.write_text(HAND_WRITTEN)
    editor.path.unlink()
    editor.path.symlink_to(elsewhere)
    with pytest.raises(EditRefused, match="symbolic link"):
        editor.edit(store.sha256_of(HAND_WRITTEN.encode()), store.remove("DOCS"))
    assert elsewhere.read_text() == HAND_WRITTEN and editor.path.is_symlink()


def test_an_edit_that_would_change_another_intent_too_is_not_written(tmp_path: Path) -> None:
    """B's scope is an alias of A's: a line spliced into it would widen A as well. The loader's
    reading of the new text is compared with what the edit meant, and nothing is written."""
    shared = ("active_intents:\n"
              "  - id: A\n    name: a\n    status: IN_PROGRESS\n    owned_scope: &shared\n"
              "      - src/**\n"
              "  - id: B\n    name: b\n    status: IN_PROGRESS\n    owned_scope: *shared\n")
    path = tmp_path / ".orchestration" / "active_intents.yaml"
    path.parent.mkdir()
    path.write_text(shared)
    editor = IntentsFileEditor(path)
    with pytest.raises(EditRefused, match="without disturbing the rest of the file"):
        edit(editor, store.scope_add("B", ["lib/**"]))
    assert path.read_text() == shared


def test_a_hand_save_while_the_edit_is_prepared_is_not_overwritten(
        editor: IntentsFileEditor) -> None:
    """The base is checked when the edit starts and again just before the rename."""
    hand = HAND_WRITTEN.replace("status: PENDING", "status: BLOCKED  # saved meanwhile")
    add = store.scope_add("AUTH", ["lib/**"])

    def saved_meanwhile(snap: store.Snapshot) -> tuple[str, list[dict[str, object]]]:
        editor.path.write_text(hand)  # an editor saves after the edit has read the file
        return add(snap)

    with pytest.raises(EditRefused) as refused:
        editor.edit(editor.read().sha256, saved_meanwhile)
    assert refused.value.conflict and refused.value.sha256 == store.sha256_of(hand.encode())
    assert editor.path.read_text() == hand
    assert [p.name for p in editor.path.parent.iterdir()] == ["active_intents.yaml"]
