"""See through wrappers (sudo, env, timeout, xargs, find -exec, bash -c, eval …) to what they run."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from intentd.daemon.policy.command.shells import shell_code, shell_unwrap
from intentd.daemon.policy.command.unwrap import Options, Unwrap, parse_options
from intentd.daemon.policy.command.words import Word, literal

__all__ = ["WRAPPERS", "Unwrap", "unwrap"]

Handler = Callable[[tuple[Word, ...], str, "str | None"], "Unwrap | None"]


@dataclass(frozen=True, slots=True)
class _ArgvWrapper:
    """A wrapper whose command is the rest of its argv after options (and `positional` words)."""

    options: Options
    transparent: bool
    why: str
    positional: int = 0
    env: bool = False                     # NAME=value words may follow the options
    no_command: frozenset[str] = frozenset()  # options after which nothing is run
    opaque_with: frozenset[str] = frozenset()  # options that hide the command
    writes_with: frozenset[str] = frozenset()  # options whose value is a file it writes
    # Options that run the command in another directory: its relative paths then name
    # files the ignore and workspace checks never see (`env -C / cat etc/shadow`).
    moves_with: frozenset[str] = frozenset()
    # Options that take away what intentd put in the command's environment (git's
    # safe.bareRepository), or run it under another name (a multi-call binary's applet)
    strips_with: frozenset[str] = frozenset()

    def __call__(self, words: tuple[Word, ...], stdin_kind: str,
                 stdin_text: str | None) -> Unwrap | None:
        name = words[0].text
        parsed = parse_options(words, 1, self.options)
        if parsed is None:
            return _not_understood(name)
        index, seen = parsed
        names = {option for option, _ in seen}
        if names & self.no_command:
            return None
        if names & self.opaque_with:
            return Unwrap(name, False, f"`{name}` builds its command from a string",
                          opaque=f"`{name}` builds its command from a string", runs_suffix=True)
        index += self.positional
        env: list[Word] = []
        # env and sudo take every word with `=` as a setting, not only shell-style names:
        # `env 'BASH_FUNC_ls%%=() { …; }' bash -c ls` defines a function bash imports.
        while self.env and index < len(words) and "=" in words[index].text.lstrip("="):
            env.append(words[index])
            index += 1
        if index >= len(words):
            return None
        writes = tuple(value for option, value in seen if option in self.writes_with and value)
        why = self.why.format(name=name)
        if names & self.moves_with:
            why = f"`{name}` runs the command in another directory"
        if names & self.strips_with:
            why = (f"`{name} {sorted(names & self.strips_with)[0]}` takes away what intentd "
                   "sets in the command's environment, or the name it runs under")
        transparent = (self.transparent and not writes
                       and not names & (self.moves_with | self.strips_with))
        return Unwrap(name, transparent, why, inner=(words[index:],), env=tuple(env),
                      writes=writes)


def _not_understood(name: str) -> Unwrap:
    why = f"`{name}` options are not understood, so the command it runs is unknown"
    return Unwrap(name, False, why, opaque=why, runs_suffix=True)


def _guess(words: tuple[Word, ...], stdin_kind: str, stdin_text: str | None) -> Unwrap:
    """Programs that run another command with options not modelled here."""
    name = words[0].text
    return Unwrap(name, False, f"`{name}` runs another command", runs_suffix=True)


def _xargs(words: tuple[Word, ...], stdin_kind: str, stdin_text: str | None) -> Unwrap:
    options = Options(takes="aEdILPsn", optional="eil", flags="0oprtx",
                      long_takes=frozenset({"arg-file", "delimiter", "max-args", "max-procs",
                                            "max-chars"}),
                      long_flags=frozenset({"null", "open-tty", "interactive", "verbose",
                                            "no-run-if-empty", "exit", "show-limits",
                                            "replace", "eof", "max-lines"}))
    parsed = parse_options(words, 1, options)
    if parsed is None:
        return _not_understood("xargs")
    index, seen = parsed
    replace = ""
    for option, value in seen:
        if option in ("-I", "-i", "--replace"):
            replace = value or "{}"
    # `xargs -a .env echo` prints the file: it must face the ignore and workspace checks
    reads = tuple(value for option, value in seen if option in ("-a", "--arg-file") and value)
    if reads and not all(word.known for word in words[1:index]):
        why = "`xargs -a` reads a file named only at run time, which the checks cannot see"
        return Unwrap("xargs", False, why, opaque=why, runs_suffix=True)
    inner = words[index:] or (literal("echo"),)
    return Unwrap("xargs", True, "`xargs` runs a command with arguments read from its input",
                  inner=(inner,), open_args=True, replace=replace, reads=reads)


def _exec_args(words: Sequence[Word], start: int) -> tuple[tuple[Word, ...], int]:
    """The argv of find's -exec (or fd's -x) starting at `start`, and where it ends."""
    end = start
    while end < len(words) and words[end].text not in (";", "+"):
        end += 1
    return tuple(words[start:end]), end


def _find(words: tuple[Word, ...], stdin_kind: str, stdin_text: str | None) -> Unwrap | None:
    inner: list[tuple[Word, ...]] = []
    index = 1
    while index < len(words):
        if words[index].text in ("-exec", "-execdir", "-ok", "-okdir"):
            argv, index = _exec_args(words, index + 1)
            if argv:
                inner.append(argv)
        index += 1
    if not inner:
        return None
    return Unwrap("find -exec", False, "`find -exec` runs a command for each file it finds",
                  inner=tuple(inner), open_args=True, replace="{}")


def _fd(words: tuple[Word, ...], stdin_kind: str, stdin_text: str | None) -> Unwrap | None:
    for index, word in enumerate(words[1:], start=1):
        text = word.text
        short = text.startswith("-") and not text.startswith("--")
        if text in ("--exec", "--exec-batch") or (short and ("x" in text or "X" in text)):
            argv, _ = _exec_args(words, index + 1)
            return Unwrap("fd -x", False, "`fd -x` runs a command for each file it finds",
                          inner=(argv,) if argv else (), open_args=True, replace="{")
    return None


def _eval(words: tuple[Word, ...], stdin_kind: str, stdin_text: str | None) -> Unwrap:
    why = "`eval` runs a string as code"
    if all(word.known for word in words[1:]):
        return Unwrap("eval", False, why, code=" ".join(w.text for w in words[1:]), opaque=why)
    return Unwrap("eval", False, why, opaque=why)


def _source(words: tuple[Word, ...], stdin_kind: str, stdin_text: str | None) -> Unwrap:
    script = words[1].raw if len(words) > 1 else ""
    why = f"`{words[0].text} {script}` runs a script in this shell"
    return Unwrap(words[0].text, False, why, opaque=why)


def _trap(words: tuple[Word, ...], stdin_kind: str, stdin_text: str | None) -> Unwrap | None:
    args = words[1:]
    if args and args[0].text == "--":
        args = args[1:]
    if len(args) < 2 or args[0].text.startswith("-"):
        return None  # prints or resets handlers
    why = "`trap` runs code when the shell gets a signal or exits"
    if not args[0].known:
        return Unwrap("trap", False, why, opaque="`trap` runs code only known at run time")
    return Unwrap("trap", False, why, code=args[0].text)


def _su(words: tuple[Word, ...], stdin_kind: str, stdin_text: str | None) -> Unwrap:
    why = "`su` runs a command as another user"
    for index, word in enumerate(words[1:], start=1):
        text = word.text
        if text.startswith("--command="):
            return Unwrap("su -c", False, why, code=text.split("=", 1)[1])
        if text in ("-c", "--command", "--session-command") and index + 1 < len(words):
            code = words[index + 1]
            opaque = None if code.known else "`su -c` runs code only known at run time"
            return Unwrap("su -c", False, why, code=code.text, opaque=opaque)
    return Unwrap("su", False, why, opaque="`su` starts a shell as another user")


_TRANSPARENT = "`{name}` does not change what the command does"
_GUESSED = ("strace", "ltrace", "valgrind", "chroot", "unshare", "nsenter", "runuser", "flock",
            "systemd-run", "chrt", "taskset", "firejail", "bwrap", "caffeinate", "unbuffer",
            "chronic", "torsocks", "proxychains", "proxychains4", "catchsegv", "pkexec", "sg",
            "parallel", "script", "expect", "nix-shell", "direnv", "dbus-launch")

WRAPPERS: dict[str, Handler] = {
    "sudo": _ArgvWrapper(
        Options(takes="ugprCDtTUhR", flags="AbEHiKklnPSsVve",
                long_takes=frozenset({"user", "group", "host", "prompt", "close-from", "chdir",
                                      "role", "type", "other-user", "command-timeout",
                                      "chroot"}),
                long_flags=frozenset({"askpass", "background", "bell", "preserve-env",
                                      "set-home", "login", "remove-timestamp", "list",
                                      "reset-timestamp", "non-interactive", "preserve-groups",
                                      "stdin", "shell", "validate", "version", "edit", "help"})),
        False, "`sudo` runs a command as another user", env=True,
        no_command=frozenset({"-e", "--edit", "-l", "--list", "-V", "--version", "-h",
                              "--help", "-v", "--validate", "-k", "-K"})),
    "doas": _ArgvWrapper(Options(takes="uC", flags="nsL"), False,
                         "`doas` runs a command as another user", no_command=frozenset({"-C"})),
    "env": _ArgvWrapper(
        Options(takes="uCSa", flags="i0v",
                long_takes=frozenset({"unset", "chdir", "split-string", "argv0"}),
                long_flags=frozenset({"ignore-environment", "null", "debug", "block-signal",
                                      "default-signal", "ignore-signal",
                                      "list-signal-handling"})),
        True, "`env` only sets the environment of the command", env=True,
        opaque_with=frozenset({"-S", "--split-string"}),
        moves_with=frozenset({"-C", "--chdir"}),
        strips_with=frozenset({"-i", "--ignore-environment", "-u", "--unset", "-a",
                               "--argv0"})),
    "nohup": _ArgvWrapper(Options(), False,
                          "`nohup` keeps the command running after the session ends"),
    "timeout": _ArgvWrapper(
        Options(takes="sk", flags="v", long_takes=frozenset({"signal", "kill-after"}),
                long_flags=frozenset({"preserve-status", "foreground", "verbose"})),
        True, "`timeout` only limits how long the command runs", positional=1),
    "nice": _ArgvWrapper(Options(takes="n", flags="0123456789",
                                 long_takes=frozenset({"adjustment"})), True, _TRANSPARENT),
    "stdbuf": _ArgvWrapper(Options(takes="ioe", long_takes=frozenset({"input", "output",
                                                                      "error"})),
                           True, _TRANSPARENT),
    "ionice": _ArgvWrapper(Options(takes="cnpPu", flags="t"), True, _TRANSPARENT,
                           no_command=frozenset({"-p", "-P", "-u"})),
    "setsid": _ArgvWrapper(Options(flags="cfw", long_flags=frozenset({"ctty", "fork", "wait"})),
                           True, _TRANSPARENT),
    "command": _ArgvWrapper(Options(flags="pvV"), True,
                            "`command` runs the program, bypassing shell functions",
                            no_command=frozenset({"-v", "-V"})),
    "builtin": _ArgvWrapper(Options(), True, _TRANSPARENT),
    "exec": _ArgvWrapper(Options(takes="a", flags="cl"), False,
                         "`exec` replaces the shell with the command"),
    "time": _ArgvWrapper(
        Options(takes="of", flags="pvqa", long_takes=frozenset({"output", "format"}),
                long_flags=frozenset({"portability", "verbose", "quiet", "append"})),
        True, _TRANSPARENT, writes_with=frozenset({"-o", "--output"})),
    "busybox": _ArgvWrapper(Options(), False, "`busybox` runs its own applet"),
    "watch": _ArgvWrapper(
        Options(takes="n", optional="d", flags="bcegtwxpr",
                long_takes=frozenset({"interval"}),
                long_flags=frozenset({"differences", "no-title", "beep", "errexit", "chgexit",
                                      "color", "no-color", "exec", "precise", "no-wrap",
                                      "no-linewrap", "equexit"})),
        True, "`watch` runs the command again and again"),
    "xargs": _xargs,
    "find": _find,
    "fd": _fd,
    "eval": _eval,
    "source": _source,
    ".": _source,
    "trap": _trap,
    "su": _su,
    **{name: shell_unwrap for name in ("bash", "sh", "dash", "ksh", "mksh", "ash", "zsh",
                                       "yash", "posh", "fish", "csh", "tcsh")},
    **{name: _guess for name in _GUESSED},
}


def unwrap(words: tuple[Word, ...], stdin_kind: str, stdin_text: str | None) -> Unwrap | None:
    """What the wrapper `words[0]` runs, or None when it is not a wrapper or runs nothing."""
    handler = WRAPPERS.get(words[0].text)
    if handler is None:
        return None
    unwrapped = handler(words, stdin_kind, stdin_text)
    if unwrapped is not None and words[0].text == "watch" and unwrapped.inner:
        return _watch_code(words, unwrapped)
    return unwrapped


def _watch_code(words: tuple[Word, ...], unwrapped: Unwrap) -> Unwrap:
    """`watch` joins its arguments and runs them with `sh -c`; with -x (--exec) it runs them
    as they are, which joining would misread (`watch -x env "a='x" sh -c CODE "'"`)."""
    argv = unwrapped.inner[0]
    options = words[1:len(words) - len(argv)]
    if any(word.text == "--exec" or word.text[:1] == "-" and word.text[1:2] != "-"
           and "x" in word.text for word in options):
        return unwrapped
    if not all(word.known for word in argv):
        return Unwrap("watch", False, unwrapped.why, opaque="`watch` runs code only known later")
    return shell_code("sh", "watch", True, unwrapped.why, " ".join(word.text for word in argv))
