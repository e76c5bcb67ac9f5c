"""YAML text for one value, written so that the loader (YAML 1.1) reads back exactly that value."""

from __future__ import annotations

import io
import json

import yaml
from ruamel.yaml import YAML


def _dumper(flow: bool) -> YAML:
    dumper = YAML(typ="rt")
    dumper.width = 1 << 20  # never fold a long glob or name over two lines
    dumper.default_flow_style = flow
    return dumper


def _reads_back(text: str, value: str, flow: bool) -> bool:
    try:
        loaded = yaml.safe_load(f"[{text}]" if flow else text)
    except yaml.YAMLError:
        return False
    return bool(loaded == ([value] if flow else value))


def scalar(value: str, flow: bool = False, style: str | None = None) -> str:
    """`value` as one line of YAML: plain where that reads back the same, else quoted.
    `style` `'` or `"` keeps the quoting a person chose for the value being replaced."""
    if style == "'" and "\n" not in value:
        return "'" + value.replace("'", "''") + "'"
    if style != '"' and "\n" not in value:
        out = io.StringIO()
        _dumper(flow).dump([value], out)
        text = out.getvalue().strip()
        text = text[1:-1].strip() if flow else text.removeprefix("- ").strip()
        if "\n" not in text and _reads_back(text, value, flow):
            return text
    return json.dumps(value, ensure_ascii=False)  # a double-quoted YAML scalar
