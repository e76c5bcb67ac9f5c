"""Codex's `apply_patch` envelope parsed into the files it touches, and each file's new text.

A patch is gated file by file, so the parse must find every file Codex would change. It follows
Codex's own lenient parser (codex-rs/apply-patch): markers may carry surrounding whitespace, a
heredoc wrapper (`<<'EOF'` … `EOF`) is stripped, an Update hunk's first chunk may omit its
`@@`. Anything it cannot read raises PatchError, and the hook denies the call: a patch intentd
cannot read is not let through on the hope that Codex reads it the same way.
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass, field

BEGIN, END = "*** Begin Patch", "*** End Patch"
ADD, DELETE, UPDATE = "*** Add File: ", "*** Delete File: ", "*** Update File: "
MOVE, EOF_MARK = "*** Move to: ", "*** End of File"
PATCH_PROGRAMS = ("apply_patch", "applypatch")
MAX_FILE_BYTES = 8 * 1024 * 1024  # a file larger than this is not read for the preview
# `apply_patch <<'EOF' … EOF`, optionally after `cd DIR &&`: the only forms Codex runs as a
# patch from a shell command (its tree-sitter query); the heredoc body is the patch.
_HEREDOC = re.compile(
    r"\A\s*(?:cd\s+(?P<dir>'[^']*'|\"[^\"]*\"|[^\s'\"&;|]+)\s*&&\s*)?"
    r"(?P<prog>apply_patch|applypatch)\s*<<-?\s*(?P<q>['\"]?)(?P<tag>\w+)(?P=q)[ \t]*\n"
    r"(?P<body>.*?)\n[ \t]*(?P=tag)[ \t]*\n?\s*\Z", re.DOTALL)


class PatchError(ValueError):
    """The patch cannot be read, or does not apply to the file it updates."""


@dataclass
class Chunk:
    context: str | None
    old: list[str] = field(default_factory=list)
    new: list[str] = field(default_factory=list)
    end_of_file: bool = False


@dataclass
class Hunk:
    kind: str                   # "add" | "delete" | "update"
    path: str
    content: str = ""           # add: the new file's text
    move_to: str | None = None  # update: the file's new name
    chunks: list[Chunk] = field(default_factory=list)


@dataclass(frozen=True)
class FileChange:
    """One file a patch touches: written with `content`, or deleted (content None)."""

    path: str
    content: str | None


def shell_patch(command: str) -> tuple[str, str | None] | None:
    """(patch, cd folder) when a shell command is one Codex runs as apply_patch; else None.

    PatchError when the command names apply_patch with a patch but not in a form read here:
    Codex might still apply it, so it must not pass as an ordinary command.
    """
    match = _HEREDOC.match(command)
    if match is not None:
        folder = match.group("dir")
        if folder is not None:
            folder = shlex.split(folder)[0] if folder[0] in "'\"" else folder
        return match.group("body"), folder
    if BEGIN in command and any(re.search(rf"\b{name}\b", command) for name in PATCH_PROGRAMS):
        raise PatchError("this command runs apply_patch in a form intentd does not read; send "
                         "the patch with the apply_patch tool")
    return None


def parse(text: str) -> list[Hunk]:
    """The hunks of a patch (Codex's lenient reading); PatchError when it is not one."""
    lines = text.strip().splitlines()
    if (len(lines) >= 4 and lines[0] in ("<<EOF", "<<'EOF'", '<<"EOF"')
            and lines[-1].endswith("EOF")):
        lines = lines[1:-1]
    if not lines or lines[0].strip() != BEGIN:
        raise PatchError(f"the first line of the patch must be '{BEGIN}'")
    if len(lines) < 2 or lines[-1].strip() != END:
        raise PatchError(f"the last line of the patch must be '{END}'")
    body, hunks, index = lines[1:-1], [], 0
    while index < len(body):
        hunk, used = _hunk(body, index)
        hunks.append(hunk)
        index += used
    if not hunks:
        raise PatchError("the patch changes no file")
    return hunks


def _hunk(lines: list[str], start: int) -> tuple[Hunk, int]:
    header = lines[start].strip()
    if header.startswith(ADD):
        added, used = [], 1
        for line in lines[start + 1:]:
            if not line.startswith("+"):
                break
            added.append(line[1:] + "\n")
            used += 1
        return Hunk("add", _path(header[len(ADD):]), content="".join(added)), used
    if header.startswith(DELETE):
        return Hunk("delete", _path(header[len(DELETE):])), 1
    if header.startswith(UPDATE):
        hunk, used = Hunk("update", _path(header[len(UPDATE):])), 1
        if start + 1 < len(lines) and lines[start + 1].startswith(MOVE):
            hunk.move_to = _path(lines[start + 1][len(MOVE):])
            used += 1
        while start + used < len(lines):
            line = lines[start + used]
            if not line.strip():
                used += 1
                continue
            if line.startswith("*"):
                break
            chunk, taken = _chunk(lines, start + used, first=not hunk.chunks)
            hunk.chunks.append(chunk)
            used += taken
        if not hunk.chunks:
            raise PatchError(f"the Update File hunk for {hunk.path!r} is empty")
        return hunk, used
    raise PatchError(f"{header!r} is not a valid hunk header (line {start + 2} of the patch)")


def _path(raw: str) -> str:
    """The path as Codex takes it: the rest of the (trimmed) header line, spaces and all."""
    if not raw.strip() or "\x00" in raw:
        raise PatchError("a hunk names no file")
    return raw


def _chunk(lines: list[str], start: int, first: bool) -> tuple[Chunk, int]:
    head = lines[start]
    if head == "@@":
        chunk, begin = Chunk(None), start + 1
    elif head.startswith("@@ "):
        chunk, begin = Chunk(head[3:]), start + 1
    elif first:
        chunk, begin = Chunk(None), start
    else:
        raise PatchError(f"expected an @@ line, got {head!r}")
    taken = 0
    for line in lines[begin:]:
        if line == EOF_MARK:
            if taken == 0:
                break
            chunk.end_of_file = True
            taken += 1
            break
        if line == "":
            chunk.old.append("")
            chunk.new.append("")
        elif line[0] == " ":
            chunk.old.append(line[1:])
            chunk.new.append(line[1:])
        elif line[0] == "+":
            chunk.new.append(line[1:])
        elif line[0] == "-":
            chunk.old.append(line[1:])
        elif taken == 0:
            raise PatchError(f"unexpected line in an update hunk: {line!r}")
        else:
            break
        taken += 1
    if taken == 0:
        raise PatchError("an update hunk has no lines")
    return chunk, taken + (begin - start)


def changes(text: str, base: str) -> list[FileChange]:
    """The files the patch touches, in order, with each one's text after it (None: deleted).

    Paths stay as the patch gives them (relative to `base`, the folder Codex applies the patch
    in); `base` is used to read the files an Update changes.
    """
    result: list[FileChange] = []
    for hunk in parse(text):
        if hunk.kind == "add":
            result.append(FileChange(hunk.path, hunk.content))
        elif hunk.kind == "delete":
            result.append(FileChange(hunk.path, None))
        else:
            after = apply_chunks(_read(os.path.join(base, hunk.path), hunk.path), hunk.chunks,
                                 hunk.path)
            if hunk.move_to is not None and hunk.move_to != hunk.path:
                result.append(FileChange(hunk.move_to, after))
                result.append(FileChange(hunk.path, None))
            else:
                result.append(FileChange(hunk.path, after))
    return result


def _read(path: str, shown: str) -> str:
    try:
        if os.path.getsize(path) > MAX_FILE_BYTES:
            raise PatchError(f"{shown} is too large to show the patch's result")
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except FileNotFoundError:
        raise PatchError(f"the patch updates {shown}, which does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise PatchError(f"cannot read {shown}: {exc}") from None


def apply_chunks(text: str, chunks: list[Chunk], shown: str) -> str:
    """The file's text after the chunks, matched as Codex matches them (exact, then ignoring
    trailing whitespace, then surrounding whitespace)."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the final newline is put back below
    edits: list[tuple[int, int, list[str]]] = []
    cursor = 0
    for chunk in chunks:
        if chunk.context is not None:
            found = _seek(lines, [chunk.context], cursor, False)
            if found is None:
                raise PatchError(f"the patch does not apply to {shown}: context "
                                 f"{chunk.context!r} not found")
            cursor = found + 1
        if not chunk.old:  # a pure insertion goes at the end of the file
            edits.append((len(lines), 0, chunk.new))
            continue
        old, new = chunk.old, chunk.new
        found = _seek(lines, old, cursor, chunk.end_of_file)
        if found is None and old[-1] == "":
            old, new = old[:-1], new[:-1] if new and new[-1] == "" else new
            found = _seek(lines, old, cursor, chunk.end_of_file)
        if found is None:
            raise PatchError(f"the patch does not apply to {shown}: lines not found: "
                             f"{chr(10).join(chunk.old)[:200]!r}")
        edits.append((found, len(old), new))
        cursor = found + len(old)
    for position, length, new in sorted(edits, key=lambda edit: edit[0], reverse=True):
        lines[position:position + length] = new
    return "\n".join(lines) + "\n"


def _seek(lines: list[str], pattern: list[str], start: int, at_end: bool) -> int | None:
    if not pattern:
        return start
    if len(pattern) > len(lines):
        return None
    first = len(lines) - len(pattern) if at_end else start
    for norm in (_same, str.rstrip, str.strip):
        wanted = [norm(line) for line in pattern]
        for index in range(max(first, 0), len(lines) - len(pattern) + 1):
            if all(norm(lines[index + k]) == wanted[k] for k in range(len(pattern))):
                return index
    return None


def _same(line: str) -> str:
    return line
