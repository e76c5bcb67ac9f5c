"""Packaging: the sdist and wheel build and hold everything, the wheel installs and runs in a
fresh virtual environment, and packaging/ passes its validators where they are installed."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import xml.etree.ElementTree as ElementTree
import zipfile
from pathlib import Path

import pytest

from intentd.daemon import __version__

# One worker runs this file: the session fixtures (a build, a venv: seconds each) are built once.
pytestmark = pytest.mark.xdist_group("packaging")

ROOT = Path(__file__).resolve().parents[1]
PACKAGING = ROOT / "packaging"
FOLDERS = {"daemon": "intentd/daemon", "gui": "intentd/gui"}
NOT_SOURCE = shutil.ignore_patterns(".git", "build", "dist", "*.egg-info", "__pycache__",
                                    ".*_cache", ".benchmarks", ".hypothesis", ".venv*", "*.pyc")


@pytest.fixture(scope="session")
def dists(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Built once per session, from a copy of the tree: the build writes egg-info and build/
    folders beside the sources, which must not land in (or race on) the working tree."""
    base = tmp_path_factory.mktemp("dist")
    source = base / "src"
    shutil.copytree(ROOT, source, ignore=NOT_SOURCE, symlinks=True)
    out = base / "out"
    # No --sdist/--wheel: build makes the sdist, then the wheel *from the sdist*, which
    # proves the sdist holds everything the wheel needs.
    done = subprocess.run([sys.executable, "-m", "build", "--outdir", str(out), str(source)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return {"wheel": next(out.glob("intentd-*.whl")), "sdist": next(out.glob("intentd-*.tar.gz"))}


@pytest.fixture(scope="session")
def venv(dists: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with the wheel installed. --system-site-packages and --no-deps: the
    dependencies (PySide6, anthropic, mcp: hundreds of MB) come from this environment instead
    of being downloaded again; what is tested is that the wheel holds every module and entry
    point. --ignore-installed: this environment's editable intentd must not count as installed."""
    path = tmp_path_factory.mktemp("venv") / "env"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(path)],
                   check=True, timeout=120)
    _see_this_environment(path)
    done = subprocess.run([str(path / "bin" / "python"), "-m", "pip", "install", "--quiet",
                           "--no-deps", "--no-index", "--ignore-installed", str(dists["wheel"])],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return path


def _see_this_environment(venv: Path) -> None:
    """--system-site-packages shows the base interpreter's packages, not those of the virtual
    environment the tests run in (if any): name this environment's folders in a .pth file, after
    the new venv's own, so the dependencies resolve either way. Its .pth files are not run, so
    this environment's editable intentd stays invisible."""
    here = {sysconfig.get_paths()[key] for key in ("purelib", "platlib")}
    site = Path(subprocess.run([str(venv / "bin" / "python"), "-c",
                                "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True, timeout=60).stdout.strip())
    (site / "zz_tests_environment.pth").write_text("".join(f"{p}\n" for p in sorted(here)))


def _run(venv: Path, program: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    env["QT_QPA_PLATFORM"] = "offscreen"  # `--help` must not need a display; be safe anyway
    return subprocess.run([str(venv / "bin" / program), *args], capture_output=True, text=True,
                          timeout=60, env=env, cwd=venv)


def _source_modules() -> set[str]:
    return {f"{target}/{path.relative_to(ROOT / folder).as_posix()}"
            for folder, target in FOLDERS.items()
            for path in (ROOT / folder).rglob("*.py") if "__pycache__" not in path.parts}


def test_the_wheel_holds_every_module_and_both_entry_points(dists: dict[str, Path]) -> None:
    with zipfile.ZipFile(dists["wheel"]) as wheel:
        names = set(wheel.namelist())
        entry_points = next(wheel.read(n).decode() for n in names if n.endswith("entry_points.txt"))
    missing = _source_modules() - names
    assert not missing, f"not in the wheel (a folder without __init__.py?): {sorted(missing)}"
    assert not [n for n in names if n.startswith(("tests/", "packaging/"))]
    assert "intentd = intentd.daemon.cli:main" in entry_points
    assert "intentd-gui = intentd.gui.app:main" in entry_points


def test_the_sdist_holds_the_sources(dists: dict[str, Path]) -> None:
    with tarfile.open(dists["sdist"]) as sdist:
        names = {name.partition("/")[2] for name in sdist.getnames()}
    assert {"pyproject.toml", "setup.py", "daemon/cli.py", "daemon/setup/templates.py",
            "gui/__init__.py", "daemon/checkpoints/_listing.c"} <= names


def test_the_installed_wheel_runs_intentd(venv: Path) -> None:
    done = _run(venv, "intentd", "--version")
    assert done.returncode == 0 and done.stdout.strip() == f"intentd {__version__}", done.stderr
    where = _run(venv, "python", "-c", "import intentd.daemon, intentd.gui; "
                                       "print(intentd.daemon.__file__); print(intentd.gui.__file__)")
    assert all(line.startswith(str(venv)) for line in where.stdout.split()), \
        f"imported from outside the venv: {where.stdout}{where.stderr}"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the native lister is Linux's")
def test_the_installed_wheel_lists_trees_natively(venv: Path) -> None:
    done = _run(venv, "python", "-c", "from intentd.daemon.checkpoints import listing; "
                                      "print(listing.lister(), listing.native.__file__)")
    kind, _, where = done.stdout.strip().partition(" ")
    assert kind == "native" and where.startswith(str(venv)), done.stdout + done.stderr


def test_the_installed_wheel_runs_intentd_init(venv: Path, tmp_path: Path) -> None:
    done = _run(venv, "intentd", "init", "--workspace", str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert (tmp_path / ".orchestration" / "policy.yaml").is_file()


def test_the_installed_wheel_runs_intentd_gui_help(venv: Path) -> None:
    done = _run(venv, "intentd-gui", "--help")
    assert done.returncode == 0, f"intentd-gui --help failed:\n{done.stdout}{done.stderr}"
    assert "usage" in done.stdout.lower()


@pytest.mark.skipif(shutil.which("desktop-file-validate") is None,
                    reason="desktop-file-validate is not installed (apt install desktop-file-utils)")
def test_the_desktop_entry_is_valid() -> None:
    done = subprocess.run(["desktop-file-validate", str(PACKAGING / "intentd.desktop")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and not done.stdout.strip(), done.stdout + done.stderr


def test_the_desktop_entry_runs_the_gui_with_its_icon() -> None:
    lines = (PACKAGING / "intentd.desktop").read_text(encoding="utf-8").splitlines()
    assert "Exec=intentd-gui" in lines and "Icon=intentd" in lines
    assert (PACKAGING / "intentd.svg").is_file()


def test_the_icon_is_a_square_svg() -> None:
    root = ElementTree.parse(PACKAGING / "intentd.svg").getroot()
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    _, _, width, height = root.attrib["viewBox"].split()
    assert width == height


def test_the_recipes_are_executable_and_parse() -> None:
    for name in ("build-dist.sh", "build-bundle.sh"):
        script = PACKAGING / name
        assert os.access(script, os.X_OK), f"chmod +x packaging/{name}"
        assert subprocess.run(["bash", "-n", str(script)], timeout=30).returncode == 0
    for name in ("intentd.spec", "entry.py"):
        source = (PACKAGING / "pyinstaller" / name).read_text(encoding="utf-8")
        compile(source, name, "exec")
