"""A fake user manager for the install / uninstall tests."""

from __future__ import annotations

from collections.abc import Sequence
from subprocess import CompletedProcess

from intentd.daemon.setup.systemctl import Systemctl


class FakeSystemctl(Systemctl):
    """A user manager that answers (or not), recording every command instead of running it."""

    def __init__(self, *, installed: bool = True, booted: bool = True, answers: bool = True,
                 failing: Sequence[str] = ()) -> None:
        self.failing = tuple(failing)
        self.answers = answers
        super().__init__(runner=self._run, booted=lambda: booted,
                         which=lambda name: f"/usr/bin/{name}" if installed else None)

    def _run(self, argv: Sequence[str]) -> CompletedProcess[str]:
        verb = argv[2]
        if verb == "show" and not self.answers:
            return CompletedProcess(list(argv), 1, "", "Failed to connect to bus: No medium found")
        if verb in self.failing:
            return CompletedProcess(list(argv), 1, "", f"{verb} went wrong")
        return CompletedProcess(list(argv), 0, "", "")

    @property
    def verbs(self) -> list[str]:
        """The commands run, as `verb args…`, without the probe."""
        return [" ".join(call[2:]) for call in self.calls if call[2] != "show"]
