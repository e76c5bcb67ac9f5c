"""Every file the documents cite exists: relative links and repository paths in README.md,
CONTRIBUTING.md and docs/*.md, and the documents named in the code's docstrings."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]

# A path that starts at one of the repository's folders (`daemon/engine/pipeline.py`,
# `tests/bench/bench_check.py`, `docs/protocol.md`), wherever it stands in the text.
REPO_PATH = re.compile(r"(?<![\w./~$-])((?:daemon|gui|tests|docs|packaging|\.ci)/[\w./*-]*[\w/*])")
MARKDOWN_FILE = re.compile(r"(?<![\w./-])([A-Za-z_-]+\.md)\b")
LINK = re.compile(r"\]\(([^)\s]+)\)")

# Files of a person's or an agent's workspace the documents name (an agent's instructions, an
# example), not files of this repository.
WORKSPACE_EXAMPLES = {"docs/out.md", "notes.md", "AGENTS.md", "CLAUDE.md", "GEMINI.md"}


def cited(text: str) -> set[str]:
    paths = {m.group(1).rstrip(".") for m in REPO_PATH.finditer(text)}
    return {p for p in paths if "{" not in p} | set(MARKDOWN_FILE.findall(text))


def exists(citation: str, near: Path) -> bool:
    if citation in WORKSPACE_EXAMPLES:
        return True
    if "*" in citation:
        return any(ROOT.glob(citation))
    return any((base / citation).exists() for base in (ROOT, ROOT / "docs", near))


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_path_a_document_cites_exists(document: Path) -> None:
    text = document.read_text(encoding="utf-8")
    missing = sorted(c for c in cited(text) if not exists(c, document.parent))
    links = [link.split("#", 1)[0] for link in LINK.findall(text)
             if not link.startswith(("http://", "https://", "mailto:", "#"))]
    missing += sorted(link for link in links if not (document.parent / link).exists())
    assert missing == []


def docstrings(path: Path, inner: bool) -> list[str]:
    """The module's docstring, and with `inner` those of its classes and functions too (a test's
    own docstrings name the files of its example workspaces)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nodes = [tree, *(n for n in ast.walk(tree) if inner and isinstance(
        n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef))]
    return [doc for node in nodes if (doc := ast.get_docstring(node))]


def test_the_code_cites_only_documents_that_exist() -> None:
    missing = {}
    for folder in ("daemon", "gui", "tests"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            names = {name for doc in docstrings(path, inner=folder != "tests")
                     for name in MARKDOWN_FILE.findall(doc)}
            if bad := sorted(n for n in names if not exists(n, path.parent)):
                missing[path.relative_to(ROOT).as_posix()] = bad
    assert missing == {}


def test_a_missing_citation_is_caught() -> None:
    """The checks above can fail."""
    assert cited("see `daemon/engine/nowhere.py` and NOWHERE.md") == {"daemon/engine/nowhere.py",
                                                                    "NOWHERE.md"}
    assert not exists("NOWHERE.md", ROOT) and exists("docs/protocol.md", ROOT)
