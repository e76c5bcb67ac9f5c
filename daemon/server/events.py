"""The event bus: notifications to the connections that subscribed, from any thread."""

from __future__ import annotations

import asyncio
import logging
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

    def publish(self, method: str, params: dict[str, Any]) -> None:
        """Send to every subscriber of `method` (call on the event loop's thread)."""
        message = protocol.notification(method, params)
        for subscriber in list(self.subscribers):
            wanted = subscriber.subscriptions
            if wanted is not None and method in wanted:
                subscriber.send(message)

    def publish_threadsafe(self, method: str, params: dict[str, Any]) -> None:
        """For engine and watcher threads: hand the event to the loop."""
        try:
            self.loop.call_soon_threadsafe(self.publish, method, params)
        except RuntimeError:
            log.debug("event %s dropped: the loop is closed", method)
