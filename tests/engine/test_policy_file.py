"""The policy file: defaults, every section, and clear errors (file, line, key) for bad input."""

from __future__ import annotations

from pathlib import Path

import pytest

from intentd.daemon.policy.config import Policy, load_policy
from intentd.daemon.utils.yamlfile import ConfigError

EXAMPLE = """\
commands:
  allow: ["npm test", "npm run *", "git status"]
  ask:   ["git push *"]
  deny:  ["rm -rf *", "curl *"]
  default: ask
  allow_redirects: false
auto_approve:
  read: true
  read_external: false
  edit: false
  edit_external: false
  safe_commands: true
  all_commands: false
  mcp: false
  max_consecutive: 20
repetition: {limit: 3}
intents: {selectable_statuses: [IN_PROGRESS]}
hooks:
  pre_tool:
    - {command: "./check.sh", matcher: "write_to_file|replace_in_file", timeout: 5}
  post_tool: ["logger intentd"]
"""


def test_missing_file_gives_the_defaults(tmp_path: Path) -> None:
    assert load_policy(tmp_path / "policy.yaml") == Policy()


def test_the_documented_example_loads(tmp_path: Path) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text(EXAMPLE)
    policy = load_policy(path)
    assert policy.commands.deny == ("rm -rf *", "curl *")
    assert policy.auto_approve.max_consecutive == 20 and policy.repetition_limit == 3
    assert policy.hooks.pre_tool[0].timeout == 5 and policy.hooks.post_tool[0].command == "logger intentd"


@pytest.mark.parametrize(("text", "line", "fragment"), [
    ("commands:\n  default: maybe\n", 2, "commands.default must be ask or deny"),
    ("commands:\n  allow: npm test\n", 2, "commands.allow must be a list"),
    ("commands:\n  alow: []\n", 2, "unknown key commands.alow"),
    ("auto_approve:\n  edit: yes please\n", 2, "auto_approve.edit must be true or false"),
    ("auto_approve:\n  max_consecutive: -2\n", 2, "must be ≥ 0"),
    ("repetition: {limit: three}\n", 1, "repetition.limit must be a number"),
    ("hooks:\n  pre_tool:\n    - {matcher: x}\n", 3, "needs a `command`"),
    ("hooks:\n  pre_tool:\n    - {command: x, matcher: '('}\n", 3, "not a valid regex"),
    ("shell: {}\n", 1, "unknown section 'shell'"),
])
def test_bad_policy_names_file_line_and_key(tmp_path: Path, text: str, line: int,
                                            fragment: str) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as caught:
        load_policy(path)
    assert (caught.value.line, caught.value.path) == (line, str(path))
    assert fragment in caught.value.message
