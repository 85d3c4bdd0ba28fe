"""The persistent cache: generated modules and compiled executables, kept on disk between
processes so that a warm process neither transpiles nor compiles again.

Where: ``$PSC_CACHE_DIR`` if set (set and empty: the cache is off), else
``psc-transpiler`` under the platform's user cache folder (``$XDG_CACHE_HOME`` or
``~/.cache`` on Linux, ``~/Library/Caches`` on macOS, ``%LOCALAPPDATA%`` on Windows).
Each kind of entry has a folder of its own (a `DiskStore` namespace: ``modules/``,
``executables/``); an entry's file name is the SHA-256 of its key, a frozen dataclass.

Safety:

* **Atomic writes**: an entry is written to a temporary file in its folder and renamed
  into place (``os.replace``), so a reader sees a whole entry or none.  Two processes
  writing the same key write the same content; the last rename wins, both are whole.
* **Checksums**: an entry holds the SHA-256 of its key and payload.  A truncated or
  damaged entry (or one written for another key) is never returned: it is removed with a
  `PSCCacheWarning`, and the caller rebuilds (and writes it again).
* **Private**: the cache's entries are run, so a root folder another user owns or that
  others may write to is not used (the cache is off, with a warning); a new one is created
  with mode 0700.
* **Bounded size**: after a write, entries are removed least recently used first (a hit
  touches its file's mtime) until the cache holds at most ``$PSC_CACHE_MAX_BYTES``
  (default 1 GiB).  A reader whose entry was just evicted sees a miss.

Counters (hits, misses, writes, corrupt entries, evictions) are per store and per
process: `counters` returns them, for tests and for ``psc-transpile --cache-info``.
"""
from __future__ import annotations

import dataclasses
import hashlib
import os
import stat
import sys
import tempfile
import threading
import time
import warnings

from .errors import PSCCacheWarning

CACHE_DIR_ENV = "PSC_CACHE_DIR"
MAX_BYTES_ENV = "PSC_CACHE_MAX_BYTES"
DEFAULT_MAX_BYTES = 1 << 30
APP_NAME = "psc-transpiler"

_MAGIC = b"PSCCACH1"
_DIGEST_BYTES = 32
_LENGTH_BYTES = 4
ENTRY_SUFFIX = ".entry"
_TEMP_PREFIX = ".tmp-"
# A temporary file this old is left over by a writer that died: removed by eviction.
_STALE_TEMP_SECONDS = 3600


def cache_directory() -> str | None:
    """The cache's root folder, or None when the cache is off (``PSC_CACHE_DIR=``).  Read
    from the environment at each call: a change of ``PSC_CACHE_DIR`` applies at once."""
    explicit = os.environ.get(CACHE_DIR_ENV)
    if explicit is not None:
        return os.path.abspath(os.path.expanduser(explicit)) if explicit.strip() else None
    return os.path.join(_user_cache_root(), APP_NAME)


def _user_cache_root() -> str:
    if sys.platform == "win32":
        return os.environ.get("LOCALAPPDATA") or os.path.expanduser("~\\AppData\\Local")
    if sys.platform == "darwin":
        return os.path.expanduser("~/Library/Caches")
    return os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")


def max_bytes() -> int:
    """The size bound: ``$PSC_CACHE_MAX_BYTES`` (bytes) if it is a number, else 1 GiB."""
    try:
        return max(0, int(os.environ.get(MAX_BYTES_ENV, DEFAULT_MAX_BYTES)))
    except ValueError:
        return DEFAULT_MAX_BYTES


@dataclasses.dataclass(frozen=True)
class StoreCounters:
    """What one store did in this process."""

    hits: int = 0
    misses: int = 0
    writes: int = 0
    corrupt: int = 0      # damaged entries found (each removed, warned about, rebuilt)
    evictions: int = 0    # entries this process removed to keep the size bound


def key_text(key) -> str:
    """The canonical text of a cache key: keys are frozen dataclasses of plain values
    (strings, numbers, tuples of them), whose repr names the class and every field."""
    params = getattr(type(key), "__dataclass_params__", None)
    if params is None or not params.frozen:
        raise TypeError(f"a cache key is a frozen dataclass, not {type(key).__name__}")
    return repr(key)


def _entry_bytes(key_bytes: bytes, payload: bytes) -> bytes:
    body = len(key_bytes).to_bytes(_LENGTH_BYTES, "little") + key_bytes + payload
    return _MAGIC + hashlib.sha256(body).digest() + body


