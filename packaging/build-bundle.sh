#!/usr/bin/env bash
# Builds a standalone one-folder bundle (PyInstaller) of `intentd` and `intentd-gui` into
# dist/bundle/intentd/, and a tarball of it, dist/bundle/intentd-<version>-linux-<arch>.tar.gz.
# It needs no Python on the target machine; it is built for this OS and CPU only.
#
# PyInstaller and intentd's wheel (from build-dist.sh) are installed into a private virtual
# environment under build/bundle/, created with --system-site-packages so the runtime
# dependencies (PySide6, ...) come from this Python's environment: install them first, e.g.
# `pip install -e '.[dev]'`. Nothing is installed into this Python's own environment.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="${BUNDLE_WORK:-$root/build/bundle}"
out="${1:-$root/dist/bundle}"
python="${PYTHON:-python3}"

"$python" -m venv --system-site-packages "$work/venv"
venv_python="$work/venv/bin/python"
"$venv_python" -m pip install --quiet "pyinstaller>=6.10"
# A regular (not editable) install from a clean wheel: PyInstaller follows plain folders,
# not editable finders. --ignore-installed: an editable intentd in the base environment
# must not count as installed.
rm -rf "$work/dist"
"$root/packaging/build-dist.sh" "$work/dist" > /dev/null
"$venv_python" -m pip install --quiet --no-deps --ignore-installed "$work"/dist/intentd-*.whl

"$venv_python" -m PyInstaller --noconfirm --clean --log-level WARN \
    --distpath "$out" --workpath "$work/pyinstaller" "$root/packaging/pyinstaller/intentd.spec"
ln -sf intentd "$out/intentd/intentd-gui"
cp "$root/packaging/intentd.desktop" "$root/packaging/intentd.svg" "$out/intentd/"

version="$("$out/intentd/intentd" --version | awk '{print $2}')"
tarball="$out/intentd-$version-linux-$(uname -m).tar.gz"
tar -C "$out" -czf "$tarball" intentd
"$out/intentd/intentd" --version
echo "bundle: $out/intentd/ ($(du -sh "$out/intentd" | cut -f1)), tarball: $tarball"
