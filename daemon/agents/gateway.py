"""How an agent reaches the pipeline: the daemon over its socket, else an in-process engine."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol, TextIO

from intentd.daemon import protocol
from intentd.daemon.agents.calls import CallResult
from intentd.daemon.client import Client, DaemonUnavailable, RpcError, UntrustedDaemon
from intentd.daemon.trust.sides import hook_agent

MCP_AGENT = "mcp"  # the agent name `intentd mcp` opens its gateway with
HANDSHAKE_TIMEOUT = 30.0  # initialize and sessions/open; a call then waits as long as it takes


class GatewayError(Exception):
    """The gateway cannot be opened or was lost; the message says why (one line)."""


class Gateway(Protocol):
    mode: str        # "daemon" or "in-process"
    where: str       # the socket path, or a note on how approvals are answered
    session_id: str
    workspace: Path

    def call(self, tool: str, args: dict[str, Any], batch: str | None = None) -> CallResult: ...

    def intents(self) -> list[dict[str, Any]]: ...

    def restore(self, checkpoint_id: str) -> dict[str, Any]: ...

    def close(self) -> None: ...


class DaemonGateway:
    """One daemon session on one connection; a call waits as long as the person takes."""

    mode = "daemon"

    def __init__(self, client: Client, workspace: Path, agent: str,
                 approval_timeout: float | None = None) -> None:
        self.client, self.approval_timeout = client, approval_timeout
        self.where = str(client.socket_path)
        # `intentd mcp` works for the host that started it, as a hook works for its agent: name
        # that host, so that its own shell commands are on the agent's side too.
        client.initialize(f"intentd-{agent}",
                          agent_process=hook_agent(agent) if agent == MCP_AGENT else None)
        opened = client.call(protocol.SESSIONS_OPEN, {"workspace": str(workspace), "agent": agent})
        self.session_id = str(opened["session_id"])
        self.workspace = Path(opened["workspace"])

    def call(self, tool: str, args: dict[str, Any], batch: str | None = None) -> CallResult:
        params: dict[str, Any] = {"session_id": self.session_id, "tool": tool, "args": args}
        if batch is not None:
            params["batch"] = batch
        if self.approval_timeout is not None:
            params["approval_timeout"] = self.approval_timeout
        try:
            answer = self.client.call(protocol.TOOLS_CALL, params, timeout=None)
        except RpcError as exc:
            return CallResult.refused("daemon", f"the daemon refused the request: {exc.message}")
        except DaemonUnavailable as exc:
            raise GatewayError(f"lost the intentd daemon ({exc}); stopped to be safe") from None
        return CallResult.from_wire(answer)

    def intents(self) -> list[dict[str, Any]]:
        listing = self._ask(protocol.INTENTS_LIST, {"workspace": str(self.workspace)})
        return list(listing.get("intents") or [])

    def restore(self, checkpoint_id: str) -> dict[str, Any]:
        return dict(self._ask(protocol.CHECKPOINTS_RESTORE, {
            "checkpoint_id": checkpoint_id, "workspace": str(self.workspace)}))

    def _ask(self, method: str, params: dict[str, Any]) -> Any:
        try:
            return self.client.call(method, params)
        except RpcError as exc:
            raise GatewayError(f"the daemon refused {method}: {exc.message}") from None
        except (DaemonUnavailable, TimeoutError) as exc:
            raise GatewayError(f"lost the intentd daemon ({exc})") from None

    def close(self) -> None:
        self.client.close()


def try_daemon(socket_path: Path | None, workspace: Path, agent: str,
               approval_timeout: float | None = None) -> DaemonGateway | None:
    """A gateway through the daemon, or None when no daemon answers on the socket; a daemon
    that refuses the session or does not answer in time is a GatewayError."""
    client = Client(socket_path, timeout=HANDSHAKE_TIMEOUT)
    try:
        client.connect()
    except UntrustedDaemon as exc:  # never a silent fallback: someone may be listening in
        raise GatewayError(str(exc)) from None
    except DaemonUnavailable:
        return None
    try:
        return DaemonGateway(client, workspace, agent, approval_timeout)
    except DaemonUnavailable:
        client.close()
        return None
    except RpcError as exc:
        client.close()
        raise GatewayError(f"the daemon refused the session: {exc.message}") from None
    except TimeoutError:
        client.close()
        raise GatewayError(f"the intentd daemon at {client.socket_path} took the connection but "
                           f"did not answer within {HANDSHAKE_TIMEOUT:g} s; is it stuck? "
                           "(restart `intentd serve`)") from None


def open_gateway(workspace: Path, agent: str, *, socket_path: Path | None,
                 approver: Callable[[Any], Any], in_process: bool = False,
                 approval_timeout: float | None = None, notice: TextIO = sys.stderr,
                 local_note: str = "approvals on this terminal",
                 engine_home: Path | None = None) -> Gateway:
    """The daemon when one runs; else an in-process engine whose approvals `approver` answers,
    its state under `engine_home` (default: the user's state folder).

    An explicit --socket with no daemon behind it is an error, not a silent fallback: the
    person asked for that daemon (and the desktop app watching it).
    """
    if not in_process:
        gateway = try_daemon(socket_path, workspace, agent, approval_timeout)
        if gateway is not None:
            return gateway
        if socket_path is not None:
            raise GatewayError(f"no intentd daemon answers at {socket_path}; start it with "
                               f"`intentd serve --socket {socket_path}` or drop --socket")
        print(f"intentd: no daemon at {protocol.default_socket_path()}; running the pipeline "
              "in-process", file=notice)
    from intentd.daemon.agents.local_gateway import LocalGateway

    local: Gateway = LocalGateway(workspace, agent, approver, where=local_note, home=engine_home)
    return local
