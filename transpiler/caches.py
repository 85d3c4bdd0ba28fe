"""``transpiler.cache_info()`` and ``transpiler.cache_clear()``: the persistent cache of
generated modules and compiled executables (`runtime.disk_cache`), as a program sees it.
``psc-transpile --cache-info`` / ``--cache-clear`` print and do the same."""
from __future__ import annotations

import dataclasses

from runtime import disk_cache, executable_cache

from . import module_cache


@dataclasses.dataclass(frozen=True)
class PersistentCacheInfo:
    """The cache's folder and contents (all processes'), and this process's counters."""

    directory: str | None                 # None: off (``PSC_CACHE_DIR=``)
    entries: int
    total_bytes: int
    max_bytes: int
    namespaces: tuple                     # ((name, entries, bytes), ...)
    modules: disk_cache.StoreCounters     # generated modules: hit = no transpile
    executables: disk_cache.StoreCounters  # compiled programs: hit = no XLA compile

    @property
    def enabled(self) -> bool:
        return self.directory is not None


def cache_info() -> PersistentCacheInfo:
    """Where the persistent cache is, what it holds, and this process's hits and misses."""
    usage = disk_cache.usage()
    return PersistentCacheInfo(usage.directory, usage.entries, usage.total_bytes,
                               usage.max_bytes, usage.per_namespace,
                               module_cache.STORE.counters(),
                               executable_cache.STORE.counters())


def cache_clear() -> int:
    """Remove every entry of the persistent cache (other processes' too: they rebuild on
    their next miss); returns how many files were removed.  In-memory caches of functions
    already compiled in this process are kept."""
    return disk_cache.clear()


def describe(info: PersistentCacheInfo) -> str:
    """``info`` as the lines ``psc-transpile --cache-info`` prints."""
    if not info.enabled:
        return f"cache: off ({disk_cache.CACHE_DIR_ENV} is set and empty)"
    lines = [f"cache: {info.directory}",
             f"size: {info.total_bytes} bytes in {info.entries} entries "
             f"(bound {info.max_bytes} bytes, {disk_cache.MAX_BYTES_ENV})"]
    lines += [f"  {name}: {count} entries, {size} bytes"
              for name, count, size in info.namespaces]
    return "\n".join(lines)
