"""Read-only commands that read files no argument names: folder walks, and lists of files read from a file.

With ignore rules in force such a command could read an ignored file, so it is never
auto-approved. Options are read with each program's own rules: short letters bundle
(`-sd recurse`), a letter that takes a value ends its cluster (`grep -e-r` has no `-r`),
and long options may be abbreviated (`--direc=recurse`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from intentd.daemon.policy.command.options import matches_long, short_letters

Walk = Callable[[Sequence[str]], "str | None"]
# Every word is read as a possible option, `--` included: getopt may take a `--` as the
# value of the option before it (`grep -e -- -R p .`), and then the options go on.

_ALWAYS = frozenset({"rg", "fd", "find", "tree", "du"})
# Subcommands that print the contents of files in the repository, ignored ones included.
_GIT_CONTENT = frozenset({
    "grep", "log", "show", "diff", "blame", "annotate", "cat-file", "archive", "diff-tree",
    "diff-index", "diff-files", "whatchanged", "reflog", "range-diff", "stash", "format-patch"})
_SUMS = frozenset({"md5sum", "sha1sum", "sha224sum", "sha256sum", "sha384sum", "sha512sum",
                   "b2sum", "shasum", "cksum"})


def walk_reason(name: str, args: Sequence[str]) -> str | None:
    """Why `name ARGS` reads files that no argument names, or None."""
    if name in _ALWAYS:
        return f"`{name}` walks folders"
    walk = _WALKS.get(name)
    problem = walk(args) if walk else None
    return f"`{name}`: {problem}" if problem else None


_LIST_READERS = frozenset({"sort", "wc", "du"})  # GNU's, with --files0-from (or a prefix)


def names_from_file(name: str, args: Sequence[str]) -> str | None:
    """Why `name ARGS` reads files named only in another file (`sort --files0-from=LIST`:
    anywhere, ignored or not), or None."""
    if name in _LIST_READERS and any(matches_long(word, ("files0-from",))
                                     for word in args):
        return (f"`{name} --files0-from` reads the files a list names, which no check sees: "
                "they may be outside the workspace or ignored")
    return None


def _flag_walk(takes: str, letters: str, long: tuple[str, ...], why: str) -> Walk:
    def walk(args: Sequence[str]) -> str | None:
        for word in args:
            if set(short_letters(word, takes)) & set(letters) or matches_long(word, long):
                return why
        return None
    return walk


_GREP_TAKES = "efmABCdD"


def _grep(args: Sequence[str]) -> str | None:
    """-r, -R, --recursive and `-d recurse` / `--directories=recurse` in any spelling."""
    options = list(args)
    recursive = _flag_walk(_GREP_TAKES, "rR", ("recursive", "dereference-recursive"), "")
    if recursive(options) is not None:
        return "searches folders recursively"
    for index, word in enumerate(options):
        following = options[index + 1] if index + 1 < len(options) else ""
        letters = short_letters(word, _GREP_TAKES)
        if letters.endswith("d"):
            value = word[len(letters) + 1:] or following
        elif matches_long(word, ("directories",)):
            value = word.partition("=")[2] if "=" in word else following
        else:
            continue
        if value and "recurse".startswith(value):
            return "`--directories=recurse` searches folders recursively"
    return None


def _git(args: Sequence[str]) -> str | None:
    index = 0
    while index < len(args) and args[index].startswith("-"):
        index += 2 if args[index] in ("-C", "-c") else 1
    if index < len(args) and args[index] in _GIT_CONTENT:
        return f"`git {args[index]}` prints files of the repository"
    if index < len(args) and args[index] in ("rev-list", "shortlog") and any(
            word.startswith(("-S", "-G", "-L", "--pickaxe", "--find-object"))
            for word in args[index + 1:]):
        # which commits add or drop a string tells, one guess at a time, what a file held
        return f"`git {args[index]}` searches the changes of files in the repository"
    if index < len(args) and args[index] == "status" and any(
            word in ("-v", "-vv") or matches_long(word, ("verbose",))
            for word in args[index + 1:]):
        return "`git status -v` prints the changes of files in the repository"
    return None


_WALKS: dict[str, Walk] = {
    **{name: _grep for name in ("grep", "egrep", "fgrep")},
    "ls": _flag_walk("ITw", "R", ("recursive",), "lists folders recursively"),
    "diff": _flag_walk("CDFILSUWxX", "r", ("recursive",), "compares folders recursively"),
    "git": _git,
    "file": _flag_walk("efFmP", "f", ("files-from",), "reads the names of files from a file"),
    **{name: _flag_walk("a", "c", ("check",), "checks the files a list names")
       for name in _SUMS},
}


def follows_links(name: str, args: Sequence[str]) -> str | None:
    """Why `name ARGS` walks into symbolic links (which may lead out of the workspace, so a
    person decides whatever the ignore rules), or None."""
    follow = _FOLLOWS.get(name)
    return follow(args) if follow else None


def _find_follows(args: Sequence[str]) -> str | None:
    return "`find -L` follows symbolic links" if {"-L", "-follow"} & set(args) else None


_FOLLOW = "follows symbolic links, which may lead outside the workspace"
_FOLLOWS: dict[str, Walk] = {
    **{name: _flag_walk(_GREP_TAKES, "R", ("dereference-recursive",), f"`grep -R` {_FOLLOW}")
       for name in ("grep", "egrep", "fgrep")},
    "rg": _flag_walk("ABCEMTdefgjmrt", "L", ("follow",), f"`rg -L` {_FOLLOW}"),
    "fd": _flag_walk("etdEcjSo", "L", ("follow",), f"`fd -L` {_FOLLOW}"),
    "tree": _flag_walk("LPIHTo", "l", ("follow",), f"`tree -l` {_FOLLOW}"),
    "du": _flag_walk("BdtX", "L", ("dereference",), f"`du -L` {_FOLLOW}"),
    "find": _find_follows,
}
