"""Command rules: glob semantics, deny > ask > allow > read-only > default, and the reasons."""

from __future__ import annotations

from typing import Any, Literal, cast

import pytest

from intentd.daemon.policy.command import rules as command_rules
from intentd.daemon.policy.command.globs import glob_could_extend
from intentd.daemon.policy.command.rules import CommandRules, decide_command, glob_matches

Default = Literal["ask", "deny"]

# --- glob semantics ----------------------------------------------------------------------

@pytest.mark.parametrize(("pattern", "text", "matches"), [
    ("git status", "git status", True),
    ("git status", "git status -s", False),          # anchored at the end
    ("status", "git status", False),                 # anchored at the start
    ("git *", "git log --oneline -5", True),         # `*` spans spaces
    ("cat *", "cat src/a/b.py", True),               # `*` spans `/`
    ("cat *", "cat", False),                         # the space before `*` is literal
    ("npm run *", "npm run build && rm x", True),    # texts are simple commands, never lists
    ("*", "", True),
    ("", "", True),
    ("", "ls", False),
    ("ls ?", "ls a", True),
    ("ls ?", "ls ab", False),
    ("ls ?", "ls ", False),
    ("ls ??", "ls a/", True),
    ("Git status", "git status", False),             # case-sensitive
    ("ls [ab]", "ls a", False),                      # `[` is literal, not a class
    ("ls [ab]", "ls [ab]", True),
    ("rm -rf *", "rm -rf /", True),
    ("*rm*", "sudo rm x", True),
    ("a*b*c", "abc", True),
    ("a*b*c", "acb", False),
    ("a*b?c", "a-b-c", True),
    ("a*a", "a", False),
])
def test_glob_semantics(pattern: str, text: str, matches: bool) -> None:
    assert glob_matches(pattern, text) is matches


def test_many_stars_match_in_linear_time() -> None:
    # A backtracking matcher would take ~forever on this; the split matcher is linear.
    text = "a" * 20_000
    assert not glob_matches("*a*a*a*a*a*a*a*a*a*b", text)
    assert glob_matches("*a*a*a*a*a*a*a*a*a*", text)


@pytest.mark.parametrize(("pattern", "prefix", "could"), [
    ("rm -rf *", "rm -rf ", True),
    ("rm -rf *", "rm ", True),
    ("rm -rf /*", "rm -rf ", True),
    ("rm -rf *", "rm -f ", False),
    ("curl *", "ls ", False),
    ("git push", "git push ", False),
])
def test_glob_could_extend(pattern: str, prefix: str, could: bool) -> None:
    assert glob_could_extend(pattern, prefix) is could


# --- order: deny > ask > allow > read-only > default -------------------------------------

def outcome(command: str, **rules: Any) -> str:
    return str(decide_command(command, CommandRules(**rules)).outcome)


def test_deny_beats_allow() -> None:
    assert outcome("rm -rf build", allow=("rm *",), deny=("rm -rf *",)) == "deny"


def test_deny_beats_ask() -> None:
    assert outcome("git push -f", ask=("git push *",), deny=("git push -f*",)) == "deny"


def test_ask_beats_allow() -> None:
    assert outcome("git push origin", allow=("git *",), ask=("git push *",)) == "ask"


def test_allow_beats_read_only() -> None:
    assert outcome("ls -la", allow=("ls *",)) == "allow"
    assert outcome("ls -la") == "read_only"


def test_read_only_beats_default_deny() -> None:
    assert outcome("git status", default="deny") == "read_only"


def test_unmatched_follows_the_default() -> None:
    assert outcome("make") == "unmatched"
    assert outcome("make", default="deny") == "deny"


def test_deny_anywhere_in_a_list_wins() -> None:
    assert outcome("ls; echo ok && rm -rf /", allow=("ls", "echo *"),
                   deny=("rm -rf *",)) == "deny"


def test_ask_anywhere_in_a_list_wins() -> None:
    assert outcome("npm test && git push origin", allow=("npm test",),
                   ask=("git push *",)) == "ask"


