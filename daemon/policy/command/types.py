"""Value types of shell-command analysis: redirects, simple commands and the whole analysis."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Redirect:
    """One redirection of a simple command (or of a compound command such as `( … ) > f`).

    `op` is the operator as written with its file descriptor (">", "2>", "&>", ">>", "<",
    "<<", "<<<"); a descriptor duplication or close keeps its whole text ("2>&1", ">&2",
    "2>&-") and has an empty `target`. `target` is the word after the operator, quotes
    removed (empty for here-documents and here-strings, which are not paths).
    """

    op: str
    target: str
    writes_file: bool


@dataclass(frozen=True, slots=True)
class SimpleCommand:
    """One command the shell would run.

    `argv` has quotes removed; for a command found through a wrapper it is the inner
    command (`via` names the wrappers). `text` is `" ".join(argv)`, with no re-quoting:
    it is what allow/ask/deny globs are matched against. A wrapper is listed as its own
    SimpleCommand too (`sudo rm -rf /` yields `sudo rm -rf /` and `rm -rf /`).

    Two fields beyond the engine's contract serve deny rules. `open_prefix` is set for a
    command that receives more arguments at run time (`xargs rm -rf`, `find -exec rm {} ;`):
    the text up to where they go ("rm -rf "); deny rules match when some completion of it
    would match. `runs_suffix` marks a wrapper whose options were not understood, so any
    suffix of its argv may be the command it runs.
    """

    argv: tuple[str, ...]
    text: str
    assignments: tuple[str, ...]
    redirects: tuple[Redirect, ...]
    read_only: bool
    reason: str
    opaque: bool
    via: tuple[str, ...] = ()
    open_prefix: str | None = None
    runs_suffix: bool = False


@dataclass(frozen=True, slots=True)
class CommandAnalysis:
    """Everything the policy needs to know about one shell command string.

    Beyond the engine's contract: `opaque` (some part cannot be seen through, including
    hidden code in parameter expansions and suspicious Unicode), `reason` (why the command
    is not read-only, or why it is) and `risky_assignments` (NAME=value that change what
    runs, such as PATH= or LD_PRELOAD=), and `writes_via_redirect`.

    Three more serve the checks that need the workspace: `needs_person` (reasons no rule
    may auto-approve it: a variable that may hold a secret, a path only known at run
    time), `walks` (reads files no argument names: folder walks, file lists; refused
    auto-approval when ignore rules are in force) and `git_dirs` (folders, relative to
    the command's cwd, where a git command looks for its repository).
    """

    command: str
    parsed: bool
    error: str | None
    commands: tuple[SimpleCommand, ...]
    write_targets: tuple[str, ...]
    path_args: tuple[str, ...]
    read_only: bool
    opaque: bool = False
    reason: str = ""
    risky_assignments: tuple[str, ...] = ()
    writes_via_redirect: bool = False
    needs_person: tuple[str, ...] = ()
    walks: tuple[str, ...] = ()
    git_dirs: tuple[str, ...] = ()
