"""The grants of a workspace in Settings: what runs unasked because the person said so once."""

from __future__ import annotations

import html
from typing import Any

from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from intentd.gui.answers import AnswerCommands
from intentd.gui.state.grants import GrantsState


class GrantsPanel(QWidget):
    """One row per grant (revoke, copy as policy rule) and per grant asked for outside the app
    (allow, refuse). Rebuilt whenever the daemon's grants change."""

    def __init__(self, grants: GrantsState, answers: AnswerCommands,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.grants, self.answers = grants, answers
        self.workspace: str | None = None
        self.buttons: dict[str, dict[str, QPushButton]] = {}
        self.title = QLabel("<b>Don't ask again</b>: answers you gave once, kept by the daemon "
                            "(not in policy.yaml). They only spare you the question; scope, "
                            "protected paths, ignore and deny rules still hold.", self)
        self.title.setWordWrap(True)
        self.status = QLabel(self)
        self._rows = QVBoxLayout()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 8, 0, 0)
        layout.addWidget(self.title)
        layout.addLayout(self._rows)
        layout.addWidget(self.status)
        grants.grants_changed.connect(self._on_grants_grants_changed)

    def set_workspace(self, workspace: str | None) -> None:
        self.workspace = workspace
        self._rebuild()

    def _on_grants_grants_changed(self) -> None:
        self._rebuild()

    def _rebuild(self) -> None:
        while self._rows.count():
            item = self._rows.takeAt(0)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.deleteLater()
        self.buttons = {}
        grants, requests = self.grants.in_workspace(self.workspace)
        for request in requests:
            self._rows.addWidget(self._request_row(request))
        for grant in grants:
            self._rows.addWidget(self._grant_row(grant))
        if not grants and not requests:
            self._rows.addWidget(QLabel("No grants: every call that needs you asks.", self))

    def _grant_row(self, grant: dict[str, Any]) -> QWidget:
        origin = grant.get("origin") or {}
        text = (f"{html.escape(str(grant.get('description')))}<br><small>from approving "
                f"{html.escape(str(origin.get('tool')))} ({html.escape(str(origin.get('approval_id')))})"
                f" of {html.escape(str(origin.get('agent')))}, in "
                f"{html.escape(str(origin.get('by')))}</small>")
        revoke, copy = QPushButton("Revoke"), QPushButton("Copy as policy rule")
        grant_id, rule = str(grant.get("id")), grant.get("policy_rule")
        revoke.clicked.connect(lambda: self.answers.revoke(grant_id, self._failed))
        copy.setEnabled(isinstance(rule, str))
        copy.setToolTip("policy.yaml text with the same permission" if rule else
                        "policy.yaml allows commands, not a tool on a path: no rule of this shape")
        copy.clicked.connect(lambda: self._copy(str(rule)))
        self.buttons[grant_id] = {"revoke": revoke, "copy": copy}
        return self._row(text, revoke, copy)

    def _request_row(self, request: dict[str, Any]) -> QWidget:
        grant = request.get("grant") or {}
        text = (f"<b>Asked outside the app:</b> don't ask again for "
                f"{html.escape(str(grant.get('description')))}<br><small>asked by "
                f"{html.escape(str(request.get('requested_by')))}</small>")
        allow, refuse = QPushButton("Allow"), QPushButton("Refuse")
        request_id = str(request.get("id"))
        allow.clicked.connect(lambda: self.answers.confirm(request_id, True, self._failed))
        refuse.clicked.connect(lambda: self.answers.confirm(request_id, False, self._failed))
        self.buttons[request_id] = {"allow": allow, "refuse": refuse}
        return self._row(text, allow, refuse)

    def _row(self, text: str, *buttons: QPushButton) -> QWidget:
        row = QWidget(self)
        label = QLabel(text, row)
        label.setWordWrap(True)
        layout = QHBoxLayout(row)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(label, 1)
        for button in buttons:
            button.setParent(row)
            layout.addWidget(button)
        return row

    def _copy(self, rule: str) -> None:
        QGuiApplication.clipboard().setText(rule)
        self.status.setText("Copied: paste it into .orchestration/policy.yaml, then revoke the "
                            "grant if you like.")

    def _failed(self, message: str) -> None:
        self.status.setText(f"Not done: {message}")
