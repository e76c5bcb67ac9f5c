"""A scripted session: agents and a person edit one file, and a model of who wrote each line."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from intentd.daemon import protocol
from intentd.daemon.client import Client

PERSON = None  # what blame shows for a line no agent wrote, or changed by hand since


@dataclass
class FileModel:
    """The file as the test believes it is: each line's text and the call that wrote it."""

    path: Path
    lines: list[tuple[str, str | None]] = field(default_factory=list)

    def text(self) -> str:
        return "".join(text for text, _ in self.lines)

    def replace(self, old: list[str], new: list[str], who: str | None) -> tuple[str, str]:
        """Lines `old` (contiguous, once) become `new`; returns old_str and new_str."""
        texts = [t for t, _ in self.lines]
        for at in range(len(texts) - len(old) + 1):
            if texts[at:at + len(old)] == old:
                # Lines the edit leaves as they were (at either end of the block) keep their
                # author: old_str and new_str often repeat a line to say where the change goes.
                head = 0
                while head < min(len(old), len(new)) and old[head] == new[head]:
                    head += 1
                tail = 0
                while (tail < min(len(old), len(new)) - head
                       and old[len(old) - 1 - tail] == new[len(new) - 1 - tail]):
                    tail += 1
                kept_head = self.lines[at:at + head]
                kept_tail = self.lines[at + len(old) - tail:at + len(old)]
                changed = [(t, who) for t in new[head:len(new) - tail]]
                self.lines[at:at + len(old)] = kept_head + changed + kept_tail
                return "".join(old), "".join(new)
        raise AssertionError(f"{old} not in the file")


class Agent:
    """One session working under one intent."""

    def __init__(self, client: Client, workspace: Path, intent: str, name: str) -> None:
        self.client = client
        opened = client.call(protocol.SESSIONS_OPEN, {"workspace": str(workspace), "agent": name})
        self.session = opened["session_id"]
        client.call(protocol.INTENTS_SELECT, {"session_id": self.session, "intent_id": intent})

    def call(self, tool: str, **args: Any) -> dict[str, Any]:
        done: dict[str, Any] = self.client.call(protocol.TOOLS_CALL, {
            "session_id": self.session, "tool": tool, "args": args})
        assert done["decision"] == "allow" and done["result"]["ok"], done
        return done

    def write(self, model: FileModel, relative: str, lines: list[str]) -> None:
        done = self.call("write_to_file", path=relative, content="".join(lines))
        model.lines = [(t, done["call_id"]) for t in lines]

    def replace(self, model: FileModel, relative: str, old: list[str], new: list[str]) -> None:
        self.call("read_file", path=relative)  # a file changed since it was read is refused
        old_str, new_str = model.replace(old, new, "pending")
        done = self.call("replace_in_file", path=relative, old_str=old_str, new_str=new_str)
        model.lines = [(t, done["call_id"] if who == "pending" else who) for t, who in model.lines]


def person_replaces(model: FileModel, old: list[str], new: list[str]) -> None:
    model.replace(old, new, PERSON)
    model.path.write_text(model.text())
