"""The sandbox's two policy settings: their defaults, and a value that is neither is refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from intentd.daemon.policy.config import load_policy
from intentd.daemon.utils.yamlfile import ConfigError


def policy_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "policy.yaml"
    path.write_text(text)
    return path


def test_the_defaults_are_deny_and_restore(tmp_path: Path) -> None:
    policy = load_policy(policy_file(tmp_path, "repetition: {limit: 3}\n"))
    assert policy.sandbox.network == "deny" and policy.scope_audit == "restore"


@pytest.mark.parametrize(("text", "network", "mode"), [
    ("sandbox: {network: allow}\n", "allow", "restore"),
    ("scope_audit: report\n", "deny", "report"),
    ("scope_audit: 'off'\n", "deny", "off"),
    ("scope_audit: off\n", "deny", "off"),  # YAML 1.1 reads a bare off as false
])
def test_each_value_is_read(tmp_path: Path, text: str, network: str, mode: str) -> None:
    policy = load_policy(policy_file(tmp_path, text))
    assert (policy.sandbox.network, policy.scope_audit) == (network, mode)


@pytest.mark.parametrize(("text", "named"), [
    ("sandbox: {network: maybe}\n", "sandbox.network must be allow or deny"),
    ("sandbox: {network: true}\n", "sandbox.network"),
    ("sandbox: {udp: deny}\n", "unknown key sandbox.udp"),
    ("scope_audit: undo\n", "scope_audit must be restore or report or off"),
    ("scope_audit: true\n", "scope_audit must be text"),
])
def test_anything_else_is_refused_with_its_line(tmp_path: Path, text: str, named: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_policy(policy_file(tmp_path, text))
    assert named in str(caught.value) and ":1:" in str(caught.value)
