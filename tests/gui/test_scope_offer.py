"""What "add to this intent's scope" offers for an Activity row and for an approval."""

from __future__ import annotations

import posixpath

from intentd.daemon.policy.globs import PatternList
from intentd.gui.intents_edit import scope_lines
from intentd.gui.state.records import Approval, LedgerEntry
from intentd.gui.views.scope_offer import (
    ScopeOffer,
    offer_for_approval,
    offer_for_entry,
    scope_choices,
    workspace_path,
)


def entry(decision: str, stage: str, reason: str, intent_id: str | None = "INT-1") -> LedgerEntry:
    return LedgerEntry.from_json({
        "intent": {"id": "c-1", "time": "2026-01-01T00:00:00+00:00", "workspace": "/w",
                   "intent_id": intent_id, "tool": "write_to_file"},
        "decision": decision, "stage": stage, "reason": reason})


SCOPE_REASON = ("Scope violation: intent INT-1 (Auth) does not own docs/a b.md (owned_scope: "
                "src/**). Request a scope expansion: ask the person …")


def test_only_a_refusal_at_scope_naming_a_path_is_offered() -> None:
    assert offer_for_entry(entry("deny", "scope", SCOPE_REASON)) == ScopeOffer(
        "/w", "INT-1", "docs/a b.md")
    assert offer_for_entry(entry("deny", "scope", "x resolves to /etc/x, outside the "
                                                  "workspace; intent INT-1 cannot own it")) is None
    assert offer_for_entry(entry("deny", "command", SCOPE_REASON)) is None
    assert offer_for_entry(entry("deny", "scope", SCOPE_REASON, intent_id=None)) is None


def test_an_approval_is_offered_for_a_workspace_path_only() -> None:
    def approval(args: dict[str, object], intent_id: str | None = "INT-1") -> Approval:
        return Approval.from_json({"id": "a-1", "workspace": "/w", "intent_id": intent_id,
                                   "tool": "write_to_file", "args": args})

    assert offer_for_approval(approval({"path": "lib/x.py"})) == ScopeOffer("/w", "INT-1",
                                                                            "lib/x.py")
    assert offer_for_approval(approval({"command": "make"})) is None
    assert offer_for_approval(approval({"path": "/etc/passwd"})) is None
    assert offer_for_approval(approval({"path": "lib/x.py"}, intent_id=None)) is None


FOLDER_REASON = ("Scope violation: intent INT-1 (Auth) owns what is inside src/ (owned_scope: "
                 "src/**), but not the folder src itself: deleting, moving or replacing the "
                 "folder is outside the scope, its contents are not. …")


def test_a_folder_refused_as_itself_is_offered() -> None:
    assert offer_for_entry(entry("deny", "scope", FOLDER_REASON)) == ScopeOffer(
        "/w", "INT-1", "src")


def test_the_choices_are_the_path_and_its_folder() -> None:
    assert scope_choices("docs/guide/a.md") == ["docs/guide/a.md", "docs/guide/**"]
    assert scope_choices("README.md") == ["/README.md"]  # never `**`: that would be everything


# Names a scope line would read as more than themselves: a glob, an exclusion, a comment, a
# name at the top that would match in every folder, a trailing space.
ODD = ["README.md", "src", "a[1].py", "docs/a[1].md", "x*y", "d/q?.md", "!important.md",
       "d/!x", "!d/x", "#notes", "#d/x", "d/#x", "back\\slash", "d/x ", "s p/a b", "d/[ab]/c"]


def test_each_choice_owns_exactly_the_path_or_its_folder_as_the_scope_stage_decides() -> None:
    for path in ODD:
        exact, *folder = scope_choices(path)
        lines = scope_lines(exact + "\n")  # as the editor reads its text back
        assert lines == [exact], path
        assert PatternList(lines).matches(path), (path, exact)
        others = ["other/" + path, path + "x", "a1.py", "x-y", "d/qa.md", "d/a/c", "d/x"]
        assert [o for o in others if o != path and PatternList(lines).matches(o)] == [], path
        if folder:
            inside = posixpath.join(posixpath.dirname(path), "new file")
            assert PatternList(folder).matches(path) and PatternList(folder).matches(inside)
            assert not PatternList(folder).matches("elsewhere/" + path), path


def test_a_path_outside_the_workspace_is_not_offered() -> None:
    assert workspace_path("./docs/../src/a.py") == "src/a.py"
    assert [workspace_path(p) for p in ("../x", "/etc/passwd", ".", "")] == [None] * 4
