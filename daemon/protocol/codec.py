"""How a typed wire shape becomes JSON and comes back: one encoder and one decoder for all.

The decoder reads untrusted JSON and never raises: a missing or mistyped field takes its
default (or the zero of its type), so a client shows what it can of an answer from a newer or
broken daemon. Types are read from the dataclass annotations, so a shape is declared once.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from datetime import datetime
from typing import Any, Self, TypeVar

# Field metadata: leave the key out of the JSON when its value is empty (None, "", {}, ()).
OMIT_EMPTY = {"omit_empty": True}

_MISSING = object()
S = TypeVar("S", bound="Shape")
_hints: dict[type, dict[str, Any]] = {}


class Shape:
    """A wire shape: a frozen dataclass whose fields are the JSON object's keys, in order."""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, omit_empty, kind in _plan(type(self)):
            value = getattr(self, name)
            if omit_empty and value in (None, "", (), {}):
                continue
            if kind is _PLAIN or value is None:
                out[name] = value
            elif kind is _SHAPE:
                out[name] = value.to_json()
            else:
                out[name] = encode(value)
        return out


class Message(Shape):
    """A shape that is always there: anything but an object reads as all defaults."""

    @classmethod
    def from_json(cls, data: Any) -> Self:
        return decode_fields(cls, data)


class Nullable(Shape):
    """A shape that may be absent (null): anything but a fitting object reads as None."""

    @classmethod
    def from_json(cls, data: Any) -> Self | None:
        if not isinstance(data, dict):
            return None
        value = decode_fields(cls, data)
        return value if value.fits() else None

    def fits(self) -> bool:
        """Whether the decoded value means something (e.g. a known mode)."""
        return True


# How to_json writes a field: as it stands, as a shape, or through encode().
_PLAIN, _SHAPE, _OTHER = "plain", "shape", "other"
_plans: dict[type, tuple[tuple[str, bool, str], ...]] = {}


def _plan(cls: type) -> tuple[tuple[str, bool, str], ...]:
    """Each field's name, whether it is left out when empty, and how it is written. Worked out
    once per shape: every ledger entry goes through here, on the path of every call."""
    plan = _plans.get(cls)
    if plan is None:
        types_of = field_types(cls)
        plan = _plans[cls] = tuple(
            (item.name, bool(item.metadata.get("omit_empty")), _kind(types_of[item.name]))
            for item in dataclasses.fields(cls))
    return plan


def _kind(hint: Any) -> str:
    if _plain(hint):
        return _PLAIN
    inner = [arg for arg in typing.get_args(hint) if arg is not type(None)] \
        if _is_union(hint) else [hint]
    if len(inner) == 1 and isinstance(inner[0], type) and issubclass(inner[0], Shape):
        return _SHAPE
    return _OTHER


def _plain(hint: Any) -> bool:
    """Whether a value of this type needs no encoding: no shape and no tuple anywhere in it
    (a dict of Any holds what json.dumps takes as it is)."""
    if _is_union(hint):
        return all(_plain(arg) for arg in typing.get_args(hint))
    origin = typing.get_origin(hint)
    if origin is dict:
        return _plain(typing.get_args(hint)[1])
    if origin is tuple or isinstance(hint, type) and issubclass(hint, Shape):
        return False
    return True


def encode(value: Any) -> Any:
    if isinstance(value, Shape):
        return value.to_json()
    if isinstance(value, tuple | list):
        return [encode(item) for item in value]
    if isinstance(value, dict):
        return {key: encode(item) for key, item in value.items()}
    return value


def field_types(cls: type) -> dict[str, Any]:
    """The resolved annotation of each field (cached: resolving is slow, shapes are few)."""
    if cls not in _hints:
        names = {item.name for item in dataclasses.fields(cls)}
        _hints[cls] = {k: v for k, v in typing.get_type_hints(cls).items() if k in names}
    return _hints[cls]


