"""The event bus from other threads: nothing handed when nobody listens, all of it, in order,
when someone does."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from intentd.daemon.server.events import EventBus


class Listener:
    def __init__(self, wanted: set[str] | None) -> None:
        self.subscriptions = wanted
        self.got: list[dict[str, Any]] = []

    def send(self, message: dict[str, Any]) -> None:
        self.got.append(message)


def test_events_from_threads_arrive_whole_and_in_order() -> None:
    async def main() -> tuple[list[int], int, list[dict[str, Any]]]:
        loop = asyncio.get_running_loop()
        bus = EventBus(loop)
        wakes = [0]
        original = loop.call_soon_threadsafe

        def counted(*args: Any, **kw: Any) -> Any:
            wakes[0] += 1
            return original(*args, **kw)

        loop.call_soon_threadsafe = counted  # type: ignore[method-assign]
        listener, deaf = Listener({"tools/finished"}), Listener(None)
        bus.subscribers.update({listener, deaf})

        def publish() -> None:
            for n in range(500):
                bus.publish_threadsafe("tools/finished", {"n": n})
                bus.publish_threadsafe("checkpoints/created", {"n": n})  # nobody wants it

        thread = threading.Thread(target=publish)
        thread.start()
        thread.join()  # the loop is held meanwhile: the events wait for it, as under load
        for _ in range(100):
            if len(listener.got) == 500:
                break
            await asyncio.sleep(0.01)
        return [m["params"]["n"] for m in listener.got], wakes[0], deaf.got

    order, wakes, deaf = asyncio.run(main())
    assert order == list(range(500))
    assert deaf == []
    assert wakes == 1  # the loop was busy: one wake-up took the whole burst


def test_nothing_is_handed_to_the_loop_when_nobody_subscribed() -> None:
    async def main() -> int:
        loop = asyncio.get_running_loop()
        bus = EventBus(loop)
        calls = [0]

        def counted(*args: Any, **kw: Any) -> Any:
            calls[0] += 1
            raise AssertionError("the loop was woken")

        loop.call_soon_threadsafe = counted  # type: ignore[method-assign]
        thread = threading.Thread(target=lambda: [bus.publish_threadsafe("tools/finished", {})
                                                  for _ in range(10)])
        thread.start()
        thread.join()
        return calls[0]

    assert asyncio.run(main()) == 0
