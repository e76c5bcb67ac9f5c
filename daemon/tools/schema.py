"""A small, fast JSON-schema subset validator for tool arguments (untrusted input)."""

from __future__ import annotations

from typing import Any

JsonSchema = dict[str, Any]

_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "object": (dict,),
    "array": (list,),
}


class SchemaError(ValueError):
    """The arguments do not match the tool's schema; the message says where and why."""


def validate(value: Any, schema: JsonSchema, where: str = "args") -> None:
    """Raise SchemaError when `value` does not match `schema` (type, required, enum, bounds)."""
    expected = schema.get("type")
    if expected is not None:
        _check_type(value, expected, where)
    if "enum" in schema and value not in schema["enum"]:
        raise SchemaError(f"{where} must be one of {schema['enum']}, got {value!r}")
    if isinstance(value, dict):
        _check_object(value, schema, where)
    elif isinstance(value, list):
        _check_array(value, schema, where)
    elif isinstance(value, str):
        _check_string(value, schema, where)
    elif isinstance(value, int | float) and not isinstance(value, bool):
        _check_number(value, schema, where)


def _check_type(value: Any, expected: str, where: str) -> None:
    # bool is an int subclass in Python, but never a JSON integer.
    if isinstance(value, bool) and expected in ("integer", "number"):
        raise SchemaError(f"{where} must be {expected}, got boolean")
    if not isinstance(value, _TYPES[expected]):
        raise SchemaError(f"{where} must be {expected}, got {_json_type(value)}")


def _check_object(value: dict[str, Any], schema: JsonSchema, where: str) -> None:
    properties: dict[str, JsonSchema] = schema.get("properties", {})
    for key in schema.get("required", ()):
        if key not in value:
            raise SchemaError(f"{where}.{key} is required")
    for key, item in value.items():
        if key in properties:
            validate(item, properties[key], f"{where}.{key}")
        elif schema.get("additionalProperties", True) is False:
            raise SchemaError(f"{where} has unknown property {str(key)[:100]!r}")


def _check_array(value: list[Any], schema: JsonSchema, where: str) -> None:
    if "minItems" in schema and len(value) < schema["minItems"]:
        raise SchemaError(f"{where} needs at least {schema['minItems']} item(s)")
    if "maxItems" in schema and len(value) > schema["maxItems"]:
        raise SchemaError(f"{where} takes at most {schema['maxItems']} item(s)")
    items = schema.get("items")
    if items is not None:
        for index, item in enumerate(value):
            validate(item, items, f"{where}[{index}]")


def _check_string(value: str, schema: JsonSchema, where: str) -> None:
    if "minLength" in schema and len(value) < schema["minLength"]:
        raise SchemaError(f"{where} must not be empty")
    if "maxLength" in schema and len(value) > schema["maxLength"]:
        raise SchemaError(f"{where} is longer than {schema['maxLength']} characters")


def _check_number(value: float, schema: JsonSchema, where: str) -> None:
    if "minimum" in schema and value < schema["minimum"]:
        raise SchemaError(f"{where} must be ≥ {schema['minimum']}")
    if "maximum" in schema and value > schema["maximum"]:
        raise SchemaError(f"{where} must be ≤ {schema['maximum']}")


def _json_type(value: Any) -> str:
    for name, types in _TYPES.items():
        if isinstance(value, types) and not isinstance(value, bool):
            return name
    return "null" if value is None else ("boolean" if isinstance(value, bool) else type(value).__name__)
