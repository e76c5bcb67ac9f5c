"""A workspace: its root and the config in force (intents, policy, ignore rules), reloaded live."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from intentd.daemon.engine.intents import INTENTS_FILE, IntentSet, load_intents
from intentd.daemon.policy.config import POLICY_FILE, SAFEST_POLICY, Policy, load_policy
from intentd.daemon.policy.ignore import IgnoreRules, load_ignore_rules
from intentd.daemon.utils.paths import folds_case
from intentd.daemon.utils.yamlfile import ConfigError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class WorkspaceConfig:
    """One consistent snapshot; a call is decided against a single snapshot."""

    intents: IntentSet
    policy: Policy
    ignore: IgnoreRules
    intents_error: ConfigError | None = None
    policy_error: ConfigError | None = None
    ignore_error: str | None = None
    # The workspace's file system treats `.ENV` and `.env` as one file: compare paths caseless.
    fold_case: bool = False

    @property
    def errors(self) -> list[str]:
        return [str(e) for e in (self.intents_error, self.policy_error, self.ignore_error) if e]

    def intents_json(self) -> list[dict[str, Any]]:
        """The intents as clients see them, each saying whether it can be selected now."""
        statuses = self.policy.selectable_statuses
        return [{**i.to_json(), "selectable": i.status in statuses} for i in self.intents.intents]


Listener = Callable[["Workspace", WorkspaceConfig, WorkspaceConfig], None]


class Workspace:
    def __init__(self, root: Path, policy_path: Path | None = None) -> None:
        self.root = root.resolve()
        self.root_str = str(self.root)
        self.intents_path = self.root / INTENTS_FILE
        self.policy_path = policy_path.resolve() if policy_path else self.root / POLICY_FILE
        self._lock = threading.Lock()
        self._listeners: list[Listener] = []
        # auto_approve settings a person changed from the app, on top of policy.yaml
        self.overrides: dict[str, bool | int] = {}
        self.fold_case = folds_case(self.root_str)  # probed once: a folder keeps its file system
        self.config = self._load(previous=None)

    def add_listener(self, listener: Listener) -> None:
        self._listeners.append(listener)

    def reload(self) -> WorkspaceConfig:
        """Re-read every config file; bad edits keep the last good intents and report the error."""
        with self._lock:
            previous = self.config
            self.config = self._load(previous)
            current = self.config
        if current != previous:
            for listener in list(self._listeners):
                try:
                    listener(self, previous, current)
                except Exception:  # a listener must not stop the reload of others
                    log.exception("workspace listener failed")
        return current

    def _load(self, previous: WorkspaceConfig | None) -> WorkspaceConfig:
        intents, intents_error = self._load_intents(previous)
        try:
            policy, policy_error = load_policy(self.policy_path), None
            if self.overrides:
                auto = replace(policy.auto_approve, **self.overrides)  # type: ignore[arg-type]
                policy = replace(policy, auto_approve=auto)
        except ConfigError as exc:
            policy, policy_error = SAFEST_POLICY, exc
            log.warning("invalid policy, using the safest defaults: %s", exc)
        try:
            ignore, ignore_error = load_ignore_rules(self.root, self.fold_case), None
        except (OSError, ValueError) as exc:  # unreadable, or a line that is no pattern
            ignore = previous.ignore if previous else IgnoreRules()
            ignore_error = f"cannot read ignore rules: {exc}"
        return WorkspaceConfig(intents, policy, ignore, intents_error, policy_error, ignore_error,
                               self.fold_case)

    def _load_intents(self, previous: WorkspaceConfig | None) -> tuple[IntentSet, ConfigError | None]:
        try:
            return load_intents(self.intents_path), None
        except ConfigError as exc:
            log.warning("invalid intents file, keeping the last good intents: %s", exc)
            return (previous.intents if previous else IntentSet()), exc
