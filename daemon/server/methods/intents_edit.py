"""intents/read, intents/preview_scope and the person's edits of the intents file (create, status,
scope, remove): the daemon is the file's one writer, and the live reload applies each edit."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from intentd.daemon import protocol
from intentd.daemon.engine.workspace import Workspace
from intentd.daemon.intents_edit import store
from intentd.daemon.intents_edit.edits import NewIntent
from intentd.daemon.intents_edit.preview import ScopePreviewer
from intentd.daemon.intents_edit.store import EditRefused, IntentsFileEditor, Snapshot
from intentd.daemon.server.core import DaemonCore
from intentd.daemon.server.rpc import MethodError, MethodTable, Params, bad_params

MAX_LINES = 10_000      # lines of one scope in a request
MAX_TEXT = 4096         # characters of one glob, name, constraint
DEFAULT_LIMIT, MAX_LIMIT = 200, 5000
MAX_PATHS = 100       # paths whose ownership a preview reports


def texts(params: Params, name: str, required: bool = False) -> list[str]:
    value = params.raw.get(name)
    if value is None and not required:
        return []
    if (not isinstance(value, list) or len(value) > MAX_LINES
            or not all(isinstance(v, str) and len(v) <= MAX_TEXT for v in value)):
        raise bad_params(name, f"must be a list of at most {MAX_LINES} strings")
    return list(value)


def short(params: Params, name: str) -> str:
    value = params.text(name)
    if len(value) > MAX_TEXT or "\x00" in value:
        raise bad_params(name, f"must be at most {MAX_TEXT} characters")
    return str(value)


def refused(exc: EditRefused) -> MethodError:
    code = protocol.INTENTS_CONFLICT if exc.conflict else protocol.INTENTS_INVALID
    return MethodError(code, exc.message, exc.data())


def register(table: MethodTable, core: DaemonCore) -> None:
    previewers: dict[str, ScopePreviewer] = {}

    def editor(workspace: Workspace) -> IntentsFileEditor:
        return IntentsFileEditor(workspace.intents_path,
                                 workspace.config.policy.selectable_statuses)

    def snapshot_json(workspace: Workspace, snap: Snapshot) -> dict[str, Any]:
        return {"workspace": workspace.root_str, "file": str(workspace.intents_path),
                "sha256": snap.sha256, "exists": workspace.intents_path.exists(),
                "intents": [i.to_json() for i in snap.intents.intents],
                "statuses": list(editor(workspace).statuses)}

    async def intents_read(conn: Any, params: Params) -> dict[str, Any]:
        """The file as it is now, with the sha256 an edit must name."""
        workspace = core.workspace(params)
        try:
            snap = await core.in_thread(editor(workspace).read)
        except EditRefused as exc:
            raise refused(exc) from None
        return snapshot_json(workspace, snap)

    async def preview_scope(conn: Any, params: Params) -> dict[str, Any]:
        workspace = core.workspace(params)
        scope = texts(params, "owned_scope", required=True)
        base: list[str] | None = texts(params, "base_scope") if "base_scope" in params.raw else None
        intent_id = params.opt_text("intent_id")
        if base is None and intent_id:
            intent = workspace.config.intents.get(intent_id)
            base = list(intent.owned_scope) if intent is not None else []
        limit = int(params.opt_number("limit") or DEFAULT_LIMIT)
        previewer = previewers.setdefault(workspace.root_str, ScopePreviewer(workspace.root_str))
        config = workspace.config
        max_age = params.opt_number("max_age")
        paths = texts(params, "paths")[:MAX_PATHS]
        # Threads of their own (at most a few per workspace): previews an agent may ask for
        # by the hundred never hold the threads the daemon's other work needs.
        answer: dict[str, Any] = await core.threads.run(
            f"preview {workspace.root_str}", previewer.preview, scope, base, config.ignore,
            config.fold_case, min(limit, MAX_LIMIT), max_age, paths)
        return {"workspace": workspace.root_str, **answer}

    async def edit(params: Params, change: Callable[[Snapshot], Any],
                   statuses: tuple[str, ...] = ()) -> dict[str, Any]:
        workspace = core.workspace(params)
        base = short(params, "base_sha256")
        try:
            snap = await core.threads.run("intents edits", editor(workspace).edit, base, change,
                                          statuses)
        except EditRefused as exc:
            raise refused(exc) from None
        await core.in_thread(workspace.reload)  # at once, as the watcher would a moment later
        return {**snapshot_json(workspace, snap), "changed": snap.sha256 != base}

    async def create(conn: Any, params: Params) -> dict[str, Any]:
        fields = params.obj("intent")
        sub = Params(fields)
        new = NewIntent(id=str(fields.get("id", "")), name=short(sub, "name"),
                        status=short(sub, "status"),
                        owned_scope=tuple(texts(sub, "owned_scope")),
                        constraints=tuple(texts(sub, "constraints")),
                        acceptance_criteria=tuple(texts(sub, "acceptance_criteria")))
        if not isinstance(fields.get("id"), str) or len(new.id) > MAX_TEXT:
            raise bad_params("intent.id", "must be a string")
        return await edit(params, store.create(new), (new.status.strip(),))

    async def update_status(conn: Any, params: Params) -> dict[str, Any]:
        status = short(params, "status")
        return await edit(params, store.update_status(short(params, "intent_id"), status),
                          (status,))

    async def scope_add(conn: Any, params: Params) -> dict[str, Any]:
        return await edit(params, store.scope_add(short(params, "intent_id"),
                                                  texts(params, "globs", required=True)))

    async def scope_remove(conn: Any, params: Params) -> dict[str, Any]:
        return await edit(params, store.scope_remove(short(params, "intent_id"),
                                                     texts(params, "globs", required=True)))

    async def scope_set(conn: Any, params: Params) -> dict[str, Any]:
        return await edit(params, store.set_scope(short(params, "intent_id"),
                                                  texts(params, "owned_scope", required=True)))

    async def remove(conn: Any, params: Params) -> dict[str, Any]:
        return await edit(params, store.remove(short(params, "intent_id")))

    for name, handler in [(protocol.INTENTS_READ, intents_read),
                          (protocol.INTENTS_PREVIEW_SCOPE, preview_scope),
                          (protocol.INTENTS_CREATE, create),
                          (protocol.INTENTS_UPDATE_STATUS, update_status),
                          (protocol.INTENTS_SCOPE_ADD, scope_add),
                          (protocol.INTENTS_SCOPE_REMOVE, scope_remove),
                          (protocol.INTENTS_SCOPE_SET, scope_set),
                          (protocol.INTENTS_REMOVE, remove)]:
        table.register(name, handler)