def decode_fields(cls: type[S], data: Any) -> S:
    data = data if isinstance(data, dict) else {}
    types_of = field_types(cls)
    values: dict[str, Any] = {}
    for item in dataclasses.fields(cls):  # type: ignore[arg-type]  # every Shape is a dataclass
        if not item.init:
            continue
        raw = data.get(item.name, _MISSING)
        if raw is _MISSING or raw is None and not _optional(types_of[item.name]):
            if item.default is not dataclasses.MISSING or item.default_factory is not dataclasses.MISSING:
                continue  # the dataclass's own default
            raw = None
        values[item.name] = decode(types_of[item.name], raw)
    return cls(**values)


def _optional(hint: Any) -> bool:
    return _is_union(hint) and type(None) in typing.get_args(hint)


def _is_union(hint: Any) -> bool:
    return typing.get_origin(hint) in (typing.Union, types.UnionType)


def decode(hint: Any, raw: Any) -> Any:
    """`raw` as a value of type `hint`, or that type's empty value when it is not one."""
    if _is_union(hint):
        (inner,) = [arg for arg in typing.get_args(hint) if arg is not type(None)]
        if raw is None or raw == "":
            return None
        if not _matches(inner, raw) or inner is str and not isinstance(raw, str):
            return None
        return decode(inner, raw)
    origin = typing.get_origin(hint)
    if origin is tuple:
        return _decode_tuple(typing.get_args(hint), raw)
    if origin is dict:
        _, value_type = typing.get_args(hint)
        if not isinstance(raw, dict):
            return {}
        if value_type is Any:
            return {str(k): v for k, v in raw.items()}
        return {str(k): decode(value_type, v) for k, v in raw.items()
                if v is not None or _optional(value_type)}
    if hint is Any:
        return raw
    if isinstance(hint, type) and issubclass(hint, Shape):
        return hint.from_json(raw)  # type: ignore[attr-defined]
    return _scalar(hint, raw)


def _matches(hint: Any, raw: Any) -> bool:
    """Whether `raw` is (roughly) a `hint`: an optional field of the wrong kind reads as None."""
    if hint is str:
        return isinstance(raw, str | int | float) and not isinstance(raw, bool)
    if hint is int:
        return isinstance(raw, int) and not isinstance(raw, bool)
    if hint is float:
        return isinstance(raw, int | float | str) and not isinstance(raw, bool)
    if hint is bool:
        return isinstance(raw, bool)
    if isinstance(hint, type) and issubclass(hint, Shape):
        return isinstance(raw, dict)
    return True


def _decode_tuple(args: tuple[Any, ...], raw: Any) -> tuple[Any, ...]:
    if not isinstance(raw, list | tuple):
        return ()
    if len(args) == 2 and args[1] is Ellipsis:
        items = (decode(args[0], item) for item in raw
                 if not (isinstance(args[0], type) and issubclass(args[0], Shape))
                 or isinstance(item, dict))
        return tuple(item for item in items if item is not None and item != ())
    # a fixed-size tuple, such as a (path, why) pair
    return tuple(decode(arg, item) for arg, item in zip(args, raw, strict=False)) \
        if len(raw) == len(args) else ()


def _scalar(hint: Any, raw: Any) -> Any:
    if hint is str:
        return "" if raw is None or not _matches(str, raw) else str(raw)
    if hint is int:
        return raw if _matches(int, raw) else 0
    if hint is float:
        return _seconds_or_number(raw)
    if hint is bool:
        return raw if isinstance(raw, bool) else False
    return raw


def _seconds_or_number(raw: Any) -> float:
    """A number; an ISO 8601 time reads as its epoch seconds (older daemons sent those)."""
    if isinstance(raw, bool):
        return 0.0
    if isinstance(raw, int | float):
        return float(raw)
    if isinstance(raw, str):
        try:
            return datetime.fromisoformat(raw).timestamp()
        except ValueError:
            return 0.0
    return 0.0
