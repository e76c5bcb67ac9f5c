"""Entry point of `intentd-gui`: arguments, the QApplication, and the --screenshot mode."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from intentd.daemon import protocol
from intentd.gui.app_core import AppCore
from intentd.gui.icon import app_icon
from intentd.gui.tray import TrayNotifier
from intentd.gui.views.main_window import MainWindow

SCREENSHOT_TIMEOUT_S = 20.0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="intentd-gui", description="Approve an AI agent's tool calls, see intents and diffs.")
    parser.add_argument("--socket", type=Path, default=None,
                        help=f"the daemon's socket (default: {protocol.default_socket_path()})")
    parser.add_argument("--start-daemon", action="store_true",
                        help="start `intentd serve` without asking when none runs")
    parser.add_argument("--workspace", type=Path, default=None, metavar="DIR",
                        help="show this workspace first (the daemon loads it if needed)")
    parser.add_argument("--screenshot", type=Path, default=None, metavar="PNG",
                        help="once connected and loaded, save the window as PNG and exit")
    parser.add_argument("--screenshot-timeout", type=float, default=SCREENSHOT_TIMEOUT_S,
                        metavar="SECONDS", help=argparse.SUPPRESS)
    return parser


class Screenshot:
    """Saves the window once the state has loaded, then quits (exit code 1 on a timeout)."""

    def __init__(self, app: QApplication, window: MainWindow, core: AppCore, path: Path,
                 timeout_s: float) -> None:
        self.app, self.window, self.core, self.path = app, window, core, path
        core.sync.loaded.connect(self._on_sync_loaded)
        QTimer.singleShot(int(timeout_s * 1000), self._on_timeout)

    def _on_sync_loaded(self) -> None:
        # Let the views take the loaded state (selection, diff, layout) before grabbing.
        QTimer.singleShot(0, lambda: QTimer.singleShot(0, self._select))

    def _select(self) -> None:
        # Then Approve and Reject wait out their pause: the picture is what a person sees.
        pane = self.window.approvals_pane
        pane.select_row(0)
        QTimer.singleShot(pane.SETTLE_MS + 100, self._save)

    def _save(self) -> None:
        QApplication.processEvents()
        if not self.window.grab().save(str(self.path), "PNG"):
            print(f"intentd-gui: could not write {self.path}", file=sys.stderr)
            self.app.exit(1)
            return
        print(f"intentd-gui: saved {self.path}")
        self.app.exit(0)

    def _on_timeout(self) -> None:
        error = self.core.connection.last_error or "the state did not load in time"
        print(f"intentd-gui: no screenshot: {error}", file=sys.stderr)
        self.app.exit(1)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    app = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(app, QApplication)
    app.setApplicationName("intentd")
    app.setDesktopFileName("intentd-gui")
    app.setWindowIcon(app_icon())
    socket_path = args.socket or protocol.default_socket_path()
    workspace = os.path.realpath(args.workspace) if args.workspace else None
    core = AppCore.create(socket_path, [workspace] if workspace else [], app)
    window = MainWindow(core, preferred_workspace=workspace)
    screenshot = None
    if args.screenshot:
        screenshot = Screenshot(app, window, core, args.screenshot, args.screenshot_timeout)
    else:
        TrayNotifier(window, core.approvals, window)
    if args.start_daemon or not args.screenshot:  # a screenshot never waits on a dialog
        window.handle_missing_daemon(start_without_asking=args.start_daemon)
    window.show()
    core.connection.open()
    code = app.exec()
    del screenshot
    core.connection.close()
    return code


if __name__ == "__main__":
    sys.exit(main())
