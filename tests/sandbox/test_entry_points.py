"""Every way a command reaches intentd runs it confined: `intentd run` in-process, and MCP."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from intentd.daemon.cli import main
from intentd.daemon.sandbox.landlock import kernel_abi
from intentd.daemon.testing import DaemonProcess
from tests.agents.fake_api import FakeMessagesAPI, Turn, text, tool_use
from tests.agents.test_mcp_server import server_params, session_calls, text_of
from tests.sandbox.conftest import git_workspace

pytestmark = pytest.mark.skipif(kernel_abi() < 1, reason="needs a kernel with Landlock")
WRITER = "echo x > src/in.txt; echo y > docs/out.txt; echo z > .orchestration/evil.yaml\n"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    ws = git_workspace(tmp_path / "ws", ["src/**"], {"auto_approve": {"all_commands": True}})
    (ws / "src" / "w.sh").write_text(WRITER)
    return ws


def confined_as_asked(ws: Path, output: str) -> None:
    assert (ws / "src" / "in.txt").exists()
    assert not (ws / "docs" / "out.txt").exists()
    assert not (ws / ".orchestration" / "evil.yaml").exists()
    assert output.count("Permission denied") == 2, output


def test_intentd_run_in_process_confines_its_commands(ws: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    script = [Turn([tool_use("toolu_1", "select_active_intent", intent_id="INT-1")]),
              Turn([tool_use("toolu_2", "execute_command", command="bash src/w.sh")]),
              Turn([text("Done."), tool_use("toolu_3", "attempt_completion", result="ran it")])]
    with FakeMessagesAPI(script) as api:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", api.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        code = main(["run", "--workspace", str(ws), "--in-process", "--max-retries", "0",
                     "--model", "test-model", "run the script"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "intentd run: commands confined by Landlock ABI" in out
    [result] = [b for b in api.requests[2]["messages"][-1]["content"] if b["type"] == "tool_result"]
    confined_as_asked(ws, str(result["content"]))


def test_mcp_confines_its_commands(ws: Path, daemon: DaemonProcess) -> None:
    calls = [("select_active_intent", {"intent_id": "INT-1"}),
             ("execute_command", {"command": "bash src/w.sh"})]
    _, (selected, ran) = anyio.run(
        session_calls, server_params(ws, "--socket", str(daemon.socket_path)), calls)
    assert not selected.is_error
    confined_as_asked(ws, text_of(ran))
