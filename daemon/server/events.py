"""The event bus: notifications to the connections that subscribed, from any thread."""

from __future__ import annotations

import asyncio
import logging
import threading
from typing import Any, Protocol

from intentd.daemon import protocol

log = logging.getLogger(__name__)


class Subscriber(Protocol):
    subscriptions: set[str] | None

    def send(self, message: dict[str, Any]) -> None: ...


class EventBus:
    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.subscribers: set[Subscriber] = set()
        # events from other threads, handed to the loop in batches: one wake-up for a burst
        self._handed: list[tuple[str, dict[str, Any]]] = []
        self._handing = threading.Lock()

    def publish(self, method: str, params: dict[str, Any]) -> None:
        """Send to every subscriber of `method` (call on the event loop's thread)."""
        message = protocol.notification(method, params)
        for subscriber in list(self.subscribers):
            wanted = subscriber.subscriptions
            if wanted is not None and method in wanted:
                subscriber.send(message)

    def wanted(self, method: str) -> bool:
        """Whether any connection subscribed to `method`. Safe from any thread: the copy of the
        set is taken whole, under the interpreter's lock."""
        return any(s.subscriptions is not None and method in s.subscriptions
                   for s in list(self.subscribers))

    def publish_threadsafe(self, method: str, params: dict[str, Any]) -> None:
        """For engine and watcher threads: hand the event to the loop, in order. An event nobody
        subscribed to is not handed at all (waking the loop costs a call's thread the
        interpreter); events handed while the loop has not yet taken the last ones go with them."""
        if not self.wanted(method):
            return
        with self._handing:
            self._handed.append((method, params))
            if len(self._handed) > 1:
                return  # the loop is already called for: it takes this one too
        try:
            self.loop.call_soon_threadsafe(self._take_handed)
        except RuntimeError:
            log.debug("event %s dropped: the loop is closed", method)

    def _take_handed(self) -> None:
        with self._handing:
            handed, self._handed = self._handed, []
        for method, params in handed:
            self.publish(method, params)
