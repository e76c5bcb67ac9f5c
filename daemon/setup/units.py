"""The systemd user units (socket activation) as text, and where they go."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path

SOCKET_UNIT = "intentd.socket"
SERVICE_UNIT = "intentd.service"
UNIT_NAMES = (SOCKET_UNIT, SERVICE_UNIT)
# What packaged (system-wide) units run; `install-user-service` writes the real path instead.
PACKAGED_EXECUTABLE = "/usr/bin/intentd"

SOCKET_TEXT = f"""\
# intentd's socket: systemd listens, and starts {SERVICE_UNIT} on the first connection.
# Change it with a drop-in (`systemctl --user edit {SOCKET_UNIT}`), not here: installing
# intentd again (`intentd install-user-service`, or a package upgrade) rewrites this file.
[Unit]
Description=intentd socket: gates an AI coding agent's tool calls by intent

[Socket]
# The daemon's default path, $XDG_RUNTIME_DIR/intentd/intentd.sock: clients find it there.
ListenStream=%t/intentd/intentd.sock
# Only this user may connect (the daemon also checks each peer's uid).
SocketMode=0600
DirectoryMode=0700
# A burst of hook calls waits here while the daemon starts or is busy; the daemon's own
# listen() uses the same (server.LISTEN_BACKLOG). The kernel caps it at net.core.somaxconn.
Backlog=4096
# One daemon serves every connection (it is started on the first one).
Accept=no

[Install]
WantedBy=sockets.target
"""

SERVICE_HEAD = f"""\
# intentd's daemon, started by {SOCKET_UNIT} on the first connection.
# Change it with a drop-in (`systemctl --user edit {SERVICE_UNIT}`), not here: installing
# intentd again (`intentd install-user-service`, or a package upgrade) rewrites this file.
[Unit]
Description=intentd daemon: gates an AI coding agent's tool calls by intent
Requires={SOCKET_UNIT}
After={SOCKET_UNIT}

[Service]
Type=simple
"""

SERVICE_TAIL = f"""\
Restart=on-failure
RestartSec=2

[Install]
Also={SOCKET_UNIT}
"""


def user_unit_dir() -> Path:
    """$XDG_CONFIG_HOME/systemd/user, where systemd looks for a user's own units."""
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "systemd" / "user"


def daemon_command() -> list[str]:
    """The absolute command that runs this installation's `intentd`.

    The script next to the running interpreter comes first: `shutil.which` may find another
    installation, or a pyenv/asdf shim that depends on the shell it is run from."""
    beside = Path(sys.executable).parent / "intentd"
    if beside.is_file() and os.access(beside, os.X_OK):
        return [str(beside)]
    found = shutil.which("intentd")
    if found:
        return [str(Path(found).absolute())]
    return [sys.executable, "-m", "intentd.daemon.cli"]


def render_service(command: Sequence[str], path_env: str | None = None) -> str:
    """The service unit running `command serve`; `path_env` fixes the PATH it runs with.

    Commands an agent runs inherit the daemon's PATH, and a user manager's PATH is short
    (/usr/local/bin:/usr/bin:/bin): pinning the installing shell's PATH keeps `npm`, `cargo`
    or a venv's tools findable."""
    lines = [SERVICE_HEAD]
    if path_env:
        lines.append(f"Environment={_quote(f'PATH={path_env}', exec_line=False)}\n")
    lines.append(f"ExecStart={' '.join(_quote(word) for word in [*command, 'serve'])}\n")
    lines.append(SERVICE_TAIL)
    return "".join(lines)


def render_units(command: Sequence[str], path_env: str | None = None) -> dict[str, str]:
    return {SOCKET_UNIT: SOCKET_TEXT, SERVICE_UNIT: render_service(command, path_env)}


def packaged_units() -> dict[str, str]:
    """The units in packaging/systemd/, for distribution packages that install /usr/bin/intentd."""
    return render_units([PACKAGED_EXECUTABLE])


def _quote(word: str, exec_line: bool = True) -> str:
    """One word for ExecStart= (where `$` expands) or Environment=: escaped, quoted if need be."""
    escaped = word.replace("%", "%%")
    if exec_line:
        escaped = escaped.replace("$", "$$")
    if any(c.isspace() or c in "\"'\\;" for c in escaped) or not escaped:
        escaped = '"' + escaped.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return escaped
