"""Benchmarks of the desktop app (run as a script; prints figures, asserts nothing).

    python tests/bench/bench_gui.py

1. 1,000 pending approvals from a real daemon, two ways: loaded with approvals/list when the app
   connects, and arriving live as approvals/requested notifications while it is connected. A
   5 ms timer records every gap in the event loop; the longest gap is the longest stall a person
   would feel. Target: no stall over 100 ms.
2. A 5,000-line diff rendered in the diff pane (parse, lay out, paint), unified and side by side.
   Target: 300 ms.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("XDG_STATE_HOME", tempfile.mkdtemp(prefix="itd-state-"))

from PySide6.QtCore import QElapsedTimer, QEventLoop, Qt, QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

import intentd.gui  # noqa: E402,F401 - the PySide6 workaround, before any Qt call
from intentd.daemon import protocol  # noqa: E402
from intentd.daemon.client import Client  # noqa: E402
from intentd.daemon.testing import DaemonProcess, make_workspace  # noqa: E402
from intentd.gui.app_core import AppCore  # noqa: E402
from intentd.gui.diff.view import SIDE_BY_SIDE, UNIFIED, DiffPane  # noqa: E402
from intentd.gui.tray import TrayNotifier  # noqa: E402
from intentd.gui.views.main_window import MainWindow  # noqa: E402

APPROVALS = 1000
DIFF_LINES = 5000
AGENT = Path(__file__).resolve().parents[1] / "gui" / "agent.py"
# Each proposed file is 60 lines, so each approval carries a 60-line diff (~2.5 KB).
CONTENT = "".join(f"def step_{i}(state: dict[str, int]) -> int:  # step {i}\n"
                  f"    return state.get('count', 0) + {i}\n\n" for i in range(20))


class StallMeter:
    """A 5 ms timer; the longest time between two of its ticks is the longest stall."""

    def __init__(self) -> None:
        self.clock = QElapsedTimer()
        self.timer = QTimer()
        self.timer.setTimerType(Qt.TimerType.PreciseTimer)
        self.timer.setInterval(5)
        self.timer.timeout.connect(self._tick)
        self.longest_ms = 0.0
        self._last = 0.0

    def start(self) -> None:
        self.clock.start()
        self._last = 0.0
        self.longest_ms = 0.0
        self.timer.start()

    def stop(self) -> float:
        self._tick()
        self.timer.stop()
        return self.longest_ms

    def _tick(self) -> None:
        now = self.clock.nsecsElapsed() / 1e6
        self.longest_ms = max(self.longest_ms, now - self._last)
        self._last = now


def wait_until(app: QApplication, done: Callable[[], bool], timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while not done():
        if time.monotonic() > deadline:
            raise TimeoutError("the benchmark did not reach its end state in time")
        # Sleeps until something happens, as exec() would (the 5 ms meter wakes it up too).
        app.processEvents(QEventLoop.ProcessEventsFlag.WaitForMoreEvents)


def start_agent(socket: Path, workspace: Path, count: int) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, str(AGENT), str(socket), str(workspace),
                             "--count", str(count), "--content", CONTENT], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def pending(socket: Path) -> tuple[int, int]:
    """How many approvals wait, and the size of the approvals/list answer in bytes."""
    with Client(socket, timeout=30) as client:
        result = client.call(protocol.APPROVALS_LIST)
        return len(result["approvals"]), len(protocol.encode(result))


def open_window(socket: Path) -> tuple[MainWindow, AppCore]:
    """The window as `intentd-gui` builds it, tray notifier included."""
    core = AppCore.create(socket)
    window = MainWindow(core)
    TrayNotifier(window, core.approvals, window)
    window.show()
    return window, core


def bench_initial_load(app: QApplication, folder: Path) -> None:
    with DaemonProcess(folder / "a.sock", folder / "state-a") as daemon:
        workspace = make_workspace(folder / "ws-a")
        agent = start_agent(daemon.socket_path, workspace, APPROVALS)
        started = time.perf_counter()
        while (waiting := pending(daemon.socket_path))[0] < APPROVALS:
            time.sleep(0.05)
        queued_s = time.perf_counter() - started
        window, core = open_window(daemon.socket_path)
        meter = StallMeter()
        meter.start()
        started = time.perf_counter()
        core.connection.open()
        wait_until(app, lambda: core.sync.is_loaded
                   and window.approvals_pane.model.rowCount() == APPROVALS, 60)
        wait_until(app, lambda: window.approvals_pane.current() is not None, 5)
        app.processEvents()
        load_s = time.perf_counter() - started
        longest = meter.stop()
        size = waiting[1]
        print(f"approvals/list load, {APPROVALS} approvals, {size / 1e6:.1f} MB (real daemon): "
              f"loaded in {load_s * 1000:.0f} ms, longest event-loop stall {longest:.1f} ms "
              f"(daemon queued them in {queued_s:.1f} s)")
        core.connection.close()
        window.close()
        agent.kill()
        agent.communicate()


def bench_live_arrival(app: QApplication, folder: Path) -> None:
    with DaemonProcess(folder / "b.sock", folder / "state-b") as daemon:
        workspace = make_workspace(folder / "ws-b")
        window, core = open_window(daemon.socket_path)
        core.connection.open()
        wait_until(app, lambda: core.sync.is_loaded, 20)
        meter = StallMeter()
        meter.start()
        started = time.perf_counter()
        agent = start_agent(daemon.socket_path, workspace, APPROVALS)
        wait_until(app, lambda: window.approvals_pane.model.rowCount() == APPROVALS, 120)
        app.processEvents()
        arrival_s = time.perf_counter() - started
        longest = meter.stop()
        print(f"approvals/requested live, {APPROVALS} notifications (real daemon): "
              f"all shown after {arrival_s * 1000:.0f} ms, longest event-loop stall "
              f"{longest:.1f} ms")
        core.connection.close()
        window.close()
        agent.kill()
        agent.communicate()


def big_diff(lines: int) -> str:
    out = ["diff --git a/src/big.py b/src/big.py", "--- a/src/big.py", "+++ b/src/big.py"]
    n = 1
    while len(out) < lines:
        out.append(f"@@ -{n},8 +{n},8 @@")
        for i in range(3):
            out.append(f" def handler_{n}_{i}(request, limit: int = {i}) -> str:")
        out.append(f"-    return render('page_{n}.html', items=items[:limit])  # old")
        out.append(f"+    return render(\"page_{n}.html\", items=items[:limit + 1])")
        for i in range(3):
            out.append(f"     if request.user is None: raise PermissionError({n + i})")
        n += 8
    return "\n".join(out[:lines]) + "\n"


def bench_diff(app: QApplication) -> None:
    text = big_diff(DIFF_LINES)
    pane = DiffPane()
    pane.resize(1000, 560)
    pane.show()
    pane.set_diff(big_diff(50), "src/small.py")  # first use of the widgets' Qt types
    app.processEvents()
    for mode in (UNIFIED, SIDE_BY_SIDE):
        pane.set_mode(mode)
        times = []
        for _ in range(5):
            pane.set_diff(None)
            app.processEvents()
            started = time.perf_counter()
            pane.set_diff(text, "src/big.py", "big.py")
            app.processEvents()
            pane.grab()  # paint it
            times.append((time.perf_counter() - started) * 1000)
        print(f"{DIFF_LINES}-line diff, {mode}: median {statistics.median(times):.0f} ms, "
              f"worst {max(times):.0f} ms of {len(times)} renders")
    pane.close()


def main() -> int:
    app = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(app, QApplication)
    folder = Path(tempfile.mkdtemp(prefix="itd-", dir="/tmp"))
    print(f"Python {sys.version.split()[0]}, offscreen={os.environ['QT_QPA_PLATFORM']}")
    bench_diff(app)
    bench_initial_load(app, folder)
    bench_live_arrival(app, folder)
    return 0


if __name__ == "__main__":
    sys.exit(main())
