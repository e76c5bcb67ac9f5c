"""The one writer of the intents file: each edit names the file's sha256 it was based on, is checked
by the loader before it is written, and lands whole (a temp file renamed over the old one)."""

from __future__ import annotations

import hashlib
import os
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from intentd.daemon.engine.intents import IntentSet, parse_intents
from intentd.daemon.intents_edit import edits
from intentd.daemon.intents_edit.layout import LayoutError
from intentd.daemon.tools.fileio import fsync_dir
from intentd.daemon.utils.reading import read_regular
from intentd.daemon.utils.yamlfile import MAX_CONFIG_BYTES, ConfigError, Node, parse_yaml

# Statuses an edit may set: the usual life of an intent, plus what the policy makes selectable.
LIFECYCLE = ("PENDING", "IN_PROGRESS", "BLOCKED", "COMPLETED", "ABANDONED")
Change = Callable[["Snapshot"], tuple[str, list[dict[str, Any]]]]  # new text, intents it loads as
_locks: dict[str, threading.Lock] = {}
_locks_guard = threading.Lock()


class EditRefused(Exception):
    """Nothing was written. `conflict`: the file changed since the edit's base."""

    def __init__(self, message: str, *, conflict: bool = False,
                 error: ConfigError | None = None, sha256: str | None = None) -> None:
        super().__init__(message)
        self.message, self.conflict, self.error, self.sha256 = message, conflict, error, sha256

    def data(self) -> dict[str, Any]:
        out: dict[str, Any] = {"conflict": self.conflict, "sha256": self.sha256}
        if self.error is not None:
            out.update(self.error.to_json())
        return out


def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class Snapshot:
    """The file as it is on disk now (an absent file reads as empty)."""

    text: str
    sha256: str
    intents: IntentSet


def _shape(intents: IntentSet) -> list[dict[str, Any]]:
    return [{k: v for k, v in i.to_json().items() if k != "extra"} for i in intents.intents]


class IntentsFileEditor:
    def __init__(self, path: Path, statuses: tuple[str, ...] = ()) -> None:
        self.path = path
        self.statuses = tuple(dict.fromkeys(LIFECYCLE + statuses))
        with _locks_guard:
            self._lock = _locks.setdefault(str(path), threading.Lock())

    # -- reading -------------------------------------------------------------------------------
    def _raw(self) -> bytes:
        if self.path.is_symlink():
            raise EditRefused(f"{self.path} is a symbolic link; intentd edits only a plain file "
                              "(edit it by hand)")
        try:
            return read_regular(self.path)
        except FileNotFoundError:
            return b""
        except OSError as exc:
            raise EditRefused(f"cannot read {self.path}: {exc.strerror or exc}") from None

    def read(self) -> Snapshot:
        raw = self._raw()
        try:
            text = raw.decode("utf-8")
            root = parse_yaml(text, self.path) if len(raw) <= MAX_CONFIG_BYTES else None
            intents = parse_intents(root, self.path) if root is not None else IntentSet()
        except UnicodeDecodeError:
            raise EditRefused(f"{self.path}: not UTF-8 text; fix it by hand first") from None
        except ConfigError as exc:
            raise EditRefused(f"the intents file is invalid now ({exc}); fix it by hand first",
                              error=exc, sha256=sha256_of(raw)) from None
        return Snapshot(text, sha256_of(raw), intents)

    # -- editing -------------------------------------------------------------------------------
    def edit(self, base_sha256: str, change: Change, new_statuses: tuple[str, ...] = ()) -> Snapshot:
        """Apply `change` (new text, and the intents it must load as) if the file is still the
        one the person saw; check it with the loader; write it whole. Raises EditRefused."""
        with self._lock:
            now = self.read()
            if now.sha256 != base_sha256:
                raise self._conflict(now.sha256)
            try:
                text, expected = change(now)
            except LayoutError as exc:
                raise EditRefused(f"{self.path}: {exc}") from None
            after = self._check(text, expected, new_statuses)
            if text != now.text:
                self._write(text, base_sha256)
            return Snapshot(text, sha256_of(text.encode("utf-8")), after)

    def _conflict(self, current: str) -> EditRefused:
        return EditRefused(f"{self.path} changed since this edit was prepared (saved by hand?); "
                           "nothing was written: look at the file again and redo the edit",
                           conflict=True, sha256=current)

    def _check(self, text: str, expected: list[dict[str, Any]],
               new_statuses: tuple[str, ...]) -> IntentSet:
        """The loader's own verdict on the new text, with its file:line; then the statuses."""
        if len(text.encode("utf-8")) > MAX_CONFIG_BYTES:
            raise EditRefused(f"{self.path}: the edit would make the file larger than "
                              f"{MAX_CONFIG_BYTES} bytes")
        try:
            root = parse_yaml(text, self.path)
            intents = parse_intents(root, self.path) if root is not None else IntentSet()
            for status in new_statuses:
                self._check_status(root, intents, status)
        except ConfigError as exc:
            raise EditRefused(str(exc), error=exc) from None
        if _shape(intents) != expected:  # never write a file that says other than was meant
            raise EditRefused(f"{self.path}: this edit cannot be written without disturbing the "
                              "rest of the file; nothing was written (edit it by hand)")
        return intents

    def _check_status(self, root: Node | None, intents: IntentSet, status: str) -> None:
        if status in self.statuses:
            return
        line = None
        for node in (root.value["active_intents"].value or []) if root is not None else []:
            field = node.value.get("status") if isinstance(node.value, dict) else None
            if field is not None and field.value == status:
                line = field.line
        raise ConfigError(self.path, line, f"status {status!r} is not one the policy knows "
                                           f"(known: {', '.join(self.statuses)})")

    def _write(self, text: str, base_sha256: str) -> None:
        folder = self.path.parent
        try:
            folder.mkdir(parents=True, exist_ok=True)
            mode = self.path.stat().st_mode & 0o7777 if self.path.exists() else 0o644
            fd, temp = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp", dir=folder)
        except OSError as exc:
            raise EditRefused(f"cannot write {self.path}: {exc.strerror or exc}") from None
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(text.encode("utf-8"))
                out.flush()
                os.fsync(out.fileno())
            os.chmod(temp, mode)
            current = sha256_of(self._raw())
            if current != base_sha256:  # saved by hand while this was prepared
                raise self._conflict(current)
            os.replace(temp, self.path)
        except OSError as exc:
            raise EditRefused(f"cannot write {self.path}: {exc.strerror or exc}") from None
        finally:
            if os.path.exists(temp):
                os.unlink(temp)
        fsync_dir(folder)


