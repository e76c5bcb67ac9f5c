"""The tray icon with the pending count, and a notification when a request comes in unseen."""

from __future__ import annotations

from PySide6.QtCore import QObject, QTimer
from PySide6.QtWidgets import QApplication, QMenu, QSystemTrayIcon, QWidget

from intentd.gui.icon import app_icon
from intentd.gui.state.approvals import PendingApprovals
from intentd.gui.state.records import Approval, workspace_name


class TrayNotifier(QObject):
    """Without a system tray (offscreen, some desktops) the window title and an alert stand in."""

    def __init__(self, window: QWidget, approvals: PendingApprovals,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.window = window
        self.approvals = approvals
        self.notified = 0  # notifications shown (or, without a tray, alerts raised)
        self.tray: QSystemTrayIcon | None = None
        if QSystemTrayIcon.isSystemTrayAvailable():
            self.tray = QSystemTrayIcon(app_icon(), self)
            menu = QMenu(window)
            menu.addAction("Show intentd", self.show_window)
            menu.addAction("Quit", QApplication.quit)
            self.tray.setContextMenu(menu)
            self.tray.activated.connect(self._on_tray_activated)
            self.tray.show()
        # The icon is redrawn once per pass of the event loop, not once per request of a burst.
        self._redraw = QTimer(self, singleShot=True, interval=0)
        self._redraw.timeout.connect(self._on_redraw_timeout)
        approvals.approval_added.connect(self._on_approvals_approval_added)
        approvals.approval_removed.connect(self._redraw.start)
        approvals.approvals_reset.connect(self._redraw.start)
        self._on_redraw_timeout()

    def show_window(self) -> None:
        self.window.showNormal()
        self.window.raise_()
        self.window.activateWindow()

    def _on_tray_activated(self, reason: QSystemTrayIcon.ActivationReason) -> None:
        if reason in (QSystemTrayIcon.ActivationReason.Trigger,
                      QSystemTrayIcon.ActivationReason.DoubleClick):
            self.show_window()

    def _on_approvals_approval_added(self, approval: Approval) -> None:
        self._redraw.start()
        if self.window.isActiveWindow():
            return
        self.notified += 1
        if self.tray is not None and QSystemTrayIcon.supportsMessages():
            self.tray.showMessage(
                f"{approval.tool} waits for you",
                f"{workspace_name(approval.workspace)}: {approval.target[:80]}\n{approval.reason}",
                QSystemTrayIcon.MessageIcon.Information, 8000)
        else:
            QApplication.alert(self.window)

    def _on_redraw_timeout(self) -> None:
        count = len(self.approvals)
        icon = app_icon(count)
        self.window.setWindowIcon(icon)
        self.window.setWindowTitle(f"({count}) intentd" if count else "intentd")
        if self.tray is not None:
            self.tray.setIcon(icon)
            self.tray.setToolTip(f"intentd — {count} request(s) wait for you" if count
                                 else "intentd — nothing waits for you")
