"""Storage upkeep after a checkpoint: move the inbox into git, pack loose objects, merge small
packs, prune to stay under the storage cap.

Pruning is built not to be turned against the person. Dropping the oldest first, as it did, let
one agent command that writes more than the cap (in files under the size cap) make the next
upkeep drop every checkpoint from before the agent's work. Now:
- the newest checkpoint is never dropped, and what the workspace holds now, which it needs,
  no drop can free: so the older checkpoints keep HISTORY_ROOM of the cap beyond it, however
  much it takes (the store then goes over its cap);
- the checkpoint taken before each session's first call, and the baseline, are kept last:
  never dropped while the history is within HISTORY_ROOM (reckoned in blob bytes: the
  manifest's rows are not spread over them), past it only when no other checkpoint keeps
  anything alive;
- a saved version that a later one replaced is needed by the checkpoints from the one that
  saved it to the one that replaced it; each checkpoint's share of those bytes says what it
  keeps stored (kept_alive). The checkpoint with the largest share goes first, the oldest among
  equals; one with none (it would cost a restore point and free nothing) only when no
  checkpoint has any. An agent rewriting big files command after command makes the
  checkpoints with the largest shares: they go before the person's.
Dropping a checkpoint folds what it saved into the next one unless that one saved it again, so
every checkpoint left restores what it did before (Manifest.drop). The shares are worked out
again after every DROP_BATCH drops: once per drop made a prune of many checkpoints quadratic.
Shares measure bytes, not whose work was saved: an agent can spread its own old versions over
many checkpoints that save almost nothing, so that each has a small share. What it cannot do
that way is push out a checkpoint kept last while any of its own still keeps something alive.
"""

from __future__ import annotations

import bisect
import logging

from . import inbox
from .errors import CheckpointError
from .manifest import Manifest
from .objects import BlobStore, disk_usage, make_blob

log = logging.getLogger(__name__)

# Loose objects cost a file and a 4 KiB block each (1 MiB for this many); this many are packed
# together (fewer, larger batches: each one starts git, and the next checkpoint waits for it), with deltas
# between versions of the same file, so storage grows with the bytes edited rather than file size.
LOOSE_LIMIT = 256
SMALL_PACK_BYTES = 8 * 2**20
MAX_SMALL_PACKS = 16
# A prune aims this far under the cap, so the next checkpoints do not each prune (and repack) again.
PRUNE_ROOM = 8  # 1/8 of the cap
# The history (what older checkpoints hold beyond the newest state) always has this much of the
# cap, however much the newest state takes.
HISTORY_ROOM = 4  # 1/4 of the cap
# Checkpoints dropped between two workings-out of the shares (each reads every replaced version).
DROP_BATCH = 16


