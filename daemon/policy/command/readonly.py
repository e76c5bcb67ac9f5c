"""The read-only classification: which programs only read, and the argument checks that keep them so."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from intentd.daemon.policy.command.git import check_git
from intentd.daemon.policy.command.inspect import (
    check_env,
    check_jq,
    check_printenv,
    check_xxd,
    refuse_output,
)
from intentd.daemon.policy.command.options import matches_long, operands, short_letters
from intentd.daemon.policy.command.sed import check_sed
from intentd.daemon.policy.command.words import Word

Check = Callable[[Sequence[str]], "str | None"]


@dataclass(frozen=True, slots=True)
class ReadOnlyRule:
    """A program that only reads. `check` names an argument that makes it write or run
    something (None: no argument can); `reads_paths` says its arguments may name files."""

    check: Check | None = None
    reads_paths: bool = True
    checked_args: int | None = None  # how many leading arguments `check` looks at (None: all)


# binutils read `@FILE` as more options (`strings @.env` prints the file in its errors)
_RESPONSE_FILES = frozenset({"strings", "nm", "objdump", "readelf", "size", "c++filt",
                             "addr2line"})


def _refuse(letters: str = "", takes: str = "", long: tuple[str, ...] = (),
            words: frozenset[str] = frozenset()) -> Check:
    """A check refusing short option letters, long options (abbreviated too) or exact words."""
    def check(args: Sequence[str]) -> str | None:
        for word in args:
            if word == "--":
                return None
            bad_letter = set(short_letters(word, takes)) & set(letters)
            if bad_letter or matches_long(word, long) or word in words:
                return f"`{word}` writes a file, runs a program or changes the system"
        return None
    return check


def _uniq(args: Sequence[str]) -> str | None:
    if len(operands(args, ("-f", "-s", "-w"))) > 1:
        return "`uniq INPUT OUTPUT` writes its second file"
    return None


def _printf(args: Sequence[str]) -> str | None:
    return "`printf -v` sets a shell variable" if args and args[0].startswith("-v") else None


def _date(args: Sequence[str]) -> str | None:
    # `date` lists no paths, so a file it reads would skip the ignore and workspace checks;
    # `date -f .env` prints each line of the file in an "invalid date" error.
    for word in args:
        if "f" in short_letters(word, "dfrI") or matches_long(word, ("file",)):
            return "`date -f FILE` reads a file and prints its lines"
    problem = _refuse("s", "dfrI", ("set",))(args)
    taking = ("-d", "-f", "-r", "--date", "--file", "--reference")
    if problem is None and any(not word.startswith("+") for word in operands(args, taking)):
        return "`date` with a date operand sets the clock"
    return problem


def _cd(args: Sequence[str]) -> str | None:
    targets = operands([word for word in args if word not in ("-L", "-P", "-e", "-@")])
    if len(targets) != 1 or targets[0] == "-":
        return "`cd` to a directory that is not named (home, `-` or several)"
    if targets[0].startswith("+"):
        return "`pushd +N` moves to a folder kept from earlier, which is not named"
    return None


def _test(args: Sequence[str]) -> str | None:
    # bash expands `$(…)` inside an array subscript: `test -v 'a[$(rm x)]'` runs rm.
    if any(word in ("-v", "-R") for word in args):
        return "`test -v NAME` evaluates an array subscript, which can run commands"
    return None


def _hostname(args: Sequence[str]) -> str | None:
    printing = {"-s", "-f", "-d", "-i", "-I", "-a", "-A", "--short", "--fqdn", "--long",
                "--domain", "--ip-address", "--all-ip-addresses", "--all-fqdns"}
    return None if set(args) <= printing else "`hostname NAME` sets the host name"


_FIND_ACTIONS = frozenset({"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint",
                           "-fprint0", "-fprintf", "-fls"})
_PLAIN = ReadOnlyRule()
_NO_PATHS = ReadOnlyRule(reads_paths=False)

READ_ONLY: dict[str, ReadOnlyRule] = {
    **{name: _PLAIN for name in (
        "cat", "head", "tail", "ls", "wc", "grep", "egrep", "fgrep", "stat", "du", "df",
        "realpath", "readlink", "cut", "comm", "cmp", "md5sum", "sha1sum", "sha224sum",
        "sha256sum", "sha384sum", "sha512sum", "b2sum", "cksum", "tac", "nl", "rev",
        "fold", "expand", "unexpand", "paste", "od", "hexdump", "strings", "column",
        "join", "fmt", "pr", "tsort", "sum", "shasum", "md5")},
    **{name: _NO_PATHS for name in (
        "echo", "pwd", "true", "false", ":", "whoami", "id", "uname", "basename", "dirname",
        "which", "type", "seq", "sleep", "nproc", "tty", "groups", "uptime", "arch",
        "logname", "tr", "locale", "command", "numfmt", "expr", "factor", "cal",
        "getconf")},
    "printenv": ReadOnlyRule(check_printenv, reads_paths=False),
    "jq": ReadOnlyRule(check_jq),
    "xxd": ReadOnlyRule(check_xxd),
    **{name: ReadOnlyRule(refuse_output("wo")) for name in ("base64", "base32", "basenc")},
    "iconv": ReadOnlyRule(refuse_output("fto")),
    "shuf": ReadOnlyRule(refuse_output("nio")),
    "printf": ReadOnlyRule(_printf, reads_paths=False, checked_args=1),
    "date": ReadOnlyRule(_date, reads_paths=False),
    "hostname": ReadOnlyRule(_hostname, reads_paths=False),
    "env": ReadOnlyRule(check_env, reads_paths=False),
    "sort": ReadOnlyRule(_refuse("o", "ktSTo", ("output", "compress-program"))),
    "uniq": ReadOnlyRule(_uniq),
    # file -z, rg -z and diff -l start decompressors or `pr`; fd -l starts `ls`
    "file": ReadOnlyRule(_refuse("CzZ", "efFmP", ("compile", "uncompress",
                                                 "uncompress-noreport"))),
    "tree": ReadOnlyRule(_refuse("oR", "LPIHTo", ("output",))),
    "diff": ReadOnlyRule(_refuse("l", "CDFILSUWxX", ("output", "paginate"))),
    "rg": ReadOnlyRule(_refuse("z", "ABCEMTdefgjmrt", ("pre", "pre-glob", "hostname-bin",
                                                       "search-zip"))),
    "fd": ReadOnlyRule(_refuse("xXl", "etdEcjSo", ("exec", "exec-batch", "list-details"))),
    "find": ReadOnlyRule(_refuse(words=_FIND_ACTIONS)),
    "test": ReadOnlyRule(_test),
    "[": ReadOnlyRule(_test),
    "sed": ReadOnlyRule(check_sed),
    "git": ReadOnlyRule(check_git),
    "cd": ReadOnlyRule(_cd),
    "pushd": ReadOnlyRule(_cd),
}

# Why some common programs are never read-only, for clearer reasons.
NOT_READ_ONLY: dict[str, str] = {
    **{name: f"`{name}` is a pager, which can run commands and open other files"
       for name in ("less", "more", "most", "pg", "man")},
    **{name: f"`{name}` programs can run commands and write files"
       for name in ("awk", "gawk", "mawk", "nawk")},
    **{name: f"`{name}` runs code" for name in (
        "python", "python3", "python2", "node", "perl", "ruby", "php", "lua", "deno", "bun",
        "tclsh", "Rscript", "osascript")},
    **{name: f"`{name}` changes the shell's state (aliases, functions, options)"
       for name in ("alias", "unalias", "hash", "enable", "set", "shopt", "export", "declare",
                    "typeset", "local", "readonly", "unset", "trap", "ulimit", "umask")},
}


def classify(name: str, args: Sequence[Word], open_args: bool) -> tuple[bool, str]:
    """(read-only?, why) for the program `name` run with `args`.

    Arguments only known at run time ($X, $(…), `~`, xargs' input) make a checked program
    unsafe, and a file-reading one unsafe too because the files it reads cannot be checked
    against ignore rules; an unquoted glob is allowed only where no argument can write.
    """
    rule = READ_ONLY.get(name)
    if rule is None:
        return False, NOT_READ_ONLY.get(name, f"`{name}` is not a read-only command")
    if rule.check is None and not rule.reads_paths:
        return True, f"`{name}` only prints"
    if open_args:
        return False, f"`{name}` gets more arguments at run time, so they cannot be checked"
    limit = 0 if rule.check is None else rule.checked_args or len(args)
    for position, word in enumerate(args):
        if (position < limit and not word.known) or (
                rule.reads_paths and (word.dynamic or word.tilde)):
            return False, f"`{name}` argument `{word.raw}` is only known when it runs"
    texts = [word.text for word in args]
    if rule.check is not None:
        problem = next(filter(None, map(rule.check, readings(texts))), None)
        if problem:
            return False, problem
    if name in _RESPONSE_FILES and any(text.startswith("@") for text in texts):
        return False, f"`{name} @FILE` reads its options from a file no check sees"
    return True, f"`{name}` is read-only"


def readings(args: list[str]) -> list[list[str]]:
    """The ways getopt may read `args`: as written, and with each `--` that follows an option
    taken as that option's value (`sort -T -- -o out`: -T's folder is `--`, and -o still
    writes), where a checker would stop reading options."""
    found = [args]
    for index, word in enumerate(args):
        if word == "--" and index and args[index - 1][:1] == "-" and args[index - 1] not in (
                "-", "--"):
            found.append([*args[:index], "x", *args[index + 1:]])
    return found
