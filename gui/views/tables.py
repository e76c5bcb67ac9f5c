"""Table view settings shared by every pane: whole rows, one at a time, cheap for many rows."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QAbstractItemModel, QItemSelectionModel
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableView, QWidget


def make_table(parent: QWidget, name: str, model: QAbstractItemModel,
               widths: tuple[int, ...] = ()) -> QTableView:
    table = QTableView(parent)
    table.setModel(model)  # before the widths: a header without columns ignores them
    table.setObjectName(name)
    table.setAccessibleName(name)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.setAlternatingRowColors(True)
    table.setWordWrap(False)
    table.setTabKeyNavigation(False)  # Tab leaves the table, arrows move in it
    table.verticalHeader().hide()
    # Fixed row heights: the view never measures every row, so thousands of rows stay cheap.
    table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
    table.verticalHeader().setDefaultSectionSize(table.fontMetrics().height() + 8)
    header = table.horizontalHeader()
    header.setHighlightSections(False)
    header.setStretchLastSection(True)
    for column, width in enumerate(widths):
        header.resizeSection(column, width)
    return table


def select_row(table: QTableView, row: int) -> None:
    """Make `row` the current and only selected row, and scroll to it (nothing if out of range)."""
    model = table.model()
    if 0 <= row < model.rowCount():
        index = model.index(row, 0)
        table.selectionModel().setCurrentIndex(
            index, QItemSelectionModel.SelectionFlag.ClearAndSelect
            | QItemSelectionModel.SelectionFlag.Rows)
        table.scrollTo(index)


def reselect(table: QTableView, id_at: Callable[[int], str | None],
             wanted_id: str | None) -> bool:
    """After a model reset: select the row holding `wanted_id` again, else the first row.

    Returns whether a row is selected (False when the table is empty)."""
    rows = table.model().rowCount()
    if rows == 0:
        return False
    found = next((r for r in range(rows) if id_at(r) == wanted_id), 0) if wanted_id else 0
    select_row(table, found)
    return True
