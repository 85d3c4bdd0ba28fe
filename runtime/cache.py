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

    ``create`` runs outside the lock, so a slow compilation does not block other signatures.
    A key is created once however many threads miss it at the same moment: the first one
    creates, the others wait for it and take its value (a hit: ``misses`` counts creations).
    If ``create`` raises, a waiting thread creates in its turn.  A thread that looks the
    key up again from inside its own ``create`` (recursion) creates instead of waiting for
    itself.
    """

    def __init__(self, maxsize: int = 256):
        if maxsize < 1:
            raise ValueError("maxsize must be at least 1")
        self.maxsize = maxsize
        self._entries: collections.OrderedDict = collections.OrderedDict()
        self._lock = threading.Lock()
        # key -> (creating thread's ident, Event set when it is done): creations under way
        self._pending: dict = {}
        self.hits = 0
        self.misses = 0

    def get_or_create(self, key: Hashable, create: Callable):
        me = threading.get_ident()
        while True:
            with self._lock:
                if key in self._entries:
                    self._entries.move_to_end(key)
                    self.hits += 1
                    return self._entries[key]
                pending = self._pending.get(key)
                if pending is None or pending[0] == me:
                    self.misses += 1
                    done = None
                    if pending is None:          # registered under the lock: one creator
                        done = threading.Event()
                        self._pending[key] = (me, done)
                    break
            pending[1].wait()      # another thread creates it: then look again
        try:
            value = create()
            with self._lock:
                value = self._entries.setdefault(key, value)
                self._entries.move_to_end(key)
                while len(self._entries) > self.maxsize:
                    self._entries.popitem(last=False)
        finally:
            if done is not None:
                with self._lock:
                    del self._pending[key]
                done.set()
        return value

    def info(self) -> CacheInfo:
        with self._lock:
            return CacheInfo(self.hits, self.misses, len(self._entries), self.maxsize)

    def items(self) -> list:
        """A snapshot of the (key, value) pairs, least recently used first."""
        with self._lock:
            return list(self._entries.items())

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self.hits = self.misses = 0