# -- the edits a person can make -----------------------------------------------------------------
def _index(snap: Snapshot, intent_id: str) -> int:
    for index, intent in enumerate(snap.intents.intents):
        if intent.id == intent_id:
            return index
    known = ", ".join(i.id for i in snap.intents.intents) or "none"
    raise EditRefused(f"no intent {intent_id!r} in the intents file (intents: {known})")


def create(new: edits.NewIntent) -> Change:
    def change(snap: Snapshot) -> tuple[str, list[dict[str, Any]]]:
        fields = {"id": new.id.strip(), "name": new.name.strip(), "status": new.status.strip(),
                  "owned_scope": list(new.owned_scope), "constraints": list(new.constraints),
                  "acceptance_criteria": list(new.acceptance_criteria)}
        return edits.add(snap.text, new), _shape(snap.intents) + [fields]
    return change


def update_status(intent_id: str, status: str) -> Change:
    def change(snap: Snapshot) -> tuple[str, list[dict[str, Any]]]:
        index = _index(snap, intent_id)
        expected = _shape(snap.intents)
        expected[index]["status"] = status
        return edits.set_status(snap.text, index, status), expected
    return change


def set_scope(intent_id: str, scope: list[str]) -> Change:
    def change(snap: Snapshot) -> tuple[str, list[dict[str, Any]]]:
        index = _index(snap, intent_id)
        expected = _shape(snap.intents)
        if expected[index]["owned_scope"] == scope:
            return snap.text, expected
        expected[index]["owned_scope"] = list(scope)
        return edits.set_list(snap.text, index, "owned_scope", scope), expected
    return change


def current_scope(snap: Snapshot, intent_id: str) -> list[str]:
    return list(snap.intents.intents[_index(snap, intent_id)].owned_scope)


def remove(intent_id: str) -> Change:
    def change(snap: Snapshot) -> tuple[str, list[dict[str, Any]]]:
        index = _index(snap, intent_id)
        expected = _shape(snap.intents)
        del expected[index]
        return edits.remove(snap.text, index), expected
    return change


def scope_add(intent_id: str, globs: list[str]) -> Change:
    """Each glob not yet in the scope goes at its end, where it outweighs earlier `!` lines."""
    def change(snap: Snapshot) -> tuple[str, list[dict[str, Any]]]:
        scope = current_scope(snap, intent_id)
        return set_scope(intent_id, scope + [g for g in dict.fromkeys(globs) if g not in scope])(snap)
    return change


def scope_remove(intent_id: str, globs: list[str]) -> Change:
    def change(snap: Snapshot) -> tuple[str, list[dict[str, Any]]]:
        scope = current_scope(snap, intent_id)
        missing = [g for g in globs if g not in scope]
        if missing:
            raise EditRefused(f"intent {intent_id!r} has no scope line {missing[0]!r} "
                              f"(its owned_scope: {', '.join(scope) or 'none'})")
        return set_scope(intent_id, [g for g in scope if g not in globs])(snap)
    return change
