"""Layers point one way: the bottom packages import nothing above them, the app reaches the
daemon only through the protocol, and product code never imports test helpers.

docs/architecture.md draws the layers; this test is what keeps them. A `cli.py` module is an
entry point (the top of its package) and may reach anywhere.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = {"daemon": "intentd.daemon", "gui": "intentd.gui"}

# A package of intentd.daemon: the other first-party packages its modules may import.
MAY_IMPORT: dict[str, set[str]] = {
    "utils": set(),
    "protocol": set(),
    "policy": {"utils"},
    "checkpoints": {"utils", "policy", "protocol"},
    "tools": {"utils", "policy", "protocol", "sandbox"},
}
TEST_HELPERS = ("intentd.daemon.testing", "tests")


def module_name(path: Path) -> str:
    folder, *rest = path.relative_to(ROOT).with_suffix("").parts
    parts = [FOLDERS[folder], *rest]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def product_modules() -> Iterator[tuple[str, Path]]:
    for folder in FOLDERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            yield module_name(path), path


def imports(name: str, path: Path) -> set[str]:
    """Every module `path` imports, at its top or inside a function, relative ones resolved."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[:len(anchor) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def daemon_package(module: str) -> str | None:
    """The package of intentd.daemon a module belongs to (`engine`, `utils`, ...)."""
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[:2] == ["intentd", "daemon"] else None


def upward(name: str, path: Path) -> list[str]:
    """The imports of one module that break its package's layer."""
    package = daemon_package(name)
    if package not in MAY_IMPORT or path.name == "cli.py":
        return []
    allowed = MAY_IMPORT[package] | {package}
    return sorted(m for m in imports(name, path)
                  if daemon_package(m) is not None and daemon_package(m) not in allowed
                  and m != "intentd.daemon.__version__")


def test_the_scanner_sees_imports_of_every_kind(tmp_path: Path) -> None:
    """The checks below can fail: a top-level, a relative and a lazy import are all found."""
    sample = tmp_path / "sample.py"
    sample.write_text("import os\nfrom .model import Coverage\nfrom intentd.daemon import testing\n"
                      "def f():\n    from intentd.daemon.engine import engine\n")
    found = imports("intentd.daemon.checkpoints.sample", sample)
    assert {"os", "intentd.daemon.checkpoints.model.Coverage", "intentd.daemon.testing",
            "intentd.daemon.engine.engine"} <= found
    config = ROOT / "daemon" / "policy" / "config.py"
    assert any(within(m, "intentd.daemon.utils") for m in imports(module_name(config), config))


@pytest.mark.parametrize("package", sorted(MAY_IMPORT))
def test_lower_layers_import_nothing_above_them(package: str) -> None:
    broken = {name: bad for name, path in product_modules()
              if daemon_package(name) == package and (bad := upward(name, path))}
    assert broken == {}, f"{package} may import only {sorted(MAY_IMPORT[package])}"


def test_the_app_reaches_the_daemon_only_through_the_protocol() -> None:
    broken = {name: sorted(bad) for name, path in product_modules()
              if within(name, "intentd.gui")
              and (bad := {m for m in imports(name, path) if within(m, "intentd.daemon")
                           and m != "intentd.daemon"  # `from intentd.daemon import protocol`
                           and not within(m, "intentd.daemon.protocol")})}
    assert broken == {}


def test_product_code_never_imports_test_helpers() -> None:
    """`from intentd.daemon import testing` counts too: the scanner records it as the module."""
    broken = {name: sorted(bad) for name, path in product_modules()
              if name != "intentd.daemon.testing"
              and (bad := {m for m in imports(name, path)
                           if any(within(m, helper) for helper in TEST_HELPERS)})}
    assert broken == {}
