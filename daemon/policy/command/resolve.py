"""Turn parsed commands into SimpleCommands: check names, see through wrappers, classify."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from intentd.daemon.policy.command.effects import path_args, write_targets
from intentd.daemon.policy.command.git import git_start_dirs
from intentd.daemon.policy.command.inspect import reveals
from intentd.daemon.policy.command.readonly import READ_ONLY, classify
from intentd.daemon.policy.command.syntax import RawCommand, parse_syntax
from intentd.daemon.policy.command.types import Redirect, SimpleCommand
from intentd.daemon.policy.command.walks import follows_links, names_from_file, walk_reason
from intentd.daemon.policy.command.words import (
    Word,
    assignment_name,
    is_harmless_assignment,
    is_plain_variable,
    is_risky_name,
    plain_ascii,
)
from intentd.daemon.policy.command.wrappers import WRAPPERS, Unwrap, unwrap
from intentd.daemon.policy.command.zsh import zsh_names

MAX_CODE_DEPTH = 32     # bash -c "bash -c '…'" nesting followed before giving up (opaque)
MAX_WRAPPERS = 8        # sudo timeout nice env … layers followed before giving up
MAX_DIRS = 64           # folders a chain of `cd`s may have moved to, before giving up
# /proc/<pid>/environ and …/mem hold another process's secrets (every one of the user's).
_PROC_SECRETS = re.compile(r"/proc/(?:[^/]+/)*(?:environ|mem)")
_NOT_FILES = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/fd/1", "/dev/fd/2"})
# Builtins whose operands name variables they set: a risky name among them needs a person.
_SETTERS = frozenset({"export", "declare", "typeset", "local", "readonly", "read", "mapfile",
                      "readarray", "getopts", "printf"})


@dataclass(slots=True)
class Findings:
    """Everything found in one command string, nested code included."""

    commands: list[SimpleCommand] = field(default_factory=list)
    path_args: list[str] = field(default_factory=list)
    write_targets: list[str] = field(default_factory=list)
    opaque: list[str] = field(default_factory=list)
    risky: list[str] = field(default_factory=list)
    redirect_writes: list[str] = field(default_factory=list)
    needs_person: list[str] = field(default_factory=list)
    walks: list[str] = field(default_factory=list)
    git_dirs: list[str] = field(default_factory=list)
    expanded: list[str] = field(default_factory=list)
    assigned: set[str] = field(default_factory=set)
    # The folders the shell may be in, relative to where the command starts (""): a `cd`
    # adds its target joined to each, and keeps them, since it may fail or sit in `( … )`.
    dirs: list[str] = field(default_factory=lambda: [""])

    def add_paths(self, paths: Iterable[str], into: list[str] | None = None) -> None:
        """List paths as the shell would open them, relative ones from each possible folder."""
        found = self.path_args if into is None else into
        for path in paths:
            if path.startswith(("/", "~")):
                found.append(path)
            else:
                found.extend(posixpath.join(d, path) if d else path for d in self.dirs)

    def add_writes(self, paths: Iterable[str]) -> None:
        """Files written, from each folder a `cd` may have moved to (all face the scope)."""
        self.add_paths(paths, self.write_targets)

    def change_dir(self, target: str) -> None:
        moved = [posixpath.normpath(posixpath.join(d, target)) for d in self.dirs]
        self.dirs = list(dict.fromkeys(self.dirs + moved))
        if len(self.dirs) > MAX_DIRS:
            self.opaque.append("too many directory changes to follow")
            self.dirs = self.dirs[:MAX_DIRS]

    def finish(self) -> None:
        """Checks that need the whole command: variables it expands but never sets, and
        reads of another process's environment or memory."""
        secret = [n for n in dict.fromkeys(self.expanded)
                  if n not in self.assigned and not is_plain_variable(n)]
        self.needs_person.extend(
            f"expands `${name}`, which may hold a secret that would reach the transcript"
            for name in secret)
        for path in self.path_args:
            # normpath keeps a leading `//`, which names the same root on Linux
            if _PROC_SECRETS.fullmatch(re.sub("^/+", "/", posixpath.normpath(path))):
                self.needs_person.append(f"reads `{path}`, a process's environment or memory")


