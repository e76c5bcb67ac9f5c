"""The adversarial corpus by class: allow lists honoured exactly, no secrets out, no run-time
paths, no hidden program starts (classes 1–4); and shell wrappers and inspection commands
that must run unasked (classes 6–7). Class 5 needs a workspace: test_command_workspace.py.

Every entry is a Python string handed to `decide_command()` only; nothing here is ever run.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from intentd.daemon.policy.command.rules import CommandRules, decide_command
from intentd.daemon.policy.config import AutoApprove, Policy

AUTO = ("allow", "read_only")
EMPTY = CommandRules()
# Rules a person might write to let an agent read freely: expansions and run-time paths
# must still reach a person.
GENEROUS = CommandRules(allow=(
    "echo *", "printf *", "cat *", "head *", "tail *", "grep *", "wc *", "jq *", "strings *",
    "tr *", "find *", "xargs *", "ls *", "env *", "printenv *", "set", "declare *",
    "typeset *", "local *", "export *"))


def strict(*allow: str, default: str = "ask") -> CommandRules:
    """Rules with auto_approve.safe_commands off: the allow list is all that runs unasked."""
    return CommandRules(allow=allow, default=default, read_only_auto=False)  # type: ignore[arg-type]


def _ids(cases: list[tuple[str, str]]) -> list[object]:
    ids = [case_id for case_id, _ in cases]
    assert len(ids) == len(set(ids)), "corpus ids must be unique"
    return [pytest.param(command, id=case_id) for case_id, command in cases]


# Class 1: with safe_commands off, every simple command must match an allow rule.
EXACT_ALLOW: list[tuple[str, str, CommandRules]] = [
    ("uniq-not-listed", "cat f | grep p | sort | uniq | head -10",
     strict("cat *", "grep *", "sort", "head *")),
    ("backtick-whoami", "echo `whoami`", strict("echo *")),
    ("nested-subst-head", "echo $(cat $(head -1 files.txt))", strict("echo *", "cat *")),
    ("proc-subst-unlisted", "diff <(ls a) <(ls b)", strict("diff *")),
    ("pipe-wc-unlisted", "cat f | wc -l", strict("cat *")),
    ("subshell-cd-unlisted", "(cd src && ls)", strict("ls", "ls *")),
    ("and-list-second", "git status && git log", strict("git status")),
    ("bash-c-inner", "bash -c 'ls'", strict("bash -c *")),
    ("bash-lc-inner-pipe", "bash -lc 'cat f | uniq'", strict("bash -lc *", "cat *")),
    ("timeout-inner", "timeout 5 cat f", strict("timeout *")),
    ("env-inner", "env LANG=C sort f", strict("env *")),
    ("xargs-open-args", "ls | xargs cat", strict("ls", "xargs *", "cat *")),
    ("heredoc-pipe-wc", "cat <<EOF | wc -l\nx\nEOF", strict("cat")),
    ("brace-group-second", "{ ls; pwd; }", strict("ls")),
    ("if-test-unlisted", "if [ -f x ]; then cat x; fi", strict("cat *")),
    ("subst-in-grep", "grep $(whoami) f", strict("grep *")),
    ("proc-subst-cat", "cat <(whoami)", strict("cat *")),
    ("redirect-in-unlisted", "cat < f", strict("echo *")),
    ("find-exec-inner", "find . -exec cat {} +", strict("find *")),
]

# Class 1, `default: deny`: an unmatched read-only command is refused, not asked.
DEFAULT_DENY: list[tuple[str, str, CommandRules]] = [
    ("ls-lah-one-letter-rule", "ls -lah", strict("ls -l?", default="deny")),
    ("pipe-second-unlisted", "ls | wc -l", strict("ls", default="deny")),
    ("bash-lc-unlisted", "bash -lc 'pwd'", strict("ls", default="deny")),
]

# Class 2: secrets leave through expansions and environment printers.
SECRETS: list[tuple[str, str]] = [
    ("echo-token", "echo $GITHUB_TOKEN"),
    ("echo-braced-key", "echo ${OPENAI_API_KEY}"),
    ("echo-quoted-secret", 'echo "$AWS_SECRET_ACCESS_KEY"'),
    ("printf-token", "printf '%s' \"$NPM_TOKEN\""),
    ("length-of-secret", "echo ${#SECRET}"),
    ("default-operand", "echo ${X:-$API_KEY}"),
    ("alternate-operand", "echo ${HOME:+$ANTHROPIC_API_KEY}"),
    ("heredoc-token", "cat <<EOF\n$GITHUB_TOKEN\nEOF"),
    ("heredoc-braced", "cat <<EOF\ntoken=${GH_TOKEN}\nEOF"),
    ("bash-c-token", "bash -c 'echo $TOKEN'"),
    ("subst-token", "echo $(echo $TOKEN)"),
    ("lowercase-proxy", "echo $https_proxy"),
    ("printenv-all", "printenv"),
    ("printenv-null", "printenv -0"),
    ("printenv-token", "printenv GITHUB_TOKEN"),
    ("env-alone", "env"),
    ("env-null", "env -0"),
    ("env-unset", "env -u HOME"),
    ("env-assign-only", "env A=1"),
    ("set", "set"),
    ("declare-p", "declare -p"),
    ("export-p", "export -p"),
    ("typeset-p", "typeset -p"),
    ("declare-x", "declare -x"),
    ("declare-p-token", "declare -p GITHUB_TOKEN"),
    ("export-alone", "export"),
    ("proc-self-environ", "cat /proc/self/environ"),
    ("proc-pid-environ", "strings /proc/1/environ"),
    ("proc-environ-cd", "cd /proc/self && cat environ"),
    ("proc-environ-tr", "tr '\\0' '\\n' < /proc/self/environ"),
    ("proc-environ-dotdot", "xxd /proc/self/../self/environ"),
    ("proc-mem", "head -c 100 /proc/self/mem"),
    ("prefix-names", "echo ${!A*}"),
    ("prefix-names-at", "echo ${!GITHUB@}"),
    ("jq-env", "jq -n env"),
    ("jq-dollar-env", "jq -n '$ENV'"),
    ("jq-env-field", "jq -n '$ENV.GITHUB_TOKEN'"),
    ("jq-env-keys", "jq -rn 'env | keys'"),
    ("proc-environ-double-slash", "cat //proc/self/environ"),
    # jq 1.6 reads `$` and the name apart: blanks and comments may stand between them.
    # zsh prints a set variable that `typeset`/`declare`/`local` names without a value.
    ("declare-name-zsh", "zsh -c 'declare GITHUB_TOKEN'"),
    ("declare-name", "declare OPENAI_API_KEY"),
    ("declare-pattern", "declare -m 'AWS_*'"),
    ("typeset-name", "typeset ANTHROPIC_API_KEY"),
    ("local-name-zsh", "zsh -c 'local NPM_TOKEN'"),
    ("jq-env-spaced", "jq -n '$ ENV.GITHUB_TOKEN'"),
    ("jq-env-newline", "jq -n '$\nENV'"),
    ("jq-env-comment", "jq -n '$ #x\nENV | keys'"),
    # zsh's own expansions, read as text by bash's grammar: the shell that runs the command
    # may be zsh (`zsh -lc` from Codex, an agent's shell on macOS).
    ("zsh-split-token", "zsh -lc 'echo $=GITHUB_TOKEN'"),
    ("zsh-glob-subst-key", "zsh -c 'echo $~OPENAI_API_KEY'"),
    ("zsh-rc-expand", "zsh -lc 'echo x$^NPM_TOKEN'"),
    ("zsh-length", "zsh -c 'echo $#SECRET'"),
    ("zsh-flags-combined", "zsh -c 'echo $=~AWS_SECRET_ACCESS_KEY'"),
    ("zsh-form-bare", "echo $=GH_TOKEN"),
    ("zsh-form-heredoc", "zsh <<EOF\necho $=GITHUB_TOKEN\nEOF"),
]

# Class 3: paths computed at run time are never auto-approved, whatever the allow rules.
RUNTIME_PATHS: list[tuple[str, str]] = [
    ("cat-subst", "cat $(head -1 list)"),
    ("cat-var", 'cat "$F"'),
    ("cat-backtick", "cat `ls | head -1`"),
    ("head-find-subst", "head -5 $(find . -name x)"),
    ("wc-braced-var", "wc -l ${FILE}"),
    ("grep-subst-files", "grep foo $(git ls-files)"),
    ("xargs-cat", "ls | xargs cat"),
    ("xargs-grep", "find . -name '*.py' | xargs grep foo"),
    ("cat-home-var", "cat $HOME/.ssh/id_rsa"),
    ("cat-tilde", "cat ~/.aws/credentials"),
    ("tail-var", "tail -n 5 $LOG"),
    ("for-cat", "for f in *.txt; do cat $f; done"),
    ("redirect-var", "cat < $HOME/.ssh/id_rsa"),
    ("redirect-tilde", "wc -l < ~/.ssh/id_rsa"),
    ("redirect-subst", "cat < $(head -1 list)"),
    ("redirect-quoted-var", 'head -c 10 < "$PWD/../x"'),
    ("redirect-glob", "cat < .en?"),
    ("xargs-arg-file-var", "xargs -a $HOME/.ssh/id_rsa echo"),
    ("xargs-arg-file-tilde", "xargs -a ~/.ssh/id_rsa"),
    ("zsh-equals-program", "zsh -c 'cat =ssh'"),
    ("zsh-equals-bare", "head -c 64 =git"),
    ("zsh-equals-lc-pipe", "zsh -lc 'strings =sudo | head'"),
    ("pushd-rotate", "pushd +1 && cat config.yaml"),
    ("pushd-rotate-back", "pushd -0 >/dev/null; head README.md"),
]

# Class 5, without ignore rules: walks that follow symbolic links may leave the workspace.
LINK_WALKS: list[tuple[str, str]] = [
    ("grep-R", "grep -R TOKEN ."),
    ("grep-Rn-bundle", "grep -nR TOKEN src"),
    ("grep-dereference-abbrev", "grep --dereference-r TOKEN ."),
    ("rg-follow", "rg -L TOKEN"),
    ("rg-follow-long", "rg --follow TOKEN"),
    ("find-L", "find -L . -name '*.key'"),
    ("find-follow", "find . -follow -type f"),
    ("fd-follow", "fd -L key"),
    ("tree-follow", "tree -l"),
    ("du-dereference", "du -L -a ."),
]

# Class 4: read-only programs with options that start other programs.
SPAWNERS: list[tuple[str, str]] = [
    ("rg-search-zip", "rg --search-zip foo"),
    ("rg-z", "rg -z foo"),
    ("rg-z-bundled", "rg -nz foo"),
    ("rg-z-abbrev", "rg --search-z foo"),
    ("rg-pre-glob", "rg --pre-glob '*.gz' foo"),
    ("rg-hostname-bin", "rg --hostname-bin ./h foo"),
    ("file-z", "file -z x.gz"),
    ("file-z-upper", "file -Z x.gz"),
    ("file-uncompress", "file --uncompress x.gz"),
    ("diff-paginate-l", "diff -l a b"),
    ("diff-paginate", "diff --paginate a b"),
    ("diff-paginate-bundled", "diff -ul a b"),
    ("fd-list-details", "fd --list-details"),
    ("fd-l-bundled", "fd -Hl x"),
    ("git-show-signature", "git log --show-signature"),
    ("git-show-signature-abbrev", "git show --show-sig HEAD"),
    ("git-format-signature", "git log --format=%G?"),
    ("git-format-signature-word", "git log --format '%GS'"),
    ("git-bare", "git --bare log"),
    ("git-git-dir", "git --git-dir=.git log"),
    ("git-work-tree", "git --work-tree=. status"),
    ("git-dir-env", "GIT_DIR=src/evil git log"),
    ("git-external-diff-env", "GIT_EXTERNAL_DIFF=./x git diff"),
    ("jq-from-file", "jq -f prog.jq data.json"),
    ("jq-from-file-long", "jq --from-file prog.jq"),
    ("jq-library-path", "jq -L lib '.'"),
    ("jq-library-path-long", "jq --library-path=lib ."),
    ("jq-library-bundled", "jq -nL lib ."),
    ("jq-import", "jq -n 'import \"secrets/creds\" as $s; $s'"),
    ("jq-include", "jq -n 'include \"x\"; .'"),
    ("lessopen-less", "LESSOPEN='|./x %s' less f"),
    ("zsh-lone-redirect", "zsh -c '< README.md'"),
    ("zsh-glob-qualifier", "zsh -c \"ls *(e:'touch x':)\""),
    ("zsh-process-file", "zsh -c 'cat =(ls)'"),
    ("zsh-parameter-flag", "zsh -c 'echo ${(e)x}'"),
    ("xxd-writes", "xxd in.bin out.hex"),
    ("base64-output", "base64 -o out f"),
    ("base64-output-long", "base64 --output=out f"),
    ("shuf-output", "shuf -o out f"),
    ("iconv-output", "iconv -f latin1 -t utf-8 -o out f"),
    ("git-grep-pager", "git grep -O x"),
    ("git-grep-pager-long", "git grep --open-files-in-pager=vi x"),
    ("git-grep-pager-abbrev", "git grep --open x"),
]


@pytest.mark.parametrize(("command", "rules"), [
    pytest.param(command, rules, id=case_id) for case_id, command, rules in EXACT_ALLOW])
def test_allow_list_is_exact(command: str, rules: CommandRules) -> None:
    verdict = decide_command(command, rules)
    assert verdict.outcome not in AUTO, verdict.reason


@pytest.mark.parametrize(("command", "rules"), [
    pytest.param(command, rules, id=case_id) for case_id, command, rules in DEFAULT_DENY])
def test_default_deny_refuses_unlisted_read_only(command: str, rules: CommandRules) -> None:
    assert decide_command(command, rules).outcome == "deny"


def test_the_same_commands_run_when_every_part_is_listed() -> None:
    rules = strict("cat *", "grep *", "sort", "uniq", "head *")
    assert decide_command("cat f | grep p | sort | uniq | head -10", rules).outcome == "allow"
    assert decide_command("echo `whoami`", strict("echo *", "whoami")).outcome == "allow"


@pytest.mark.parametrize("command", _ids(SECRETS + RUNTIME_PATHS + SPAWNERS + LINK_WALKS))
@pytest.mark.parametrize("rules", [EMPTY, GENEROUS], ids=["no-rules", "generous-rules"])
def test_never_auto_approved(command: str, rules: CommandRules) -> None:
    verdict = decide_command(command, rules)
    assert verdict.outcome not in AUTO, verdict.reason


# Class 6: shells started with a literal script are seen through, to any depth.
SHELL_WRAPPED: list[tuple[str, str]] = [
    ("bash-lc-ls", "bash -lc 'ls -la'"),
    ("bash-lc-git-status", "bash -lc 'git status'"),
    ("bash-lc-pipe", "bash -lc 'cat README.md | head -20'"),
    ("bash-lc-sed", "bash -lc \"sed -n '1,20p' README.md\""),
    ("bash-lc-and", "bash -lc 'wc -l README.md && echo done'"),
    ("bash-lc-home", "bash -lc 'echo $HOME'"),
    ("bash-lc-cd", "bash -lc 'cd src && ls'"),
    ("bash-c-show", "bash -c 'git show HEAD:README.md'"),
    ("bash-login-long", "bash --login -c 'git diff --stat'"),
    ("sh-c-ls", "sh -c 'ls -la src'"),
    ("sh-c-grep", "sh -c 'grep -n foo README.md'"),
    ("zsh-lc-log", "zsh -lc 'git log --oneline -5'"),
    ("zsh-c-pwd", "zsh -c pwd"),
    ("bash-noprofile", "bash --noprofile --norc -c 'ls'"),
    ("bash-lc-in-bash-lc", "bash -lc \"bash -lc 'ls'\""),
    ("three-shells", "bash -lc \"sh -c 'zsh -lc pwd'\""),
    ("bash-lc-subst", "bash -lc 'echo $(pwd)'"),
    ("timeout-bash-lc", "timeout 10 bash -lc 'rg -n TODO'"),
    ("bash-c-dashdash", "bash -c -- 'git log --oneline -3'"),
    ("bash-options-before-c", "bash -euo pipefail -c 'ls src | wc -l'"),
    ("sh-c-argv0", "sh -c 'head -5 README.md' sh"),
    ("bash-lc-stderr", "bash -lc 'git diff --stat' 2>&1"),
]

# Class 7: common inspection commands, read-only with their arguments checked.
INSPECTION: list[tuple[str, str]] = [
    ("base64", "base64 README.md"),
    ("base64-decode", "base64 -d encoded.txt"),
    ("base64-decode-long", "base64 --decode encoded.txt"),
    ("base64-wrap", "base64 -w0 f"),
    ("base32", "base32 f"),
    ("basenc", "basenc --base64url f"),
    ("numfmt", "numfmt --to=iec 1048576"),
    ("numfmt-pipe", "echo 1024 | numfmt --to=si"),
    ("expr", "expr 1 + 2"),
    ("xxd", "xxd README.md"),
    ("xxd-len", "xxd -l 64 f"),
    ("shuf", "shuf -n 3 f"),
    ("iconv", "iconv -f latin1 -t utf-8 f"),
    ("join", "join a.txt b.txt"),
    ("fmt", "fmt -w 60 f"),
    ("pr", "pr -2 f"),
    ("factor", "factor 42"),
    ("cal", "cal"),
    ("getconf", "getconf PAGE_SIZE"),
    ("sum", "sum f"),
    ("shasum", "shasum -a 256 f"),
    ("tsort", "tsort deps.txt"),
    ("printenv-home", "printenv HOME"),
    ("printenv-plain", "printenv PATH HOME"),
    ("echo-plain-vars", "echo $HOME $USER $PWD"),
    ("echo-own-var", "x=1; echo $x"),
    ("brace-files", "cat {README,CHANGELOG}.md"),
    ("brace-dirs", "ls {src,tests}"),
    ("jq-field-named-env", "jq .env package.json"),
    ("jq-args", "jq -n --arg v 1 '$v'"),
    ("git-format", "git log --format='%H %an' -3"),
    ("git-diff-tree", "git diff-tree -p HEAD"),
    ("grep-e-dash-r", "grep -e-r f"),
    ("rg-no-search-zip", "rg --no-search-zip foo"),
    ("zsh-plain-split", "zsh -lc 'echo $=HOME'"),
    ("zsh-set-test", "zsh -c 'echo $+GITHUB_TOKEN'"),
    ("equals-inside-word", "git log --format=%h -3"),
    ("equals-quoted", "grep -n ' =y' f && echo '=ls'"),
]


@pytest.mark.parametrize("command", _ids(SHELL_WRAPPED + INSPECTION))
def test_runs_unasked(command: str) -> None:
    verdict = decide_command(command, EMPTY)
    assert verdict.outcome == "read_only", verdict.reason


def test_shells_nested_deeply_are_still_seen_through() -> None:
    command = "ls -la"
    for _ in range(8):  # quoting grows fourfold a level: the ninth is past the length cap
        command = "bash -lc " + _quote(command)
    assert decide_command(command, EMPTY).outcome == "read_only"
    assert decide_command(command.replace("ls -la", "rm -rf x"), EMPTY).outcome == "unmatched"


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def test_corpus_sizes() -> None:
    never = EXACT_ALLOW + DEFAULT_DENY
    assert len(never + SECRETS + RUNTIME_PATHS + SPAWNERS + LINK_WALKS) >= 100
    assert len(SHELL_WRAPPED) + len(INSPECTION) >= 50


def test_substitutions_nested_past_the_limit_are_refused_unparsed() -> None:
    """bashlex's cost grows with the square of the nesting: deeper than 8 is never parsed."""
    def nested(depth: int) -> str:
        return "echo " + "$(echo " * depth + "x" + ")" * depth
    assert decide_command(nested(8), EMPTY).outcome == "read_only"
    deep = decide_command(nested(80), EMPTY)
    assert deep.outcome == "ask" and not deep.analysis.parsed
    assert "nested deeper than 8" in deep.reason


