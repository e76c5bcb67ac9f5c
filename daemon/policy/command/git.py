"""Decide whether a `git` invocation only reads the repository (no config, pager or output file)."""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Sequence

from intentd.daemon.policy.command.options import matches_long, operands, short_letters

# Global options (before the subcommand) that are safe; `-C DIR` is handled apart.
# `--bare`, `--git-dir` and `--work-tree` are not: they make git read a repository (and its
# config) that the agent may have written, past `safe.bareRepository=explicit`.
_SAFE_GLOBAL = frozenset({
    "--no-pager", "-P", "--no-replace-objects", "--literal-pathspecs", "--glob-pathspecs",
    "--noglob-pathspecs", "--icase-pathspecs", "--no-optional-locks",
    "--version", "--html-path", "--man-path", "--info-path", "--no-advice",
})
# Options refused in every subcommand: they write a file, run a program or start a pager.
_REFUSED_LONG = ("output", "ext-diff", "textconv", "filters", "open-files-in-pager",
                 "paginate", "exec", "upload-pack", "receive-pack", "edit", "show-signature")
_REAL_PREFIXES = ("text",)  # `git diff --text` is a real option that abbreviates --textconv

Check = Callable[[Sequence[str]], str | None]


def check_git(args: Sequence[str]) -> str | None:
    """Why `git ARGS` is not read-only, or None when it only reads."""
    index = 0
    while index < len(args) and args[index].startswith("-"):
        word = args[index]
        if word == "-C":
            index += 2
            continue
        if word not in _SAFE_GLOBAL:
            return f"`git {word}` can change configuration, run a pager or another program"
        index += 1
    if index >= len(args):
        return None  # `git`, `git --version`: prints and exits
    sub, rest = args[index], args[index + 1:]
    check = _SUBCOMMANDS.get(sub)
    if check is None:
        return f"`git {sub}` is not a read-only git command"
    for word in rest:
        if word == "--":
            break
        refused = matches_long(word, _REFUSED_LONG, exact=_REAL_PREFIXES)
        if refused or word.startswith("-o") or (sub == "grep" and "O" in short_letters(word)):
            return f"`git {sub} {word}` writes a file or runs a program"
        if "%G" in word:  # a format placeholder, with --format or as its separate value
            return f"`git {sub} {word}`: `%G` checks signatures, which runs gpg"
    return check(rest)


def git_start_dirs(args: Sequence[str], dirs: Sequence[str]) -> list[str]:
    """The folders `git ARGS` starts looking for its repository in: each folder the shell
    may be in, moved by every `-C DIR` (they add up, as in git)."""
    moves: list[str] = []
    index = 0
    while index < len(args) and args[index].startswith("-"):
        if args[index] == "-C" and index + 1 < len(args):
            moves.append(args[index + 1])
            index += 1
        index += 1
    found = []
    for folder in dirs:
        for move in moves:
            folder = posixpath.join(folder, move) if move else folder
        found.append(folder)
    return found


def _any(rest: Sequence[str]) -> str | None:
    return None


def _listing(allowed: frozenset[str], takes: frozenset[str], name: str) -> Check:
    """`git branch` / `git tag`: listing options only; names only as patterns after -l."""
    def check(rest: Sequence[str]) -> str | None:
        listing = any(word in ("-l", "--list") for word in rest)
        previous = ""
        for word in rest:
            option = word.split("=", 1)[0]
            if word.startswith("-"):
                if option not in allowed and not (option.startswith("-n") and name == "tag"):
                    return f"`git {name} {word}` changes {name}es or is not known to be read-only"
            elif not listing and previous not in takes:
                return f"`git {name} {word}` creates or changes a {name}"
            previous = word
        return None
    return check


_LIST_COMMON = frozenset({"-l", "--list", "-v", "-vv", "--verbose", "--contains",
                          "--no-contains", "--merged", "--no-merged", "--points-at", "--sort",
                          "--format", "--color", "--no-color", "--column", "--no-column", "-i",
                          "--ignore-case", "--abbrev", "--no-abbrev"})
_TAKES_COMMIT = frozenset({"--contains", "--no-contains", "--merged", "--no-merged",
                           "--points-at", "--sort", "--format"})


