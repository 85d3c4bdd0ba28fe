"""A bounded, thread-safe LRU cache with hit/miss counters that tests can read."""
from __future__ import annotations

import collections
import dataclasses
import threading
from typing import Callable, Hashable


@dataclasses.dataclass(frozen=True)
class CacheInfo:
    hits: int
    misses: int
    size: int
    maxsize: int


class LRUCache:
    """``get_or_create(key, create)``: the cached value, or ``create()`` stored under ``key``.

    ``create`` runs outside the lock, so a slow compilation does not block other signatures;
    two threads missing the same key at once may both create, and the first one stored wins.
    """

    def __init__(self, maxsize: int = 256):
        if maxsize < 1:
            raise ValueError("maxsize must be at least 1")
        self.maxsize = maxsize
        self._entries: collections.OrderedDict = collections.OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get_or_create(self, key: Hashable, create: Callable):
        with self._lock:
            if key in self._entries:
                self._entries.move_to_end(key)
                self.hits += 1
                return self._entries[key]
            self.misses += 1
        value = create()
        with self._lock:
            value = self._entries.setdefault(key, value)
            self._entries.move_to_end(key)
            while len(self._entries) > self.maxsize:
                self._entries.popitem(last=False)
        return value

    def info(self) -> CacheInfo:
        with self._lock:
            return CacheInfo(self.hits, self.misses, len(self._entries), self.maxsize)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self.hits = self.misses = 0
