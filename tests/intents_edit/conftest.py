"""A real daemon, a person-side client, and an intents file full of comments and odd quoting."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from intentd.daemon.client import Client
from intentd.daemon.testing import DaemonProcess, make_workspace

# Everything a person may write by hand: comments everywhere, blank lines, each quoting style,
# a folded name, a flow list, an unindented list, an unknown key, no newline at the end.
HAND_WRITTEN = """\
# The person's intents.   Keep this header!

active_intents:   # every intent the agents may select

  # --- auth work ---
  - id: "AUTH"
    name: 'Auth: rewrite the login flow'   # quoted oddly
    status: IN_PROGRESS
    owned_scope:
      - "src/auth/**"
      - 'tests/auth/**'   # the tests too
      - !!str docs/auth.md
      # - src/legacy/**   (not yet)
    constraints: [ "keep the API", 'no new deps' ]
    acceptance_criteria:
    - login works      # no indent here
    - "logout works"


  - id: DOCS     # second
    name: >-
      A folded
      name
    status: PENDING
    owned_scope: []
    owner: ann    # unknown key kept

# trailing comment"""


@pytest.fixture
def person(daemon: DaemonProcess) -> Iterator[Client]:
    """The test process is on the person's side: it did not come from intentd or an agent."""
    client = Client(daemon.socket_path, timeout=30).connect()
    client.initialize("test-person")
    yield client
    client.close()


@pytest.fixture
def ws(short_dir: Path) -> Path:
    root = make_workspace(short_dir / "ws", policy={"auto_approve": {"all_commands": True,
                                                                     "edit": True}},
                          files={"src/auth/login.py": "x\n", "src/auth/secret/key.py": "k\n",
                                 "docs/auth.md": "d\n", "docs/guide.md": "g\n",
                                 "README.md": "r\n"}).resolve()
    (root / ".orchestration" / "active_intents.yaml").write_text(HAND_WRITTEN)
    return root


def intents_file(ws: Path) -> Path:
    return ws / ".orchestration" / "active_intents.yaml"
