"""Storage upkeep after a checkpoint: move the inbox into git, pack loose objects, merge small
packs, prune oldest first to stay under the storage cap."""

from __future__ import annotations

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
        """Drop the oldest checkpoints until the store fits its cap, then compact once; the newest
        always stays. Another round only if the estimate of what dropping frees fell short."""
        total = self.measure()
        while total > self._cap and self._manifest.count() > 1:
            if self._drop_oldest(total):
                self._compact()
            total = self.measure()
        if total > self._cap:
            log.warning("checkpoints: %s takes %d bytes, over its cap, with one checkpoint left",
                        self._manifest.path.parent, total)
        self._manifest.set_meta({"store_bytes": str(total)})
        self._pruned_at = total

    def _drop_oldest(self, total: int) -> bool:
        """Drop oldest checkpoints until the store, less what they alone hold, should fit with
        room to grow; True when some of their blobs sit in packs (a compaction frees them).

        What a dead blob frees is estimated from its size, scaled by the store's bytes on disk
        per byte of content: packs hold deltas, so nothing more exact exists before a repack."""
        sizes = self._manifest.blob_sizes()
        per_byte = total / max(1, sum(sizes.values()))
        target = self._cap - self._cap // PRUNE_ROOM
        in_packs = False
        while total > target and self._manifest.count() > 1:
            dead, inboxed = self._manifest.drop_oldest()
            self._dropped += 1
            in_packs |= self._blobs.remove_loose(dead) + inboxed < len(dead)
            total -= int(sum(sizes.get(sha, 0) for sha in dead) * per_byte)
        return in_packs

    def _compact(self) -> None:
        self.move_inbox()  # pack-objects packs what git holds: every live blob, then
        packs = [name for name, _size in self._blobs.packs()]
        self._blobs.repack(self._manifest.named(), drop_loose=self._blobs.loose_shas(), drop_packs=packs)
