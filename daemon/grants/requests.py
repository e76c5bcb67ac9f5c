"""Grants asked for from a client other than the app: held until the person confirms in the app."""

# A grant lets more calls run unasked, so it is a widening change: like a widening settings
# change (server/settings_requests.py) it applies from the app at once, and from any other
# client of the person's only once confirmed in the app (grants/confirm).

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from intentd.daemon.grants.model import Grant

MAX_PENDING = 50
_ids = itertools.count(1)
Publish = Callable[[str, dict[str, Any]], None]


@dataclass
class GrantRequest:
    grant: Grant
    requested_by: str
    id: str = field(default_factory=lambda: f"gr-{next(_ids)}")
    created_at: float = field(default_factory=time.time)

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "workspace": self.grant.workspace, "grant": self.grant.to_json(),
                "requested_by": self.requested_by, "created_at": self.created_at}


class GrantRequests:
    def __init__(self, publish: Publish, requested: str, resolved: str) -> None:
        self.publish, self._requested, self._resolved = publish, requested, resolved
        self.pending: dict[str, GrantRequest] = {}

    def add(self, grant: Grant, by: str) -> GrantRequest:
        while len(self.pending) >= MAX_PENDING:
            self.take(next(iter(self.pending)), "replaced")
        request = GrantRequest(grant, by[:300])
        self.pending[request.id] = request
        self.publish(self._requested, request.to_json())
        return request

    def take(self, request_id: str, resolution: str) -> GrantRequest | None:
        request = self.pending.pop(request_id, None)
        if request is not None:
            self.publish(self._resolved, {"id": request_id, "workspace": request.grant.workspace,
                                          "resolution": resolution})
        return request

    def listing(self, workspace: str | None = None) -> list[dict[str, Any]]:
        return [r.to_json() for r in self.pending.values()
                if workspace is None or r.grant.workspace == workspace]
