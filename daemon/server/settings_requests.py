"""Widening auto-approval from any client but the app: held until a person confirms it there."""

# Narrowing (fewer calls run unasked) applies at once, from any client on the person's side.
# Widening from a script waits here, like a tool call waits for approval, and applies only
# when the person confirms it in the desktop app (settings/confirm).

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field
from typing import Any

from intentd.daemon import protocol
from intentd.daemon.server.events import EventBus
from intentd.daemon.server.rpc import MethodError

MAX_PENDING = 50  # a script asking again and again replaces its oldest requests
_ids = itertools.count(1)


def widening(in_force: dict[str, Any], changes: dict[str, bool | int]) -> dict[str, bool | int]:
    """The changes that let more calls run unasked than `in_force` does."""
    wider: dict[str, bool | int] = {}
    for key, value in changes.items():
        old = in_force.get(key)
        if key == "max_consecutive":
            old_limit = old if isinstance(old, int) and not isinstance(old, bool) else 1
            # 0 means no limit: the widest there is
            if old_limit and (value == 0 or int(value) > old_limit):
                wider[key] = value
        elif value is True and old is not True:
            wider[key] = value
    return wider


@dataclass
class SettingsRequest:
    workspace: str
    auto_approve: dict[str, bool | int]
    requested_by: str
    id: str = field(default_factory=lambda: f"set-{next(_ids)}")
    created_at: float = field(default_factory=time.time)

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "workspace": self.workspace, "auto_approve": dict(self.auto_approve),
                "requested_by": self.requested_by, "created_at": self.created_at}


class SettingsRequests:
    def __init__(self, bus: EventBus) -> None:
        self.bus = bus
        self.pending: dict[str, SettingsRequest] = {}

    def add(self, workspace: str, changes: dict[str, bool | int], by: str) -> SettingsRequest:
        while len(self.pending) >= MAX_PENDING:
            self._resolve(next(iter(self.pending)), "replaced")
        request = SettingsRequest(workspace, dict(changes), by[:300])
        self.pending[request.id] = request
        self.bus.publish(protocol.SETTINGS_REQUESTED, request.to_json())
        return request

    def take(self, request_id: str, workspace: str, resolution: str) -> SettingsRequest:
        request = self.pending.get(request_id)
        if request is None or request.workspace != workspace:
            raise MethodError(protocol.UNKNOWN_APPROVAL, f"settings request {request_id!r} does not "
                           "exist in this workspace or was already answered")
        return self._resolve(request_id, resolution)

    def _resolve(self, request_id: str, resolution: str) -> SettingsRequest:
        request = self.pending.pop(request_id)
        self.bus.publish(protocol.SETTINGS_RESOLVED, {"id": request_id, "workspace":
                                                      request.workspace, "resolution": resolution})
        return request

    def listing(self, workspace: str) -> list[dict[str, Any]]:
        return [r.to_json() for r in self.pending.values() if r.workspace == workspace]
