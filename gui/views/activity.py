"""The activity log: every decision as it happens, filterable by text, decision and workspace."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from intentd.gui.models.activity import ActivityFilter, ActivityModel
from intentd.gui.views.chain_status import ChainStatus
from intentd.gui.views.tables import make_table

DECISIONS = (("Every decision", ""), ("Allowed", "allow"), ("Denied", "deny"), ("Asked", "ask"))


class ActivityPane(QWidget):
    def __init__(self, model: ActivityModel, parent: QWidget | None = None,
                 chain: ChainStatus | None = None) -> None:
        super().__init__(parent)
        self.model = model
        self.chain = chain  # whether the ledger's hash chain holds, for the workspace shown
        self.proxy = ActivityFilter(self)
        self.proxy.setSourceModel(model)
        self._workspace = ""
        self.filter = QLineEdit(self)
        self.filter.setPlaceholderText("Filter: session, tool, stage, reason…   Ctrl+F")
        self.filter.setClearButtonEnabled(True)
        self.filter.setAccessibleName("Activity filter")
        self.filter.textChanged.connect(self.proxy.set_text)
        self.decision = QComboBox(self)
        self.decision.setAccessibleName("Decision")
        for label, value in DECISIONS:
            self.decision.addItem(label, value)
        self.decision.currentIndexChanged.connect(self._on_decision_current_index_changed)
        self.this_workspace = QCheckBox("&Only this workspace", self)
        self.this_workspace.toggled.connect(self._on_this_workspace_toggled)
        # The table holds the newest entries; older ones come a page at a time from the ledger.
        self.older = QPushButton("Load o&lder entries", self)
        self.older.setToolTip("Load the page of the ledger before the oldest entry shown")
        self.older.clicked.connect(self._on_older_clicked)
        model.log.paging_changed.connect(self._on_log_paging_changed)
        self.table = make_table(self, "Activity", self.proxy, (70, 100, 110, 150, 110, 110))
        self.proxy.rowsInserted.connect(self._on_proxy_rows_inserted)
        top = QHBoxLayout()
        top.addWidget(self.filter, 1)
        top.addWidget(self.decision)
        top.addWidget(self.this_workspace)
        top.addWidget(self.older)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(top)
        layout.addWidget(self.table, 1)
        if chain is not None:
            layout.addWidget(chain)
        self.setFocusProxy(self.table)
        self._on_log_paging_changed()

    def set_workspace(self, path: str | None) -> None:
        self._workspace = path or ""
        self._on_this_workspace_toggled(self.this_workspace.isChecked())
        if self.chain is not None:
            self.chain.set_workspace(path)

    def focus_filter(self) -> None:
        self.filter.setFocus()
        self.filter.selectAll()

    def _on_decision_current_index_changed(self, index: int) -> None:
        self.proxy.set_decision(str(self.decision.itemData(index) or ""))

    def _on_this_workspace_toggled(self, checked: bool) -> None:
        self.proxy.set_workspace(self._workspace if checked else "")
        self._on_log_paging_changed()

    def _shown_workspace(self) -> str:
        return self._workspace if self.this_workspace.isChecked() else ""

    def _on_older_clicked(self) -> None:
        self.model.log.request_older(self._shown_workspace())

    def _on_log_paging_changed(self) -> None:
        self.older.setEnabled(self.model.log.has_older(self._shown_workspace()))

    def _on_proxy_rows_inserted(self, *_args: object) -> None:
        # Follow the newest entry, unless the person scrolled up to read older ones.
        bar = self.table.verticalScrollBar()
        if bar.value() >= bar.maximum() - 2 * self.table.verticalHeader().defaultSectionSize():
            self.table.scrollToBottom()
