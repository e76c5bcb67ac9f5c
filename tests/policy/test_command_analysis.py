"""Command analysis: every simple command found, wrappers seen through, redirects, writes, paths."""

from __future__ import annotations

from typing import Any, cast

import pytest

from intentd.daemon.policy.command.analysis import (
    MAX_COMMAND_LENGTH,
    CommandAnalysis,
    SimpleCommand,
    analyze,
    clear_cache,
)


def texts(command: str) -> set[str]:
    analysis = analyze(command)
    assert analysis.parsed, analysis.error
    return {simple.text for simple in analysis.commands}


def find(command: str, text: str) -> SimpleCommand:
    analysis = analyze(command)
    matches = [simple for simple in analysis.commands if simple.text == text]
    assert matches, f"{text!r} not among {[c.text for c in analysis.commands]}"
    return matches[0]


# --- every simple command is found -------------------------------------------------------

@pytest.mark.parametrize(("command", "expected"), [
    pytest.param("ls; rm x", {"ls", "rm x"}, id="semicolon"),
    pytest.param("ls && rm x || touch y", {"ls", "rm x", "touch y"}, id="and-or"),
    pytest.param("ls & rm x", {"ls", "rm x"}, id="background"),
    pytest.param("ls\nrm x\n", {"ls", "rm x"}, id="newlines"),
    pytest.param("ls | grep a | wc -l", {"ls", "grep a", "wc -l"}, id="pipeline"),
    pytest.param("ls |& tee out", {"ls", "tee out"}, id="pipe-stderr"),
    pytest.param("(cd src; rm x)", {"cd src", "rm x"}, id="subshell"),
    pytest.param("{ ls; rm x; }", {"ls", "rm x"}, id="group"),
    pytest.param("echo $(rm x)", {"echo $(rm x)", "rm x"}, id="substitution"),
    pytest.param("echo $(echo $(rm x))", {"echo $(echo $(rm x))", "echo $(rm x)", "rm x"},
                 id="nested-substitution"),
    pytest.param("echo `rm x`", {"echo `rm x`", "rm x"}, id="backticks"),
    pytest.param('echo "a `rm x` b"', {"echo a `rm x` b", "rm x"}, id="backticks-in-dq"),
    pytest.param('echo "$(rm x)"', {"echo $(rm x)", "rm x"}, id="substitution-in-dq"),
    pytest.param("diff <(ls a) >(tee b)", {"diff <(ls a) >(tee b)", "ls a", "tee b"},
                 id="process-substitution"),
    pytest.param("x=$(rm y)", {"", "rm y"}, id="assignment-substitution"),
    pytest.param("if test -f a; then rm a; else touch b; fi", {"test -f a", "rm a", "touch b"},
                 id="if"),
    pytest.param("for f in a b; do rm $f; done", {"rm $f"}, id="for"),
    pytest.param("while read l; do rm x; done < f", {"read l", "rm x"}, id="while"),
    pytest.param("until false; do touch x; done", {"false", "touch x"}, id="until"),
    pytest.param("f() { rm x; }; f", {"rm x", "f"}, id="function"),
    pytest.param("bash <<EOF\nrm x; ls\nEOF", {"bash", "rm x", "ls"}, id="heredoc-to-shell"),
    pytest.param("cat <<EOF && rm x\nhi\nEOF", {"cat", "rm x"}, id="heredoc-then-command"),
])
def test_every_simple_command_is_found(command: str, expected: set[str]) -> None:
    assert texts(command) == expected


def test_text_is_argv_joined_with_quotes_removed() -> None:
    simple = find("c''url 'a b'", "curl a b")
    assert simple.argv == ("curl", "a b")


