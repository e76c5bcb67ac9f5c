"""intentd blame: every line of a file edited by two intents and a person, in turns, attributed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from intentd.daemon import protocol
from intentd.daemon.client import Client
from intentd.daemon.testing import DaemonProcess
from tests.trace.scripted import Agent, FileModel, person_replaces


def lines(*names: str) -> list[str]:
    return [f"{name}\n" for name in names]


def run_session(client: Client, workspace: Path) -> FileModel:
    """Interleaved turns; the model records who really wrote each line."""
    parser = Agent(client, workspace, "INT-1", "claude-code")
    logging = Agent(client, workspace, "INT-2", "codex")
    model = FileModel(workspace / "src" / "app.py")
    parser.call("read_file", path="src/app.py")
    parser.write(model, "src/app.py", lines(*(f"a{n}" for n in range(1, 11))))
    logging.replace(model, "src/app.py", lines("a3", "a4"), lines("b1", "b2", "b3"))
    person_replaces(model, lines("a6"), lines("p6"))
    person_replaces(model, lines("a8"), lines("a8", "p-new"))
    parser.replace(model, "src/app.py", lines("a9"), lines("a9x", "a9y"))
    logging.replace(model, "src/app.py", lines("a1", "a2"), lines("a1"))
    person_replaces(model, lines("b2"), lines("b2-by-hand"))
    logging.replace(model, "src/app.py", lines("a10"), lines("a10", "b-end"))
    parser.replace(model, "src/app.py", lines("p6"), lines("a6-again"))
    person_replaces(model, lines("a7"), [])  # a line removed by hand shifts every line after it
    assert model.path.read_text() == model.text()
    return model


def blame_over_socket(client: Client, workspace: Path) -> list[str | None]:
    answer = client.call(protocol.TRACE_BLAME, {"workspace": str(workspace), "path": "src/app.py"})
    by_line: list[str | None] = [None] * answer["lines"]
    for first, last, author in answer["runs"]:
        for number in range(first, last + 1):
            by_line[number - 1] = None if author is None else answer["authors"][author]["call_id"]
    return by_line


def test_every_line_is_attributed_to_who_really_wrote_it(daemon: DaemonProcess, client: Client,
                                                         two_intents: Path) -> None:
    model = run_session(client, two_intents)
    expected = [who for _, who in model.lines]
    assert any(who is None for who in expected) and len(set(expected)) >= 5
    assert blame_over_socket(client, two_intents) == expected

    shown = subprocess.run([sys.executable, "-m", "intentd.daemon.cli", "blame", "--json",
                            "--workspace", str(two_intents), "--state-dir", str(daemon.state_dir / "intentd"),
                            str(model.path)], capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0, shown.stderr
    found = json.loads(shown.stdout)
    assert [line["text"] + "\n" for line in found] == [text for text, _ in model.lines]
    assert [line["author"] and line["author"]["call_id"] for line in found] == expected
    intents = {line["author"]["intent_id"] for line in found if line["author"]}
    assert intents == {"INT-1", "INT-2"}


def test_blame_names_the_intent_session_and_agent(client: Client, two_intents: Path) -> None:
    parser = Agent(client, two_intents, "INT-1", "claude-code")
    parser.call("read_file", path="src/app.py")
    parser.call("write_to_file", path="src/app.py", content="one\ntwo\n")
    answer = client.call(protocol.TRACE_BLAME, {"workspace": str(two_intents),
                                                "path": str(two_intents / "src" / "app.py")})
    assert answer["runs"] == [[1, 2, 0]]
    author = answer["authors"][0]
    assert (author["intent_id"], author["intent_name"], author["session"], author["agent"],
            author["tool"]) == ("INT-1", "parser", parser.session, "claude-code", "write_to_file")


def test_blame_tells_only_of_workspace_files(client: Client, two_intents: Path,
                                             tmp_path: Path) -> None:
    outside = tmp_path / "secret.txt"
    outside.write_text("not the agent's\n")
    for path in (str(outside), "../secret.txt", "src/missing.py"):
        try:
            client.call(protocol.TRACE_BLAME, {"workspace": str(two_intents), "path": path})
        except Exception as exc:  # noqa: BLE001 - the error is what is checked
            assert getattr(exc, "code", None) == protocol.INVALID_PARAMS
        else:
            raise AssertionError(f"{path} was blamed")


def test_a_file_no_agent_wrote_is_all_dashes(daemon: DaemonProcess, two_intents: Path) -> None:
    shown = subprocess.run([sys.executable, "-m", "intentd.daemon.cli", "blame",
                            "--workspace", str(two_intents), "--state-dir", str(daemon.state_dir / "intentd"),
                            str(two_intents / "src" / "app.py")], capture_output=True, text=True,
                           timeout=60)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.split()[0] == "-" and "print('hi')" in shown.stdout
