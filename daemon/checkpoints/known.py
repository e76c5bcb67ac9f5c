"""The store's view of the workspace (the latest recorded entry of every path), packed small.

A dict of Entry objects costs about 600 bytes a file (the path, a tuple, the Entry and its six
field objects, the dict slot), and the daemon keeps one per workspace for as long as it runs:
300 MB at 500k files. Here each folder keeps its file names in one string and their entries as
fixed-size records (seq, size, mtime, perm, kind, the 20-byte sha, the inode number), CHUNK to a
bytes object: about 100 bytes a file. Entries are decoded on lookup; nothing is lost (an entry
that does not fit a record, or its note, is kept whole beside the records).

Known is a read-only Mapping[str, tuple[int, Entry]] for those who read it; the store changes it
with set() and refresh().
"""

from __future__ import annotations

import marshal
import struct
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, TypeVar, overload

from .state import ABSENT, Entry, EntryKind

# seq, size, mtime_ns, perm, code (kind and flags), sha as 20 raw bytes, inode number
_RECORD = struct.Struct("<qqqHB20sq")
_SIZE = _RECORD.size
_STAT = struct.Struct("<qq")  # size and mtime_ns, at offset 8 of a record
_INO = struct.Struct("<q")  # the inode number, last in a record
_INO_AT = _SIZE - _INO.size
_KINDS: tuple[EntryKind, ...] = ("absent", "file", "link", "skipped")
_CODES: dict[str, int] = {kind: code for code, kind in enumerate(_KINDS)}
_SHA, _NOTE, _WHOLE = 4, 8, 16  # flags: has a sha; has a note (in _notes); kept whole (in _whole)
_NO_SHA = bytes(20)
_LOW, _HIGH = -(2**63), 2**63 - 1
# A folder keeps its names in one string while small, each as "/", the name, NUL and its record
# number as one character (no name holds "/" or NUL, and no number is as high as "/"): one
# str.find finds a name and its number. Past SMALL names it keeps a dict of name to number.
SMALL = 32
# Records go in bytes objects of this many: each then fits CPython's small-object allocator
# (up to 512 bytes, the object's header included), whose memory goes back to the system once
# freed. A larger buffer comes from the C heap, where a few long-lived ones scattered among a
# full scan's garbage keep it all (ten records of 55 bytes did: +11 MiB at 500k files).
CHUNK = 8
Value = tuple[int, Entry]
_new_entry = tuple.__new__
_unpack = _RECORD.unpack_from
_T = TypeVar("_T")


class _Folder:
    """One folder's files: names (as '/a\0\x00/b\0\x01', or in index when large) and their
    records, CHUNK to a bytes object."""

    __slots__ = ("index", "names", "records")

    def __init__(self) -> None:
        self.names = ""
        self.index: dict[str, int] | None = None
        self.records: list[bytes] = []

    def find(self, name: str) -> int:
        """The record number of name, -1 when absent."""
        index = self.index
        if index is not None:
            return index.get(name, -1)
        at = self.names.find(f"/{name}\0")
        return -1 if at < 0 else ord(self.names[at + len(name) + 2])

    def add(self, name: str, record: bytes) -> None:
        index = self.index
        if index is not None:
            index[name] = len(index)
        else:
            records = self.records
            number = (len(records) - 1) * CHUNK + len(records[-1]) // _SIZE if records else 0
            if number < SMALL:
                self.names += f"/{name}\0{chr(number)}"
            else:
                self.index = {n: i for i, n in enumerate(self.each())}
                self.index[name] = number
                self.names = ""
        records = self.records
        if records and len(records[-1]) < CHUNK * _SIZE:
            records[-1] += record
        else:
            records.append(record)

    def replace(self, at: int, offset: int, data: bytes) -> None:
        """Put data at offset in record number at."""
        chunk, start = divmod(at, CHUNK)
        old = self.records[chunk]
        start = start * _SIZE + offset
        self.records[chunk] = old[:start] + data + old[start + len(data):]

    def each(self) -> Iterable[str]:
        """The names, in record order."""
        if self.index is not None:
            return self.index
        return [entry[:-2] for entry in self.names.split("/")[1:]]