@pytest.mark.parametrize(("command", "argv"), [
    pytest.param("cat \".e\"'n'v", ("cat", ".env"), id="double-then-single"),
    pytest.param("cat '''.env'", ("cat", ".env"), id="adjacent-single-quotes"),
    pytest.param("echo ''''", ("echo", ""), id="two-empty-strings"),
    pytest.param("\"c\"'url' x", ("curl", "x"), id="name-in-mixed-quotes"),
    pytest.param(r"cat .e\nv", ("cat", ".env"), id="backslash"),
    pytest.param('cat "\\.env"', ("cat", "\\.env"), id="backslash-kept-in-double-quotes"),
    pytest.param("cat '\\.env'", ("cat", "\\.env"), id="backslash-kept-in-single-quotes"),
    pytest.param('cat "\\$x"', ("cat", "$x"), id="escaped-dollar"),
    pytest.param("ls\\\n-la", ("ls-la",), id="line-continuation"),
])
def test_quote_removal_matches_bash(command: str, argv: tuple[str, ...]) -> None:
    # bashlex gets some of these wrong; the analysis must see what bash passes
    (simple,) = analyze(command).commands
    assert simple.argv == argv


def test_quote_tricks_do_not_hide_paths() -> None:
    assert ".env" in analyze("cat \".e\"'n'v").path_args


# --- wrappers are seen through -----------------------------------------------------------

@pytest.mark.parametrize(("command", "inner", "via"), [
    pytest.param("sudo rm -rf /", "rm -rf /", ("sudo",), id="sudo"),
    pytest.param("sudo -u root -- rm x", "rm x", ("sudo",), id="sudo-options"),
    pytest.param("bash -c 'rm x'", "rm x", ("bash -c",), id="bash-c"),
    pytest.param("sh -c 'ls; rm x'", "rm x", ("sh -c",), id="sh-c"),
    pytest.param("zsh -lc 'rm x'", "rm x", ("zsh -c",), id="zsh-lc"),
    pytest.param("env A=1 rm x", "rm x", ("env",), id="env"),
    pytest.param("ls | xargs rm -f", "rm -f", ("xargs",), id="xargs"),
    pytest.param(r"find . -exec rm {} \;", "rm {}", ("find -exec",), id="find-exec"),
    pytest.param("timeout 5 rm x", "rm x", ("timeout",), id="timeout"),
    pytest.param("nice -n 5 rm x", "rm x", ("nice",), id="nice"),
    pytest.param("nohup rm x", "rm x", ("nohup",), id="nohup"),
    pytest.param("command rm x", "rm x", ("command",), id="command"),
    pytest.param("exec rm x", "rm x", ("exec",), id="exec"),
    pytest.param("stdbuf -o0 rm x", "rm x", ("stdbuf",), id="stdbuf"),
    pytest.param("setsid rm x", "rm x", ("setsid",), id="setsid"),
    pytest.param("sudo timeout 5 nice rm x", "rm x", ("sudo", "timeout", "nice"),
                 id="stacked"),
    pytest.param("sudo bash -c 'nice rm x'", "rm x", ("sudo", "bash -c", "nice"),
                 id="shell-inside-wrapper"),
])
def test_wrappers_are_seen_through(command: str, inner: str, via: tuple[str, ...]) -> None:
    analysis = analyze(command)
    assert find(command, inner).via == via
    assert not analysis.read_only


def test_wrapper_is_listed_as_its_own_command() -> None:
    assert texts("sudo rm -rf /") == {"sudo rm -rf /", "rm -rf /"}


def test_transparent_wrapper_keeps_a_read_only_command_read_only() -> None:
    analysis = analyze("timeout 5 nice -n 3 ls -la")
    assert analysis.read_only, analysis.reason
    assert find("timeout 5 nice -n 3 ls -la", "ls -la").via == ("timeout", "nice")


def test_xargs_and_find_exec_leave_the_arguments_open() -> None:
    assert find("ls | xargs rm -f", "rm -f").open_prefix == "rm -f "
    assert find(r"find . -exec rm -rf {} \;", "rm -rf {}").open_prefix == "rm -rf "


def test_unknown_wrapper_options_mark_every_suffix_as_possible_command() -> None:
    simple = find("strace -f rm x", "strace -f rm x")
    assert simple.runs_suffix


