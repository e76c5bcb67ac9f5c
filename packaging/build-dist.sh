#!/usr/bin/env bash
# Builds the sdist, then the wheel from that sdist, into dist/ (or the folder given as $1).
# Building the wheel from the sdist proves the sdist is complete. Needs `build` (in the dev
# extra) and a package index for setuptools>=68 (the isolated build environment).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="$(mkdir -p "${1:-$root/dist}" && cd "${1:-$root/dist}" && pwd)"
python="${PYTHON:-python3}"

"$python" -m build --outdir "$out" "$root"
echo "built:"
ls -l "$out"/intentd-*