def test_allow_needs_every_simple_command_allowed_or_read_only() -> None:
    rules = {"allow": ("npm test",)}
    assert outcome("npm test && ls -la | head", **rules) == "allow"
    assert outcome("npm test && make", **rules) == "unmatched"
    assert outcome("npm test && make", default="deny", **rules) == "deny"


def test_allow_rules_never_match_commands_that_get_arguments_at_run_time() -> None:
    assert outcome("ls | xargs rm", allow=("rm *", "ls")) == "unmatched"


def test_deny_still_applies_inside_opaque_commands() -> None:
    assert outcome("eval x; sudo rm -rf /", deny=("rm -rf *",)) == "deny"


@pytest.mark.parametrize("default", ["ask", "deny"])
@pytest.mark.parametrize("command", ["[[ -f x ]] && ls", "case x in *) ls;; esac",
                                     "echo $((1+2))", "ls 'unclosed", ""])
def test_unparseable_is_never_auto_approved(command: str, default: Default) -> None:
    verdict = decide_command(command, CommandRules(allow=("*",), default=default))
    assert verdict.outcome == default
    assert "cannot be parsed" in verdict.reason


@pytest.mark.parametrize("default", ["ask", "deny"])
def test_opaque_is_never_auto_approved(default: Default) -> None:
    verdict = decide_command("eval ls", CommandRules(allow=("*",), default=default))
    assert verdict.outcome == default
    assert "cannot see what runs" in verdict.reason


def test_risky_assignment_is_never_auto_approved_by_an_allow_rule() -> None:
    verdict = decide_command("PATH=. npm test", CommandRules(allow=("npm test",)))
    assert verdict.outcome == "ask"
    assert "PATH=." in verdict.reason and "npm test" in verdict.reason


# --- allow_redirects ---------------------------------------------------------------------

def test_redirect_write_needs_a_person_by_default() -> None:
    verdict = decide_command("npm test > log.txt", CommandRules(allow=("npm test",)))
    assert verdict.outcome == "ask"
    assert "log.txt" in verdict.reason and "allow_redirects" in verdict.reason


def test_redirect_write_is_refused_under_default_deny() -> None:
    rules = CommandRules(allow=("npm test",), default="deny")
    assert decide_command("npm test > log.txt", rules).outcome == "deny"


def test_allow_redirects_lets_an_allowed_command_write() -> None:
    rules = CommandRules(allow=("npm test",), allow_redirects=True)
    assert decide_command("npm test > log.txt 2>&1", rules).outcome == "allow"


def test_allow_redirects_does_not_make_a_redirect_read_only() -> None:
    verdict = decide_command("ls > out", CommandRules(allow_redirects=True))
    assert verdict.outcome == "unmatched"


def test_dev_null_is_not_a_redirect_write() -> None:
    assert outcome("npm test >/dev/null 2>&1", allow=("npm test",)) == "allow"


# --- deny rules are seen through wrappers ------------------------------------------------

@pytest.mark.parametrize("command", [
    pytest.param("sudo rm -rf /", id="sudo"),
    pytest.param("bash -c 'rm -rf /'", id="bash-c"),
    pytest.param("sh -c 'cd /; rm -rf tmp'", id="sh-c-list"),
    pytest.param("zsh -lc 'rm -rf ~'", id="zsh-lc"),
    pytest.param("ls | xargs rm -rf", id="xargs"),
    pytest.param("ls | xargs -I{} rm -rf {}", id="xargs-replace"),
    pytest.param("ls | xargs -0 sudo rm -rf", id="xargs-sudo"),
    pytest.param(r"find . -exec rm -rf {} \;", id="find-exec"),
    pytest.param("find . -execdir rm -rf {} +", id="find-execdir"),
    pytest.param("env A=1 rm -rf x", id="env"),
    pytest.param("timeout 5 nice rm -rf x", id="timeout-nice"),
    pytest.param("nohup rm -rf x &", id="nohup"),
    pytest.param("command rm -rf x", id="command"),
    pytest.param("exec rm -rf x", id="exec"),
    pytest.param("strace -f -o log rm -rf /", id="unknown-wrapper-options"),
    pytest.param("sudo --weird-flag rm -rf /", id="sudo-unknown-option"),
    pytest.param("bash <<EOF\nrm -rf /\nEOF", id="heredoc-to-bash"),
    pytest.param("eval 'rm -rf /'", id="eval-literal"),
    pytest.param("echo $(rm -rf /)", id="substitution"),
    pytest.param("\\rm -rf /", id="backslash"),
    pytest.param("r''m -rf /", id="empty-quotes"),
    pytest.param("\"r\"'m' -rf /", id="mixed-quotes"),
])
def test_deny_rule_is_seen_through_wrappers(command: str) -> None:
    verdict = decide_command(command, CommandRules(allow=("*",), deny=("rm -rf *",)))
    assert verdict.outcome == "deny", verdict.reason
    assert verdict.rule == "rm -rf *"


