"""Shell words as the analysis sees them, plus the character and variable-name checks on them."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Word:
    """A word of a simple command.

    `text` has quotes removed (bashlex's view). `dynamic` means part of its value is only
    known when it runs ($X, $(…), backticks); `pattern` means it holds an unquoted glob or
    brace expansion, so the shell may turn it into other words (a file named `-delete`
    matches `*`); `tilde` means it starts with `~`, which expands outside the workspace.
    """

    text: str
    raw: str
    dynamic: bool = False
    pattern: bool = False
    tilde: bool = False

    @property
    def known(self) -> bool:
        """True when the shell passes exactly `text` as one argument."""
        return not (self.dynamic or self.pattern or self.tilde)


def literal(text: str) -> Word:
    """A word whose value is known (used for words the analysis adds, such as xargs' echo)."""
    return Word(text=text, raw=text)


def has_unquoted_pattern(raw: str, braces: bool = True) -> bool:
    """Whether `raw` (a word as written) has a glob (or, with `braces`, a brace
    expansion) outside quotes."""
    if raw in ("[", "{}"):
        return False  # `[ … ]` and find's `{}` are literal to bash
    quote = ""
    escaped = False
    brace = False
    previous = ""
    for char in raw:
        unquoted = not (escaped or quote)
        if escaped:
            escaped = False
        elif char == "\\" and quote != "'":
            escaped = True
        elif quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char in "*?[":
            return True
        elif char == "{" and braces:
            brace = True
        elif brace and (char == "," or (char == "." and previous == ".")):
            return True
        previous = char if unquoted else ""
    return False


# Characters a person may read as a separator or as ASCII punctuation, or that hide text.
_SHELL_ASCII = set(";&|<>()$`'\"\\ \t\n*?[]{}#=~!-/.,:")


def suspicious_character(text: str) -> str | None:
    """Name the first character that disguises what the command does, if any.

    Line and paragraph separators, non-ASCII spaces, control and format characters
    (zero-width, bidi overrides) and lookalikes of shell punctuation (fullwidth `；`,
    Greek question mark) are refused: a person approving the command could misread it.
    """
    for char in text:
        if char.isascii():
            if char.isprintable() or char in "\t\n":
                continue
            return _describe(char)
        category = unicodedata.category(char)
        if category[0] in "ZC":
            return _describe(char)
        folded = unicodedata.normalize("NFKC", char)
        if any(c in _SHELL_ASCII for c in folded):
            return _describe(char)
    return None


def _describe(char: str) -> str:
    name = unicodedata.name(char, "control character")
    return f"U+{ord(char):04X} ({name})"


def unquote(raw: str) -> str | None:
    """The argument bash makes of `raw`, a word without expansions: quotes and escapes removed.

    None when that cannot be told here: a `$` or backtick outside single quotes (an
    expansion, `$'…'` or `$"…"`), or an unbalanced quote.
    """
    out: list[str] = []
    quote = ""
    index = 0
    while index < len(raw):
        char = raw[index]
        index += 1
        if quote == "'":
            if char == "'":
                quote = ""
            else:
                out.append(char)
        elif char in "$`":
            return None
        elif char == "\\" and index < len(raw):
            following = raw[index]
            index += 1
            if following == "\n":
                continue  # a line continuation, in or out of double quotes
            if quote and following not in '$`"\\':
                out.append(char)  # inside "…" a backslash only escapes these
            out.append(following)
        elif quote == '"':
            if char == '"':
                quote = ""
            else:
                out.append(char)
        elif char in "'\"":
            quote = char
        else:
            out.append(char)
    return None if quote else "".join(out)


def plain_ascii(text: str) -> bool:
    """Whether every character is printable ASCII (command names must be)."""
    return text.isascii() and text.isprintable()


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

# Variables that change which program runs or what it loads: setting one needs a person.
_RISKY_NAMES = frozenset({
    "PATH", "IFS", "ENV", "BASH_ENV", "CDPATH", "GLOBIGNORE", "SHELLOPTS", "BASHOPTS",
    "PS4", "PROMPT_COMMAND", "HOME", "XDG_CONFIG_HOME", "PAGER", "MANPAGER", "GIT_PAGER",
    "EDITOR", "VISUAL", "SHELL", "NODE_OPTIONS", "NODE_PATH", "PERL5LIB", "PERL5OPT",
    "PERLLIB", "RUBYOPT", "RUBYLIB", "GCONV_PATH", "LOCPATH", "HOSTALIASES",
    "RIPGREP_CONFIG_PATH", "LESSOPEN", "LESSCLOSE", "SSH_ASKPASS", "SUDO_ASKPASS",
    "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "GREP_OPTIONS", "TAR_OPTIONS", "TMPDIR",
    "BROWSER", "TERMINFO", "MAGIC", "JQ_LIBRARY_PATH",
    # zsh ties these arrays to PATH, CDPATH, FPATH, MANPATH, MODULE_PATH
    "path", "cdpath", "fpath", "manpath", "module_path",
})
_RISKY_PREFIXES = ("LD_", "DYLD_", "PYTHON", "GIT_", "BASH_FUNC_", "NPM_CONFIG_",
                   "npm_config_", "PIP_", "MALLOC_", "GLIBC_")

# Variables that only change formatting: a read-only command stays read-only with them.
_HARMLESS_NAMES = frozenset({
    "LANG", "LANGUAGE", "TZ", "NO_COLOR", "CLICOLOR", "CLICOLOR_FORCE", "FORCE_COLOR",
    "TERM", "COLUMNS", "LINES", "TIME_STYLE", "BLOCK_SIZE", "LS_COLORS", "GREP_COLOR",
    "GREP_COLORS", "POSIXLY_CORRECT", "CI",
})
# Variables whose values are no secret: expanding them leaves a command auto-approvable.
_PLAIN_VARIABLES = frozenset({
    "HOME", "PWD", "OLDPWD", "USER", "LOGNAME", "SHELL", "PATH", "LANG", "LANGUAGE", "TERM",
    "HOSTNAME", "HOSTTYPE", "OSTYPE", "MACHTYPE", "UID", "EUID", "PPID", "SHLVL", "TMPDIR",
    "TZ", "COLUMNS", "LINES", "RANDOM", "SECONDS", "LINENO", "BASHPID", "BASH_VERSION", "_",
    "XDG_RUNTIME_DIR", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME",
    "VIRTUAL_ENV", "CONDA_PREFIX", "JAVA_HOME", "GOPATH", "GOROOT", "CARGO_HOME", "NODE_ENV",
    "EDITOR", "CI",
})
_PROXY_NAMES = frozenset({"http_proxy", "https_proxy", "ftp_proxy", "all_proxy", "no_proxy"})


def assignment_name(text: str) -> str:
    """The variable a `NAME=value` or `NAME+=value` word sets ("" if it is not one)."""
    match = _NAME.match(text)
    if match is None:
        return ""
    rest = text[match.end():]
    return match.group() if rest.startswith(("=", "+=")) else ""


def is_risky_name(name: str) -> bool:
    """Whether setting `name` changes which program runs or what it loads."""
    return name in _RISKY_NAMES or name.startswith(_RISKY_PREFIXES)


def is_harmless_assignment(text: str) -> bool:
    """Whether `text` (NAME=value) leaves a read-only command read-only.

    An allowlist, because the risky set is open-ended: formatting variables, and the
    lowercase names scripts use for their own variables (proxy settings excepted).
    Locale values must not be paths, which would load locale data from anywhere.
    """
    name = assignment_name(text)
    if not name or is_risky_name(name):
        return False
    value = text.split("=", 1)[1]
    if name in _HARMLESS_NAMES or name.startswith("LC_"):
        return "/" not in value or name == "TZ"
    return name.islower() and name not in _PROXY_NAMES


def is_plain_variable(name: str) -> bool:
    """Whether `$name` may be expanded unasked: a short list of variables that hold no
    secret (HOME, PWD, USER, PATH, …) and the locale. Anything else may hold a token."""
    return name in _PLAIN_VARIABLES or name.startswith("LC_")
