"""The vector matrices of the owners searched lately, bounded in bytes.

A server with thousands of users would otherwise keep every matrix it ever read (one per
owner and record kind, ~0.75 MB per 500 vectors of 384 floats): the least recently used
are dropped past :data:`MAX_BYTES`, and read again (one indexed range of the
``embeddings`` table) when their owner is searched next. Hits, misses and evictions are
counted for ``/healthz`` and ``bench cold``.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

import numpy as np
import numpy.typing as npt

Key = tuple[str, str]  # (table, owner)
Entry = tuple[int, list[str], dict[str, int], npt.NDArray[np.float32]]

MAX_BYTES = 512 * 2**20
# What a row costs beside its floats: its uuid in the list and in the index dict.
ROW_OVERHEAD_BYTES = 200


def entry_bytes(entry: Entry) -> int:
    return int(entry[3].nbytes) + ROW_OVERHEAD_BYTES * len(entry[1])


class MatrixCache:
    def __init__(self, max_bytes: int = MAX_BYTES) -> None:
        self.max_bytes = max_bytes
        self._entries: OrderedDict[Key, Entry] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self.hits = self.misses = self.evicted = 0

    def get(self, key: Key) -> Entry | None:
        """The cached entry (made the most recently used), whatever its version."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:
                self._entries.move_to_end(key)
            return entry

    def count(self, *, hit: bool) -> None:
        with self._lock:
            if hit:
                self.hits += 1
            else:
                self.misses += 1

    def put(self, key: Key, entry: Entry) -> None:
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self._bytes -= entry_bytes(old)
            self._entries[key] = entry
            self._bytes += entry_bytes(entry)
            # The newest entry stays even when it alone is over the bound: it is in use.
            while self._bytes > self.max_bytes and len(self._entries) > 1:
                _, dropped = self._entries.popitem(last=False)
                self._bytes -= entry_bytes(dropped)
                self.evicted += 1

    def status(self) -> dict[str, int]:
        with self._lock:
            return {
                "entries": len(self._entries),
                "bytes": self._bytes,
                "max_bytes": self.max_bytes,
                "hits": self.hits,
                "misses": self.misses,
                "evicted": self.evicted,
            }
