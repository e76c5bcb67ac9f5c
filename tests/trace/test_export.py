"""intentd trace export: Agent Trace records, valid against the specification's own schema."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import jsonschema

from intentd.daemon.client import Client
from intentd.daemon.testing import DaemonProcess
from tests.trace.scripted import Agent
from tests.trace.test_blame import lines, run_session

SCHEMA = json.loads((Path(__file__).parent / "data" / "agent-trace-record.schema.json").read_text())


def git(workspace: Path, *args: str, when: str | None = None) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "p", "GIT_AUTHOR_EMAIL": "p@example.org",
           "GIT_COMMITTER_NAME": "p", "GIT_COMMITTER_EMAIL": "p@example.org"}
    if when:
        env["GIT_COMMITTER_DATE"] = env["GIT_AUTHOR_DATE"] = when
    done = subprocess.run(["git", "-C", str(workspace), *args], capture_output=True, text=True,
                          env=env, check=True)
    return done.stdout.strip()


def export(daemon: DaemonProcess, workspace: Path, *args: str) -> list[dict[str, Any]]:
    out = workspace.parent / "trace.jsonl"
    done = subprocess.run([sys.executable, "-m", "intentd.daemon.cli", "trace", "export",
                           "--workspace", str(workspace), "--state-dir",
                           str(daemon.state_dir / "intentd"), "--out", str(out), *args],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in out.read_text().splitlines()]


def check_valid(record: dict[str, Any]) -> None:
    validator = jsonschema.Draft202012Validator(
        SCHEMA, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)
    validator.validate(record)
    uuid.UUID(record["id"])
    for file in record["files"]:
        for conversation in file["conversations"]:
            for url in [conversation.get("url"), *(r["url"] for r in conversation.get("related", []))]:
                assert url is None or urlsplit(url).scheme == "urn"


def test_every_call_that_wrote_lines_becomes_a_valid_record(daemon: DaemonProcess, client: Client,
                                                           two_intents: Path) -> None:
    git(two_intents, "init", "-q")
    git(two_intents, "add", "-A")
    git(two_intents, "commit", "-qm", "start")
    head = git(two_intents, "rev-parse", "HEAD")
    model = run_session(client, two_intents)
    records = export(daemon, two_intents)
    for record in records:
        check_valid(record)
    # six edits; the one that only removed a line (a2) wrote none to attribute
    assert len(records) == 5, "one record per call that wrote lines"
    assert {r["vcs"]["revision"] for r in records} == {head}
    first, second = records[0], records[1]
    assert first["files"][0]["path"] == "src/app.py"
    assert first["files"][0]["conversations"][0]["ranges"][0]["start_line"] == 1
    assert first["files"][0]["conversations"][0]["ranges"][0]["end_line"] == 10
    meta = second["metadata"]["dev.intentd"]
    assert (meta["intent_id"], meta["intent_name"], meta["agent"]) == ("INT-2", "logging", "codex")
    (written,) = second["files"][0]["conversations"][0]["ranges"]
    assert (written["start_line"], written["end_line"]) == (3, 5), "b1..b3 replaced a3 and a4"
    text = "".join(lines("b1", "b2", "b3")).encode()
    assert written["content_hash"] == "sha256:" + hashlib.sha256(text).hexdigest()
    sessions = {r["files"][0]["conversations"][0]["url"] for r in records}
    assert len(sessions) == 2, "each session is its own conversation"
    assert model.path.exists()


def test_since_a_date_or_a_revision(daemon: DaemonProcess, client: Client, two_intents: Path) -> None:
    git(two_intents, "init", "-q")
    git(two_intents, "add", "-A")
    git(two_intents, "commit", "-qm", "long ago", when="2001-01-01T00:00:00Z")
    old = git(two_intents, "rev-parse", "HEAD")
    git(two_intents, "commit", "-qm", "tomorrow", "--allow-empty", when="2099-01-01T00:00:00Z")
    agent = Agent(client, two_intents, "INT-1", "claude-code")
    agent.call("read_file", path="src/app.py")
    agent.call("write_to_file", path="src/app.py", content="x\n")
    assert len(export(daemon, two_intents, "--since", old)) == 1
    assert export(daemon, two_intents, "--since", "HEAD") == []
    assert export(daemon, two_intents, "--since", "2099-01-01") == []
    assert len(export(daemon, two_intents, "--since", "2001-01-01T00:00:00Z")) == 1
    bad = subprocess.run([sys.executable, "-m", "intentd.daemon.cli", "trace", "export",
                          "--workspace", str(two_intents), "--since", "no-such-rev"],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 1 and "neither a date" in bad.stderr
