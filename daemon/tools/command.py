"""The execute_command tool: bash in the workspace, with a timeout, an output cap and the exit code."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import threading
import time
from typing import IO, Any

from intentd.daemon.sandbox.confine import Confinement, SandboxError, SandboxRequest, confine
from intentd.daemon.sandbox.landlock import LandlockError
from intentd.daemon.tools.base import Tool, ToolContext, ToolKind, ToolResult

DEFAULT_TIMEOUT = 60
MAX_TIMEOUT = 600
OUTPUT_CAP_BYTES = 64 * 1024  # head and tail are kept; the middle of long output is dropped
# An agent may write a bare repository's files (HEAD, config, objects/) anywhere in its scope;
# git would then obey that config (diff.external, core.fsmonitor ...) in a "read-only" command.
# Only repositories named explicitly (--git-dir) may be bare.
GIT_SAFETY_ENV = {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "safe.bareRepository",
                  "GIT_CONFIG_VALUE_0": "explicit"}


class CappedOutput:
    """Keeps the first and last half of the cap, counting what was dropped, in bounded memory."""

    def __init__(self, cap: int = OUTPUT_CAP_BYTES) -> None:
        self.half = cap // 2
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def feed(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.half - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        self.tail += chunk
        if len(self.tail) > self.half:
            del self.tail[: len(self.tail) - self.half]

    def text(self) -> str:
        dropped = self.total - len(self.head) - len(self.tail)
        middle = f"\n... [{dropped} bytes of output dropped] ...\n".encode() if dropped else b""
        return bytes(self.head + middle + self.tail).decode("utf-8", "replace")


def _pump(stream: IO[bytes], sink: CappedOutput) -> None:
    while chunk := stream.read(8192):
        sink.feed(chunk)


def execute_command(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    # No request (a caller that knows no intent) confines to nothing writable: fail closed.
    request = ctx.sandbox if isinstance(ctx.sandbox, SandboxRequest) else SandboxRequest(ctx.root)
    try:
        confinement = confine(request)
    except SandboxError as exc:
        return ToolResult(False, f"not run: {exc}", data={"sandbox": {"confined": False,
                                                                       "error": str(exc)}})
    try:
        return _run(ctx, args, confinement)
    finally:
        confinement.close()


def _run(ctx: ToolContext, args: dict[str, Any], confinement: Confinement) -> ToolResult:
    timeout = args.get("timeout", DEFAULT_TIMEOUT)
    started = time.monotonic()
    # A new session makes the command its own process group, so a timeout kills all of it.
    # The process is born inside the confinement: bash and all it starts.
    try:
        process = confinement.spawn(lambda: subprocess.Popen(
            ["bash", "-c", args["command"]], cwd=ctx.cwd, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
            env={**os.environ, **GIT_SAFETY_ENV, **confinement.env()}))
    except LandlockError as exc:  # fail closed: never run it unconfined instead
        return ToolResult(False, f"not run: the command could not be confined ({exc})",
                          data={"sandbox": {**confinement.report(), "error": str(exc)}})
    assert process.stdout is not None
    sink = CappedOutput()
    reader = threading.Thread(target=_pump, args=(process.stdout, sink), daemon=True)
    reader.start()
    timed_out = False
    try:
        timed_out = not _wait_exit(process, timeout)
    finally:
        if timed_out or process.poll() is None:
            _kill_group(process)
        reader.join(timeout=5)
        process.stdout.close()
    elapsed = round(time.monotonic() - started, 3)
    code = process.returncode
    status = f"timed out after {timeout} s (killed)" if timed_out else f"exit code {code}"
    if not confinement.confined:
        status += f"; {confinement.report()['note']}"
    output = sink.text()
    return ToolResult(not timed_out and code == 0, f"{output}\n[{status}]" if output else f"[{status}]",
                      data={"exit_code": code, "timed_out": timed_out, "seconds": elapsed,
                            "output_bytes": sink.total, "sandbox": confinement.report()})


def _wait_exit(process: subprocess.Popen[bytes], timeout: float) -> bool:
    """Wait for the process to end; False on timeout. A pidfd wakes us the moment it exits
    (Popen.wait with a timeout polls, with sleeps growing to 50 ms)."""
    try:
        pidfd = os.pidfd_open(process.pid)
    except (AttributeError, OSError):  # not Linux ≥ 5.3
        try:
            process.wait(timeout=timeout)
            return True
        except subprocess.TimeoutExpired:
            return False
    try:
        poller = select.poll()
        poller.register(pidfd, select.POLLIN)
        ended = bool(poller.poll(timeout * 1000))
    finally:
        os.close(pidfd)
    if ended:
        process.wait()
    return ended


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait()


def _cwd(args: dict[str, Any]) -> tuple[str, ...]:
    return (args.get("cwd") or ".",)


EXECUTE_COMMAND = Tool(
    name="execute_command",
    description="Run a shell command (bash) in the workspace. Commands the policy proves read-only "
                "may run without asking; any other command needs the selected intent and usually a "
                f"person's approval. Timeout in seconds (default {DEFAULT_TIMEOUT}, max {MAX_TIMEOUT}).",
    schema={"type": "object", "additionalProperties": False, "required": ["command"], "properties": {
        "command": {"type": "string", "minLength": 1, "maxLength": 100_000},
        "cwd": {"type": "string", "minLength": 1, "maxLength": 4096,
                "description": "Working folder relative to the workspace root (default: the root)."},
        "timeout": {"type": "integer", "minimum": 1, "maximum": MAX_TIMEOUT},
        "requires_approval": {"type": "boolean",
                              "description": "Accepted for compatibility; the policy decides."}}},
    kind=ToolKind.COMMAND, execute=execute_command, paths=_cwd,
)
