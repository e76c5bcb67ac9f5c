"""What "add to this intent's scope" offers for an Activity row and for an approval."""

from __future__ import annotations

from intentd.gui.state.records import Approval, LedgerEntry
from intentd.gui.views.scope_editor import scope_choices
from intentd.gui.views.scope_offer import ScopeOffer, offer_for_approval, offer_for_entry


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


def test_the_choices_are_the_path_and_its_folder() -> None:
    assert scope_choices("docs/guide/a.md") == ["docs/guide/a.md", "docs/guide/**"]
    assert scope_choices("README.md") == ["README.md"]  # never `**`: that would be everything