class Known(Mapping[str, Value]):
    """path -> (seq of the checkpoint that recorded it, its Entry), for every path recorded."""

    def __init__(self) -> None:
        self._folders: dict[str, _Folder] = {}
        self._notes: dict[str, str] = {}     # path -> note, for entries with one
        self._whole: dict[str, Value] = {}   # path -> value, for entries no record can hold
        self._count = 0

    # -- reading ------------------------------------------------------------------------------

    @overload
    def get(self, path: str, /) -> Value | None: ...
    @overload
    def get(self, path: str, default: Value | _T, /) -> Value | _T: ...

    def get(self, path: str, default: Any = None, /) -> Any:
        folder_path, _, name = path.rpartition("/")
        folder = self._folders.get(folder_path)
        if folder is None or not name:
            return default
        index = folder.index
        if index is not None:
            at = index.get(name, -1)
        else:
            names = folder.names
            at = names.find(f"/{name}\0")
            if at >= 0:
                at = ord(names[at + len(name) + 2])
        if at < 0:
            return default
        seq, size, mtime, perm, code, sha, ino = _unpack(folder.records[at // CHUNK],
                                                        at % CHUNK * _SIZE)
        if code == 0 and size == -1 and mtime == -1 and perm == 0:
            return seq, ABSENT
        if code & _WHOLE:
            return self._whole[path]
        return seq, _new_entry(Entry, (_KINDS[code & 3], sha.hex() if code & _SHA else "", perm,
                                       size, mtime, self._notes[path] if code & _NOTE else "",
                                       ino))

    def __getitem__(self, path: str) -> Value:
        found = self.get(path)
        if found is None:
            raise KeyError(path)
        return found

    def __contains__(self, path: object) -> bool:
        if not isinstance(path, str):
            return False
        folder_path, _, name = path.rpartition("/")
        folder = self._folders.get(folder_path)
        return folder is not None and bool(name) and folder.find(name) >= 0

    def __iter__(self) -> Iterator[str]:
        for folder_path, folder in self._folders.items():
            if not folder_path:
                yield from folder.each()
                continue
            prefix = folder_path + "/"
            for name in folder.each():
                yield prefix + name

    def __len__(self) -> int:
        return self._count

    def under(self, folders: Iterable[str]) -> Iterator[str]:
        """Every path inside any of these folders ('' is the whole workspace), without looking at
        the rest: the folders are matched, not each path."""
        wanted = tuple(folders)
        if "" in wanted:
            yield from self
            return
        prefixes = tuple(folder + "/" for folder in wanted)
        for folder_path, folder in self._folders.items():
            if folder_path in wanted or folder_path.startswith(prefixes):
                prefix = folder_path + "/"
                for name in folder.each():
                    yield prefix + name

    def packed(self) -> bytes:
        """Everything it holds, as one bytes object (see unpacked())."""
        folders = {path: (folder.names, folder.index, folder.records)
                   for path, folder in self._folders.items()}
        whole = {path: (seq, tuple(entry)) for path, (seq, entry) in self._whole.items()}
        return marshal.dumps((self._count, self._notes, whole, folders))

    @classmethod
    def unpacked(cls, data: bytes) -> Known:
        """The Known that packed() was taken of, made of new objects. A Known built during a
        big checkpoint has its small objects scattered among that checkpoint's garbage, which
        then cannot be handed back to the system: packed, dropped, and unpacked once the
        garbage is freed, it lies together."""
        known = cls()
        known._count, known._notes, whole, folders = marshal.loads(data)
        known._whole = {path: (seq, Entry(*fields)) for path, (seq, fields) in whole.items()}
        for path, (names, index, records) in folders.items():
            folder = known._folders[path] = _Folder()
            folder.names, folder.index, folder.records = names, index, records
        return known

    # -- changing -----------------------------------------------------------------------------

    def set(self, path: str, seq: int, entry: Entry) -> None:
        """Record path's latest entry (replacing what was known)."""
        self.put(path, seq, entry.kind, entry.sha, entry.perm, entry.size, entry.mtime_ns, entry.note,
                 entry.ino, entry)

    def put(self, path: str, seq: int, kind: str, sha: str, perm: int, size: int, mtime_ns: int,
            note: str, ino: int = 0, entry: Entry | None = None) -> None:
        """set() from an entry's fields (as the manifest holds them), sparing an Entry per row."""
        code = _CODES.get(kind, -1)
        raw: bytes | None = _NO_SHA
        if sha:
            raw = _sha_bytes(sha)
            code |= _SHA
        if (code < 0 or raw is None or not 0 <= perm <= 0xFFFF
                or not (_LOW <= seq <= _HIGH and _LOW <= size <= _HIGH and _LOW <= mtime_ns <= _HIGH
                        and _LOW <= ino <= _HIGH)):
            # kept whole, its record a placeholder: nothing the record cannot hold is lost
            self._whole[path] = (seq, entry or Entry(kind, sha, perm, size, mtime_ns, note, ino))  # type: ignore[arg-type]
            self._place(path, _RECORD.pack(0, 0, 0, 0, _WHOLE, _NO_SHA, 0))
            self._notes.pop(path, None)
            return
        if note:
            code |= _NOTE
            self._notes[path] = note
        elif self._notes:
            self._notes.pop(path, None)
        if self._whole:
            self._whole.pop(path, None)
        self._place(path, _RECORD.pack(seq, size, mtime_ns, perm, code, raw, ino))

    def refresh(self, path: str, size: int, mtime_ns: int, ino: int) -> None:
        """New stat cache values for a known path whose content did not change (its seq stays)."""
        seq, entry = self[path]
        if path in self._whole or not (_LOW <= size <= _HIGH and _LOW <= mtime_ns <= _HIGH
                                       and _LOW <= ino <= _HIGH):
            self.set(path, seq, entry._replace(size=size, mtime_ns=mtime_ns, ino=ino))
            return
        folder_path, _, name = path.rpartition("/")
        folder = self._folders[folder_path]
        at = folder.find(name)
        folder.replace(at, 8, _STAT.pack(size, mtime_ns))
        folder.replace(at, _INO_AT, _INO.pack(ino))

    def _place(self, path: str, record: bytes) -> None:
        folder_path, _, name = path.rpartition("/")
        if not name:
            raise ValueError(f"not a file path: {path!r}")
        folder = self._folders.get(folder_path)
        if folder is None:
            folder = self._folders[folder_path] = _Folder()
        at = folder.find(name)
        if at < 0:
            folder.add(name, record)
            self._count += 1
        else:
            folder.replace(at, 0, record)


def _sha_bytes(sha: str) -> bytes | None:
    """The 20 bytes of a 40-digit lowercase hex sha; None for anything else (kept whole)."""
    if len(sha) != 40:
        return None
    try:
        raw = bytes.fromhex(sha)
    except ValueError:
        return None
    # 20 bytes from 40 characters: no spaces; no capitals: the same text as raw.hex()
    return raw if len(raw) == 20 and (sha.islower() or sha.isdigit()) else None


def from_rows(rows: Iterable[tuple[Any, ...]]) -> Known:
    """A Known from (path, seq, kind, sha, perm, size, mtime_ns, note, ino) rows, read as they
    come. A value of the wrong type raises ValueError or TypeError."""
    known = Known()
    put = known.put
    for path, seq, kind, sha, perm, size, mtime_ns, note, ino in rows:
        if type(path) is not str or type(kind) is not str or type(sha) is not str:
            raise TypeError(f"a text column holds {path!r}, {kind!r}, {sha!r}")
        put(path, int(seq), kind, sha, int(perm), int(size), int(mtime_ns), str(note), int(ino))
    return known


def from_mapping(values: Mapping[str, Value]) -> Known:
    known = Known()
    for path, (seq, entry) in values.items():
        known.set(path, seq, entry)
    return known
