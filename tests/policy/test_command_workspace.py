"""The command policy in a real workspace, through the engine: ignore rules reached through
commands (class 5), git that could obey a planted config, `cd` followed from the call's cwd,
an exact allow list, and Claude Code's Grep judged as the search it runs.

Every command is only decided, never run; git repositories are real ones made by `git`.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from intentd.daemon.agents.hooks.claude_tools import map_call
from intentd.daemon.engine.engine import Engine
from intentd.daemon.engine.session import Session
from intentd.daemon.testing import decide, make_intent, make_session, make_workspace

IGNORED = ".env\nsecrets/\nsecret.txt\nconfig/prod.env\n"
FILES = {".env": "TOKEN=x", "secrets/key.txt": "k", "secret.txt": "s", "config/prod.env": "p",
         "src/a.py": "print(1)\n", "docs/guide.md": "# guide\n", "files.txt": "src/a.py\n"}


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True,
                   env={"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null",
                        "PATH": "/usr/bin:/bin", "HOME": str(root)})


def _workspace(root: Path, policy: dict[str, Any], ignore: bool, scope: str = "**") -> Path:
    files = {**FILES, ".orchestration/ignore": IGNORED} if ignore else dict(FILES)
    make_workspace(root, make_intent(owned_scope=[scope]), policy=policy, files=files)
    _git(root, "init", "-q")
    # A bare repository's files, written where any agent with this scope could write them,
    # and a repository nested in the workspace.
    evil = root / "src" / "evil"
    for folder in ("objects", "refs"):
        (evil / folder).mkdir(parents=True)
    (evil / "HEAD").write_text("ref: refs/heads/main\n")
    (evil / "config").write_text("[diff]\n\texternal = ./run-me\n")
    # The same with no file named HEAD or config in the folder: HEAD is a link to a ref
    # that does not exist, and `commondir` puts objects, refs and config elsewhere.
    linked, store = root / "src" / "linked", root / "lib" / "store"
    for folder in (linked, store / "objects", store / "refs"):
        folder.mkdir(parents=True)
    (linked / "HEAD").symlink_to("refs/heads/main")
    (linked / "commondir").write_text("../../lib/store\n")
    (store / "config").write_text("[diff]\n\texternal = ./run-me\n")
    (root / "src" / "nested").mkdir()
    _git(root / "src" / "nested", "init", "-q")
    return root


class Workspaces:
    def __init__(self, base: Path) -> None:
        self.engine = Engine(base / "state", checkpoints=False)
        self.sessions: dict[str, Session] = {}
        for name, policy, ignore in (
                ("ignoring", {}, True), ("plain", {}, False),
                ("strict", {"auto_approve": {"safe_commands": False},
                            "commands": {"allow": ["ls -l?", "cat *", "grep *", "sort",
                                                   "head *"], "default": "deny"}}, False)):
            session = make_session(self.engine, _workspace(base / name, policy, ignore))
            decide(self.engine, session, "select_active_intent", intent_id="INT-1")
            self.sessions[name] = session
        scoped = _workspace(base / "scoped", {"auto_approve": {"all_commands": True}}, False,
                            scope="docs/**")
        self.sessions["scoped"] = make_session(self.engine, scoped)
        decide(self.engine, self.sessions["scoped"], "select_active_intent", intent_id="INT-1")

    def verdict(self, workspace: str, tool: str, **args: Any) -> tuple[str, str]:
        decision = decide(self.engine, self.sessions[workspace], tool, **args).decision
        return decision.verdict.value, decision.reason

    def command(self, workspace: str, command: str, cwd: str | None = None) -> tuple[str, str]:
        return self.verdict(workspace, "execute_command", command=command,
                            **({"cwd": cwd} if cwd else {}))


@pytest.fixture(scope="module")
def spaces(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Workspaces]:
    base = tmp_path_factory.mktemp("cmdws")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_STATE_HOME", str(base / "xdg-state"))
        patch.setenv("XDG_CONFIG_HOME", str(base / "xdg-config"))
        found = Workspaces(base)
        yield found
        found.engine.close()


# Class 5: a read-only command that reads an ignored path, in any form, needs a person.
IGNORED_READS: list[tuple[str, str]] = [
    ("brace-group", "{ cat secret.txt; }"),
    ("brace-group-second", "{ cat src/a.py; cat secret.txt; }"),
    ("proc-subst-neighbour", "cat <(ls) secret.txt"),
    ("proc-subst-after", "cat secret.txt <(ls)"),
    ("diff-proc-subst", "diff <(ls) secret.txt"),
    ("glob-star", "cat secre*"),
    ("glob-question", "cat s?cret.txt"),
    ("glob-class", "cat [s]ecret.txt"),
    ("brace-devnull", "cat {.env,/dev/null}"),
    ("brace-empty-alternative", "cat .{env,}"),
    ("brace-head", "head {.env,src/a.py}"),
    ("brace-folder", "cat {secrets,src}/key.txt"),
    ("brace-file", "cat secrets/{key,x}.txt"),
    ("brace-middle", "cat .e{n,}v"),
    ("brace-nested", "cat {src/{a.py,b.py},.env}"),
    ("brace-redirect", "cat < {.env,}"),
    ("brace-redirect-first-empty", "wc -l < {,.env}"),
    ("grep-d-recurse", "grep -d recurse x ."),
    ("grep-directories", "grep --directories=recurse x ."),
    ("grep-directories-abbrev", "grep --direc=recurse x ."),
    ("grep-sd-bundle", "grep -sd recurse x ."),
    ("grep-d-attached", "grep -drecurse x"),
    ("grep-d-abbrev-value", "grep -d rec x ."),
    ("grep-recursive-abbrev", "grep --recur x ."),
    ("ls-recursive", "ls -laR"),
    ("diff-r", "diff -r src docs"),
    ("diff-nru", "diff -Nru src docs"),
    ("diff-qr", "diff -qr src docs"),
    ("git-diff-tree-p", "git diff-tree -p HEAD"),
    ("git-whatchanged-p", "git whatchanged -p"),
    ("git-reflog-p", "git reflog -p"),
    ("git-diff-index-p", "git diff-index -p HEAD"),
    ("git-range-diff", "git range-diff HEAD~2 HEAD~1 HEAD"),
    ("git-diff-files-p", "git diff-files -p"),
    ("git-stash-show-p", "git stash show -p"),
    ("jq-import", "jq -n -L . 'import \"secrets/creds\" as $s; $s'"),
    ("sum-check-list", "sha256sum -c sums.txt"),
    ("files0-from", "wc --files0-from=list"),
    ("file-names-from", "file -f names.txt"),
    ("cd-into-ignored", "cd secrets && cat key.txt"),
    ("subshell-cd-up", "(cd src && cat ../.env)"),
    ("dotdot", "cat src/../.env"),
    ("dot-slash", "cat ./.env"),
    ("bash-c", "bash -c 'cat .env'"),
    ("bash-lc-ignored-folder", "bash -lc 'cat secrets/key.txt'"),
    ("sh-c-cd", "sh -c 'cd secrets; cat key.txt'"),
    ("cd-there-and-back", "cd src && cd .. && cat .env"),
    ("tree", "tree -a"),
    ("find", "find . -name '*.txt'"),
    ("rg-zip", "rg -z foo"),
    # A pattern given to a program that reads no file still lists the names it matches.
    ("echo-glob-ignored-folder", "echo secrets/*"),
    ("echo-glob-hidden", "echo .e*"),
    ("printf-glob", "printf '%s\\n' secrets/*"),
    ("for-glob", "for f in secrets/*; do echo $f; done"),
    ("for-glob-later-word", "for f in src docs secrets/?*; do echo $f; done"),
    ("bash-lc-echo-glob", "bash -lc 'echo secrets/*'"),
    ("cd-echo-glob", "cd src && echo ../secrets/*"),
    # A third review: `--` taken as an option's value, so options after it still count;
    # binutils' @FILE; a value attached to a short option, any name; git's content reads.
    ("grep-dashdash-value-recurse", "grep -e -- --directories=recurse -e TOKEN ."),
    ("grep-dashdash-value-R", "grep -e -- -R -e token ."),
    ("sort-dashdash-files0", "sort -T -- --files0-from=list0"),
    ("strings-response-file", "strings @.env"),
    ("strings-response-folder", "strings @secrets/key.txt"),
    ("file-attached-magic", "file -msecret.txt README.md"),
    ("file-bundled-magic", "file -bmsecret.txt README.md"),
    ("hexdump-attached-format", "hexdump -fsecret.txt src/a.py"),
    ("git-status-verbose", "git status -vv"),
    ("git-config-blob", "git config --blob 'HEAD^{/!-:}:secret.txt' --list"),
    ("git-rev-list-pickaxe", "git rev-list -GTOKEN HEAD"),
    ("git-shortlog-pickaxe", "git shortlog -S TOKEN HEAD"),
]


@pytest.mark.parametrize("command", [pytest.param(c, id=i) for i, c in IGNORED_READS])
def test_ignored_paths_are_never_read_unasked(spaces: Workspaces, command: str) -> None:
    verdict, reason = spaces.command("ignoring", command)
    assert verdict != "allow", reason


@pytest.mark.parametrize("command", ["cat ../.env", "cd .. && cat config/prod.env",
                                     "cd .. && cd secrets && cat key.txt", "cat {../.env{,}}",
                                     "head {..,.}/.env"])
def test_ignored_paths_from_a_subfolder(spaces: Workspaces, command: str) -> None:
    verdict, reason = spaces.command("ignoring", command, cwd="src")
    assert verdict != "allow", reason


def test_cd_is_followed_from_the_calls_cwd(spaces: Workspaces) -> None:
    verdict, reason = spaces.command("ignoring", "cd .. && cat config/prod.env", cwd="src")
    assert verdict == "ask"
    assert "config/prod.env" in reason and "ignored" in reason
    assert spaces.command("ignoring", "cd .. && cat files.txt", cwd="src")[0] == "allow"


# Class 8: git that could find a repository whose config the agent wrote.
PLANTED_GIT: list[tuple[str, str, str | None]] = [
    ("dash-c-bare-looking", "git -C src/evil diff", None),
    ("dash-c-log", "git -C src/evil log --oneline", None),
    ("cd-then-git", "cd src/evil && git status", None),
    ("bare-no-index", "git -C src/evil --bare diff --no-index HEAD config", None),
    ("nested-repo", "git -C src/nested status", None),
    ("cd-nested", "cd src/nested && git diff", None),
    ("bash-lc-cd", "bash -lc 'cd src/evil && git log'", None),
    ("dash-c-twice", "git -C src -C evil status", None),
    ("cwd-bare-looking", "git status", "src/evil"),
    ("cwd-nested", "git log -1", "src/nested"),
    ("cwd-below-bare", "git status", "src/evil/objects"),
    ("linked-head-dash-c", "git -C src/linked diff --no-index a b", None),
    ("linked-head-cd", "cd src/linked && git log -1", None),
    ("linked-head-bash-lc", "bash -lc 'git -C src/linked show'", None),
    ("linked-head-cwd", "git status", "src/linked"),
    ("not-a-folder-yet", "git -C build/repo log", None),
    ("cd-not-a-folder-yet", "cd build && git diff", None),
]


@pytest.mark.parametrize(("command", "cwd"),
                         [pytest.param(c, d, id=i) for i, c, d in PLANTED_GIT])
def test_git_never_runs_unasked_where_it_could_obey_a_planted_config(
        spaces: Workspaces, command: str, cwd: str | None) -> None:
    verdict, reason = spaces.command("plain", command, cwd)
    assert verdict != "allow", reason


def test_the_planted_layouts_are_repositories_to_git(spaces: Workspaces) -> None:
    """The premise of the cases above: git itself takes each planted folder for a repository
    (rev-parse only prints; no config program runs)."""
    root = Path(spaces.sessions["plain"].workspace.root_str)
    for folder, common in (("src/evil", "src/evil"), ("src/linked", "lib/store")):
        found = subprocess.run(["git", "-C", str(root / folder), "rev-parse", "--git-common-dir"],
                               capture_output=True, text=True, check=True,
                               env={"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null",
                                    "PATH": "/usr/bin:/bin", "HOME": str(root)})
        assert Path(root / folder, found.stdout.strip()).resolve() == (root / common).resolve()


@pytest.mark.parametrize("command", [
    "git status", "git -C docs log --oneline", "cd docs && git status", "git -C . diff"])
def test_git_in_the_workspace_repository_runs_unasked(spaces: Workspaces, command: str) -> None:
    verdict, reason = spaces.command("plain", command)
    assert verdict == "allow", reason


def test_claude_code_bash_gets_the_same_git_answer(spaces: Workspaces) -> None:
    """The hook path: Claude Code runs git itself, without intentd's git safety setting."""
    mapped = map_call("Bash", {"command": "git -C src/evil diff"})
    assert mapped.tool is not None
    assert spaces.verdict("plain", mapped.tool, **mapped.args)[0] != "allow"


