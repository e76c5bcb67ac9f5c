"""Claude Code's tool inputs mapped to pipeline calls (pure)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from intentd.daemon.agents.hooks.claude_tools import Mapped, map_call, selection


def test_file_tools_map_to_the_file_tools(tmp_path: Path) -> None:
    path = str(tmp_path / "a.py")
    assert map_call("Write", {"file_path": path, "content": "x"}) == Mapped(
        "write_to_file", {"path": path, "content": "x"})
    assert map_call("Read", {"file_path": path, "offset": 3, "limit": 9}) == Mapped(
        "read_file", {"path": path}, read_only=True)
    assert map_call("Edit", {"file_path": path, "old_string": "a", "new_string": "b"}) == Mapped(
        "replace_in_file", {"path": path, "old_str": "a", "new_str": "b"})
    multi = map_call("MultiEdit", {"file_path": path, "edits": [
        {"old_string": "a", "new_string": "b"}, {"old_string": "c", "new_string": "d"}]})
    assert multi == Mapped("replace_in_file", {"path": path, "edits": [
        {"old_str": "a", "new_str": "b"}, {"old_str": "c", "new_str": "d"}]})


def test_edits_that_are_not_unique_replacements_map_to_the_whole_result(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_text("x x x\n")
    every = map_call("Edit", {"file_path": str(path), "old_string": "x", "new_string": "y",
                              "replace_all": True})
    assert every == Mapped("write_to_file", {"path": str(path), "content": "y y y\n"})
    new = tmp_path / "new.txt"
    created = map_call("Edit", {"file_path": str(new), "old_string": "", "new_string": "hello"})
    assert created == Mapped("write_to_file", {"path": str(new), "content": "hello"})


def test_search_and_listing_tools_are_reads(tmp_path: Path) -> None:
    assert map_call("Glob", {"pattern": "**/*.py"}) == Mapped(
        "list_files", {"path": ".", "recursive": True}, read_only=True)
    # Claude Code's Grep is its own ripgrep: judged as the rg command over a folder, and as
    # a read of the file when it searches one file
    assert map_call("Grep", {"pattern": "def \\w+", "path": "src", "glob": "*.py"}) == Mapped(
        "execute_command", {"command": "rg --file - -- src <<< 'def \\w+'"}, read_only=True)
    (tmp_path / "a.py").write_text("x")
    assert map_call("Grep", {"pattern": "x", "path": str(tmp_path / "a.py")}) == Mapped(
        "read_file", {"path": str(tmp_path / "a.py")}, read_only=True)
    assert map_call("LS", {"path": str(tmp_path)}) == Mapped(
        "list_files", {"path": str(tmp_path)}, read_only=True)


def test_bash_maps_to_execute_command_in_the_hook_cwd() -> None:
    assert map_call("Bash", {"command": "ls", "timeout": 1000}, "/ws/sub") == Mapped(
        "execute_command", {"command": "ls", "cwd": "/ws/sub"})
    assert map_call("Bash", {"command": "intentd hook select AUTH-42"}) == Mapped(
        None, select="AUTH-42")


@pytest.mark.parametrize("command", ["intentd hook select A && rm -rf /", "intentd hook select",
                                     "intentd hook select 'A' B", "echo intentd hook select A"])
def test_only_the_exact_select_command_is_a_selection(command: str) -> None:
    assert selection(command) is None
    assert map_call("Bash", {"command": command}).tool == "execute_command"


def test_notebook_edit_is_an_edit_of_the_notebook_with_the_cell_changed(tmp_path: Path) -> None:
    book = tmp_path / "n.ipynb"
    book.write_text(json.dumps({"cells": [{"id": "c1", "cell_type": "code", "source": "1"}],
                                "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    mapped = map_call("NotebookEdit", {"notebook_path": str(book), "cell_id": "c1",
                                       "new_source": "2"})
    assert mapped.tool == "write_to_file" and mapped.args["path"] == str(book)
    assert json.loads(mapped.args["content"])["cells"][0]["source"] == "2"
    inserted = map_call("NotebookEdit", {"notebook_path": str(book), "cell_id": "c1",
                                         "new_source": "# title", "cell_type": "markdown",
                                         "edit_mode": "insert"})
    cells = json.loads(inserted.args["content"])["cells"]
    assert [c["source"] for c in cells] == ["1", "# title"]


def test_mcp_tools_pass_through_and_unknown_tools_are_destructive() -> None:
    assert map_call("mcp__github__create_issue", {"title": "t"}) == Mapped(
        "mcp__github__create_issue", {"title": "t"})
    assert map_call("mcp__intentd__select_active_intent", {"intent_id": "X"}).select == "X"
    unknown = map_call("Teleport", {"to": "/"})
    assert unknown.tool == "mcp__claude_code__Teleport" and not unknown.read_only
    assert map_call("WebFetch", {"url": "https://x"}).tool == "mcp__claude_code__WebFetch"
    assert map_call("TodoWrite", {"todos": []}) == Mapped(None)


def test_only_the_intentd_servers_select_is_a_selection() -> None:
    """Another server's tool of the same name is that server's tool, gated like any other."""
    for name in ("mcp__github__select_active_intent", "mcp__evil__intentd__select_active_intent"):
        assert map_call(name, {"intent_id": "INT-1"}) == Mapped(name, {"intent_id": "INT-1"})


def test_a_fifo_at_the_edits_path_is_never_waited_on(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    mapped = map_call("Edit", {"file_path": str(fifo), "old_string": "a", "new_string": "b",
                               "replace_all": True})
    assert mapped.tool == "replace_in_file"  # not computed from the FIFO's (absent) text
    book = map_call("NotebookEdit", {"notebook_path": str(fifo), "new_source": "x"})
    assert book.tool == "write_to_file" and book.args["content"] == ""
