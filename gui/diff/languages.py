"""Small token rules for common languages: keywords, strings, comments, numbers (one regex each)."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

_NUMBER = r"\b(?:0[xX][0-9a-fA-F_]+|\d[\d_]*(?:\.\d+)?(?:[eE][+-]?\d+)?)\b"
_DQ = r'"(?:\\.|[^"\\])*"?'
_SQ = r"'(?:\\.|[^'\\])*'?"


@dataclass(frozen=True)
class Language:
    name: str
    pattern: re.Pattern[str]  # groups: comment, string, number, keyword


def _language(name: str, keywords: str, comment: str, strings: str = f"{_DQ}|{_SQ}") -> Language:
    words = "|".join(sorted(keywords.split(), key=len, reverse=True))
    return Language(name, re.compile(
        rf"(?P<comment>{comment})|(?P<string>{strings})|(?P<number>{_NUMBER})"
        rf"|(?P<keyword>\b(?:{words})\b)"))


PYTHON = _language("python", """False None True and as assert async await break class continue
    def del elif else except finally for from global if import in is lambda nonlocal not or pass
    raise return try while with yield match case self""", r"#.*")
C_LIKE = _language("c-like", """auto bool break case catch char class const constexpr continue
    default delete do double else enum explicit extern false final float for fn func go goto if
    impl import include int interface let long match mod mut namespace new nil null nullptr
    package private protected pub public return self short signed sizeof static struct super
    switch template this throw throws true try type typedef typename union unsigned use using
    var virtual void volatile while defer chan map range select fallthrough trait where crate""",
                   r"//.*|/\*.*?(?:\*/|$)")
JAVASCRIPT = _language("javascript", """async await break case catch class const continue debugger
    default delete do else export extends false finally for from function if import in
    instanceof interface let new null of return static super switch this throw true try type
    typeof undefined var void while with yield""", r"//.*|/\*.*?(?:\*/|$)",
                       rf"{_DQ}|{_SQ}|`(?:\\.|[^`\\])*`?")
SHELL = _language("shell", """if then else elif fi for while until do done case esac in function
    return local export readonly set unset echo exit source""", r"(?<![\w$])#.*")
YAML = _language("yaml", "true false null yes no on off", r"(?<!\S)#.*")
JSON = _language("json", "true false null", r"(?!x)x")
TOML = _language("toml", "true false", r"#.*")

_BY_EXTENSION = {
    ".py": PYTHON, ".pyi": PYTHON, ".pyw": PYTHON,
    ".c": C_LIKE, ".h": C_LIKE, ".cc": C_LIKE, ".cpp": C_LIKE, ".hpp": C_LIKE, ".cxx": C_LIKE,
    ".java": C_LIKE, ".kt": C_LIKE, ".go": C_LIKE, ".rs": C_LIKE, ".cs": C_LIKE,
    ".swift": C_LIKE, ".scala": C_LIKE,
    ".js": JAVASCRIPT, ".jsx": JAVASCRIPT, ".mjs": JAVASCRIPT, ".cjs": JAVASCRIPT,
    ".ts": JAVASCRIPT, ".tsx": JAVASCRIPT,
    ".sh": SHELL, ".bash": SHELL, ".zsh": SHELL,
    ".yaml": YAML, ".yml": YAML, ".json": JSON, ".toml": TOML,
}


def language_for(path: str | None) -> Language | None:
    if not path:
        return None
    name = os.path.basename(path)
    if name in ("Makefile", "Dockerfile"):
        return SHELL
    return _BY_EXTENSION.get(os.path.splitext(name)[1].lower())
