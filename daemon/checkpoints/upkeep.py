"""Storage upkeep after each checkpoint: pack loose objects, merge small packs, prune oldest first
to stay under the storage cap."""

from __future__ import annotations

import logging

from .errors import CheckpointError
from .manifest import Manifest
from .objects import BlobStore, disk_usage

log = logging.getLogger(__name__)

# Loose objects cost a file and a 4 KiB block each; this many are packed together, with deltas
# between versions of the same file, so storage grows with the bytes edited rather than file size.
LOOSE_LIMIT = 64
SMALL_PACK_BYTES = 8 * 2**20
MAX_SMALL_PACKS = 16


class Upkeep:
    """Keeps one store compact and under its cap; never drops the newest checkpoint."""

    def __init__(self, manifest: Manifest, blobs: BlobStore, max_store_bytes: int) -> None:
        self._manifest = manifest
        self._blobs = blobs
        self._cap = max_store_bytes
        self._pruned_at = 0

    def measure(self) -> int:
        """Bytes the store takes on disk: objects and manifest (with its write-ahead log)."""
        manifest = str(self._manifest.path)
        return self._blobs.disk_bytes() + sum(
            disk_usage(manifest + suffix) for suffix in ("", "-wal", "-shm"))

    def after_checkpoint(self) -> bool:
        """Run what is due; True when checkpoints were pruned (entries moved between them).
        Failures are logged, not raised: the checkpoint itself is already safely recorded."""
        try:
            if self._blobs.loose_count >= LOOSE_LIMIT:
                self._pack_loose()
                self._merge_small_packs()
            return self._prune_if_needed()
        except (OSError, CheckpointError) as exc:
            log.warning("checkpoints: storage upkeep in %s failed: %s", self._manifest.path.parent, exc)
            return True

    def _pack_loose(self) -> None:
        shas = self._blobs.loose_shas()
        # unreferenced loose objects (left by a checkpoint that failed) are dropped here
        self._blobs.repack(self._manifest.named(shas), drop_loose=shas)

    def _merge_small_packs(self) -> None:
        small = [name for name, size in self._blobs.packs() if size < SMALL_PACK_BYTES]
        if len(small) > MAX_SMALL_PACKS:
            shas = [sha for name in small for sha in self._blobs.pack_shas(name)]
            self._blobs.repack(self._manifest.named(shas), drop_packs=small)

    def _prune_if_needed(self) -> bool:
        estimate = int(self._manifest.meta().get("store_bytes", "0"))
        if estimate <= self._cap:
            return False
        if self._pruned_at > self._cap and estimate < self._pruned_at + self._cap // 16:
            return False  # the last prune could not get under the cap: do not redo it every time
        self._prune()
        return True

    def _prune(self) -> None:
        """Drop the oldest checkpoints until the store fits its cap; the newest always stays."""
        total = self.measure()
        while total > self._cap and self._manifest.count() > 1:
            dead = self._manifest.drop_oldest()
            loose = self._blobs.remove_loose(dead)
            total = self.measure()
            if total > self._cap and loose < len(dead):  # dead blobs sit in packs: rewrite them
                self._compact()
                total = self.measure()
        if total > self._cap:
            log.warning("checkpoints: %s takes %d bytes, over its cap, with one checkpoint left",
                        self._manifest.path.parent, total)
        self._manifest.set_meta({"store_bytes": str(total)})
        self._pruned_at = total

    def _compact(self) -> None:
        packs = [name for name, _size in self._blobs.packs()]
        self._blobs.repack(self._manifest.named(), drop_loose=self._blobs.loose_shas(), drop_packs=packs)