# Classes 6 and 7 through the engine: the forms agents send run unasked.
@pytest.mark.parametrize("command", [
    "bash -lc 'git status'", "bash -lc 'cat src/a.py | head -5'", "zsh -lc 'ls -la src'",
    "sh -c 'grep -n print src/a.py'", "base64 src/a.py", "numfmt --to=iec 1024",
    "cat {src/a.py,docs/guide.md}", "cd src && cat a.py", "echo $HOME", "echo src/*",
    "for f in src/*.py; do echo $f; done"])
def test_everyday_forms_run_unasked(spaces: Workspaces, command: str) -> None:
    verdict, reason = spaces.command("plain", command)
    assert verdict == "allow", reason


def test_safe_commands_off_makes_the_allow_list_exact(spaces: Workspaces) -> None:
    assert spaces.command("strict", "ls -la")[0] == "allow"
    assert spaces.command("strict", "ls -lah")[0] == "deny"
    assert spaces.command("strict", "cat f | grep p | sort | uniq | head -10")[0] == "deny"
    assert spaces.command("strict", "cat f | grep p | sort | head -10")[0] == "allow"


def _grep(spaces: Workspaces, workspace: str, **data: Any) -> str:
    root = spaces.sessions[workspace].workspace.root_str
    if "path" in data:
        data["path"] = f"{root}/{data['path']}"
    mapped = map_call("Grep", data, root)
    assert mapped.tool is not None
    return spaces.verdict(workspace, mapped.tool, **mapped.args)[0]


