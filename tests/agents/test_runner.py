"""`intentd run` against a fake Messages API on loopback, with the real anthropic client."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from intentd.daemon.agents import gateway
from intentd.daemon.cli import main
from intentd.daemon.engine.stages.intent_gate import GATE_MESSAGE
from intentd.daemon.testing import DaemonProcess, make_workspace
from intentd.daemon.tools.registry import BUILTIN_TOOLS
from tests.agents.conftest import Person, SilentDaemon
from tests.agents.fake_api import ErrorReply, FakeMessagesAPI, Turn, text, tool_use

HELLO = "print('hello')\n"


def handshake_script() -> list[Turn | ErrorReply]:
    return [
        Turn([text("I will create the file."),
              tool_use("toolu_1", "write_to_file", path="src/hello.py", content=HELLO)]),
        Turn([tool_use("toolu_2", "select_active_intent", intent_id="INT-1")]),
        Turn([tool_use("toolu_3", "write_to_file", path="src/hello.py", content=HELLO)]),
        Turn([text("Done."),
              tool_use("toolu_4", "attempt_completion", result="wrote src/hello.py")]),
    ]


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return make_workspace(tmp_path / "ws", policy={"auto_approve": {"edit": True}},
                          files={"src/app.py": "print('hi')\n",
                                 "AGENTS.md": "Use tabs, never spaces."})


def run_agent(api: FakeMessagesAPI, ws: Path, monkeypatch: pytest.MonkeyPatch, *extra: str,
              key: str | None = "test-key") -> int:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", api.url)
    if key is None:
        monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
        monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    else:
        monkeypatch.setenv("ANTHROPIC_API_KEY", key)
    return main(["run", "--workspace", str(ws), "--max-retries", "0", "--max-turns", "6", *extra,
                 "create src/hello.py"])


def tool_results(request: dict[str, Any]) -> list[dict[str, Any]]:
    last = request["messages"][-1]
    assert last["role"] == "user"
    return [b for b in last["content"] if b["type"] == "tool_result"]


def assert_handshake_transcript(api: FakeMessagesAPI, ws: Path) -> None:
    assert len(api.requests) == 4
    first = api.requests[0]
    assert first["stream"] is True and first["model"] == "test-model"
    assert {t["name"] for t in first["tools"]} == set(BUILTIN_TOOLS)
    assert all("input_schema" in t for t in first["tools"])
    assert "Intent handshake" in first["system"] and "INT-1" in first["system"]
    assert "Use tabs, never spaces." in first["system"]
    assert first["messages"] == [{"role": "user", "content": "create src/hello.py"}]
    sent = api.headers[0]  # the SDK sends the key as x-api-key or a bearer token
    assert "test-key" in sent.get("x-api-key", "") + sent.get("authorization", "")
    # the refusal reaches the model as a tool error it can act on
    second = api.requests[1]
    assert second["messages"][1]["role"] == "assistant"
    assert [b["type"] for b in second["messages"][1]["content"]] == ["text", "tool_use"]
    asked = second["messages"][1]["content"][1]["input"]
    assert asked == {"path": "src/hello.py", "content": HELLO}
    [refusal] = tool_results(second)
    assert refusal["tool_use_id"] == "toolu_1" and refusal["is_error"] is True
    assert GATE_MESSAGE in refusal["content"] and "select_active_intent" in refusal["content"]
    [selected] = tool_results(api.requests[2])
    assert selected["tool_use_id"] == "toolu_2" and "is_error" not in selected
    assert "<intent_context>" in selected["content"]
    [written] = tool_results(api.requests[3])
    assert written["tool_use_id"] == "toolu_3" and "is_error" not in written
    assert (ws / "src" / "hello.py").read_text() == HELLO
    # every tool_use of a turn is answered in the next request, in order
    for request in api.requests[1:]:
        messages = request["messages"]
        for asked, answered in zip(messages[1::2], messages[2::2], strict=False):
            uses = [b["id"] for b in asked["content"] if b["type"] == "tool_use"]
            assert [b["tool_use_id"] for b in answered["content"]] == uses


def test_handshake_in_process(ws: Path, monkeypatch: pytest.MonkeyPatch,
                              capsys: pytest.CaptureFixture[str]) -> None:
    with FakeMessagesAPI(handshake_script()) as api:
        code = run_agent(api, ws, monkeypatch, "--in-process", "--model", "test-model")
    out = capsys.readouterr().out
    assert code == 0, out
    assert_handshake_transcript(api, ws)
    assert "I will create the file." in out and "refused (intent_gate)" in out
    assert "completed: wrote src/hello.py" in out
    assert "400 in / 80 out in total" in out


def test_missing_key_is_one_clear_line(ws: Path, monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    with FakeMessagesAPI([]) as api:
        code = run_agent(api, ws, monkeypatch, "--in-process", key=None)
    err = capsys.readouterr().err
    assert code == 1 and api.requests == []
    assert err.strip().splitlines() == [err.strip()] and "ANTHROPIC_API_KEY is not set" in err


@pytest.mark.parametrize("reply, expected", [
    (ErrorReply(404, "not_found_error", "model: nope"), "model 'nope' was not found (404"),
    (ErrorReply(429, "rate_limit_error", "slow down", {"retry-after": "0"}), "rate limited"),
    (ErrorReply(401, "authentication_error", "invalid x-api-key"), "the API key was refused"),
])
def test_api_errors_are_one_clear_line(ws: Path, monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str], reply: ErrorReply,
                                       expected: str) -> None:
    with FakeMessagesAPI([reply, reply]) as api:
        code = run_agent(api, ws, monkeypatch, "--in-process", "--model", "nope")
    err = capsys.readouterr().err
    assert code == 1, err
    assert expected in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_rate_limit_is_retried_by_the_sdk_first(ws: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    limited = ErrorReply(429, "rate_limit_error", "slow down", {"retry-after-ms": "10"})
    with FakeMessagesAPI([limited, limited]) as api:
        code = run_agent(api, ws, monkeypatch, "--in-process", "--max-retries", "1")
    err = capsys.readouterr().err
    assert code == 1 and len(api.requests) == 2
    assert "after 1 retries" in err


def test_network_failure_is_one_clear_line(ws: Path, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    with FakeMessagesAPI([]) as api:
        url = api.url
    monkeypatch.setenv("ANTHROPIC_BASE_URL", url)  # nobody listens there any more
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    code = main(["run", "--workspace", str(ws), "--in-process", "--max-retries", "0", "task"])
    err = capsys.readouterr().err
    assert code == 1 and "cannot reach the API" in err and "Traceback" not in err


def test_a_daemon_that_never_answers_is_one_clear_line(
        ws: Path, silent: SilentDaemon, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(gateway, "HANDSHAKE_TIMEOUT", 0.5)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    code = main(["run", "--workspace", str(ws), "--socket", str(silent.path), "task"])
    err = capsys.readouterr().err
    assert code == 1 and "Traceback" not in err
    assert err.strip().splitlines() == [f"intentd run: the intentd daemon at {silent.path} took "
                                        "the connection but did not answer within 0.5 s; is it "
                                        "stuck? (restart `intentd serve`)"]


def test_max_turns_stops_the_run(ws: Path, monkeypatch: pytest.MonkeyPatch,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    script: list[Turn | ErrorReply] = [
        Turn([tool_use(f"toolu_{n}", "list_files", path="src")]) for n in range(2)]
    with FakeMessagesAPI(script) as api:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", api.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
        code = main(["run", "--workspace", str(ws), "--in-process", "--max-turns", "2", "task"])
    out = capsys.readouterr().out
    assert code == 1 and "2 turns reached" in out and len(api.requests) == 2


def test_no_terminal_means_calls_needing_a_person_are_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = make_workspace(tmp_path / "ws")  # edits need a person; stdin is not a terminal
    script: list[Turn | ErrorReply] = [
        Turn([tool_use("toolu_1", "select_active_intent", intent_id="INT-1"),
              tool_use("toolu_2", "write_to_file", path="src/x.py", content="x")]),
        Turn([text("I cannot write.")], stop_reason="end_turn"),
    ]
    with FakeMessagesAPI(script) as api:
        code = run_agent(api, ws, monkeypatch, "--in-process")
    assert code == 0
    results = tool_results(api.requests[1])
    assert [r["tool_use_id"] for r in results] == ["toolu_1", "toolu_2"]
    assert results[1]["is_error"] is True and "none can be asked" in results[1]["content"]
    assert not (ws / "src" / "x.py").exists()
    assert json.dumps(api.requests[1]).count("tool_result") == 2


def test_handshake_through_the_daemon_with_a_person_approving(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, daemon: DaemonProcess,
        person: Person) -> None:
    ws = make_workspace(tmp_path / "ws", files={"AGENTS.md": "Use tabs, never spaces."})
    with FakeMessagesAPI(handshake_script()) as api:
        code = run_agent(api, ws, monkeypatch, "--socket", str(daemon.socket_path),
                         "--model", "test-model")
    assert code == 0
    assert_handshake_transcript(api, ws)
    assert [a["tool"] for a in person.seen] == ["write_to_file"]
    assert person.seen[0]["batch"] == "turn-3"


def test_a_rejection_reaches_the_model_and_skips_the_rest_of_the_turn(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, daemon: DaemonProcess) -> None:
    ws = make_workspace(tmp_path / "ws")
    person = Person(daemon.socket_path, approve=False, feedback="put it in src/b.py")
    script: list[Turn | ErrorReply] = [
        Turn([tool_use("toolu_1", "select_active_intent", intent_id="INT-1"),
              tool_use("toolu_2", "write_to_file", path="src/a.py", content="a"),
              tool_use("toolu_3", "write_to_file", path="src/c.py", content="c")]),
        Turn([text("Understood.")], stop_reason="end_turn"),
    ]
    try:
        with FakeMessagesAPI(script) as api:
            code = run_agent(api, ws, monkeypatch, "--socket", str(daemon.socket_path))
    finally:
        person.close()
    assert code == 0
    selected, rejected, skipped = tool_results(api.requests[1])
    assert "is_error" not in selected
    assert rejected["is_error"] and "put it in src/b.py" in rejected["content"]
    assert skipped["is_error"] and "skipped" in skipped["content"]
    assert len(person.seen) == 1 and not (ws / "src" / "a.py").exists()


def test_ctrl_c_during_a_call_stops_cleanly(ws: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    from intentd.daemon.agents.local_gateway import LocalGateway

    def interrupted(self: LocalGateway, tool: str, args: dict[str, Any], batch: Any = None) -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr(LocalGateway, "call", interrupted)
    with FakeMessagesAPI(handshake_script()) as api:
        code = run_agent(api, ws, monkeypatch, "--in-process")
    captured = capsys.readouterr()
    assert code == 130 and "interrupted (Ctrl-C)" in captured.err
    assert "Traceback" not in captured.err and not (ws / "src" / "hello.py").exists()
