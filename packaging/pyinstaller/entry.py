"""Entry point of the PyInstaller bundle: one program that is `intentd`, or `intentd-gui` by name.

One executable (with `intentd-gui` a symbolic link to it) means one analysis and one copy of
Python and Qt in the bundle. In a bundle `sys.executable` is this program, and intentd runs
`sys.executable -m intentd.daemon.cli serve` (the app starting a daemon) and
`sys.executable -c CODE` (`intentd doctor` probing Qt): so `-m` and `-c` work as in `python`.
"""

from __future__ import annotations

import os
import runpy
import sys


def main() -> int:
    if len(sys.argv) > 2 and sys.argv[1] == "-c":
        code, sys.argv = sys.argv[2], ["-c", *sys.argv[3:]]
        exec(compile(code, "<string>", "exec"), {"__name__": "__main__"})
        return 0
    if len(sys.argv) > 2 and sys.argv[1] == "-m":
        module, sys.argv = sys.argv[2], [sys.argv[0], *sys.argv[3:]]
        runpy.run_module(module, run_name="__main__", alter_sys=True)
        return 0
    if os.path.basename(sys.argv[0]).startswith("intentd-gui"):
        from intentd.gui.app import main as gui_main

        return int(gui_main() or 0)
    from intentd.daemon.cli import main as cli_main

    return int(cli_main() or 0)


if __name__ == "__main__":
    sys.exit(main())