@pytest.mark.parametrize("command", [
    pytest.param("eval ls", id="eval"),
    pytest.param("bash -c \"$CODE\"", id="bash-c-variable"),
    pytest.param("ls | sh", id="shell-reading-a-pipe"),
    pytest.param("source x.sh", id="source"),
    pytest.param("env -S 'rm x'", id="env-split-string"),
    pytest.param("f() { ls; }", id="function-definition"),
    pytest.param("$CMD x", id="dynamic-name"),
    pytest.param("ls | xargs -I{} sh -c 'echo {}'", id="shell-code-filled-at-run-time"),
    pytest.param("echo ${x:-$(rm y)}", id="code-in-parameter-expansion"),
    pytest.param("y=$(cat f); echo ${x:y}", id="arithmetic-on-a-variable"),
    pytest.param("ls\u2028x", id="unicode-line-separator"),
])
def test_what_cannot_be_seen_through_is_opaque(command: str) -> None:
    analysis = analyze(command)
    assert analysis.parsed
    assert analysis.opaque
    assert not analysis.read_only
    assert analysis.reason


# --- redirects ---------------------------------------------------------------------------

@pytest.mark.parametrize(("command", "op", "target"), [
    pytest.param("ls > out", ">", "out", id="write"),
    pytest.param("ls >> out", ">>", "out", id="append"),
    pytest.param("ls &> out", "&>", "out", id="both"),
    pytest.param("ls >| out", ">|", "out", id="clobber"),
    pytest.param("ls 2> err", "2>", "err", id="stderr"),
    pytest.param("ls > 'a b'", ">", "a b", id="quoted-target"),
])
def test_writing_redirects_are_recorded(command: str, op: str, target: str) -> None:
    analysis = analyze(command)
    (redirect,) = analysis.commands[0].redirects
    assert (redirect.op, redirect.target, redirect.writes_file) == (op, target, True)
    assert target in analysis.write_targets
    assert analysis.writes_via_redirect
    assert not analysis.read_only


@pytest.mark.parametrize("command", [
    pytest.param("ls 2>&1", id="dup-stderr"),
    pytest.param("ls >/dev/null", id="dev-null"),
    pytest.param("ls 2>/dev/null", id="stderr-dev-null"),
    pytest.param("ls >/dev/null 2>&1", id="silence-all"),
    pytest.param("ls >&2", id="to-stderr"),
    pytest.param("wc -l < README.md", id="input"),
])
def test_descriptor_and_dev_null_redirects_are_not_file_writes(command: str) -> None:
    analysis = analyze(command)
    assert analysis.commands[0].redirects
    assert not any(r.writes_file for r in analysis.commands[0].redirects)
    assert analysis.write_targets == ()
    assert analysis.read_only, analysis.reason


def test_descriptor_duplication_keeps_its_whole_text() -> None:
    (redirect,) = analyze("ls 2>&1").commands[0].redirects
    assert (redirect.op, redirect.target) == ("2>&1", "")


def test_redirect_on_a_compound_command_is_a_write() -> None:
    analysis = analyze("{ ls; pwd; } > out")
    assert analysis.write_targets == ("out",)
    assert not analysis.read_only


def test_dev_tcp_counts_as_a_write() -> None:
    assert not analyze("cat f > /dev/tcp/host/80").read_only


def test_redirect_to_a_variable_is_a_write() -> None:
    analysis = analyze('ls > "$OUT"')
    assert analysis.writes_via_redirect and not analysis.read_only


# --- write targets -----------------------------------------------------------------------

