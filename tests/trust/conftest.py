"""A real daemon and a workspace whose one intent owns everything, for the trust tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from intentd.daemon.testing import make_intent, make_workspace


@pytest.fixture
def ws(short_dir: Path) -> Path:
    return make_workspace(short_dir / "ws", make_intent(owned_scope=["**"]),
                          policy={"auto_approve": {"all_commands": True}},
                          files={"src/app.py": "print('hi')\n", "README.md": "# demo\n"}).resolve()
