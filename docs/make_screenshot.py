"""Re-takes docs/screenshot.png: a real daemon, two agents waiting for a person, the app offscreen.

    python docs/make_screenshot.py [PNG]     # default: docs/screenshot.png
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from intentd.daemon import protocol
from intentd.daemon.client import Client
from intentd.daemon.testing import DaemonProcess, make_intent, make_workspace

BASE = Path("/tmp/itd-demo")
PROMPT = "5b1f0c7e-2d4a-4f8e-9c3b-7a6d1e2f3a4b"  # Claude Code's prompt_id: the edit's turn
OLD = '''"""Session tokens for the API."""

import hashlib
import time

TTL = 3600


def new_token(user_id: int) -> str:
    seed = f"{user_id}:{time.time()}"
    return hashlib.md5(seed.encode()).hexdigest()


def is_expired(issued_at: float) -> bool:
    return time.time() - issued_at > TTL
'''
OLD_BLOCK = OLD[OLD.index("import hashlib"):OLD.index("\n\n\ndef is_expired")]
NEW_BLOCK = OLD_BLOCK.replace("import hashlib", "import secrets").replace(
    '    seed = f"{user_id}:{time.time()}"\n    return hashlib.md5(seed.encode()).hexdigest()',
    "    # 32 random bytes, URL-safe: not guessable from the user id or the clock\n"
    "    return secrets.token_urlsafe(32)")


def workspace() -> Path:
    shutil.rmtree(BASE, ignore_errors=True)
    root = make_workspace(
        BASE / "acme-api",
        make_intent("AUTH-42", name="Harden session tokens",
                    owned_scope=["src/auth/**", "tests/auth/**"]),
        make_intent("DOCS-7", name="Rebuild the API docs", owned_scope=["docs/**"]),
        files={"src/auth/session.py": OLD, "docs/index.md": "# acme-api\n"})
    root = Path(root).resolve()
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    return root


def agent(socket: Path, root: Path, name: str, intent: str) -> tuple[Client, str]:
    client = Client(socket, timeout=None).connect()
    client.initialize(name)
    session = client.call(protocol.SESSIONS_OPEN, {"workspace": str(root), "agent": name})
    client.call(protocol.TOOLS_CALL, {"session_id": session["session_id"],
                                      "tool": "select_active_intent", "args": {"intent_id": intent}})
    return client, str(session["session_id"])


def wait_for_requests(socket: Path, count: int) -> None:
    with Client(socket, timeout=10) as client:
        deadline = time.monotonic() + 20
        while len(client.call(protocol.APPROVALS_LIST)["approvals"]) < count:
            if time.monotonic() > deadline:
                raise TimeoutError("the agents' calls did not reach the queue")
            time.sleep(0.05)


def main() -> int:
    png = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).with_name("screenshot.png"))
    root = workspace()
    with DaemonProcess(BASE / "run" / "intentd.sock", BASE / "state") as daemon:
        docs, docs_session = agent(daemon.socket_path, root, "codex", "DOCS-7")
        docs.send(protocol.request(protocol.TOOLS_CALL, {
            "session_id": docs_session, "tool": "execute_command",
            "args": {"command": "rm -rf docs/_build && make -C docs html"}}, 1))
        wait_for_requests(daemon.socket_path, 1)
        code, session = agent(daemon.socket_path, root, "claude-code", "AUTH-42")
        code.call(protocol.TOOLS_CALL, {"session_id": session, "tool": "read_file",
                                        "args": {"path": "src/auth/session.py"}})
        code.send(protocol.request(protocol.TOOLS_CALL, {
            "session_id": session, "tool": "replace_in_file", "batch": PROMPT,  # its turn
            "args": {"path": "src/auth/session.py", "old_str": OLD_BLOCK, "new_str": NEW_BLOCK}}, 2))
        wait_for_requests(daemon.socket_path, 2)
        shot = subprocess.run([sys.executable, "-m", "intentd.gui.app", "--socket",
                               str(daemon.socket_path), "--workspace", str(root),
                               "--screenshot", str(png)],
                              env={**os.environ, "QT_QPA_PLATFORM": "offscreen"}, check=False)
    shutil.rmtree(BASE, ignore_errors=True)
    return shot.returncode


if __name__ == "__main__":
    sys.exit(main())
