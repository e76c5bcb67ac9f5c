"""`intentd doctor` against a real daemon, with no daemon, and with each thing broken in turn."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from intentd.daemon.checkpoints import CheckpointStore, listing
from intentd.daemon.cli import main
from intentd.daemon.setup.doctor.daemon import check_socket
from intentd.daemon.setup.doctor.result import CheckResult
from intentd.daemon.setup.doctor.system import (
    check_git,
    check_qt,
    check_state_folder,
    check_user_service,
)
from intentd.daemon.setup.doctor.workspace import check_checkpoints, check_tree_listing, check_workspace
from intentd.daemon.setup.init import init_workspace
from intentd.daemon.testing import DaemonProcess, make_workspace, write_policy
from intentd.daemon.utils.statedir import checkpoints_dir


@pytest.fixture
def daemon(short_dir: Path, tmp_path: Path) -> Iterator[DaemonProcess]:
    """A real `intentd serve`; start() polls the socket until it connects (no fixed sleep)."""
    with DaemonProcess(short_dir / "run" / "intentd.sock", tmp_path / "daemon-state") as process:
        yield process


def _doctor(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any]]:
    code = main(["doctor", "--json", *args])
    report = json.loads(capsys.readouterr().out)
    return code, report


def _by_name(report: dict[str, Any]) -> dict[str, dict[str, str]]:
    return {check["name"]: check for check in report["checks"]}


def test_all_pass_against_a_running_daemon(daemon: DaemonProcess, workspace: Path,
                                           monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    code, report = _doctor(capsys, "--socket", str(daemon.socket_path),
                           "--workspace", str(workspace))
    checks = _by_name(report)
    assert code == 0 and report["ok"], report
    assert {checks[name]["status"] for name in ("socket folder", "socket", "daemon", "git", "qt",
                                               "intents file", "policy file")} == {"ok"}
    assert "intentd 0.1" in checks["daemon"]["detail"] and "pid" in checks["daemon"]["detail"]
    assert "INT-1" in checks["intents file"]["detail"]


def test_no_daemon_fails_and_says_how_to_start_one(short_dir: Path, workspace: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["doctor", "--socket", str(short_dir / "none" / "intentd.sock"),
                 "--workspace", str(workspace)])
    out = capsys.readouterr().out
    assert code == 1
    assert "FAIL  daemon" in out and "fix: start it: `intentd serve`" in out
    assert "check(s) failed" in out


def test_a_stale_socket_is_told_apart_from_a_missing_one(short_dir: Path) -> None:
    path = short_dir / "intentd.sock"
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(path))  # bound but never listening: what a crashed daemon leaves
    stale.close()
    path.chmod(0o600)
    short_dir.chmod(0o700)
    results = check_socket(path, timeout=2)
    assert [r.status for r in results] == ["ok", "ok", "fail"]
    assert "no daemon answers" in results[-1].detail


def test_a_socket_folder_open_to_others_fails(daemon: DaemonProcess) -> None:
    folder = daemon.socket_path.parent
    folder.chmod(0o755)
    try:
        results = {r.name: r for r in check_socket(daemon.socket_path)}
    finally:
        folder.chmod(0o700)
    assert results["socket folder"].status == "fail"
    assert results["socket folder"].fix == f"`chmod 700 {folder}`"
    assert results["daemon"].status == "fail"  # clients refuse a socket in an open folder
    assert "will not talk to it" in results["daemon"].detail


def test_a_file_where_the_socket_should_be(short_dir: Path) -> None:
    (short_dir / "intentd.sock").write_text("")
    short_dir.chmod(0o700)
    assert check_socket(short_dir / "intentd.sock")[-1].detail.endswith("is not a socket")


def test_an_initialised_workspace_warns_until_an_intent_is_in_progress(tmp_path: Path) -> None:
    init_workspace(tmp_path)
    intents, policy, ignore = check_workspace(tmp_path)
    assert intents.status == "warn" and "none selectable" in intents.detail
    assert "status: IN_PROGRESS" in intents.fix
    assert policy.status == "ok" and ignore.status == "ok"


def test_selectable_statuses_come_from_the_policy(tmp_path: Path) -> None:
    init_workspace(tmp_path)
    policy = tmp_path / ".orchestration" / "policy.yaml"
    policy.write_text(policy.read_text().replace("[IN_PROGRESS]", "[IN_PROGRESS, PLANNED]"))
    assert check_workspace(tmp_path)[0].status == "ok"


def test_missing_and_broken_files_fail_with_file_and_line(tmp_path: Path) -> None:
    missing = check_workspace(tmp_path)[0]
    assert missing.status == "fail" and "intentd init --workspace" in missing.fix
    make_workspace(tmp_path)
    write_policy(tmp_path, {"auto_approve": {"edit": "yes please"}})
    (tmp_path / ".orchestration" / "active_intents.yaml").write_text("active_intents:\n  - id: [\n")
    intents, policy, _ = check_workspace(tmp_path)
    assert intents.status == "fail" and "active_intents.yaml:" in intents.detail
    assert policy.status == "fail" and "policy.yaml:2: auto_approve.edit" in policy.detail


def test_no_workspace_folder(tmp_path: Path) -> None:
    [result] = check_workspace(tmp_path / "missing")
    assert result.status == "fail"


def test_git_found_and_missing(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    found = check_git()
    assert found.status == "ok" and found.detail.startswith("git version")
    monkeypatch.setenv("PATH", str(tmp_path))
    assert check_git().status == "fail" and "apt install git" in check_git().fix


def test_qt_with_no_display_is_a_warning_with_advice() -> None:
    result = check_qt(env={"PATH": "/usr/bin"})
    assert result.status == "warn" and "QT_QPA_PLATFORM" in result.fix


def test_qt_starts_offscreen_and_an_unknown_platform_fails() -> None:
    assert check_qt(env={"QT_QPA_PLATFORM": "offscreen"}).status == "ok"
    broken = check_qt(env={"QT_QPA_PLATFORM": "no-such-platform"})
    assert broken.status == "fail" and "no-such-platform" in broken.detail


def test_state_folder_must_be_private(tmp_path: Path) -> None:
    folder = tmp_path / "state"
    assert check_state_folder(folder).status == "ok"
    folder.mkdir(mode=0o755)
    folder.chmod(0o755)
    result = check_state_folder(folder)
    assert result.status == "fail" and result.fix == f"`chmod 700 {folder}`"
    folder.chmod(0o700)
    assert check_state_folder(folder).status == "ok"


def test_user_service_pointing_nowhere_fails(tmp_path: Path) -> None:
    assert check_user_service(tmp_path).status == "skip"
    (tmp_path / "intentd.service").write_text("[Service]\nExecStart=/gone/intentd serve\n")
    result = check_user_service(tmp_path)
    assert result.status == "fail" and "install-user-service" in result.fix


def test_installed_service_passes(capsys: pytest.CaptureFixture[str]) -> None:
    main(["install-user-service", "--no-systemctl"])
    assert check_user_service().status == "ok"


def test_the_json_report_lists_every_check(short_dir: Path, tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    code, report = _doctor(capsys, "--socket", str(short_dir / "x.sock"),
                           "--workspace", str(tmp_path))
    names = [check["name"] for check in report["checks"]]
    assert code == 1 and not report["ok"]
    assert names[0] == "socket folder" and {"git", "qt", "intents file", "policy file",
                                             "ignore file", "state folder"} <= set(names)
    assert all(set(check) == set(CheckResult.__dataclass_fields__) for check in report["checks"])


def test_a_workspace_folder_open_to_others_fails_the_state_folder(tmp_path: Path) -> None:
    home = tmp_path / "state"
    folder = home / "workspaces" / "ws-123"
    folder.mkdir(parents=True)
    for level in (home, home / "workspaces"):
        level.chmod(0o700)
    folder.chmod(0o755)
    result = check_state_folder(home)
    assert result.status == "fail" and str(folder) in result.detail
    assert result.fix == f"`chmod 700 {folder}`"
    folder.chmod(0o700)
    assert check_state_folder(home).status == "ok"


def test_the_checkpoint_store_is_checked_when_there_is_one(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws")
    assert check_checkpoints(root).status == "ok"  # none yet
    store_dir = checkpoints_dir(root.resolve())
    with CheckpointStore(root.resolve(), store_dir, watch=False) as store:
        store.create(None, label="baseline")
    good = check_checkpoints(root)
    assert good.status == "ok" and "1 checkpoint(s)" in good.detail
    store_dir.chmod(0o755)
    open_store = check_checkpoints(root)
    assert open_store.status == "fail" and open_store.fix == f"`chmod 700 {store_dir}`"
    store_dir.chmod(0o700)
    (store_dir / "manifest.sqlite3").write_bytes(b"not a database" * 100)
    broken = check_checkpoints(root)
    assert broken.status == "fail" and "unreadable" in broken.detail and "mv " in broken.fix


def test_the_report_checks_the_checkpoint_store(short_dir: Path, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    _code, report = _doctor(capsys, "--socket", str(short_dir / "x.sock"),
                            "--workspace", str(tmp_path))
    assert _by_name(report)["checkpoints"]["status"] == "ok"


def test_the_report_says_how_a_full_scan_lists_the_tree(
        short_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    _code, report = _doctor(capsys, "--socket", str(short_dir / "x.sock"),
                            "--workspace", str(tmp_path))
    assert _by_name(report)["full-scan listing"]["status"] == "ok"  # built at install here
    monkeypatch.setattr(listing, "native", None)
    by_find = check_tree_listing()
    assert by_find.status == "warn" and "GNU find" in by_find.detail and "compiler" in by_find.fix
    monkeypatch.setattr(listing, "gnu_find", lambda: None)
    in_python = check_tree_listing()
    assert in_python.status == "warn" and "Python" in in_python.detail
    assert "findutils" in in_python.fix


def test_a_broken_intents_file_is_reported_with_every_problem(workspace: Path) -> None:
    intents = workspace / ".orchestration" / "active_intents.yaml"
    intents.write_text("active_intents:\n  - id: A\n    name: a\n"
                       "  - id: B\n    status: IN_PROGRESS\n")
    result = {r.name: r for r in check_workspace(workspace)}["intents file"]
    assert result.status == "fail"
    assert result.detail == (f"{intents}:2: intent 'A' has no `status`; "
                             f"{intents}:4: intent 'B' has no `name`")
