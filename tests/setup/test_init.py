"""`intentd init`: the templates load with the daemon's loaders, and nothing is ever overwritten."""

from __future__ import annotations

from pathlib import Path

import pytest

from intentd.daemon.cli import main
from intentd.daemon.engine.intents import load_intents
from intentd.daemon.policy.config import Policy, load_policy
from intentd.daemon.policy.ignore import load_ignore_rules
from intentd.daemon.setup.init import init_workspace
from intentd.daemon.setup.templates import ACTIVE_INTENTS, POLICY, TEMPLATES


def test_init_writes_the_three_commented_files(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["init", "--workspace", str(tmp_path)]) == 0
    folder = tmp_path / ".orchestration"
    assert sorted(p.name for p in folder.iterdir()) == sorted(TEMPLATES)
    for name, text in TEMPLATES.items():
        assert (folder / name).read_text(encoding="utf-8") == text
    out = capsys.readouterr().out
    assert all(str(folder / name) in out for name in TEMPLATES)
    assert "status: IN_PROGRESS" in out, "says what to edit next"


def test_the_written_files_load_with_the_daemons_loaders(tmp_path: Path) -> None:
    init_workspace(tmp_path)
    intents = load_intents(tmp_path / ".orchestration" / "active_intents.yaml")
    assert [i.id for i in intents.intents] == ["EXAMPLE-1"] and not intents.warnings
    example = intents.intents[0]
    assert example.owned_scope and example.constraints and example.acceptance_criteria
    assert example.owns("src/app.py") and not example.owns("src/generated/x.py")
    # The policy template spells out every default: it must change nothing.
    assert load_policy(tmp_path / ".orchestration" / "policy.yaml") == Policy()
    ignore = load_ignore_rules(tmp_path)
    assert ignore.sources == (".orchestration/ignore",)
    assert ignore.ignores(".env") and ignore.ignores("deploy/server.pem")
    assert not ignore.ignores(".env.example") and not ignore.ignores("src/app.py")


def test_the_example_intent_is_not_selectable_until_a_person_says_so(tmp_path: Path) -> None:
    init_workspace(tmp_path)
    intents = load_intents(tmp_path / ".orchestration" / "active_intents.yaml")
    assert intents.selectable(Policy().selectable_statuses) == ()


@pytest.mark.parametrize("text", [ACTIVE_INTENTS, POLICY])
def test_templates_are_commented_for_a_person(text: str) -> None:
    lines = text.splitlines()
    assert sum(1 for line in lines if "#" in line) >= len(lines) // 3


@pytest.mark.parametrize("existing", [["policy.yaml"], ["active_intents.yaml", "ignore"]])
def test_init_refuses_and_writes_nothing_when_any_file_exists(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], existing: list[str]) -> None:
    folder = tmp_path / ".orchestration"
    folder.mkdir()
    for name in existing:
        (folder / name).write_text("# mine\n")
    assert main(["init", "--workspace", str(tmp_path)]) == 1
    assert sorted(p.name for p in folder.iterdir()) == sorted(existing)
    assert all((folder / name).read_text() == "# mine\n" for name in existing)
    err = capsys.readouterr().err
    assert "nothing was written" in err
    assert all(str(folder / name) in err for name in existing)


def test_a_dangling_symlink_counts_as_existing(tmp_path: Path) -> None:
    folder = tmp_path / ".orchestration"
    folder.mkdir()
    (folder / "ignore").symlink_to(tmp_path / "elsewhere")
    result = init_workspace(tmp_path)
    assert result.existing == (folder / "ignore",) and not (tmp_path / "elsewhere").exists()


def test_init_needs_an_existing_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["init", "--workspace", str(tmp_path / "missing")]) == 2
    assert "is not a folder" in capsys.readouterr().err
    (tmp_path / ".orchestration").write_text("")
    assert main(["init", "--workspace", str(tmp_path)]) == 1


def test_print_shows_one_template_and_writes_nothing(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["init", "--workspace", str(tmp_path), "--print", "policy.yaml"]) == 0
    assert capsys.readouterr().out == POLICY
    assert not (tmp_path / ".orchestration").exists()
