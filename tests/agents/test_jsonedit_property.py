"""Property: whatever a user's JSON file looks like, intentd's entries appended and taken out
again give back the same bytes, and the parser reads what json reads."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from intentd.daemon.agents.hooks.jsonedit import append_item, parse, remove_items

OURS = {"command": "intentd hook test", "timeout": 60}
scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3)
                      | st.dictionaries(st.text(max_size=5), inner, max_size=3), max_leaves=12)
hook_lists = st.lists(st.dictionaries(st.sampled_from(["command", "matcher", "timeout"]),
                                      st.text(max_size=8), min_size=1), max_size=3)
documents = st.fixed_dictionaries(
    {}, optional={"hooks": st.dictionaries(st.sampled_from(["PreToolUse", "Stop", "Other"]),
                                           hook_lists, max_size=3),
                  "model": values, "env": st.dictionaries(st.text(max_size=4), st.text(),
                                                          max_size=3)})
styles = st.sampled_from([None, 2, 4, "\t", 1])
separators = st.sampled_from([(",", ":"), (", ", ": "), (" , ", " : "), (",\n", ":\t")])


def ours(entry: Any) -> bool:
    return bool(entry == OURS)


@settings(max_examples=300, deadline=None)
@given(documents, styles, separators, st.booleans(),
       st.sampled_from(["PreToolUse", "SessionStart"]))
def test_appended_then_removed_is_the_original(document: dict[str, Any], indent: Any,
                                                joints: tuple[str, str], ascii_only: bool,
                                                event: str) -> None:
    # An empty "hooks" object or event list of the user's is taken out with intentd's entries
    # (nothing tells it from one install made): the one known exception, documented.
    hooks = document.get("hooks")
    assume(hooks != {} and (not isinstance(hooks, dict) or event not in hooks or hooks[event]))
    original = json.dumps(document, indent=indent, ensure_ascii=ascii_only, separators=joints)
    assert parse(original).value == json.loads(original)
    merged = append_item(original, ("hooks", event), OURS)
    read = json.loads(merged)
    assert read["hooks"][event][-1] == OURS
    assert {k: v for k, v in read.items() if k != "hooks"} == \
        {k: v for k, v in document.items() if k != "hooks"}
    assert remove_items(merged, ("hooks",), ours) == original
