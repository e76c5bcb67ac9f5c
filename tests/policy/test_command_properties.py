"""Property tests: the analysis and the decision never raise, and never approve what they cannot parse.

Strings are generated and handed to `analyze()` / `decide_command()` only; nothing is run.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from intentd.daemon.policy.command.analysis import CommandAnalysis, analyze
from intentd.daemon.policy.command.rules import CommandRules, decide_command

# No example database: nothing is written into the working folder.
FAST = settings(max_examples=200, deadline=None, database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

TOKENS = [
    "ls", "rm", "-rf", "/", "echo", "x", "git", "status", "log", "-c", "sudo", "bash", "sh",
    "zsh", "-lc", "xargs", "-I{}", "find", ".", "-exec", "{}", "\\;", "+", "env", "A=1",
    "PATH=.", "LD_PRELOAD=x", "cat", "sed", "-n", "-i", "1p", "'a b'", '"q"', "$x", "${x}",
    "${x:-y}", "$(", "`", ")", "(", "{", "}", ";", "|", "|&", "||", "&&", "&", "\n", "<<",
    "<<-", "EOF", "<<<", ">", ">>", "&>", ">|", "2>&1", "<", "<(", ">(", "#", "\\", "'", '"',
    "*", "?", "~", "[", "]", "if", "then", "else", "fi", "for", "in", "do", "done", "while",
    "case", "esac", "[[", "]]", "$((", "))", "=", "!", "eval", "source", "timeout", "5",
    "nice", "command", "exec", "f()", "\u2028", "\uff1b", "\u00a0", "\u037e", "$'\\x41'",
]

shellish = st.lists(
    st.tuples(st.sampled_from(TOKENS), st.sampled_from([" ", " ", "", "\t", "\n"])),
    min_size=1, max_size=24,
).map(lambda pairs: "".join(token + gap for token, gap in pairs))

any_text = st.text(max_size=300)
commands = st.one_of(any_text, shellish)

RULE_SETS = [
    CommandRules(),
    CommandRules(default="deny"),
    CommandRules(allow=("*",)),
    CommandRules(allow=("ls *", "git status", "cat *"), deny=("rm -rf *", "curl *")),
    CommandRules(allow=("*",), ask=("git *",), deny=("rm *",), allow_redirects=True),
]


def check_invariants(command: str, analysis: CommandAnalysis) -> None:
    assert isinstance(analysis, CommandAnalysis)
    assert analysis.command == command
    assert analysis.reason
    if not analysis.parsed:
        assert analysis.error
        assert not analysis.read_only and analysis.opaque and analysis.commands == ()
    if analysis.read_only:
        assert analysis.parsed and not analysis.opaque
        assert not analysis.writes_via_redirect and not analysis.risky_assignments
        assert all(simple.read_only and not simple.opaque for simple in analysis.commands)


@FAST
@given(any_text)
def test_analyze_never_raises_on_arbitrary_text(command: str) -> None:
    check_invariants(command, analyze(command))


@FAST
@given(shellish)
def test_analyze_never_raises_on_shellish_text(command: str) -> None:
    check_invariants(command, analyze(command))


@FAST
@given(commands)
def test_analysis_is_cached_and_deterministic(command: str) -> None:
    assert analyze(command) is analyze(command)


@FAST
@given(commands, st.sampled_from(RULE_SETS))
def test_decide_command_never_raises(command: str, rules: CommandRules) -> None:
    verdict = decide_command(command, rules)
    assert verdict.outcome in ("deny", "ask", "allow", "read_only", "unmatched")
    assert verdict.reason
    if verdict.outcome == "read_only":
        assert verdict.analysis.read_only
    if rules.default == "deny":
        assert verdict.outcome != "unmatched"


@FAST
@given(commands, st.sampled_from(RULE_SETS))
def test_unparsed_is_never_auto_approved(command: str, rules: CommandRules) -> None:
    verdict = decide_command(command, rules)
    if not verdict.analysis.parsed:
        assert verdict.outcome in ("ask", "deny")
        assert verdict.outcome == ("deny" if rules.default == "deny" else "ask")


@FAST
@given(commands)
def test_opaque_is_never_auto_approved_even_by_allow_everything(command: str) -> None:
    verdict = decide_command(command, CommandRules(allow=("*",)))
    if verdict.analysis.opaque or verdict.analysis.risky_assignments:
        assert verdict.outcome in ("ask", "deny")


@FAST
@given(commands)
def test_deny_everything_denies_every_parsed_command(command: str) -> None:
    verdict = decide_command(command, CommandRules(allow=("*",), deny=("*",)))
    if verdict.analysis.parsed:
        assert verdict.outcome == "deny"
