"""mypy sees the real code: .ci/typecheck/intentd/ links to daemon/ and gui/ (the folders
setup.py maps onto intentd.daemon and intentd.gui), and pyproject.toml's mypy config uses it."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TREE = ROOT / ".ci" / "typecheck" / "intentd"


def test_the_link_tree_points_at_the_package_folders() -> None:
    for name in ("daemon", "gui"):
        link = TREE / name
        assert link.is_symlink() and link.resolve() == (ROOT / name).resolve()
        assert (link / "__init__.py").is_file()
    assert not (TREE / "__init__.py").exists()  # intentd is a namespace package, as installed


def test_mypy_checks_the_tree_strictly_and_ignores_only_third_party_modules() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    assert config["strict"] is True and config["packages"] == ["intentd"]
    assert config["mypy_path"] == "$MYPY_CONFIG_FILE_DIR/.ci/typecheck"
    assert "ignore_missing_imports" not in config
    ignored = [m for o in config.get("overrides", []) if o.get("ignore_missing_imports")
               for m in o["module"]]
    assert ignored and not any(m.startswith("intentd") for m in ignored)