def _payload_of(data: bytes, key_bytes: bytes) -> bytes | None:
    """The payload of entry ``data`` written for ``key_bytes``; None if it is damaged."""
    head = len(_MAGIC) + _DIGEST_BYTES
    if len(data) < head + _LENGTH_BYTES or not data.startswith(_MAGIC):
        return None
    body = data[head:]
    if hashlib.sha256(body).digest() != data[len(_MAGIC):head]:
        return None
    length = int.from_bytes(body[:_LENGTH_BYTES], "little")
    if body[_LENGTH_BYTES:_LENGTH_BYTES + length] != key_bytes:
        return None
    return body[_LENGTH_BYTES + length:]


class DiskStore:
    """The entries of one kind (``namespace``: a folder of the cache's root).

    ``get(key)``: the payload stored under ``key`` (bytes), or None (a miss, the cache off,
    or a damaged entry: removed with a warning).  ``put(key, payload)``: store it, then
    evict to the size bound.  Neither raises for an unwritable or vanished folder: the
    cache is an optimisation, and the caller then works as without it.
    """

    def __init__(self, namespace: str):
        self.namespace = namespace
        self._lock = threading.Lock()
        self._counts = StoreCounters()

    def folder(self) -> str | None:
        """This store's folder; None when the cache is off or its root is not safe."""
        root = cache_directory()
        if root is None or not _is_private(root):
            return None
        return os.path.join(root, self.namespace)

    def enabled(self) -> bool:
        return cache_directory() is not None

    def _path(self, folder: str, key_bytes: bytes) -> str:
        return os.path.join(folder, hashlib.sha256(key_bytes).hexdigest() + ENTRY_SUFFIX)

    def get(self, key) -> bytes | None:
        folder = self.folder()
        if folder is None:
            return None
        key_bytes = key_text(key).encode("utf-8")
        path = self._path(folder, key_bytes)
        try:
            with open(path, "rb") as handle:
                data = handle.read()
        except OSError:
            self._count(misses=1)
            return None
        payload = _payload_of(data, key_bytes)
        if payload is None:
            self.discard(key, "its checksum does not match (truncated or changed on disk)")
            return None
        try:
            os.utime(path)   # least recently used is evicted first: this one was used now
        except OSError:
            pass
        self._count(hits=1)
        return payload

    def discard(self, key, why: str) -> None:
        """Remove ``key``'s entry, found damaged (``why``), with a `PSCCacheWarning`; the
        caller rebuilds it.  Counted as a corrupt entry and a miss."""
        folder = self.folder()
        if folder is None:
            return
        path = self._path(folder, key_text(key).encode("utf-8"))
        warnings.warn(f"psc-transpiler cache: ignoring and removing {path}: {why}; "
                      f"rebuilding it", PSCCacheWarning, stacklevel=3)
        _remove(path)
        self._count(corrupt=1, misses=1)

    def put(self, key, payload: bytes) -> None:
        folder = self.folder()
        if folder is None:
            return
        key_bytes = key_text(key).encode("utf-8")
        data = _entry_bytes(key_bytes, payload)
        bound = max_bytes()
        if len(data) > bound:   # it would evict everything, itself included
            return
        try:
            os.makedirs(folder, mode=0o700, exist_ok=True)
            handle, temp = tempfile.mkstemp(prefix=_TEMP_PREFIX, dir=folder)
            try:
                with os.fdopen(handle, "wb") as out:
                    out.write(data)
                os.replace(temp, self._path(folder, key_bytes))
            except BaseException:
                _remove(temp)
                raise
        except OSError:
            return
        self._count(writes=1)
        evicted = _written(os.path.dirname(folder), len(data), bound)
        if evicted:
            self._count(evictions=evicted)

    def counters(self) -> StoreCounters:
        with self._lock:
            return self._counts

    def reset_counters(self) -> None:
        with self._lock:
            self._counts = StoreCounters()

    def _count(self, **increments) -> None:
        with self._lock:
            self._counts = dataclasses.replace(self._counts, **{
                name: getattr(self._counts, name) + step for name, step in increments.items()})


_warned_roots: set = set()