@dataclass(frozen=True, slots=True)
class _Context:
    """What a layer inherits from the layers around it."""

    assignments: tuple[str, ...]
    redirects: tuple[Redirect, ...]
    via: tuple[str, ...]
    depth: int
    layer: int = 0
    open_at: str | None = None   # arguments added at run time go at this text ("": the end)
    stdin: tuple[str, str | None] = ("", None)


class Resolver:
    """Collects the SimpleCommands of a command string into `found`."""

    def __init__(self) -> None:
        self.found = Findings()

    def code(self, source: str, via: tuple[str, ...], depth: int) -> None:
        """Analyse shell code (the whole command, or a string a wrapper runs)."""
        syntax = parse_syntax(source)
        where = f" (in `{via[-1]}`)" if via else ""
        self.found.opaque.extend(reason + where for reason in syntax.hidden)
        self.found.opaque.extend(
            f"defines the function `{name}`, which changes what later commands run{where}"
            for name in syntax.functions)
        self.found.risky.extend(f"{name}=" for name in syntax.set_names if is_risky_name(name))
        self.found.expanded.extend(syntax.expanded)
        self.found.expanded.extend(zsh_names(source))
        self.found.needs_person.extend(
            f"`{word}` is, in zsh, the path of a program, known only when it runs"
            for word in syntax.program_paths)
        self.found.needs_person.extend(
            f"redirects from `{raw}`, a path known only when it runs, so the ignore rules and "
            "the workspace boundary cannot be checked" for raw in syntax.late_paths)
        self.found.assigned.update(syntax.set_names, syntax.assigned)
        self.found.walks.extend(_lists_names("for", raw) for raw in syntax.loop_patterns)
        for redirect in syntax.loose_redirects:
            self._redirect(redirect)
        for raw in syntax.commands:
            self._raw(raw, via, depth)

    def _raw(self, raw: RawCommand, via: tuple[str, ...], depth: int) -> None:
        for redirect in raw.redirects:
            self._redirect(redirect)
        assignments = tuple(word.text for word in raw.assignments)
        context = _Context(assignments, raw.redirects, via, depth,
                           stdin=(raw.stdin_kind, raw.stdin_text))
        if raw.words:
            self._layer(raw.words, context)
        elif raw.redirects:
            # zsh runs $READNULLCMD (a pager) or $NULLCMD for a lone redirect
            self._emit((), context, False, "a redirect without a command, which zsh hands to a "
                                           "pager")
        else:
            self._emit((), context, True, "only sets shell variables")

    def _redirect(self, redirect: Redirect) -> None:
        if redirect.target and redirect.target not in _NOT_FILES:
            self.found.add_paths([redirect.target])
        if redirect.writes_file:
            self.found.redirect_writes.append(redirect.target)
            self.found.add_writes([redirect.target])

    def _layer(self, words: tuple[Word, ...], context: _Context) -> None:
        name = words[0]
        problem = _name_problem(name, context.open_at)
        if problem is not None:
            opaque, reason = problem
            self._emit(words, context, False, reason, opaque=opaque)
            return
        wrapper = unwrap(words, *context.stdin) if context.layer < MAX_WRAPPERS else None
        if wrapper is None and context.layer >= MAX_WRAPPERS:
            self._emit(words, context, False, "too many wrappers to follow", opaque=True)
        elif wrapper is None and context.open_at is not None and name.text in WRAPPERS:
            # `xargs command` runs `command rm x`: the run-time arguments are its command
            self._emit(words, context, False, _late_wrapper(name.text), opaque=True,
                       runs_suffix=True)
        elif wrapper is None:
            self._final(words, context)
        else:
            self._wrapper(words, wrapper, context)

    def _final(self, words: tuple[Word, ...], context: _Context) -> None:
        name, args = words[0].text, words[1:]
        texts = [word.text for word in args]
        read_only, reason = classify(name, args, context.open_at is not None)
        self._emit(words, context, read_only, reason)
        self.found.add_paths(path_args(name, texts))
        self.found.add_writes(write_targets(name, texts))
        self._reads(name, args, context)
        if name in ("cd", "pushd") and read_only:
            moved = _follows_links(texts)
            if moved is not None:
                self.found.needs_person.append(f"`{name}`: {moved}")
            for target in (t for t in texts if not t.startswith("-")):
                self.found.change_dir(target)
        if name in _SETTERS:
            self.found.risky.extend(
                t for t in _set_names(name, texts) if is_risky_name(assignment_name(t + "=")))

    def _reads(self, name: str, args: tuple[Word, ...], context: _Context) -> None:
        """What a program reads beyond the paths it names: folder walks, paths only known
        at run time, and for git the folders it looks for a repository in."""
        texts = [word.text for word in args]
        secret = reveals(name, texts)
        if secret is not None:
            self.found.needs_person.append(secret)
        walk = walk_reason(name, texts)
        if walk is not None:
            self.found.walks.append(walk)
        listed = names_from_file(name, texts)
        if listed is not None:
            self.found.needs_person.append(listed)
        follows = follows_links(name, texts)
        if follows is not None:
            self.found.needs_person.append(follows)
        rule = READ_ONLY.get(name)
        if rule is not None and not rule.reads_paths:
            # `echo secrets/*` reads no file, but prints the names the pattern matches
            self.found.walks.extend(_lists_names(name, w.raw) for w in args if w.pattern)
        late = [w.raw for w in args if w.dynamic or w.tilde]
        if rule is not None and rule.reads_paths and (late or context.open_at is not None):
            what = f"`{late[0]}`" if late else "paths added at run time"
            self.found.needs_person.append(
                f"`{name}` reads {what}, known only when it runs, so the ignore rules and the "
                "workspace boundary cannot be checked")
        if name == "git":
            self.found.git_dirs.extend(git_start_dirs(texts, self.found.dirs))

    def _wrapper(self, words: tuple[Word, ...], wrapper: Unwrap, context: _Context) -> None:
        opaque = wrapper.opaque
        if opaque is None and context.open_at is not None:
            # Run-time text can land in the wrapper's options or code: `xargs -I{} sh -c
            # 'echo {}'` splices its input into the code, `xargs -I-- env -- ls` turns `--`
            # into `-S…`. What is parsed here is still walked, for deny rules.
            opaque = _late_wrapper(wrapper.label)
        reason = opaque or wrapper.why
        self._emit(words, context, wrapper.transparent and not opaque, reason,
                   opaque=opaque is not None, runs_suffix=wrapper.runs_suffix)
        self.found.add_writes(wrapper.writes)
        self.found.add_paths(wrapper.reads)
        if words[0].text in ("find", "fd"):  # the directories it searches
            own = [w.text for w in words[1:]]
            self.found.add_paths(path_args("find", own[:_first_exec(own)]))
            self.found.walks.append(f"`{words[0].text}` walks folders")
        via = context.via + (wrapper.label,)
        if wrapper.code is not None:
            self._nested_code(wrapper, via, context.depth)
        inner = replace(context, via=via, layer=context.layer + 1,
                        assignments=context.assignments + tuple(w.text for w in wrapper.env))
        if wrapper.open_args:
            inner = replace(inner, open_at=wrapper.replace)
        for argv in wrapper.inner:
            self._layer(argv, inner)

    def _nested_code(self, wrapper: Unwrap, via: tuple[str, ...], depth: int) -> None:
        code = wrapper.code or ""
        if depth >= MAX_CODE_DEPTH:
            self.found.opaque.append(f"`{wrapper.label}` code is nested too deeply")
            return
        try:
            self.code(code, via, depth + 1)
        except Exception as error:  # noqa: BLE001 - any bashlex failure: the code stays unseen
            self.found.opaque.append(f"cannot parse the code `{wrapper.label}` runs ({error})")

    def _emit(self, words: tuple[Word, ...], context: _Context, read_only: bool, reason: str,
              opaque: bool = False, runs_suffix: bool = False) -> None:
        argv = tuple(word.text for word in words)
        text = " ".join(argv)
        # A name that is no shell identifier only comes from env/sudo (`BASH_FUNC_ls%%=`)
        risky = [a for a in context.assignments
                 if not assignment_name(a) or is_risky_name(assignment_name(a))]
        self.found.risky.extend(risky)
        unsafe = [a for a in context.assignments if not is_harmless_assignment(a)]
        writes = [r.target or r.op for r in context.redirects if r.writes_file]
        if read_only and unsafe:
            read_only, reason = False, f"`{unsafe[0]}` may change how it runs"
        if read_only and writes:
            read_only, reason = False, f"writes `{writes[0]}` through a redirect"
        self.found.commands.append(SimpleCommand(
            argv=argv, text=text, assignments=context.assignments, redirects=context.redirects,
            read_only=read_only, reason=reason, opaque=opaque, via=context.via,
            runs_suffix=runs_suffix, open_prefix=_open_prefix(text, context.open_at)))