@pytest.mark.parametrize(("command", "targets"), [
    pytest.param("echo x > a.txt", ("a.txt",), id="redirect"),
    pytest.param("ls | tee a b", ("a", "b"), id="tee"),
    pytest.param("cp -r src dest", ("dest",), id="cp"),
    pytest.param("cp -t dest a b", ("dest",), id="cp-target-dir"),
    pytest.param("mv a b", ("b",), id="mv"),
    pytest.param("touch a b", ("a", "b"), id="touch"),
    pytest.param("mkdir -p a/b", ("a/b",), id="mkdir"),
    pytest.param("rm -rf build", ("build",), id="rm"),
    pytest.param("sed -i s/a/b/ f g", ("f", "g"), id="sed-i"),
    pytest.param("sed -i -e s/a/b/ f", ("f",), id="sed-i-e"),
    pytest.param("dd if=a of=b", ("b",), id="dd"),
    pytest.param("sort -o out f", ("out",), id="sort-o"),
    pytest.param("sort --out=out f", ("out",), id="sort-long-abbreviated"),
    pytest.param("git log --output=x", ("x",), id="git-output"),
    pytest.param("chmod 644 a b", ("a", "b"), id="chmod"),
    pytest.param("tar -cf out.tar src", ("out.tar",), id="tar-create"),
    pytest.param("env time -o t.txt ls", ("t.txt",), id="time-o"),
    pytest.param("tar czf out.tgz src", ("out.tgz",), id="tar-old-style"),
    pytest.param("tar -v -c -f out.tar src", ("out.tar",), id="tar-separate-flags"),
    pytest.param("sudo touch /etc/x", ("/etc/x",), id="through-wrapper"),
    pytest.param("bash -c 'echo x > y'", ("y",), id="inside-shell-code"),
])
def test_write_targets(command: str, targets: tuple[str, ...]) -> None:
    analysis = analyze(command)
    assert analysis.write_targets == targets
    assert not analysis.read_only


def test_reading_commands_have_no_write_targets() -> None:
    assert analyze("cat a b | sort | uniq -c").write_targets == ()


# --- path arguments ----------------------------------------------------------------------

@pytest.mark.parametrize(("command", "paths"), [
    pytest.param("cat a b", {"a", "b"}, id="operands"),
    pytest.param("grep -rn --include=*.py foo src", {"*.py", "foo", "src"}, id="long-value"),
    pytest.param("cat -- -v", {"-v"}, id="after-double-dash"),
    pytest.param("wc -l < input.txt", {"input.txt"}, id="input-redirect"),
    pytest.param("git -C sub show HEAD:a/b.py", {"sub", "HEAD:a/b.py", "a/b.py"},
                 id="git-c-and-rev-path"),
    pytest.param("grep -f/etc/shadow x", {"/etc/shadow", "x"}, id="attached-short-value"),
    pytest.param("file -f.env", {".env"}, id="attached-dotfile"),
    pytest.param("xargs -a list.txt echo", {"list.txt"}, id="xargs-arg-file"),
    pytest.param("cd /etc && cat passwd", {"/etc", "passwd", "/etc/passwd"},
                 id="cd-joins-relative-paths"),
    pytest.param("echo $(cat .env)", {".env"}, id="inside-substitution"),
    pytest.param("find /tmp -name x", {"/tmp", "x"}, id="find"),
])
def test_path_args(command: str, paths: set[str]) -> None:
    assert paths <= set(analyze(command).path_args)


@pytest.mark.parametrize("command", [
    pytest.param("echo /etc/passwd", id="echo"),
    pytest.param("cut -d/ -f1", id="single-char-separator"),
    pytest.param("ls >/dev/null", id="dev-null"),
])
def test_words_that_are_not_paths(command: str) -> None:
    assert not {"/etc/passwd", "/", "/dev/null"} & set(analyze(command).path_args)


# --- assignments -------------------------------------------------------------------------

