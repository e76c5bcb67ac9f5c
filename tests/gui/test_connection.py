"""DaemonConnection against an in-process fake: requests, notifications, loss and reconnect."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from intentd.daemon import protocol
from intentd.gui.connection import CONNECTION_LOST, ConnectionState, DaemonConnection, RpcFailure
from tests.gui.fake_daemon import FakeDaemon


@pytest.fixture
def fake(short_dir: Path) -> Iterator[FakeDaemon]:
    daemon = FakeDaemon(short_dir / "fake.sock").start()
    yield daemon
    daemon.stop()


@pytest.fixture
def connection(fake: FakeDaemon, qtbot: QtBot) -> Iterator[DaemonConnection]:
    conn = DaemonConnection(fake.path, "test")
    with qtbot.waitSignal(conn.state_changed, timeout=5000,
                          check_params_cb=lambda s: s == ConnectionState.CONNECTED):
        conn.open()
    yield conn
    conn.close()


def test_the_handshake_initializes_then_subscribes(connection: DaemonConnection,
                                                   fake: FakeDaemon) -> None:
    assert fake.methods() == [protocol.INITIALIZE, protocol.EVENTS_SUBSCRIBE]
    assert fake.requests[0]["params"] == {"protocol_version": protocol.PROTOCOL_VERSION,
                                          "client": "test"}
    assert connection.server_info["server"] == "fake"


def test_answers_go_to_their_callbacks(connection: DaemonConnection, fake: FakeDaemon,
                                       qtbot: QtBot) -> None:
    fake.handlers["echo"] = lambda params: params
    results: list[Any] = []
    errors: list[RpcFailure] = []
    connection.request("echo", {"n": 1}, results.append, errors.append)
    connection.request("nope", {}, results.append, errors.append)
    connection.request("echo", {"n": 2}, results.append, errors.append)
    qtbot.waitUntil(lambda: len(results) + len(errors) == 3)
    assert results == [{"n": 1}, {"n": 2}]
    assert errors[0].code == protocol.METHOD_NOT_FOUND


def test_notifications_and_batches_come_out_in_order(connection: DaemonConnection,
                                                     fake: FakeDaemon, qtbot: QtBot) -> None:
    seen: list[tuple[str, dict[str, Any]]] = []
    connection.notification_received.connect(lambda m, p: seen.append((m, p)))
    fake.notify(protocol.APPROVALS_RESOLVED, {"approval_id": "a-1"})
    fake.send_raw(b'not json\n[{"jsonrpc":"2.0","method":"sessions/closed","params":{}}]\n')
    qtbot.waitUntil(lambda: len(seen) == 2)
    assert [m for m, _ in seen] == [protocol.APPROVALS_RESOLVED, protocol.SESSIONS_CLOSED]


def test_losing_the_daemon_fails_what_waits_and_reconnects(connection: DaemonConnection,
                                                          fake: FakeDaemon, qtbot: QtBot) -> None:
    fake.silent.add("slow")
    errors: list[RpcFailure] = []
    connection.request("slow", {}, None, errors.append)
    qtbot.waitUntil(lambda: "slow" in fake.methods())
    with qtbot.waitSignal(connection.state_changed, timeout=5000,
                          check_params_cb=lambda s: s == ConnectionState.DISCONNECTED):
        fake.stop()
    assert [e.code for e in errors] == [CONNECTION_LOST]
    fake.requests.clear()
    with qtbot.waitSignal(connection.state_changed, timeout=5000,
                          check_params_cb=lambda s: s == ConnectionState.CONNECTED):
        fake.start()
    assert fake.methods() == [protocol.INITIALIZE, protocol.EVENTS_SUBSCRIBE]


def test_a_request_while_disconnected_fails_later_not_at_once(short_dir: Path,
                                                              qtbot: QtBot) -> None:
    conn = DaemonConnection(short_dir / "none.sock", "test")
    errors: list[RpcFailure] = []
    assert conn.request("anything", {}, None, errors.append) is None
    assert errors == []
    qtbot.waitUntil(lambda: len(errors) == 1)
    assert errors[0].code == CONNECTION_LOST


def test_no_daemon_is_reported_once_and_retried(short_dir: Path, qtbot: QtBot) -> None:
    conn = DaemonConnection(short_dir / "late.sock", "test")
    missing: list[bool] = []
    conn.daemon_missing.connect(lambda: missing.append(True))
    conn.open()
    qtbot.waitUntil(lambda: conn.state == ConnectionState.DISCONNECTED and conn.retry_in_ms() > 0)
    assert missing == [True] and "no daemon" in conn.last_error
    late = FakeDaemon(short_dir / "late.sock").start()
    try:
        qtbot.waitUntil(lambda: conn.state == ConnectionState.CONNECTED, timeout=5000)
        assert missing == [True]
    finally:
        conn.close()
        late.stop()