def _lists_names(name: str, pattern: str) -> str:
    return (f"`{name}` is given the pattern `{pattern}`, which the shell turns into the names "
            "of files, ignored ones included")


def _late_wrapper(label: str) -> str:
    return f"`{label}` gets more arguments at run time, which may change what it runs"


def _open_prefix(text: str, open_at: str | None) -> str | None:
    """Where arguments added at run time go: deny rules match anything starting there."""
    if open_at is None:
        return None
    if open_at and open_at in text:
        return text[:text.index(open_at)]
    return text + " "


def _first_exec(texts: list[str]) -> int:
    execs = ("-exec", "-execdir", "-ok", "-okdir", "--exec", "--exec-batch", "-x", "-X")
    return next((i for i, text in enumerate(texts) if text in execs), len(texts))


def _set_names(name: str, texts: list[str]) -> list[str]:
    """The operands of a variable-setting builtin that may name variables."""
    if name == "printf":
        return texts[1:2] if texts[:1] == ["-v"] else []
    return texts


def _name_problem(word: Word, open_at: str | None) -> tuple[bool, str] | None:
    """(opaque?, why) when the command name itself prevents classifying the command."""
    if open_at and open_at in word.text:
        # `xargs -Iecho echo x` replaces the name itself with what it reads
        return True, f"the command name `{word.raw}` is filled in at run time"
    if word.dynamic:
        return True, f"the command name `{word.raw}` is only known when it runs"
    if word.pattern:
        return True, f"the command name `{word.raw}` is a glob or brace pattern"
    if not word.text:
        return False, "the command name is empty"
    if not plain_ascii(word.text):
        return False, f"the command name `{word.text}` has non-ASCII or invisible characters"
    if "/" in word.text or word.tilde:
        return False, f"`{word.text}` is a program given by a path, not the system's"
    return None


def _follows_links(args: list[str]) -> str | None:
    """Why a `cd` may land elsewhere than its words say, or None: -P resolves links first,
    and `DIR/..` is read as the folder itself only when that folder exists (bash otherwise
    goes through DIR, which may be a link: `cd evil-link/../objects`)."""
    if any(arg.startswith("-") and "P" in arg for arg in args if arg != "-"):
        return "-P follows links, so the folder it moves to is only known when it runs"
    for arg in (a for a in args if not a.startswith("-")):
        parts = arg.split("/")
        if any(part == ".." and parts[index - 1] not in ("..", "", ".")
               for index, part in enumerate(parts) if index):
            return f"`{arg}` goes into a folder and back out, which may be a link"
    return None
