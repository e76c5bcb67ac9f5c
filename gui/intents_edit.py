"""The person's intents edits and scope previews, sent to the daemon (the file's one writer)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Signal

from intentd.daemon import protocol
from intentd.gui.connection import DaemonConnection, RpcFailure

OnAnswer = Callable[[dict[str, Any]], None]
OnFailure = Callable[[RpcFailure], None]


def failure_text(failure: RpcFailure) -> str:
    if failure.code == protocol.INTENTS_CONFLICT:
        return ("The intents file was changed on disk since this was opened (saved by hand?). "
                "Nothing was written; look at it again and redo the change.")
    return str(failure.message)


UNESCAPED_TRAILING_SPACE = re.compile(r"(?<!\\)\s+$")


def scope_lines(text: str) -> list[str]:
    """One glob a line; blank lines and `#` comments are the editor's, not the file's. Spaces
    around a line are dropped, but not an escaped one (`name\\ `: a name that ends in a space)."""
    lines = (UNESCAPED_TRAILING_SPACE.sub("", line.lstrip()) for line in text.splitlines())
    return [s for s in lines if s and not s.startswith("#")]


class IntentsEditor(QObject):
    """Each edit names the sha256 of the file it was based on (from `read`)."""

    edited = Signal(str)          # workspace: an edit was written
    edit_failed = Signal(str)     # a human-readable message

    def __init__(self, connection: DaemonConnection, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.connection = connection

    def read(self, workspace: str, on_answer: OnAnswer, on_failure: OnFailure | None = None
             ) -> None:
        self._ask(protocol.INTENTS_READ, {"workspace": workspace}, on_answer, on_failure)

    def preview(self, workspace: str, scope: list[str], intent_id: str | None,
                on_answer: OnAnswer, base_scope: list[str] | None = None,
                max_age: float | None = None, paths: list[str] | None = None) -> None:
        """`max_age`: files listed longer ago than this are listed again first. `paths`: say
        whether each is owned (a file an agent wants to create need not exist yet)."""
        params: dict[str, Any] = {"workspace": workspace, "owned_scope": scope}
        if paths:
            params["paths"] = paths
        if max_age is not None:
            params["max_age"] = max_age
        if base_scope is not None:
            params["base_scope"] = base_scope
        elif intent_id:
            params["intent_id"] = intent_id
        self._ask(protocol.INTENTS_PREVIEW_SCOPE, params, on_answer, None)

    def edit(self, method: str, workspace: str, base_sha256: str, params: dict[str, Any],
             on_answer: OnAnswer | None = None, on_failure: OnFailure | None = None) -> None:
        def done(answer: dict[str, Any]) -> None:
            self.edited.emit(workspace)
            if on_answer is not None:
                on_answer(answer)

        def failed(failure: RpcFailure) -> None:
            if on_failure is not None:
                on_failure(failure)
            else:
                self.edit_failed.emit(failure_text(failure))

        self._ask(method, {"workspace": workspace, "base_sha256": base_sha256, **params},
                  done, failed)

    def edit_now(self, method: str, workspace: str, params: dict[str, Any]) -> None:
        """An edit of one line (a status, a removal), based on the file as it is this moment."""
        self.read(workspace, lambda snap: self.edit(method, workspace, str(snap["sha256"]),
                                                    params))

    def _ask(self, method: str, params: dict[str, Any], on_answer: OnAnswer,
             on_failure: OnFailure | None) -> None:
        def answered(result: Any) -> None:
            if isinstance(result, dict):
                on_answer(result)

        def failed(failure: RpcFailure) -> None:
            if on_failure is not None:
                on_failure(failure)
            else:
                self.edit_failed.emit(f"{method}: {failure_text(failure)}")

        self.connection.request(method, params, answered, failed)