def _remote(rest: Sequence[str]) -> str | None:
    if not rest or all(word in ("-v", "--verbose") for word in rest):
        return None
    if rest[0] == "get-url":
        return None
    return f"`git remote {rest[0]}` changes remotes or contacts the network"


_CONFIG_READS = frozenset({"--get", "--get-all", "--get-colorbool"})
_CONFIG_SAFE = frozenset({"--local", "--worktree", "--show-origin", "--show-scope", "-z",
                          "--null", "--type", "--bool", "--int", "--bool-or-int", "--path",
                          "--expiry-date", "--includes", "--no-includes", "--default"})
# Sections whose values hold no secret. Not among them: remote.*.url and url.* (a token in
# the address), http.* (extraHeader: an Authorization header), credential.*; nor --list,
# --get-regexp, --global, --system, --file or --blob, which read all of a file, one outside
# the workspace or an ignored one (`--blob HEAD:secret.ini`).
_CONFIG_SECTIONS = frozenset({
    "user", "init", "core", "pull", "push", "merge", "rebase", "fetch", "branch", "color",
    "alias", "diff", "log", "status", "commit", "tag", "format", "advice", "help", "pager",
    "column", "grep", "blame", "gpg", "safe"})
_CONFIG_SECRET_WORDS = ("token", "password", "passwd", "secret", "credential", "header", "auth")


def _config(rest: Sequence[str]) -> str | None:
    if rest and rest[0] == "get":
        rest = rest[1:]  # newer git's `git config get NAME`
    options = {word.split("=", 1)[0] for word in rest if word.startswith("-")}
    unknown = options - _CONFIG_READS - _CONFIG_SAFE
    names = operands(rest, ("--type", "--default"))
    # `git config user.name` reads like --get; a second operand would set it, and a word
    # without a dot is a subcommand in newer git (`git config edit` opens an editor).
    if unknown or len(names) != 1 or "." not in names[0]:
        return ("`git config` may set configuration, or print all of a file; only getting "
                "one setting is read-only")
    name = names[0].lower()
    if name.split(".", 1)[0] not in _CONFIG_SECTIONS or any(
            word in name for word in _CONFIG_SECRET_WORDS):
        return f"`git config` would print `{names[0]}`, which may hold a secret"
    return None


def _first_word_in(allowed: frozenset[str], name: str, empty_ok: bool) -> Check:
    """`git stash list`, `git worktree list`: only these forms read.

    git picks the subcommand from the very next word: `git stash -- list` is `git stash
    push -- list`, so an option before the subcommand is not skipped.
    """
    def check(rest: Sequence[str]) -> str | None:
        if (not rest and empty_ok) or (rest and rest[0] in allowed):
            return None
        return f"`git {name}` without {' or '.join(sorted(allowed))} changes the repository"
    return check


def _reflog(rest: Sequence[str]) -> str | None:
    # Any position, not only the first word: options before a subcommand are not trusted
    # to leave it unrecognised.
    changing = [word for word in rest if word in ("expire", "delete", "drop", "write")]
    if changing:
        return f"`git reflog {changing[0]}` changes the reflog"
    return None


_SUBCOMMANDS: dict[str, Check] = {
    **{sub: _any for sub in (
        "status", "log", "diff", "show", "rev-parse", "ls-files", "blame", "describe",
        "shortlog", "rev-list", "ls-tree", "merge-base", "show-ref", "grep", "count-objects",
        "whatchanged", "cherry", "name-rev", "cat-file", "diff-tree", "diff-files",
        "diff-index", "for-each-ref", "version", "check-ignore", "check-attr", "annotate",
        "show-branch", "range-diff")},
    "branch": _listing(_LIST_COMMON | {"-a", "--all", "-r", "--remotes", "--show-current"},
                       _TAKES_COMMIT, "branch"),
    "tag": _listing(_LIST_COMMON | {"-n"}, _TAKES_COMMIT, "tag"),
    "remote": _remote,
    "config": _config,
    "stash": _first_word_in(frozenset({"list", "show"}), "stash", empty_ok=False),
    "worktree": _first_word_in(frozenset({"list"}), "worktree", empty_ok=False),
    "reflog": _reflog,
}
