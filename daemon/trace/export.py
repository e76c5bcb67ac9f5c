"""Agent Trace export: one trace record (spec v0.1.0) per call that wrote lines, from the ledger."""

from __future__ import annotations

import hashlib
import json
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

from intentd.daemon import __version__
from intentd.daemon.engine.intents import INTENTS_FILE, load_intents
from intentd.daemon.engine.ledger import read_ledger
from intentd.daemon.engine.ledger_index import parse_time
from intentd.daemon.trace.contents import ContentStore
from intentd.daemon.trace.lines import split_lines

SPEC_VERSION = "0.1.0"
RECORD_NAMESPACE = uuid.UUID("6f1c1c62-2b7c-4d1e-9a51-0c2f7e3d9a10")  # ids stable across exports


class BadSince(ValueError):
    pass


def since_time(root: Path, since: str) -> float:
    """Epoch seconds from an ISO 8601 date or time, or from a git revision (its commit time)."""
    moment = parse_time(since)
    if moment is not None:
        return moment
    found = subprocess.run(["git", "-C", str(root), "log", "-1", "--format=%ct", since, "--"],
                           capture_output=True, text=True, timeout=30)
    if found.returncode != 0 or not found.stdout.strip().isdigit():
        raise BadSince(f"--since {since!r} is neither a date (2026-01-31, ISO 8601) nor a git "
                       "revision of this workspace")
    return float(found.stdout.strip())


def records(root: Path, ledger_path: Path, store: ContentStore,
            since: float | None = None) -> Iterator[dict[str, Any]]:
    """The trace records of the calls that wrote lines in the workspace at `root`, oldest first."""
    names = _intent_names(root)
    for entry in read_ledger(ledger_path, rotated=True):
        record = _record(root, entry, store, names, since)
        if record is not None:
            yield record


def _record(root: Path, entry: dict[str, Any], store: ContentStore, names: dict[str, str],
            since: float | None) -> dict[str, Any] | None:
    try:
        intent, receipt = entry["intent"], entry["receipt"]
        lines = receipt.get("lines") or {}
        when = parse_time(intent["time"])
        if not lines or when is None or (since is not None and when < since):
            return None
        files = [f for f in (_file(root, path, hunks, receipt, intent, store)
                             for path, hunks in lines.items()) if f is not None]
    except (KeyError, TypeError, AttributeError, ValueError):
        return None  # a damaged line: `intentd ledger verify` is the place that reports it
    if not files:
        return None
    record: dict[str, Any] = {
        "version": SPEC_VERSION,
        "id": str(uuid.uuid5(RECORD_NAMESPACE, f"{root}\0{intent['id']}\0{intent['time']}")),
        "timestamp": intent["time"],
        "tool": {"name": "intentd", "version": __version__},
        "files": files,
        "metadata": {"dev.intentd": {
            "call_id": intent["id"], "tool": intent.get("tool"), "agent": intent.get("agent"),
            "session": intent.get("session"), "intent_id": intent.get("intent_id"),
            "intent_name": names.get(str(intent.get("intent_id"))),
            "decision": entry.get("decision"), "approved_by": entry.get("approved_by")}},
    }
    if isinstance(receipt.get("vcs_revision"), str):
        record["vcs"] = {"type": "git", "revision": receipt["vcs_revision"]}
    return record


def _file(root: Path, path: str, hunks: Any, receipt: dict[str, Any], intent: dict[str, Any],
          store: ContentStore) -> dict[str, Any] | None:
    try:
        relative = Path(path).relative_to(root).as_posix()
    except ValueError:
        return None  # outside the workspace: not the repository's to attribute
    text = store.get(receipt["files_after"].get(path))
    lines = split_lines(text) if text is not None else None
    ranges = []
    for _i1, _i2, j1, j2 in hunks:
        if j2 <= j1:
            continue  # lines removed: nothing written to attribute
        found: dict[str, Any] = {"start_line": j1 + 1, "end_line": j2}
        if lines is not None and j2 <= len(lines):
            found["content_hash"] = "sha256:" + hashlib.sha256(b"".join(lines[j1:j2])).hexdigest()
        ranges.append(found)
    if not ranges:
        return None
    conversation: dict[str, Any] = {"contributor": {"type": "ai"}, "ranges": ranges}
    if intent.get("session"):
        conversation["url"] = "urn:intentd:session:" + quote(str(intent["session"]), safe="")
    if intent.get("intent_id"):
        conversation["related"] = [{"type": "intent", "url": "urn:intentd:intent:"
                                    + quote(str(intent["intent_id"]), safe="")}]
    return {"path": relative, "conversations": [conversation]}


def _intent_names(root: Path) -> dict[str, str]:
    try:
        return {i.id: i.name for i in load_intents(root / INTENTS_FILE).intents}
    except Exception:  # an invalid intents file: records keep the ids, without names
        return {}


def write_records(found: Iterator[dict[str, Any]], out: Any) -> int:
    """JSON Lines, one record a line (as the specification's reference store keeps them)."""
    count = 0
    for record in found:
        out.write(json.dumps(record, ensure_ascii=False) + "\n")
        count += 1
    return count
