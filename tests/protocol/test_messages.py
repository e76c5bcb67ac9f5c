"""The typed wire shapes: what the daemon encodes reads back equal, and untrusted JSON never
makes a client raise (a missing or mistyped key reads as its empty value)."""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from intentd.daemon.protocol import doc, messages
from intentd.daemon.protocol.codec import Shape, field_types

SHAPES = doc.shapes()


def sample(hint: Any) -> Any:
    """A full value of the type: every optional present, every list with one item."""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return sample(next(a for a in typing.get_args(hint) if a is not type(None)))
    origin = typing.get_origin(hint)
    if origin is tuple:
        args = typing.get_args(hint)
        return (sample(args[0]),) if args[1:] == (Ellipsis,) else tuple(sample(a) for a in args)
    if origin is dict:
        value = typing.get_args(hint)[1]
        return {"k": {"nested": [1, None]} if value is Any else sample(value)}
    if isinstance(hint, type) and issubclass(hint, Shape):
        fields = {f.name: sample(t) for f, t in zip(dataclasses.fields(hint),  # type: ignore[arg-type]
                                                     field_types(hint).values(), strict=True)}
        if "mode" in fields and hint is messages.WatchCoverage:
            fields["mode"] = "partial"
        return hint(**fields)
    return {str: "text", int: 7, float: 1.5, bool: True}[hint]


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: s.__name__)
def test_a_shape_reads_back_what_it_wrote(shape: type[Shape]) -> None:
    value = sample(shape)
    sent = json.loads(json.dumps(value.to_json()))
    assert shape.from_json(sent) == value  # type: ignore[attr-defined]
    assert list(sent) == [f.name for f in dataclasses.fields(shape)]  # type: ignore[arg-type]


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
                    | st.text(max_size=5),
                    lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=12)


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: s.__name__)
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_untrusted_json_never_raises(shape: type[Shape], data: st.DataObject) -> None:
    names = [f.name for f in dataclasses.fields(shape)]  # type: ignore[arg-type]
    raw = data.draw(JSON | st.dictionaries(st.sampled_from(names), JSON))
    value = shape.from_json(raw)  # type: ignore[attr-defined]
    if value is not None:
        json.dumps(value.to_json())  # and what it read can be written again


def test_mistyped_keys_read_as_empty() -> None:
    approval = messages.Approval.from_json({"id": 5, "args": ["x"], "diff": 3, "intent_id": "",
                                            "created_at": "2026-01-02T03:04:05+00:00",
                                            "native_prompt": "yes"})
    assert (approval.id, approval.args, approval.diff, approval.intent_id) == ("5", {}, None, None)
    assert approval.created_at == 1767323045.0 and approval.native_prompt is False
    assert messages.ConfigError.from_json("broken") is None
    assert messages.WatchCoverage.from_json({"mode": "everything"}) is None
    listed = messages.IntentsList.from_json({"intents": [{"id": "A"}, 7, None],
                                             "selected": {"s-1": "A", "s-2": None}})
    assert [i.id for i in listed.intents] == ["A"] and listed.selected == {"s-1": "A"}
