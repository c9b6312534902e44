"""The vector matrices of the owners searched lately, bounded in bytes.

A server with thousands of users would otherwise keep every matrix it ever read (one per
owner and record kind, ~0.75 MB per 500 vectors of 384 floats): the least recently used
are dropped past the bound, and read again (one indexed range of the ``embeddings`` table)
when their owner is searched next. Hits, misses and evictions are counted for ``/healthz``
and ``bench cold``.

The bound is a quarter of the machine's memory, at least 512 MB
(``GRAPHRECALL_VECTOR_CACHE_MB`` sets it). It must hold every matrix one request searches
together: one graph of 1M facts has 1.5 GB of fact vectors and 1.1 GB of message vectors,
and get_context searches both; under a bound that holds only one, each search dropped the
other's and read its own again (seconds a request, and a server that grew past 20 GB on
the reads in flight).
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict

import numpy as np
import numpy.typing as npt

Key = tuple[str, str]  # (table, owner)
Entry = tuple[int, list[str], dict[str, int], npt.NDArray[np.float32]]

FLOOR_BYTES = 512 * 2**20


# A container's memory limit (cgroup v2, then v1): the machine's memory is not what a
# process in a container may use.
CGROUP_LIMITS = ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes")


def machine_bytes() -> int | None:
    """The memory this process may use: the machine's, or its container's limit when
    lower; None where the platform does not say."""
    try:
        total: int | None = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        total = None
    for path in CGROUP_LIMITS:
        try:
            with open(path) as f:
                text = f.read().strip()
        except OSError:
            continue
        if text.isdigit():  # "max": no limit
            total = int(text) if total is None else min(total, int(text))
        break
    return total


def default_max_bytes() -> int:
    total = machine_bytes()
    return FLOOR_BYTES if total is None else max(FLOOR_BYTES, total // 4)


MAX_BYTES = default_max_bytes()


def configure(megabytes: int | None) -> None:
    """The bound of the caches made from now on (None: the machine's default)."""
    global MAX_BYTES
    MAX_BYTES = default_max_bytes() if megabytes is None else megabytes * 2**20


# What a row costs beside its floats: its uuid in the list and in the index dict.
ROW_OVERHEAD_BYTES = 200


def entry_bytes(entry: Entry) -> int:
    return int(entry[3].nbytes) + ROW_OVERHEAD_BYTES * len(entry[1])


class MatrixCache:
    def __init__(self, max_bytes: int | None = None) -> None:
        self.max_bytes = MAX_BYTES if max_bytes is None else max_bytes
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
