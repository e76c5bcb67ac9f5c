"""The main window: workspaces on the left, one tab per part, the connection state always shown."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from PySide6.QtCore import QModelIndex, Qt, QTimer, QUrl
from PySide6.QtGui import QAction, QDesktopServices, QKeySequence
from PySide6.QtWidgets import (
    QLabel,
    QListView,
    QMainWindow,
    QMessageBox,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from intentd.gui.app_core import AppCore
from intentd.gui.connection import ConnectionState
from intentd.gui.daemon_process import start_daemon
from intentd.gui.models.activity import ActivityModel
from intentd.gui.models.approvals import ApprovalsModel
from intentd.gui.models.workspaces import WorkspacesModel
from intentd.gui.state.records import LedgerEntry
from intentd.gui.views.activity import ActivityPane
from intentd.gui.views.approvals import ApprovalsPane
from intentd.gui.views.banner import Banner
from intentd.gui.views.blame import BlameView
from intentd.gui.views.chain_status import ChainStatus
from intentd.gui.views.checkpoint_coverage import CoverageStatus
from intentd.gui.views.checkpoints import CheckpointsPane
from intentd.gui.views.connection_status import STARTING, ConnectionStatus
from intentd.gui.views.intents import IntentsPane
from intentd.gui.views.sandbox_status import SandboxStatus
from intentd.gui.views.scope_offer import attach, offer_for_approval, offer_for_entry
from intentd.gui.views.settings import SettingsPane

APPROVALS, INTENTS, CHECKPOINTS, ACTIVITY, SETTINGS = range(5)


class MainWindow(QMainWindow):
    def __init__(self, core: AppCore, preferred_workspace: str | None = None,
                 open_url: Callable[[QUrl], object] = QDesktopServices.openUrl) -> None:
        super().__init__()
        self.core = core
        self.preferred_workspace = preferred_workspace
        self.daemon_offer: QMessageBox | None = None
        self.blame_view: BlameView | None = None
        self.started_daemon_pid: int | None = None
        self.workspaces_model = WorkspacesModel(core.workspaces, core.approvals, self)
        self.workspace_list = QListView(self)
        self.workspace_list.setAccessibleName("Workspaces")
        self.workspace_list.setModel(self.workspaces_model)
        self.approvals_pane = ApprovalsPane(ApprovalsModel(core.approvals, self), core.commands,
                                            self)
        self.intents_pane = IntentsPane(core.workspaces, self, open_url, core.connection)
        self.checkpoints_pane = CheckpointsPane(core.workspaces, core.commands, self,
                                                core.sync.coverage)
        self.activity_pane = ActivityPane(ActivityModel(core.activity, self), self,
                                          ChainStatus(core.connection, self))
        self.settings_pane = SettingsPane(core.workspaces, core.commands, self)
        self.tabs = QTabWidget(self)
        for pane, title in ((self.approvals_pane, "Approvals"), (self.intents_pane, "Intents"),
                            (self.checkpoints_pane, "Checkpoints"),
                            (self.activity_pane, "Activity"), (self.settings_pane, "Settings")):
            self.tabs.addTab(pane, title)
        self.connection_banner = Banner("&Start the daemon", self)
        self.connection_banner.action_clicked.connect(self.start_daemon)
        self.connection_status = ConnectionStatus(core.connection, self)
        self.statusBar().addPermanentWidget(self.connection_status)
        self.sandbox_status = SandboxStatus(core.connection, core.activity, self)
        self.statusBar().addPermanentWidget(self.sandbox_status)
        self.coverage_status = CoverageStatus(core.sync.coverage, self)
        self.statusBar().addPermanentWidget(self.coverage_status)
        self._build_layout()
        self._build_actions()
        self.workspace_list.selectionModel().currentChanged.connect(
            self._on_workspace_list_current_changed)
        core.workspaces.workspace_added.connect(self._on_workspaces_workspace_added)
        core.connection.state_changed.connect(self._on_connection_state_changed)
        core.activity.entry_added.connect(self._on_activity_entry_added)
        core.commands.command_failed.connect(self._on_failure)
        self.approvals_pane.answer_withheld.connect(self._on_approvals_pane_answer_withheld)
        core.sync.request_failed.connect(self._on_failure)
        self._attach_scope_offers()
        # Titles are redrawn once per pass of the event loop, not once per request of a burst.
        self._titles = QTimer(self, singleShot=True, interval=0)
        self._titles.timeout.connect(self._update_tab_titles)
        for changed in (self.approvals_pane.model.rowsInserted,
                        self.approvals_pane.model.rowsRemoved,
                        self.approvals_pane.model.modelReset):
            changed.connect(self._titles.start)
        self.tabs.currentChanged.connect(self._on_tabs_current_changed)
        self._on_connection_state_changed(core.connection.state)
        self._update_tab_titles()
        self.resize(1280, 800)

    def _attach_scope_offers(self) -> None:
        """"Add to this intent's scope…" on a call refused at scope, and on an approval."""
        activity, approvals, intents = self.activity_pane, self.approvals_pane, self.intents_pane
        self.activity_scope_action = attach(activity.table, lambda index: offer_for_entry(
            activity.model.entry_at(activity.proxy.mapToSource(index).row())), intents.offer_scope)
        self.approval_scope_action = attach(approvals.table, lambda index: offer_for_approval(
            approvals.model.approval_at(index.row())), intents.offer_scope)
        if intents.editor is not None:
            intents.editor.edit_failed.connect(self._on_failure)

    def _build_layout(self) -> None:
        side = QWidget(self)
        heading = QLabel("&Workspaces", side)
        heading.setBuddy(self.workspace_list)
        column = QVBoxLayout(side)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(heading)
        column.addWidget(self.workspace_list)
        split = QSplitter(self)
        split.addWidget(side)
        split.addWidget(self.tabs)
        split.setStretchFactor(1, 1)
        split.setSizes([200, 1080])
        central = QWidget(self)
        layout = QVBoxLayout(central)
        layout.setContentsMargins(6, 6, 6, 0)
        layout.addWidget(self.connection_banner)
        layout.addWidget(split, 1)
        self.setCentralWidget(central)

    def _action(self, menu_name: str, text: str, slot: Callable[[], object],
                *keys: str) -> QAction:
        action = QAction(text, self)
        action.setShortcuts([QKeySequence(k) for k in keys])
        action.triggered.connect(slot)
        self._menus[menu_name].addAction(action)
        return action

    def _build_actions(self) -> None:
        bar = self.menuBar()
        self._menus = {name: bar.addMenu(name) for name in
                       ("&File", "Re&quest", "&Intents", "&Checkpoints", "&View")}
        a = self._action
        a("&File", "&Reconnect / reload", self.reload, "F5")
        a("&File", "&Start the daemon", self.start_daemon)
        a("&File", "&Quit", self.close, "Ctrl+Q")
        self.approve_action = a("Re&quest", "&Approve", self.approve, "Ctrl+Return", "Ctrl+Enter")
        self.reject_action = a("Re&quest", "&Reject with feedback", self.reject,
                               "Ctrl+Backspace")
        a("Re&quest", "Write &feedback", self.focus_feedback, "Ctrl+K")
        a("Re&quest", "&Unified or side by side", self.toggle_diff_mode, "Ctrl+D")
        a("&Intents", "&Open intents file in editor", self.intents_pane.open_intents_file,
          "Ctrl+E")
        a("&Checkpoints", "&Restore the selected checkpoint…", self.restore_checkpoint, "Ctrl+R")
        a("&Checkpoints", "&Lines by intent…", self.show_blame, "Ctrl+B")
        for index, name in enumerate(("&Approvals", "&Intents", "&Checkpoints", "A&ctivity",
                                      "&Settings")):
            a("&View", name, partial(self.show_tab, index), f"Ctrl+{index + 1}")
        a("&View", "&Workspaces list", self.workspace_list.setFocus, "Ctrl+L")
        a("&View", "&Filter activity", self.filter_activity, "Ctrl+F")

    # -- actions -------------------------------------------------------------------------------
    def show_tab(self, index: int) -> None:
        self.tabs.setCurrentIndex(index)
        self.tabs.currentWidget().setFocus()

    def approve(self) -> None:
        if self.tabs.currentIndex() != APPROVALS:
            self.show_tab(APPROVALS)  # show what would be approved, rather than approve unseen
            return
        self.approvals_pane.approve_current()

    def reject(self) -> None:
        if self.tabs.currentIndex() != APPROVALS:
            self.show_tab(APPROVALS)
            return
        self.approvals_pane.reject_current()

    def focus_feedback(self) -> None:
        self.tabs.setCurrentIndex(APPROVALS)
        self.approvals_pane.feedback.setFocus()

    def show_blame(self) -> None:
        """Lines by intent: of the file an edit waiting for approval would change (on the
        Approvals tab), else of the files of the selected checkpoint."""
        approval = self.approvals_pane.current() if self.tabs.currentIndex() == APPROVALS else None
        path = approval.args.get("path") if approval is not None else None
        if approval is not None and isinstance(path, str) and path:
            self.blame_view = BlameView(self.core.connection, approval.workspace, [path], self)
            self.blame_view.show()
            return
        checkpoint, workspace = self.checkpoints_pane.current(), self.current_workspace()
        if checkpoint is None or workspace is None or not checkpoint.files:
            self.show_tab(CHECKPOINTS)
            self.statusBar().showMessage("Select a checkpoint to see its files by intent", 8000)
            return
        self.blame_view = BlameView(self.core.connection, workspace, list(checkpoint.files), self)
        self.blame_view.show()

    def toggle_diff_mode(self) -> None:
        if self.tabs.currentIndex() == CHECKPOINTS:
            self.checkpoints_pane.diff.toggle_mode()
        else:
            self.approvals_pane.diff.toggle_mode()

    def restore_checkpoint(self) -> None:
        self.tabs.setCurrentIndex(CHECKPOINTS)
        self.checkpoints_pane.ask_to_restore()

    def filter_activity(self) -> None:
        self.tabs.setCurrentIndex(ACTIVITY)
        self.activity_pane.focus_filter()

    def reload(self) -> None:
        if self.core.connection.state == ConnectionState.CONNECTED:
            self.core.sync.reload()
        else:
            self.core.connection.open()

    def start_daemon(self) -> None:
        self.started_daemon_pid = start_daemon(self.core.connection.socket_path)
        if self.started_daemon_pid is None:
            self._on_failure("Could not start `intentd serve`.")
        else:
            self.statusBar().showMessage(STARTING, 5000)
            self.core.connection.open()

    def handle_missing_daemon(self, start_without_asking: bool) -> None:
        """When the first attempt finds no daemon: start one, or offer to."""
        self.core.connection.daemon_missing.connect(
            self.start_daemon if start_without_asking else self.offer_to_start_daemon)

    def offer_to_start_daemon(self) -> None:
        """Ask (without blocking the event loop) whether to start the daemon."""
        box = QMessageBox(QMessageBox.Icon.Question, "No intentd daemon",
                          f"No intentd daemon answers at {self.core.connection.socket_path}.\n\n"
                          "Start one now? It keeps running after this window closes, "
                          "for your agents.",
                          QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No, self)
        box.button(QMessageBox.StandardButton.Yes).setText("&Start the daemon")
        box.button(QMessageBox.StandardButton.No).setText("&Not now")
        box.setWindowModality(Qt.WindowModality.WindowModal)
        box.accepted.connect(self.start_daemon)
        box.finished.connect(box.deleteLater)
        self.daemon_offer = box
        box.open()

    def select_workspace(self, path: str) -> None:
        row = self.workspaces_model.row_of(path)
        if row >= 0:
            self.workspace_list.setCurrentIndex(self.workspaces_model.index(row))

    def current_workspace(self) -> str | None:
        index = self.workspace_list.currentIndex()
        return self.workspaces_model.path_at(index.row()) if index.isValid() else None

    # -- slots ---------------------------------------------------------------------------------
    def _on_workspace_list_current_changed(self, current: QModelIndex, _previous: QModelIndex
                                           ) -> None:
        path = self.workspaces_model.path_at(current.row()) if current.isValid() else None
        for pane in (self.intents_pane, self.checkpoints_pane, self.activity_pane,
                     self.settings_pane):
            pane.set_workspace(path)
        self._load_settings_if_shown()

    def _on_workspaces_workspace_added(self, path: str) -> None:
        if path == self.preferred_workspace or not self.workspace_list.currentIndex().isValid():
            self.select_workspace(path)

    def _on_connection_state_changed(self, state: str) -> None:
        # CONNECTING leaves the banner as it is, so retries do not make it flicker.
        if state == ConnectionState.CONNECTED:
            self.connection_banner.hide()
            self._load_settings_if_shown()  # they may have changed while disconnected
        elif state == ConnectionState.DISCONNECTED:
            error = self.core.connection.last_error or "the connection was lost"
            self.connection_banner.show_message(
                f"<b>Not connected to the daemon</b> ({error}). The app reconnects by itself "
                f"as soon as one answers at <code>{self.core.connection.socket_path}</code>.")

    def _on_activity_entry_added(self, entry: LedgerEntry) -> None:
        # A call that ran may have changed files: the checkpoint shown is diffed against "now"
        # (the pane does so only while on screen).
        if entry.decision == "allow" and entry.workspace == self.current_workspace():
            self.checkpoints_pane.refresh_diff()

    def _on_failure(self, message: str) -> None:
        self.statusBar().showMessage(message, 10000)

    def _on_approvals_pane_answer_withheld(self, message: str) -> None:
        self.statusBar().showMessage(message, 8000)

    def _on_tabs_current_changed(self, _index: int) -> None:
        self._load_settings_if_shown()

    def _load_settings_if_shown(self) -> None:
        """Settings are asked for when the Settings tab shows them, not on every switch."""
        path = self.current_workspace()
        if (path is not None and self.tabs.currentIndex() == SETTINGS
                and self.core.connection.state == ConnectionState.CONNECTED):
            self.core.sync.load_settings(path)

    def _update_tab_titles(self) -> None:
        count = self.approvals_pane.model.rowCount()
        self.tabs.setTabText(APPROVALS, f"Approvals ({count})" if count else "Approvals")

