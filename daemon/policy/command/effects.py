"""Best-effort lists of the paths a command names and the files it writes, for scope checks."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from intentd.daemon.policy.command.inspect import xxd_operands
from intentd.daemon.policy.command.options import operands
from intentd.daemon.policy.command.readonly import READ_ONLY

MAX_ATTACHED = 64  # where an attached value may start, at most: a longer word is rare
# Programs whose arguments are not files (echo's words, tr's sets, which's names).
_NO_PATHS = frozenset(name for name, rule in READ_ONLY.items() if not rule.reads_paths)


def path_args(name: str, args: Sequence[str]) -> tuple[str, ...]:
    """Arguments that may name paths, as written (globs and `~` are not expanded).

    Non-option words, values of `--opt=value`, everything after `--`; for git also the
    directory of `-C` and the path in `REV:path`. Over-inclusive on purpose (a grep
    pattern is listed too): the engine only checks them against ignore rules and the
    workspace boundary.
    """
    if name in _NO_PATHS:
        return ()
    if name == "git":
        return _git_paths(args)
    found: list[str] = []
    options_done = False
    for word in args:
        if options_done or not word.startswith("-") or word == "-":
            if word != "-":
                found.append(word)
        elif word == "--":
            options_done = True
        elif word.startswith("--") and "=" in word:
            found.append(word.split("=", 1)[1])
        elif not word.startswith("--"):
            found.extend(_attached_values(word))
    return tuple(found)


def _attached_values(word: str) -> list[str]:
    """Paths a short option may carry attached (`grep -f.env`, `file -bmcredentials`).

    Where the option letters end is not known here, so every start after the first letter
    is listed (`-bmsecrets.json` may be -b -m secrets.json). Single characters (`cut -d/`,
    `sort -t.`) are separators far more often than files, and are left out.
    """
    return [word[start:] for start in range(2, min(len(word) - 1, MAX_ATTACHED))]


def _git_paths(args: Sequence[str]) -> tuple[str, ...]:
    """git: `-C DIR`, then the subcommand's operands and the path of each `REV:path`."""
    found: list[str] = []
    index = 0
    while index < len(args) and args[index].startswith("-"):
        if args[index] == "-C" and index + 1 < len(args):
            found.append(args[index + 1])
            index += 1
        index += 1
    rest = path_args("", args[index + 1:])
    found.extend(rest)
    found.extend(word.split(":", 1)[1] for word in rest if ":" in word and word.split(":", 1)[1])
    return tuple(found)


def _option_values(args: Sequence[str], short: str, long: str) -> list[str]:
    """Values of `-o FILE`, `-oFILE`, `--output FILE` and `--output=FILE`, the long form
    abbreviated too (`--out=FILE`: getopt_long accepts any unambiguous prefix)."""
    values: list[str] = []
    for index, word in enumerate(args):
        following = args[index + 1] if index + 1 < len(args) else ""
        name, equals, value = word.partition("=")
        abbreviates = bool(long) and len(name) > 2 and name[:2] == "--" and long.startswith(name)
        if (short and word == short) or (abbreviates and not equals):
            values.append(following)
        elif abbreviates:
            values.append(value)
        elif short and word.startswith(short) and not word.startswith("--"):
            values.append(word[len(short):])
    return [value for value in values if value]


def _destination(args: Sequence[str]) -> list[str]:
    """cp, mv, install, ln: `-t DIR` or the last operand."""
    target = _option_values(args, "-t", "--target-directory")
    if target:
        return target
    taking = ("-S", "--suffix", "-m", "--mode", "-o", "--owner", "-g", "--group")
    found: list[str] = operands(args, taking)
    return found[-1:]


def _after_first(args: Sequence[str]) -> list[str]:
    """chmod, chown, chgrp: the operands after the mode or owner."""
    found: list[str] = operands(args)
    return found[1:]


def _sed(args: Sequence[str]) -> list[str]:
    if not any(w.startswith(("-i", "--in-place")) for w in args):
        return []
    found: list[str] = operands(args, ("-e", "--expression", "-f", "--file", "-l"))
    has_script_option = any(w in ("-e", "--expression", "-f", "--file") for w in args)
    return found if has_script_option else found[1:]


def _tar(args: Sequence[str]) -> list[str]:
    """The archive `tar` creates or adds to: `-f out`, `--file=out`, and `f` inside a
    cluster (`-cf out`, `-cfout`, the old style `tar czf out.tgz src`)."""
    clusters = [(i, word[1:]) for i, word in enumerate(args)
                if word.startswith("-") and not word.startswith("--")]
    if args and not args[0].startswith("-"):
        clusters.insert(0, (0, args[0]))
    creating = any(set(letters) & set("cru") for _, letters in clusters) or any(
        word in ("--create", "--append", "--update") for word in args)
    if not creating:
        return []
    found = _option_values(args, "-f", "--file")
    for index, letters in clusters:
        if "f" not in letters:
            continue
        attached = letters[letters.index("f") + 1:]
        if attached:
            found.append(attached)
        elif index + 1 < len(args):
            found.append(args[index + 1])
    return list(dict.fromkeys(found))


_WRITERS: dict[str, Callable[[Sequence[str]], list[str]]] = {
    **{name: operands for name in ("tee", "touch", "mkdir", "rm", "rmdir", "unlink", "shred")},
    "truncate": lambda args: operands(args, ("-s", "--size", "-r", "--reference")),
    **{name: _destination for name in ("cp", "mv", "install", "ln")},
    **{name: _after_first for name in ("chmod", "chown", "chgrp")},
    "sed": _sed,
    "tar": _tar,
    "dd": lambda args: [w[3:] for w in args if w.startswith("of=")],
    "sort": lambda args: _option_values(args, "-o", "--output"),
    "curl": lambda args: _option_values(args, "-o", "--output"),
    "wget": lambda args: _option_values(args, "-O", "--output-document"),
    "tree": lambda args: _option_values(args, "-o", ""),
    "git": lambda args: _option_values(args, "", "--output"),
    "uniq": lambda args: operands(args, ("-f", "-s", "-w"))[1:2],
    "xxd": lambda args: xxd_operands(args)[1:2],
    **{name: lambda args: _option_values(args, "-o", "--output")
       for name in ("base64", "base32", "basenc", "shuf", "iconv")},
}


def write_targets(name: str, args: Sequence[str]) -> tuple[str, ...]:
    """Files `name ARGS` writes, deletes or changes, where the arguments say so.

    Covers tee, touch, mkdir, rm, rmdir, unlink, shred, truncate, cp/mv/install/ln
    (destination), chmod/chown/chgrp, `sed -i`, `tar -c -f`, `dd of=`, `sort -o`,
    `curl -o`, `wget -O`, `tree -o`, `git … --output`, `uniq IN OUT`, `xxd IN OUT`, the
    `-o` of base64, shuf and iconv. Other writers are
    not listed (they are not read-only either, so a person decides).
    """
    writer = _WRITERS.get(name)
    return tuple(writer(args)) if writer else ()