def test_claude_code_grep_over_a_folder_with_ignored_files_needs_a_person(
        spaces: Workspaces) -> None:
    assert _grep(spaces, "ignoring", pattern="TOKEN") == "ask"
    assert _grep(spaces, "ignoring", pattern="x", path="config", glob="*.env") == "ask"
    assert _grep(spaces, "ignoring", pattern="x", path="secrets") == "ask"
    assert _grep(spaces, "ignoring", pattern="TOKEN", path=".env") == "deny"
    assert _grep(spaces, "ignoring", pattern="print", path="src/a.py") == "allow"
    assert _grep(spaces, "plain", pattern="print", path="src") == "allow"
    assert _grep(spaces, "plain", pattern="def [a-z]+.*\\(", path="src") == "allow"


def test_claude_code_grep_of_a_file_is_judged_from_the_agents_folder(spaces: Workspaces) -> None:
    """A relative path from a sub-folder names the file Claude Code's ripgrep will read there,
    not a file of the same name at the workspace root."""
    root = spaces.sessions["ignoring"].workspace.root_str
    for cwd, path, verdict in (("config", "prod.env", "deny"), ("src", "a.py", "allow"),
                               ("src", "../config/prod.env", "deny")):
        mapped = map_call("Grep", {"pattern": "p", "path": path}, f"{root}/{cwd}")
        assert mapped.tool == "read_file"
        assert spaces.verdict("ignoring", mapped.tool, **mapped.args)[0] == verdict, (cwd, path)


def test_a_write_after_cd_is_held_to_the_scope_where_it_lands(spaces: Workspaces) -> None:
    """Scope `docs/**`, cwd docs: `cd ../src && touch a.md` writes src/a.md, out of scope."""
    assert spaces.command("scoped", "touch a.md", cwd="docs")[0] == "allow"
    verdict, reason = spaces.command("scoped", "cd ../src && touch a.md", cwd="docs")
    assert verdict == "deny" and "src/a.md" in reason, reason
