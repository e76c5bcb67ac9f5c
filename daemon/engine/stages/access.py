"""Stage 7: ignored paths are refused for every tool; paths outside the workspace are external."""

from __future__ import annotations

from intentd.daemon.engine.context import CallContext
from intentd.daemon.engine.decision import Decision
from intentd.daemon.engine.stages import Finding
from intentd.daemon.policy.command.gitplaces import planted_git_config
from intentd.daemon.utils.paths import PathRefused, resolve

IGNORE_SOURCES = ".orchestration/ignore, .clineignore or .rooignore"
# Read-only commands that walk folders on their own, or flags that make them do so: with
# ignore rules in force they could read an ignored file no argument names.
WALKERS = {"rg", "fd", "find", "tree", "du"}
RECURSIVE_FLAGS = {"-r", "-R", "--recursive", "--dereference-recursive"}
GLOB_CHARS = set("*?[")
# git subcommands that print the content of tracked files, ignored ones included
GIT_CONTENT_READERS = {"grep", "log", "show", "diff", "blame", "cat-file", "archive"}


class AccessStage:
    name = "access"

    def check(self, ctx: CallContext) -> Decision | Finding | None:
        """Refuses an ignored path; returns why auto-approval is off (an external path, a
        command that names or walks what the ignore rules hide) for the approval stage."""
        not_auto: list[str] = []
        ignore = ctx.config.ignore
        for path in dict.fromkeys((*ctx.paths, *ctx.writes())):  # an edit's paths are its writes
            if path.relative is None:
                not_auto.append(f"{path.raw} is outside the workspace")
            elif ignore.ignores(path.relative):
                return Decision.deny(self.name, f"{path.relative} is ignored by {IGNORE_SOURCES}; "
                                                "no tool may read or write it")
        verdict = ctx.command()
        if verdict is not None:
            not_auto.extend(_command_args(ctx, verdict.analysis.path_args))
            if ctx.config.ignore.patterns:
                not_auto.extend(_walkers([c.argv for c in verdict.analysis.commands]))
                not_auto.extend(f"{walk}, and could read paths the ignore rules hide"
                                for walk in verdict.analysis.walks)
            cwd = ctx.cwd.absolute if ctx.cwd else ctx.root
            not_auto.extend(planted_git_config(ctx.root, cwd, verdict.analysis.git_dirs))
        return Finding(not_auto=tuple(not_auto)) if not_auto else None


def _walkers(commands: list[tuple[str, ...]]) -> list[str]:
    for argv in commands:
        if argv and _walks(argv):
            return [f"`{argv[0]}` walks folders and could read paths the ignore rules hide"]
    return []


def _command_args(ctx: CallContext, path_args: tuple[str, ...]) -> list[str]:
    """A command naming an ignored or external path may run, but never without a person."""
    cwd = ctx.cwd.absolute if ctx.cwd else ctx.root
    found = []
    for raw in path_args:
        if GLOB_CHARS.intersection(raw):
            found.append(f"argument {raw[:80]!r} is a pattern the shell expands")
            continue
        try:
            path = resolve(ctx.root, raw, cwd)
        except PathRefused:
            found.append(f"argument {raw[:80]!r} cannot be resolved")
            continue
        if path.relative is None:
            found.append(f"argument {raw[:80]!r} names a path outside the workspace")
        elif ctx.config.ignore.ignores(path.relative):
            found.append(f"argument {raw[:80]!r} names an ignored path")
    return found


def _walks(argv: tuple[str, ...]) -> bool:
    if argv[0] in WALKERS or RECURSIVE_FLAGS.intersection(argv[1:]):
        return True
    if argv[0] == "git" and GIT_CONTENT_READERS.intersection(argv[1:]):
        return True
    # grep -rn, ls -laR: the recursion hides in a bundle of short flags
    short_flags = [a for a in argv[1:] if a.startswith("-") and not a.startswith("--")]
    return argv[0] in ("grep", "egrep", "fgrep", "ls") and any("r" in f.lower() for f in short_flags)
