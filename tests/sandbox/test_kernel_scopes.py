"""What else the kernel holds a confined command to, beyond writes: reads stay open; the
terminal takes writes but no ioctl; no signals out of the sandbox, no abstract Unix sockets
under `network: deny` (ABI 6); no new privileges."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from intentd.daemon.sandbox.confine import SandboxRequest, confine
from intentd.daemon.sandbox.landlock import kernel_abi

ABI = kernel_abi()
pytestmark = pytest.mark.skipif(ABI < 1, reason="needs a kernel with Landlock")


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    for name, text in {"src/app.py": "app\n", "docs/guide.md": "guide\n"}.items():
        (tmp_path / "ws" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "ws" / name).write_text(text)
    return tmp_path / "ws"


def run(ws: Path, script: str, network: bool = False, **popen: object) -> tuple[int, str]:
    """Run bash -c script confined to src/**; its exit code and output."""
    confinement = confine(SandboxRequest(str(ws), ("src/**",), network))
    try:
        proc = confinement.spawn(lambda: subprocess.Popen(
            ["bash", "-c", script], cwd=ws, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True, env={**os.environ, **confinement.env()}, **popen))  # type: ignore[call-overload]
        out, _ = proc.communicate(timeout=30)
    finally:
        confinement.close()
    return proc.returncode, out


def test_reads_stay_open_outside_the_scope_and_the_workspace(ws: Path, tmp_path: Path) -> None:
    (tmp_path / "elsewhere.txt").write_text("elsewhere\n")
    code, out = run(ws, f"cat docs/guide.md {tmp_path / 'elsewhere.txt'}; echo x > docs/no.md")
    assert out.startswith("guide\nelsewhere\n") and "Permission denied" in out, out
    assert not (ws / "docs" / "no.md").exists()


def test_no_new_privileges(ws: Path) -> None:
    """What lets an unprivileged process enter Landlock also keeps setuid programs from gaining."""
    code, out = run(ws, "grep NoNewPrivs /proc/self/status")
    assert out.split() == ["NoNewPrivs:", "1"], out


@pytest.fixture
def terminals() -> Iterator[tuple[int, str, int, str]]:
    """Two pseudo-terminals: (master fd, slave path) of each."""
    first, second = os.openpty(), os.openpty()
    yield first[0], os.ttyname(first[1]), second[0], os.ttyname(second[1])
    for fd in (*first, *second):
        os.close(fd)


def test_the_daemons_terminal_takes_writes_another_does_not(
        ws: Path, terminals: tuple[int, str, int, str], monkeypatch: pytest.MonkeyPatch) -> None:
    master, mine, _other_master, other = terminals
    with open(mine, "rb", buffering=0) as stdin:  # the daemon (or `intentd run`) started from it
        monkeypatch.setattr(sys, "stdin", stdin)
        _, out = run(ws, f"echo to-the-terminal > {mine} && echo wrote; echo x > {other}")
    assert out.startswith("wrote\n") and "Permission denied" in out, out
    assert b"to-the-terminal" in os.read(master, 1024)


def test_dev_tty_reaches_the_controlling_terminal(ws: Path,
                                                  terminals: tuple[int, str, int, str]) -> None:
    master, mine, _, _ = terminals
    with open(mine, "rb", buffering=0) as tty:
        _, out = run(ws, "setsid -c bash -c 'echo via-dev-tty > /dev/tty && echo wrote'",
                     stdin=tty)
    assert "wrote" in out, out
    assert b"via-dev-tty" in os.read(master, 1024)


@pytest.mark.skipif(ABI < 5, reason="ioctl rights on devices need Landlock ABI 5")
def test_the_terminal_takes_no_ioctl(ws: Path, terminals: tuple[int, str, int, str],
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """No TIOCSTI (typing into the person's shell): no ioctl on a device opened inside."""
    _, mine, _, _ = terminals
    probe = ("import fcntl, termios, sys\nfd = open(sys.argv[1], 'wb', buffering=0)\n"
             "try:\n    fcntl.ioctl(fd, termios.TIOCGWINSZ, bytes(8)); print('ioctl ran')\n"
             "except OSError as e:\n    print('refused', e.errno)\n")
    with open(mine, "rb", buffering=0) as stdin:
        monkeypatch.setattr(sys, "stdin", stdin)
        _, out = run(ws, f"{sys.executable} -c \"{probe}\" {mine}")
    assert out.strip() == "refused 13", out


@pytest.mark.skipif(ABI < 6, reason="signal scoping needs Landlock ABI 6")
def test_no_signal_leaves_the_sandbox(ws: Path) -> None:
    outside = subprocess.Popen(["sleep", "30"])
    try:
        _, out = run(ws, f"sleep 30 & kill $! && echo own-child-killed; kill -TERM {outside.pid}")
        assert out.startswith("own-child-killed\n") and "Operation not permitted" in out, out
        assert outside.poll() is None, "the process outside the sandbox was signalled"
    finally:
        outside.send_signal(signal.SIGKILL)
        outside.wait()


@pytest.fixture
def abstract_listener() -> Iterator[str]:
    name = f"intentd-test-{uuid.uuid4().hex}"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind("\0" + name)
    listener.listen(4)
    yield name
    listener.close()


@pytest.mark.skipif(ABI < 6, reason="abstract Unix socket scoping needs Landlock ABI 6")
@pytest.mark.parametrize(("network", "expected"), [(False, "refused"), (True, "connected")])
def test_abstract_unix_sockets_only_under_network_allow(ws: Path, abstract_listener: str,
                                                        network: bool, expected: str) -> None:
    probe = ("import socket\ns = socket.socket(socket.AF_UNIX)\ntry:\n"
             f"    s.connect(chr(0) + '{abstract_listener}'); print('connected')\n"
             "except OSError:\n    print('refused')\n")
    _, out = run(ws, f"{sys.executable} -c \"{probe}\"", network=network)
    assert out.strip() == expected, out


def confined_writes(ws: Path, scope: tuple[str, ...], script: str) -> tuple[str, list[str]]:
    """Run script confined to scope; its output and the folders and files it was granted."""
    confinement = confine(SandboxRequest(str(ws), scope))
    try:
        proc = confinement.spawn(lambda: subprocess.Popen(
            ["bash", "-c", script], cwd=ws, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True))
        out, _ = proc.communicate(timeout=30)
    finally:
        confinement.close()
    return out, confinement.writable


def test_a_scope_folder_that_is_a_link_out_of_the_workspace_is_not_granted(ws: Path,
                                                                            tmp_path: Path) -> None:
    (tmp_path / "outside").mkdir()
    (ws / "lib").symlink_to(tmp_path / "outside")
    (ws / "src" / "out").symlink_to(tmp_path / "outside")
    out, writable = confined_writes(ws, ("src/**", "lib/**"),
                                    "echo a > lib/a; echo b > src/out/b; echo c > src/c")
    assert writable[:1] == ["src"] and "lib" not in writable
    assert out.count("Permission denied") == 2, out
    assert list((tmp_path / "outside").iterdir()) == [] and (ws / "src" / "c").exists()


def test_a_scope_folder_that_does_not_exist_yet_is_not_granted(ws: Path) -> None:
    out, writable = confined_writes(ws, ("lib/**",), "mkdir lib && echo made")
    assert "made" not in out and not (ws / "lib").exists()
    assert not [w for w in writable if not w.startswith(("/", "$"))]


def test_with_everything_in_scope_only_new_files_at_the_root_are_refused(ws: Path) -> None:
    """`.git/` and `.orchestration/` held back means the root is granted child by child."""
    (ws / ".orchestration").mkdir()
    (ws / "README.md").write_text("# r\n")
    out, _ = confined_writes(ws, ("**",), "echo more >> README.md; echo n > docs/new.md; "
                                          "echo x > new-at-root.txt; echo y > .orchestration/z")
    assert (ws / "README.md").read_text() == "# r\nmore\n" and (ws / "docs" / "new.md").exists()
    assert not (ws / "new-at-root.txt").exists() and not (ws / ".orchestration" / "z").exists()
    assert out.count("Permission denied") == 2, out


def test_the_daemon_itself_stays_unconfined(ws: Path) -> None:
    """Only the thread that starts the command enters the sandbox: after it, this process (the
    daemon) still writes outside the scope, as its audit, ledger and checkpoints must."""
    run(ws, "true")
    (ws / "docs" / "by-the-daemon.md").write_text("written after a confined command\n")
    with open("/proc/self/status", encoding="ascii") as status:
        assert "NoNewPrivs:\t0" in status.read()


def test_a_process_left_running_after_the_command_stays_confined(ws: Path) -> None:
    """The audit ends when the command returns; what it left running is still held by the kernel."""
    code, _ = run(ws, "(sleep 0.3; echo x > docs/late.md || echo refused > src/late) "
                      ">/dev/null 2>&1 &")
    assert code == 0
    deadline = time.monotonic() + 10
    while not (ws / "src" / "late").exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert (ws / "src" / "late").read_text() == "refused\n"
    assert not (ws / "docs" / "late.md").exists()


@pytest.mark.skipif(ABI < 4, reason="TCP rules need Landlock ABI 4")
@pytest.mark.parametrize(("network", "expected"), [(False, "refused"), (True, "bound")])
def test_binding_a_tcp_port_only_under_network_allow(ws: Path, network: bool,
                                                     expected: str) -> None:
    """A dev server a command starts (bind, then listen) is TCP too: refused under deny."""
    probe = ("import socket\ns = socket.socket()\ntry:\n    s.bind(('127.0.0.1', 0)); s.listen(1)"
             "; print('bound')\nexcept OSError:\n    print('refused')\n")
    _, out = run(ws, f"{sys.executable} -c \"{probe}\"", network=network)
    assert out.strip() == expected, out


def test_a_folder_owned_as_itself_is_emptied_but_stays(ws: Path) -> None:
    """Landlock checks removing or renaming a folder on its parent (here the workspace root),
    and granting that would let any folder go: its contents go, the folder stays."""
    (ws / "src" / "pkg").mkdir()
    (ws / "src" / "pkg" / "mod.py").write_text("m\n")
    out, _ = confined_writes(ws, ("/src",), "rm -rf src; mv docs gone")
    assert (ws / "src").is_dir() and list((ws / "src").iterdir()) == []
    assert (ws / "docs" / "guide.md").exists() and out.count("Permission denied") == 2, out
