"""Which settings changes widen auto-approval (held for the app) and which narrow it (at once)."""

from __future__ import annotations

from intentd.daemon.server.settings_requests import widening

IN_FORCE = {"read": True, "edit": False, "all_commands": False, "max_consecutive": 20}


def test_switching_on_widens_and_switching_off_narrows() -> None:
    assert widening(IN_FORCE, {"edit": True, "read": False}) == {"edit": True}
    assert widening(IN_FORCE, {"read": True}) == {}, "no change is no widening"


def test_a_higher_limit_or_no_limit_widens() -> None:
    assert widening(IN_FORCE, {"max_consecutive": 50}) == {"max_consecutive": 50}
    assert widening(IN_FORCE, {"max_consecutive": 0}) == {"max_consecutive": 0}
    assert widening(IN_FORCE, {"max_consecutive": 5}) == {}
    assert widening({**IN_FORCE, "max_consecutive": 0}, {"max_consecutive": 5}) == {}