def test_deny_rule_catches_run_time_arguments_it_could_match() -> None:
    assert outcome("ls | xargs rm -rf", deny=("rm -rf /*",)) == "deny"
    assert outcome("ls | xargs rm -f", deny=("rm -rf *",)) == "unmatched"


def test_ask_rule_is_seen_through_wrappers() -> None:
    verdict = decide_command("sudo git push origin main", CommandRules(ask=("git push *",)))
    assert (verdict.outcome, verdict.rule) == ("ask", "git push *")
    assert "sudo" in verdict.reason


# --- reasons name the simple command and the rule ----------------------------------------

def test_deny_reason_names_the_command_the_rule_and_the_wrappers() -> None:
    verdict = decide_command("ls && sudo rm -rf /", CommandRules(deny=("rm -rf *",)))
    assert verdict.simple_command == "rm -rf /"
    assert verdict.rule == "rm -rf *"
    assert "`rm -rf /`" in verdict.reason and "`rm -rf *`" in verdict.reason
    assert "sudo" in verdict.reason


def test_allow_reason_names_the_command_and_the_rule() -> None:
    verdict = decide_command("npm run build && ls", CommandRules(allow=("npm run *",)))
    assert (verdict.outcome, verdict.rule, verdict.simple_command) == (
        "allow", "npm run *", "npm run build")
    assert "`npm run build`" in verdict.reason and "`npm run *`" in verdict.reason


def test_ask_reason_names_the_command_and_the_rule() -> None:
    verdict = decide_command("git push -f", CommandRules(ask=("git push *",)))
    assert "`git push -f`" in verdict.reason and "`git push *`" in verdict.reason


def test_unmatched_reason_names_the_command() -> None:
    verdict = decide_command("ls && make install", CommandRules())
    assert verdict.simple_command == "make install"
    assert "`make install`" in verdict.reason and verdict.rule is None


def test_read_only_reason_lists_the_commands() -> None:
    verdict = decide_command("git status && ls", CommandRules())
    assert verdict.reason == "read-only: `git status`, `ls`"
    assert verdict.rule is None


def test_default_deny_reason_says_so() -> None:
    verdict = decide_command("make", CommandRules(default="deny"))
    assert "the default is deny" in verdict.reason and "`make`" in verdict.reason


# --- robustness --------------------------------------------------------------------------

def test_verdicts_are_cached_per_command_and_rules() -> None:
    rules = CommandRules(allow=("npm test",))
    assert decide_command("npm test", rules) is decide_command("npm test", rules)


def test_rules_given_as_lists_still_work() -> None:
    rules = CommandRules(deny=cast(Any, ["rm -rf *"]))  # a list, as YAML gives it
    assert decide_command("sudo rm -rf /", rules).outcome == "deny"


def test_a_crashing_policy_denies(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(pattern: str, text: str) -> bool:
        raise RuntimeError("boom")

    monkeypatch.setattr(command_rules, "glob_matches", broken)
    command_rules.clear_cache()
    verdict = decide_command("ls", CommandRules(allow=("ls",)))
    assert verdict.outcome == "deny"
    assert "RuntimeError" in verdict.reason
    command_rules.clear_cache()