class Upkeep:
    """Keeps one store compact and under its cap; never drops the newest checkpoint."""

    def __init__(self, manifest: Manifest, blobs: BlobStore, max_store_bytes: int) -> None:
        self._manifest = manifest
        self._blobs = blobs
        self._cap = max_store_bytes
        self._pruned_at = 0
        self._dropped = 0

    def measure(self) -> int:
        """Bytes the store takes on disk: objects and manifest (with its write-ahead log)."""
        manifest = str(self._manifest.path)
        return self._blobs.disk_bytes() + sum(
            disk_usage(manifest + suffix) for suffix in ("", "-wal", "-shm"))

    def held(self) -> int:
        """Bytes the store holds, what pruning weighs against the cap: objects, and the
        manifest's pages in use. Not its write-ahead log nor its free pages (an emptied inbox
        leaves them): with those, a prune went on dropping checkpoints, the person's among
        them, for bytes no drop could free."""
        return self._blobs.disk_bytes() + self._manifest.used_bytes()

    def due(self) -> bool:
        """Whether after_checkpoint has anything to do (cheap: counters kept by the manifest)."""
        return (self._blobs.loose_count >= LOOSE_LIMIT or self._inbox_due()
                or self._prune_due())

    def _inbox_due(self) -> bool:
        return (self._manifest.inbox_rows >= inbox.MOVE_BLOBS
                or self._manifest.inbox_bytes >= inbox.MOVE_BYTES)

    def after_checkpoint(self) -> bool:
        """Run what is due; True when checkpoints were dropped (entries moved between them).
        Failures are logged, not raised: the checkpoints themselves are already safely recorded."""
        self._dropped = 0
        try:
            packed = False
            if self._inbox_due():
                self.move_inbox()
                packed = True
            if self._blobs.loose_count >= LOOSE_LIMIT:
                self._pack_loose()
                packed = True
            if packed:
                self._merge_small_packs()
            if self._prune_due():
                self._prune()
        except (OSError, CheckpointError) as exc:
            log.warning("checkpoints: storage upkeep in %s failed: %s", self._manifest.path.parent, exc)
        return self._dropped > 0

    def move_inbox(self) -> None:
        """The inbox's blobs into git, as one pack, then out of the inbox. Blobs no checkpoint
        holds any more are dropped; a file's versions go in one after another, so that each
        is stored as a delta of the one before. A failure leaves the inbox as it was."""
        rows = self._manifest.inbox()
        if not rows:
            return
        paths = dict(self._manifest.named(sha for sha, _data in rows))
        live = sorted((paths[sha], at, sha, data) for at, (sha, data) in enumerate(rows)
                      if sha in paths)
        where = str(self._manifest.path.parent)
        if live:
            self._blobs.import_blobs([make_blob(inbox.content(sha, data, where))
                                      for _path, _at, sha, data in live])
        self._manifest.empty_inbox(sha for sha, _data in rows)

    def _pack_loose(self) -> None:
        shas = self._blobs.loose_shas()
        # unreferenced loose objects (left by a checkpoint that failed) are dropped here
        self._blobs.repack(self._manifest.named(shas), drop_loose=shas)

    def _merge_small_packs(self) -> None:
        small = [name for name, size in self._blobs.packs() if size < SMALL_PACK_BYTES]
        if len(small) > MAX_SMALL_PACKS:
            shas = [sha for name in small for sha in self._blobs.pack_shas(name)]
            self._blobs.repack(self._manifest.named(shas), drop_packs=small)

    def _prune_due(self) -> bool:
        estimate = self._manifest.store_bytes
        if estimate <= self._cap:
            return False
        # the last prune could not get under the cap: do not redo it every time
        return not (self._pruned_at > self._cap and estimate < self._pruned_at + self._cap // 16)

    def _prune(self) -> None:
        """Drop checkpoints until the store fits its cap (see the module's docstring), then
        compact once. Another round only if the estimate of what dropping frees fell short."""
        total = self.held()
        while total > self._cap and self._manifest.count() > 1:
            dropped, in_packs = self._drop(total)
            if in_packs:
                self._compact()
            total = self.held()
            if not dropped:
                break
        if total > self._cap:
            log.warning("checkpoints: %s takes %d bytes, over its cap of %d, with %d checkpoints "
                        "left: the newest state and the history kept beside it",
                        self._manifest.path.parent, total, self._cap, self._manifest.count())
        self._manifest.set_meta({"store_bytes": str(total)})
        self._pruned_at = total

    def _drop(self, total: int) -> tuple[bool, bool]:
        """Drop checkpoints, those keeping the most replaced content alive first, until the
        store, less what they alone hold, should fit with room to grow; whether any was
        dropped, and whether some of their blobs sit in packs (a compaction frees them).

        What a dead blob frees is estimated from its size, scaled by the objects' bytes on disk
        per byte of content (packs hold deltas, so nothing more exact exists before a repack);
        a dropped checkpoint's rows, by their length."""
        held = self._manifest.holdings()
        # blobs only: the manifest's rows spread over them made a small replaced version look
        # big enough to cost the person's checkpoint
        per_byte = self._blobs.disk_bytes() / max(1, sum(held.current.values())
                                                  + sum(held.older.values()))
        newest_state = int(sum(held.current.values()) * per_byte)
        history = int(sum(held.older.values()) * per_byte)
        target = max(self._cap - self._cap // PRUNE_ROOM, newest_state + self._cap // HISTORY_ROOM)
        seqs = self._manifest.seqs()
        kept_last = self._manifest.kept_last()
        # those kept last go only once the history is over its room, and then last
        protected = kept_last if history <= self._cap // HISTORY_ROOM else set()
        dropped = in_packs = False
        while total > target and len(seqs) > 1:
            order = _drop_order(seqs, held.superseded, kept_last, protected)
            if not order:
                break
            for seq in order:
                rows = self._manifest.row_bytes(seq)
                dead, inboxed = self._manifest.drop(seq)
                seqs.remove(seq)
                self._dropped += 1
                dropped = True
                in_packs |= self._blobs.remove_loose(dead) + inboxed < len(dead)
                total -= int(sum(held.size(sha) for sha in dead) * per_byte) + rows
                if total <= target:
                    break
        return dropped, in_packs

    def _compact(self) -> None:
        self.move_inbox()  # pack-objects packs what git holds: every live blob, then
        packs = [name for name, _size in self._blobs.packs()]
        self._blobs.repack(self._manifest.named(), drop_loose=self._blobs.loose_shas(), drop_packs=packs)


def _drop_order(seqs: list[int], versions: list[tuple[int, int, int]], kept_last: set[int],
                protected: set[int]) -> list[int]:
    """The next checkpoints to drop, at most DROP_BATCH of them (the shares are worked out again
    after them: a share only grows as the checkpoints beside it go); never the newest nor one
    protected, and those kept last (each session's first, the baseline) only when no other
    keeps anything alive. When none does but the store is still over (the manifest's own rows:
    checkpoints that saved nothing new), the oldest, again others before those kept last."""
    shares = kept_alive(seqs, versions)
    older = [q for q in seqs[:-1] if q not in protected]
    others = [q for q in older if q not in kept_last]
    for group in (others, [q for q in older if q in kept_last]):
        ranked = sorted((q for q in group if shares[q] > 0), key=lambda q: (-shares[q], q))
        if ranked:
            return ranked[:DROP_BATCH]
    return (others or older)[:1]


def kept_alive(seqs: list[int], versions: list[tuple[int, int, int]]) -> dict[int, float]:
    """Each checkpoint's share of the replaced content that the checkpoints (seqs, in order)
    keep stored: a version saved at one and replaced at another is needed by the checkpoints
    from the first up to the second, and its bytes are shared out evenly between those left.
    A version none of them needs any more is counted by none (dropping frees it)."""
    density = [0.0] * (len(seqs) + 1)
    for start, end, size in versions:
        first, last = bisect.bisect_left(seqs, start), bisect.bisect_left(seqs, end)
        if last > first:
            share = size / (last - first)
            density[first] += share
            density[last] -= share
    shares, running = {}, 0.0
    for at, seq in enumerate(seqs):
        running += density[at]
        shares[seq] = running
    return shares