@pytest.mark.parametrize(("command", "risky"), [
    pytest.param("PATH=. ls", "PATH=."),
    pytest.param("LD_PRELOAD=/tmp/x.so cat f", "LD_PRELOAD=/tmp/x.so"),
    pytest.param("GIT_DIR=x git status", "GIT_DIR=x"),
    pytest.param("BASH_ENV=x bash -c ls", "BASH_ENV=x"),
    pytest.param("env PYTHONPATH=. ls", "PYTHONPATH=."),
    pytest.param("export PATH=/tmp", "PATH=/tmp"),
    pytest.param("for PATH in /tmp; do ls; done", "PATH="),
    pytest.param("IFS=, ls", "IFS=,"),
    pytest.param("env 'BASH_FUNC_ls%%=() { id; }' bash -c ls", "BASH_FUNC_ls%%=() { id; }",
                 id="env-exported-function"),
    pytest.param("sudo A-B=1 ls", "A-B=1", id="sudo-non-identifier"),
])
def test_risky_assignments(command: str, risky: str) -> None:
    analysis = analyze(command)
    assert risky in analysis.risky_assignments
    assert not analysis.read_only


def test_assignment_is_attached_to_its_command() -> None:
    assert find("PATH=. ls", "ls").assignments == ("PATH=.",)


@pytest.mark.parametrize("command", ["LANG=C ls", "TZ=UTC date", "NO_COLOR=1 git status",
                                     "x=1; echo $x"])
def test_harmless_assignments_keep_read_only(command: str) -> None:
    analysis = analyze(command)
    assert analysis.risky_assignments == ()
    assert analysis.read_only, analysis.reason


def test_locale_pointing_at_a_path_is_not_harmless() -> None:
    assert not analyze("LC_ALL=/tmp/evil ls").read_only


# --- programs given by a path ------------------------------------------------------------

@pytest.mark.parametrize("command", ["./cat x", "/tmp/ls", "/bin/ls", "~/bin/ls", "bin/cat"])
def test_program_given_by_a_path_is_not_safe(command: str) -> None:
    analysis = analyze(command)
    assert not analysis.read_only
    assert "path" in analysis.commands[0].reason


# --- read-only classification spot checks -----------------------------------------------

@pytest.mark.parametrize(("command", "read_only"), [
    ("find . -name '*.py'", True),
    ("find . -name '*.py' -delete", False),
    ("find . -fprint0 out", False),
    ("git log -p", True),
    ("git -c core.pager=less log", False),
    ("git --no-pager log", True),
    ("git stash list", True),
    ("git stash -- list", False),
    ("sed -n 5p f", True),
    ("sed 5p f", False),
    ("sed -n 's/a/b/w out' f", False),
    ("rg foo", True),
    ("rg --pre=cat foo", False),
    ("test -f x", True),
    ("test -v x", False),
    ("ls ~", False),
    ("cat *.md", True),
    ("git log -- *.py", False),
    ("env -C /tmp ls", False),
])
def test_argument_checks(command: str, read_only: bool) -> None:
    assert analyze(command).read_only is read_only, analyze(command).reason


# --- failures are closed; the cache returns the same object ------------------------------

@pytest.mark.parametrize("command", [
    "[[ -f x ]] && ls", "case x in *) ls;; esac", "echo $((1+2))", "ls 'unclosed",
    "", "  ", "time ls", "ls " + "a" * (MAX_COMMAND_LENGTH + 1),
])
def test_unparseable_commands_fail_closed(command: str) -> None:
    analysis = analyze(command)
    assert (analysis.parsed, analysis.read_only, analysis.opaque) == (False, False, True)
    assert analysis.error and analysis.reason.startswith("cannot be parsed")
    assert analysis.commands == ()


def test_non_string_input_is_refused_not_raised() -> None:
    analysis = analyze(cast(Any, None))
    assert not analysis.parsed and not analysis.read_only


def test_same_text_returns_the_same_object() -> None:
    command = "git status && ls -la | head -3"
    first = analyze(command)
    assert analyze(command) is first
    assert analyze("".join(command)) is first
    clear_cache()
    again = analyze(command)
    assert again is not first
    assert again == first


def test_analysis_values_are_frozen() -> None:
    analysis = analyze("ls")
    assert isinstance(analysis, CommandAnalysis)
    with pytest.raises(AttributeError):
        analysis.__setattr__("read_only", False)