def _is_private(root: str) -> bool:
    """May the cache at ``root`` be used?  Its entries are run (generated modules, native
    code): a folder another user owns, or that others may write to, could hold anyone's.
    A missing root is created private (mode 0700); an unsafe one turns the cache off,
    with one `PSCCacheWarning` per process."""
    try:
        os.makedirs(root, mode=0o700, exist_ok=True)
        status = os.stat(root)
    except OSError:
        return False
    getuid = getattr(os, "getuid", None)
    if getuid is None:   # Windows: the user's own profile folder, by default
        return True
    if status.st_uid == getuid() and not status.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return True
    if root not in _warned_roots:
        _warned_roots.add(root)
        warnings.warn(f"psc-transpiler cache: not using {root}: another user owns it or "
                      f"others may write to it; set {CACHE_DIR_ENV} to a folder of your "
                      f"own (or to nothing: no cache)", PSCCacheWarning, stacklevel=4)
    return False


def _remove(path: str) -> bool:
    try:
        os.remove(path)
        return True
    except OSError:   # gone already (another process evicted it), or not ours to remove
        return False


def _cache_files(root: str):
    """``(path, size, mtime, is_entry)`` of each file of the cache under ``root`` (one level
    of namespace folders): entries and temporary files, nothing else."""
    try:
        namespaces = [e for e in os.scandir(root) if e.is_dir(follow_symlinks=False)]
    except OSError:
        return
    for namespace in namespaces:
        try:
            files = list(os.scandir(namespace.path))
        except OSError:
            continue
        for entry in files:
            is_entry = entry.name.endswith(ENTRY_SUFFIX)
            if not (is_entry or entry.name.startswith(_TEMP_PREFIX)):
                continue
            try:
                status = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            yield entry.path, status.st_size, status.st_mtime, is_entry


# A scan of the folder costs a stat per entry: a process scans it on its first write, then
# adds what it writes, and scans (evicting) again when that estimate passes the bound, or
# after `_RESCAN_WRITES` writes (other processes write too).  root -> [bytes, writes].
_RESCAN_WRITES = 64
_estimates: dict = {}
_estimates_lock = threading.Lock()


def _written(root: str, size: int, bound: int) -> int:
    """Account for an entry of ``size`` bytes just written under ``root``; evict when the
    cache may exceed ``bound``.  Returns how many entries were evicted."""
    with _estimates_lock:
        estimate = _estimates.get(root)
        if estimate is not None:
            estimate[0] += size
            estimate[1] += 1
            if estimate[0] <= bound and estimate[1] < _RESCAN_WRITES:
                return 0
        removed, total = _evict(root, bound)
        _estimates[root] = [total, 0]
        return removed


def _evict(root: str, bound: int) -> tuple[int, int]:
    """Remove entries under ``root``, least recently used first, until they total at most
    ``bound`` bytes; and temporary files left by dead writers.  Returns how many entries
    were removed (by this call: another process may race it to some), and the bytes left."""
    entries, total, now = [], 0, time.time()
    for path, size, mtime, is_entry in _cache_files(root):
        if not is_entry:
            if now - mtime > _STALE_TEMP_SECONDS:
                _remove(path)
            continue
        entries.append((mtime, size, path))
        total += size
    removed = 0
    for mtime, size, path in sorted(entries):
        if total <= bound:
            break
        if _remove(path):
            removed += 1
        total -= size
    return removed, total


@dataclasses.dataclass(frozen=True)
class CacheUsage:
    """What the cache folder holds now (all processes' entries)."""

    directory: str | None       # None: the cache is off
    entries: int
    total_bytes: int
    max_bytes: int
    per_namespace: tuple        # ((namespace, entries, bytes), ...), sorted by name


def usage() -> CacheUsage:
    """The cache's folder, its entries and their size, by namespace."""
    root = cache_directory()
    if root is None or not _is_private(root):
        return CacheUsage(None, 0, 0, max_bytes(), ())
    counts: dict = {}
    for path, size, _, is_entry in _cache_files(root):
        if is_entry:
            namespace = os.path.basename(os.path.dirname(path))
            entries, total = counts.get(namespace, (0, 0))
            counts[namespace] = (entries + 1, total + size)
    per = tuple((name, n, size) for name, (n, size) in sorted(counts.items()))
    return CacheUsage(root, sum(p[1] for p in per), sum(p[2] for p in per), max_bytes(), per)


def clear() -> int:
    """Remove every entry (and temporary file) of the cache; returns how many files were
    removed.  Only the cache's own files go: other files in the folder are left alone."""
    root = cache_directory()
    if root is None or not _is_private(root):
        return 0
    with _estimates_lock:
        _estimates.pop(root, None)
    return sum(_remove(path) for path, _, _, _ in list(_cache_files(root)))
