"""Parse a command string with bashlex and list every simple command in it, nested ones too."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from intentd.daemon.policy.command.braces import TooManyWords, expand_braces
from intentd.daemon.policy.command.types import Redirect
from intentd.daemon.policy.command.words import (
    Word,
    assignment_name,
    has_unquoted_pattern,
    unquote,
)
from intentd.daemon.policy.command.zsh import is_zsh_program_path

# Redirect operators that open their target for writing (`>&word` is `&>word` in bash).
_WRITE_OPS = frozenset({">", ">>", ">|", "&>", "&>>", "<>", ">&"})
# Targets that are not files on disk; every other /dev path (/dev/tcp/…) counts as a write.
_NOT_FILES = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/fd/1", "/dev/fd/2"})
_HEREDOC_OPS = frozenset({"<<", "<<-"})
# What may sit between the parsed top-level commands: blanks, separators, comments.
_FILLER = re.compile(r"(?:[\s;&]|#[^\n]*)*")
# A plain parameter: a name, a positional or a special parameter, optionally `#`-prefixed.
_PLAIN_PARAMETER = re.compile(r"#?(?:[A-Za-z_][A-Za-z0-9_]*|[0-9]+|[@*#?$!-])")
_PARAMETER_OPS = re.compile(r"(?::?[-+?]|##?|%%?|//?|\^\^?|,,?|:)")
_HIDDEN_CODE = ("$(", "`", "<(", ">(", "${", "$[", "[")
# Variable names an expansion reads: its own and those in its operand (`${X:-$TOKEN}`).
_EXPANDED_NAMES = re.compile(r"(?:^#?|\$\{?#?)([A-Za-z_][A-Za-z0-9_]*)")
_HEREDOC_NAMES = re.compile(r"\$\{?#?([A-Za-z_][A-Za-z0-9_]*)")
_HEREDOC_ESCAPE = re.compile(r"\\([\\$`\n])")
_EXPANDS_AFTER_DOLLAR = re.compile(r"[A-Za-z_0-9@*#?$!-]")  # `$x`, `$_`, `$1`, `$$`
_DECLARERS = frozenset({"export", "declare", "typeset", "local", "readonly"})
# A substring expansion (`${x:off:len}`, not `:-` `:=` `:?` `:+`) naming a variable.
_ARITHMETIC_ON_NAMES = re.compile(r":(?![-=?+]).*[A-Za-z_]", re.DOTALL)


@dataclass(frozen=True, slots=True)
class RawCommand:
    """A simple command as parsed, before wrappers are seen through.

    `stdin_kind` is "heredoc" or "herestring" when its standard input is text written in
    the command (`stdin_text`, None when that text is only known at run time), "file" for
    `< file`, or "" when it inherits standard input (a pipe, the terminal).
    """

    words: tuple[Word, ...]
    assignments: tuple[Word, ...]
    redirects: tuple[Redirect, ...]
    stdin_kind: str = ""
    stdin_text: str | None = None


@dataclass(slots=True)
class Syntax:
    """What one parse found: the simple commands and what sits outside them."""

    commands: list[RawCommand] = field(default_factory=list)
    hidden: list[str] = field(default_factory=list)   # reasons: code bashlex does not show
    late_paths: list[str] = field(default_factory=list)  # redirect targets known at run time
    loose_redirects: list[Redirect] = field(default_factory=list)  # on `( … )`, `{ …; }`
    set_names: list[str] = field(default_factory=list)  # for-loop variables
    # Unquoted shell patterns in a for-loop's list: the shell turns them into file names.
    loop_patterns: list[str] = field(default_factory=list)
    functions: list[str] = field(default_factory=list)
    expanded: list[str] = field(default_factory=list)  # variables whose values it expands
    assigned: list[str] = field(default_factory=list)  # variables it sets (NAME=value)
    program_paths: list[str] = field(default_factory=list)  # zsh's `=ls`, a path at run time


def parse_syntax(source: str) -> Syntax:
    """Parse `source` into its simple commands; raise on anything bashlex cannot parse.

    bashlex may stop early without an error, so the text between the parsed trees must be
    only blanks, separators and comments: otherwise the command is refused as unparsed.
    """
    # Imported on first use: bashlex builds its parse tables on import (a tenth of a second
    # or more), which every daemon start and every tool that loads the policy paid for.
    import bashlex

    trees = bashlex.parse(source)
    walker = _Walker(source)
    covered: list[tuple[int, int]] = []
    for tree in trees:
        walker.walk(tree, 0)
        covered.append(tree.pos)
    covered.extend(walker.heredoc_spans)
    _check_coverage(source, covered)
    if not walker.syntax.commands:
        raise ValueError("no command to run")
    return walker.syntax


def parse_units(source: str) -> int:
    """How many times a shell reading `source` line by line parses before it runs what it
    parsed: one per top-level command, a line (or a compound, or a command with its
    here-document) at a time. Raises on what bashlex cannot parse."""
    import bashlex

    return len(bashlex.parse(source))


def _check_coverage(source: str, spans: list[tuple[int, int]]) -> None:
    position = 0
    for start, end in sorted(spans):
        if start > position and not _FILLER.fullmatch(source, position, start):
            raise ValueError(f"parser skipped text at position {position}")
        position = max(position, end)
    if not _FILLER.fullmatch(source, position):
        raise ValueError(f"parser skipped text at position {position}")


class _Walker:
    """Walks bashlex's tree; node kinds are listed in bashlex.ast.nodevisitor."""

    _MAX_DEPTH = 200

    def __init__(self, source: str) -> None:
        self.source = source
        self.syntax = Syntax()
        self.heredoc_spans: list[tuple[int, int]] = []

    def walk(self, node: Any, depth: int) -> None:
        if depth > self._MAX_DEPTH:
            raise RecursionError("command nested too deeply")
        kind = node.kind
        if kind == "command":
            self._command(node, depth)
        elif kind in ("list", "pipeline", "if", "while", "until"):
            self._walk_all(node.parts, depth)
        elif kind == "compound":
            self._walk_all(node.list, depth)
            for redirect in node.redirects:
                self.syntax.loose_redirects.append(self._redirect(redirect, depth)[0])
        elif kind == "for":
            self.syntax.set_names.append(node.parts[1].word)
            self.syntax.loop_patterns.extend(self._loop_patterns(node.parts))
            self._walk_all(node.parts, depth)
        elif kind == "function":
            self.syntax.functions.append(node.name.word)
            self.walk(node.body, depth + 1)
        elif kind in ("word", "assignment"):
            self._walk_all(node.parts, depth)
        elif kind in ("commandsubstitution", "processsubstitution"):
            self.walk(node.command, depth + 1)
        elif kind == "parameter":
            self._parameter(getattr(node, "value", ""))
        elif kind not in ("reservedword", "operator", "pipe", "tilde", "heredoc"):
            raise ValueError(f"unknown bashlex node kind {kind!r}")

    def _loop_patterns(self, parts: list[Any]) -> list[str]:
        """The words of `for NAME in WORDS` that are shell patterns, as written."""
        found = []
        for part in parts[3:]:
            if part.kind != "word":
                break
            raw = self.source[part.pos[0]:part.pos[1]]
            if has_unquoted_pattern(raw, braces=False):
                found.append(raw)
        return found

    def _walk_all(self, nodes: list[Any], depth: int) -> None:
        for child in nodes:
            self.walk(child, depth + 1)

    def _parameter(self, value: str) -> None:
        """Note the variables read; refuse expansions whose operand bashlex does not parse."""
        self.syntax.expanded.extend(_EXPANDED_NAMES.findall(value))
        match = _PLAIN_PARAMETER.match(value)
        rest = value[match.end():] if match else value
        if not rest:
            return
        if match is None or any(mark in rest for mark in _HIDDEN_CODE) or rest[0] == "@":
            self.syntax.hidden.append(f"the expansion `${{{value}}}` can run hidden code")
        elif not _PARAMETER_OPS.match(rest) or "=" in rest[:2]:
            self.syntax.hidden.append(f"the expansion `${{{value}}}` assigns or is unusual")
        elif _ARITHMETIC_ON_NAMES.match(rest):
            # `${x:y}`: the offset is arithmetic, and a variable holding `a[$(cmd)]` (say
            # from `y=$(cat f)`) runs cmd when arithmetic evaluates it.
            self.syntax.hidden.append(
                f"the expansion `${{{value}}}` evaluates variables as arithmetic")

    def _word(self, node: Any, depth: int) -> Word:
        self._walk_all(node.parts, depth)
        kinds = {part.kind for part in node.parts}
        raw = self.source[node.pos[0]:node.pos[1]]
        if is_zsh_program_path(raw):
            self.syntax.program_paths.append(raw)
        text: str = node.word
        process_only = kinds == {"processsubstitution"} and text.startswith(("<(", ">("))
        dynamic = bool(kinds - {"tilde"}) and not process_only
        if not node.parts:
            # bashlex removes quotes wrongly in places (`".e"'n'v` → `.e'n'v`, bash: `.env`),
            # which would hide paths from the ignore rules and names from deny rules.
            exact = unquote(raw)
            if exact is None:
                dynamic = True
            else:
                text = exact
        return Word(
            text=text,
            raw=raw,
            dynamic=dynamic,
            pattern=has_unquoted_pattern(raw),
            tilde="tilde" in kinds,
        )

    def _command(self, node: Any, depth: int) -> None:
        words: list[Word] = []
        assignments: list[Word] = []
        redirects: list[Redirect] = []
        stdin: tuple[str, str | None] = ("", None)
        for part in node.parts:
            if part.kind == "assignment":
                self.syntax.assigned.append(assignment_name(part.word))
            if part.kind == "assignment" and not words:
                assignments.append(self._word(part, depth))
            elif part.kind in ("word", "assignment"):
                words.extend(self._brace_words(self._word(part, depth)))
            elif part.kind == "redirect":
                redirect, feeds = self._redirect(part, depth)
                redirects.append(redirect)
                stdin = feeds or stdin
            else:
                raise ValueError(f"unexpected {part.kind!r} in a command")
        if words and words[0].text in _DECLARERS:
            self.syntax.assigned.extend(assignment_name(word.text) for word in words[1:])
        self.syntax.commands.append(RawCommand(
            tuple(words), tuple(assignments), tuple(redirects), stdin[0], stdin[1]))

    def _brace_words(self, word: Word) -> list[Word]:
        """The words bash makes of `word` by brace expansion (`cat .{env,}` reads `.env`).

        A word that is only known at run time keeps its braces and stays a pattern."""
        if word.dynamic or "{" not in word.raw:
            return [word]
        try:
            pieces = expand_braces(word.raw)
        except TooManyWords as error:
            self.syntax.hidden.append(str(error))
            return [word]
        if pieces is None:
            return [replace(word, pattern=has_unquoted_pattern(word.raw, braces=False))]
        words = []
        for piece in pieces:
            text = unquote(piece)
            words.append(Word(text=piece if text is None else text, raw=piece,
                              dynamic=text is None, pattern=has_unquoted_pattern(piece, False),
                              tilde=word.tilde or piece.startswith("~")))
        return words

    def _redirect(self, node: Any, depth: int) -> tuple[Redirect, tuple[str, str | None] | None]:
        """The redirect, and what it feeds to standard input when it does."""
        kind: str = node.type
        fd = getattr(node, "input", None)
        prefix = "" if fd is None else str(fd)
        output = node.output
        if not hasattr(output, "kind"):  # a descriptor: `2>&1`, `>&2`, `2>&-`
            # `0<&3` reads standard input from another descriptor, not what it had
            feeds = ("file", None) if fd == 0 or fd is None and kind.startswith("<") else None
            return Redirect(f"{prefix}{kind}{output}", "", False), feeds
        word = self._word(output, depth)
        to_stdin = fd in (None, 0)
        if kind in _HEREDOC_OPS:
            body = self._heredoc(node.heredoc, word)
            return Redirect(prefix + kind, "", False), ("heredoc", body) if to_stdin else None
        if kind == "<<<":
            text = None if word.dynamic else word.text + "\n"
            return Redirect(prefix + kind, "", False), ("herestring", text) if to_stdin else None
        writes = kind in _WRITE_OPS and not (word.known and word.text in _NOT_FILES)
        if not word.known:  # `< $HOME/.ssh/id_rsa`, `< ~/x`, `< .en?`: the file read is unseen
            self.syntax.late_paths.append(word.raw)
        feeds = ("file", None) if kind == "<" and to_stdin else None
        return Redirect(prefix + kind, word.text, writes), feeds

    def _heredoc(self, node: Any, delimiter: Word) -> str | None:
        """The here-document's body; hidden code in an unquoted one is refused."""
        if node is None:
            raise ValueError("here-document without a body")
        self.heredoc_spans.append(node.pos)
        value: str = node.value
        body = value.rsplit("\n", 1)[0] + "\n" if "\n" in value else ""
        quoted = delimiter.raw != delimiter.text or "\\" in delimiter.raw
        if not quoted:
            self.syntax.expanded.extend(_HEREDOC_NAMES.findall(body))
        if not quoted and any(mark in body for mark in ("$(", "`", "${", "$[")):
            self.syntax.hidden.append("a here-document expands `$(…)`, backticks or `${…}`")
            return None
        if not quoted and _expands(body):
            return None  # its reader gets the values, known only when it runs
        # unquoted, the shell drops the backslash before \, $, ` and a line break: its reader
        # gets `\'` where the command shows `\\'`
        return body if quoted else _HEREDOC_ESCAPE.sub(_unescaped, body)


def _expands(body: str) -> bool:
    """Whether an unquoted here-document expands a parameter: `$x`, and `$x` after an escaped
    backslash, but not a `$` a backslash escapes."""
    index = 0
    while index < len(body):
        if body[index] == "\\":
            index += 2
            continue
        if body[index] == "$" and _EXPANDS_AFTER_DOLLAR.match(body, index + 1):
            return True
        index += 1
    return False


def _unescaped(match: re.Match[str]) -> str:
    return "" if match.group(1) == "\n" else match.group(1)