@pytest.mark.parametrize("word", ["{" * 30000, "{a" * 30000 + "}", "{a,b}" * 12000, "{1..99999}"])
def test_brace_words_too_big_to_follow_need_a_person(word: str) -> None:
    """Each brace may cost a scan of the word: past 64 of them, or 256 words, none is followed."""
    verdict = decide_command("cat " + word, EMPTY)
    assert verdict.outcome == "ask" and verdict.analysis.opaque, verdict.reason


def test_rules_follow_safe_commands_however_the_policy_is_built() -> None:
    """The app's settings replace auto_approve: the exact allow list must follow at once."""
    strict_policy = replace(Policy(), auto_approve=AutoApprove(safe_commands=False))
    assert strict_policy.commands.read_only_auto is False
    assert decide_command("ls", strict_policy.commands).outcome == "unmatched"
    assert decide_command("ls", Policy().commands).outcome == "read_only"


def test_shells_are_followed_32_deep_and_no_further() -> None:
    """Here-documents nest shells without quoting: past 32 the code is never auto-approved."""
    def nested(depth: int) -> str:
        command = "ls"
        for level in range(depth):
            command = f"bash <<E{level}\n{command}\nE{level}"
        return command
    assert decide_command(nested(32), EMPTY).outcome == "read_only"
    deeper = decide_command(nested(33), EMPTY)
    assert deeper.outcome == "ask" and "nested too deeply" in deeper.reason
