"""Which intent each Claude Code session selected, kept across daemon restarts.

The HTTP hook's sessions live in the daemon, so a restart would forget the selection and the
next write would be refused by the intent gate. A small file remembers it; the new daemon
session selects the intent again through `intents/select` (so the gate still decides: an intent
completed meanwhile is not selected, and the agent is told). The file is in the daemon's
private state folder; an agent that wrote it could only ask for a selection it may make anyway.
"""

from __future__ import annotations

import json
import logging
import os
from collections import OrderedDict
from pathlib import Path

log = logging.getLogger(__name__)
MAX_ENTRIES = 512
MAX_FILE_BYTES = 1024 * 1024


class HookMemory:
    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.entries: OrderedDict[str, dict[str, str]] = OrderedDict()
        if path is not None:
            self.entries.update(self._load(path))

    @staticmethod
    def _load(path: Path) -> dict[str, dict[str, str]]:
        try:
            with open(path, "rb") as handle:
                data = json.loads(handle.read(MAX_FILE_BYTES))
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict):
            return {}
        return {str(k): {"workspace": str(v["workspace"]), "intent_id": str(v["intent_id"])}
                for k, v in data.items()
                if isinstance(v, dict) and isinstance(v.get("workspace"), str)
                and isinstance(v.get("intent_id"), str)}

    def intent_of(self, key: str, workspace: str) -> str | None:
        entry = self.entries.get(key)
        return entry["intent_id"] if entry and entry["workspace"] == workspace else None

    def remember(self, key: str, workspace: str, intent_id: str) -> None:
        self.entries[key] = {"workspace": workspace, "intent_id": intent_id}
        self.entries.move_to_end(key)
        while len(self.entries) > MAX_ENTRIES:
            self.entries.popitem(last=False)
        self._save()

    def forget(self, key: str) -> None:
        if self.entries.pop(key, None) is not None:
            self._save()

    def _save(self) -> None:
        if self.path is None:
            return
        temp = self.path.with_name(f".{self.path.name}.{os.getpid()}")
        try:
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w") as handle:
                json.dump(self.entries, handle)
            os.replace(temp, self.path)
        except OSError as exc:
            log.warning("could not keep the HTTP hook's selections in %s: %s", self.path, exc)
