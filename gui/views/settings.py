"""The auto-approve switches of a workspace (settings/get, settings/update)."""

from __future__ import annotations

import html
from typing import Any

from PySide6.QtWidgets import (
    QCheckBox,
    QFormLayout,
    QLabel,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from intentd.gui.answers import AnswerCommands
from intentd.gui.commands import DaemonCommands
from intentd.gui.connection import ConnectionState
from intentd.gui.state.grants import grants_state
from intentd.gui.state.records import ConfigError, workspace_name
from intentd.gui.state.workspaces import WorkspaceRegistry
from intentd.gui.views.banner import Banner
from intentd.gui.views.grants import GrantsPanel
from intentd.gui.views.settings_requests import SettingsRequestsPanel

SWITCHES = (
    ("read", "Reads inside the workspace"),
    ("read_external", "Reads outside the workspace"),
    ("edit", "Edits inside the workspace"),
    ("edit_external", "Edits outside the workspace"),
    ("safe_commands", "Commands proven read-only"),
    ("all_commands", "Any command"),
    ("mcp", "MCP tools"),
)
LIMIT = ("max_consecutive", "Most auto-approvals in a row")


class SettingsPane(QWidget):
    """A change is sent at once; the daemon's answer (the settings in force) redraws the form,
    and so does a refusal: the form never shows a setting the daemon does not apply. Nothing can
    be changed while disconnected."""

    def __init__(self, registry: WorkspaceRegistry, commands: DaemonCommands,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.registry = registry
        self.commands = commands
        self.workspace: str | None = None
        self._updating = False
        self._limit_in_force = 0
        self.title = QLabel(self)
        self.banner = Banner("", self)
        self.note = QLabel("Calls of these kinds run without asking you. Changes are kept by the "
                           "daemon on top of the workspace's .orchestration/policy.yaml.", self)
        self.note.setWordWrap(True)
        self.requests = SettingsRequestsPanel(registry, commands.connection, dict(SWITCHES), self)
        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.FieldsStayAtSizeHint)
        self.switches: dict[str, QCheckBox] = {}
        for key, label in SWITCHES:
            box = QCheckBox(label, self)
            box.setObjectName(key)
            box.toggled.connect(lambda checked, key=key: self._changed(key, checked))
            self.switches[key] = box
            form.addRow(box)
        self.limit = QSpinBox(self)
        self.limit.setRange(0, 10000)
        self.limit.setAccessibleName(LIMIT[1])
        self.limit.editingFinished.connect(self._on_limit_editing_finished)
        form.addRow(f"{LIMIT[1]}:", self.limit)
        layout = QVBoxLayout(self)
        layout.addWidget(self.title)
        layout.addWidget(self.banner)
        layout.addWidget(self.requests)
        layout.addWidget(self.note)
        layout.addLayout(form)
        self.grants = GrantsPanel(grants_state(commands.connection),
                                  AnswerCommands(commands.connection, commands.approvals, self),
                                  self)
        layout.addWidget(self.grants)
        layout.addStretch(1)
        registry.settings_changed.connect(self._on_registry_settings_changed)
        commands.settings_update_failed.connect(self._on_commands_settings_update_failed)
        commands.connection.state_changed.connect(self._on_connection_state_changed)
        self.setFocusProxy(self.switches[SWITCHES[0][0]])
        self.set_workspace(None)

    def set_workspace(self, path: str | None) -> None:
        self.workspace = path
        self.title.setText(f"<b>Auto-approval in {html.escape(workspace_name(path))}</b>"
                           if path else "No workspace")
        self.title.setToolTip(path or "")
        self.grants.set_workspace(path)
        self._redraw()

    def _on_registry_settings_changed(self, path: str) -> None:
        if path == self.workspace:
            self._redraw()

    def _on_commands_settings_update_failed(self, path: str) -> None:
        if path == self.workspace:
            self._redraw()  # back to the settings in force, from the last the daemon sent

    def _on_connection_state_changed(self, _state: str) -> None:
        self._redraw()

    def _redraw(self) -> None:
        workspace = self.registry.get(self.workspace)
        settings = workspace.settings if workspace else None
        enabled = (settings is not None
                   and self.commands.connection.state == ConnectionState.CONNECTED)
        policy = _auto_approve(settings.get("policy") if settings else None)
        overrides = _auto_approve(settings.get("overrides") if settings else None)
        self._updating = True  # setting the boxes must not send updates back
        try:
            for key, box in self.switches.items():
                box.setEnabled(enabled)
                box.setChecked(bool(overrides.get(key, policy.get(key, False))))
                box.setToolTip("changed here (overrides policy.yaml)" if key in overrides
                               else "from policy.yaml")
            self.limit.setEnabled(enabled)
            self._limit_in_force = int(overrides.get(LIMIT[0], policy.get(LIMIT[0], 0)) or 0)
            self.limit.setValue(self._limit_in_force)
        finally:
            self._updating = False
        pending = settings.get("pending") if settings else None
        self.requests.show_requests(self.workspace, pending if isinstance(pending, list) else [])
        error = ConfigError.from_json(settings.get("error")) if settings else None
        if error is not None:
            self.banner.show_message(f"<b>policy.yaml is invalid</b>, so the safest defaults "
                                     f"apply and these switches do not.<br>"
                                     f"<code>{html.escape(str(error))}</code>")
        else:
            self.banner.hide()

    def _on_limit_editing_finished(self) -> None:
        if self.limit.value() != self._limit_in_force:  # leaving the field is no change
            self._changed(LIMIT[0], self.limit.value())

    def _changed(self, key: str, value: Any) -> None:
        if not self._updating and self.workspace:
            self.commands.update_settings(self.workspace, {key: value})


def _auto_approve(section: Any) -> dict[str, Any]:
    value = section.get("auto_approve") if isinstance(section, dict) else None
    return value if isinstance(value, dict) else {}
