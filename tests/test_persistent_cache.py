"""The persistent cache (issue 16): generated modules and compiled executables on disk.

A program runs in fresh processes (the cache's whole point is the next process), each
reporting its result and this process's cache counters (`transpiler.cache_info`): a hit
of the module store is a transpile skipped, a hit of the executable store an XLA
compilation skipped.  Results are compared with the same function run by plain NumPy.
"""
from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from runtime import disk_cache
from runtime.errors import PSCCacheWarning

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PROGRAM = '''\
import json
import warnings

import numpy as np

import transpiler
from transpiler import jit_ps

recording = warnings.catch_warnings(record=True)   # from the decoration on
caught = recording.__enter__()
warnings.simplefilter("always")
op = np.{op}


def shift(x):
    return x + {shift}


@jit_ps
def f(x, y):
    return op(shift(x)) * y.sum()


x = np.linspace(0.0, 1.0, 7)
y = np.arange(4.0)
result = f(x, y)
info = transpiler.cache_info()
print(json.dumps({{
    "result": np.asarray(result).tolist(),
    "modules": info.modules.__dict__, "executables": info.executables.__dict__,
    "warnings": [(w.category.__name__, str(w.message)) for w in caught],
    "directory": info.directory, "entries": info.entries}}))
'''


def expected(op="sin", shift=1.0):
    x, y = np.linspace(0.0, 1.0, 7), np.arange(4.0)
    return (getattr(np, op)(x + shift) * y.sum()).tolist()


def write_program(folder, op="sin", shift=1.0) -> str:
    path = os.path.join(folder, "prog.py")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(PROGRAM.format(op=op, shift=shift))
    return path


def environment(cache_dir, **extra) -> dict:
    env = dict(os.environ, PYTHONPATH=ROOT, PSC_CACHE_DIR=str(cache_dir), **extra)
    env.pop(disk_cache.MAX_BYTES_ENV, None)
    return env


def run(program, cache_dir, **extra) -> dict:
    done = subprocess.run([sys.executable, program], env=environment(cache_dir, **extra),
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def entry_files(cache_dir, namespace=None) -> list[str]:
    found = []
    for folder, _, files in os.walk(cache_dir):
        if namespace is None or os.path.basename(folder) == namespace:
            found += [os.path.join(folder, name) for name in files
                      if name.endswith(disk_cache.ENTRY_SUFFIX)]
    return sorted(found)


@pytest.fixture
def program(tmp_path):
    return write_program(str(tmp_path))


# --- a second process hits -------------------------------------------------------------------

def test_second_process_skips_transpile_and_compile(program, tmp_path):
    cache = tmp_path / "cache"
    cold = run(program, cache)
    assert cold["result"] == pytest.approx(expected(), rel=1e-12)
    # f and its helper shift were transpiled (and stored), the program compiled once
    assert cold["modules"]["hits"] == 0 and cold["modules"]["writes"] == 2
    assert cold["executables"]["misses"] == 1 and cold["executables"]["writes"] == 1
    warm = run(program, cache)
    assert warm["result"] == cold["result"]
    assert warm["modules"] == dict(cold["modules"], hits=2, misses=0, writes=0)
    assert warm["executables"]["hits"] == 1 and warm["executables"]["misses"] == 0
    assert warm["executables"]["writes"] == 0 and not warm["warnings"]
    assert len(entry_files(cache)) == 3 and warm["entries"] == 3


def test_edited_source_is_a_miss(tmp_path):
    cache = tmp_path / "cache"
    run(write_program(str(tmp_path), shift=1.0), cache)
    edited = run(write_program(str(tmp_path), shift=2.5), cache)
    assert edited["result"] == pytest.approx(expected(shift=2.5), rel=1e-12)
    # shift's text changed: its module misses; so does f's (its key holds the code of the
    # helpers it calls), and the program is a new one
    assert edited["modules"]["hits"] == 0 and edited["modules"]["misses"] == 2
    assert edited["executables"]["misses"] == 1


def test_what_a_global_name_denotes_is_part_of_the_key(tmp_path):
    """``op = np.sin`` -> ``op = np.cos`` leaves f's text alone but not what it means."""
    cache = tmp_path / "cache"
    run(write_program(str(tmp_path), op="sin"), cache)
    changed = run(write_program(str(tmp_path), op="cos"), cache)
    assert changed["result"] == pytest.approx(expected(op="cos"), rel=1e-12)
    assert changed["modules"]["hits"] == 1   # shift: unchanged
    assert changed["modules"]["misses"] == 1  # f: op denotes another function


# --- damaged entries -------------------------------------------------------------------------

def _truncate(path):
    with open(path, "r+b") as handle:
        handle.truncate(os.path.getsize(path) // 2)


def _flip_last_byte(path):
    with open(path, "r+b") as handle:
        handle.seek(-1, os.SEEK_END)
        last = handle.read(1)
        handle.seek(-1, os.SEEK_END)
        handle.write(bytes([last[0] ^ 0xFF]))


@pytest.mark.parametrize("damage", [_truncate, _flip_last_byte])
def test_damaged_entry_is_warned_about_and_rebuilt(program, tmp_path, damage):
    cache = tmp_path / "cache"
    cold = run(program, cache)
    files = entry_files(cache)
    for path in files:
        damage(path)
    repaired = run(program, cache)
    assert repaired["result"] == cold["result"]
    assert repaired["modules"]["corrupt"] == 2 and repaired["modules"]["writes"] == 2
    assert repaired["executables"]["corrupt"] == 1 and repaired["executables"]["writes"] == 1
    cache_warnings = [m for kind, m in repaired["warnings"] if kind == "PSCCacheWarning"]
    assert len(cache_warnings) == 3 and all("checksum" in m for m in cache_warnings)
    again = run(program, cache)   # rebuilt entries are whole again
    assert again["modules"]["hits"] == 2 and again["executables"]["hits"] == 1
    assert not again["warnings"]


def test_executable_jaxlib_refuses_is_warned_about_and_rebuilt(program, tmp_path):
    """An entry whose checksum holds but whose bytes jaxlib cannot read (another format)."""
    cache = tmp_path / "cache"
    cold = run(program, cache)
    [path] = entry_files(cache, "executables")
    with open(path, "rb") as handle:
        data = handle.read()
    body = data[len(disk_cache._MAGIC) + disk_cache._DIGEST_BYTES:]
    length = int.from_bytes(body[:disk_cache._LENGTH_BYTES], "little")
    key_bytes = body[disk_cache._LENGTH_BYTES:disk_cache._LENGTH_BYTES + length]
    with open(path, "wb") as handle:
        handle.write(disk_cache._entry_bytes(key_bytes, b"not an executable"))
    repaired = run(program, cache)
    assert repaired["result"] == cold["result"]
    assert repaired["executables"]["corrupt"] == 1 and repaired["executables"]["writes"] == 1
    assert any(kind == "PSCCacheWarning" and "deserialize" in message
               for kind, message in repaired["warnings"])
    assert run(program, cache)["executables"]["hits"] == 1


# --- concurrent writers ----------------------------------------------------------------------

def test_two_processes_writing_the_same_entries(program, tmp_path):
    cache = tmp_path / "cache"
    env = environment(cache)
    started = [subprocess.Popen([sys.executable, program], env=env, cwd=ROOT,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
               for _ in range(2)]
    for process in started:
        out, err = process.communicate(timeout=300)
        assert process.returncode == 0, err
        report = json.loads(out.strip().splitlines()[-1])
        assert report["result"] == pytest.approx(expected(), rel=1e-12)
        assert not report["warnings"]
    after = run(program, cache)
    assert after["modules"]["hits"] == 2 and after["executables"]["hits"] == 1
    assert not after["warnings"]
    assert not [n for _, _, files in os.walk(cache) for n in files if n.startswith(".tmp")]


@dataclasses.dataclass(frozen=True)
class Key:
    name: str


def test_threads_writing_one_key_leave_a_whole_entry(tmp_path, monkeypatch):
    monkeypatch.setenv(disk_cache.CACHE_DIR_ENV, str(tmp_path))
    store = disk_cache.DiskStore("test")
    payloads = [bytes([i]) * 100_000 for i in range(8)]
    threads = [threading.Thread(target=store.put, args=(Key("k"), p)) for p in payloads]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert store.get(Key("k")) in payloads
    assert store.counters().writes == 8 and store.counters().corrupt == 0


# --- the size bound --------------------------------------------------------------------------

def test_eviction_keeps_the_bound_least_recently_used_first(tmp_path, monkeypatch):
    monkeypatch.setenv(disk_cache.CACHE_DIR_ENV, str(tmp_path))
    store = disk_cache.DiskStore("test")
    store.put(Key("probe"), b"x" * 1000)
    [probe] = entry_files(tmp_path)
    entry_size = os.path.getsize(probe)
    os.remove(probe)
    monkeypatch.setenv(disk_cache.MAX_BYTES_ENV, str(3 * entry_size + entry_size // 2))
    now = time.time()
    for age, name in ((300, "a"), (200, "b"), (100, "c")):
        store.put(Key(name), name.encode() * 1000)
        [path] = [p for p in entry_files(tmp_path) if os.path.getmtime(p) > now - 50]
        os.utime(path, (now - age, now - age))   # a is the oldest, then b, c
    assert store.get(Key("a")) == b"a" * 1000   # a hit: now the most recently used
    store.put(Key("d"), b"d" * 1000)            # a fourth entry exceeds the bound
    assert store.get(Key("b")) is None          # the least recently used went
    assert [store.get(Key(n)) for n in "acd"] == [n.encode() * 1000 for n in "acd"]
    assert store.counters().evictions == 1
    assert sum(map(os.path.getsize, entry_files(tmp_path))) <= 3 * entry_size + entry_size // 2


def test_damaged_entry_in_process(tmp_path, monkeypatch):
    monkeypatch.setenv(disk_cache.CACHE_DIR_ENV, str(tmp_path))
    store = disk_cache.DiskStore("test")
    store.put(Key("k"), b"payload" * 100)
    [path] = entry_files(tmp_path)
    _truncate(path)
    with pytest.warns(PSCCacheWarning, match="checksum"):
        assert store.get(Key("k")) is None
    assert not os.path.exists(path)   # removed: the caller rebuilds and writes it again
    assert store.counters().corrupt == 1 and store.counters().misses == 1


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX permissions")
def test_a_folder_others_may_write_to_is_not_used(tmp_path, monkeypatch):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    monkeypatch.setenv(disk_cache.CACHE_DIR_ENV, str(shared))
    monkeypatch.setattr(disk_cache, "_warned_roots", set())
    store = disk_cache.DiskStore("test")
    with pytest.warns(PSCCacheWarning, match="others may write"):
        store.put(Key("k"), b"v")
    assert store.get(Key("k")) is None and entry_files(shared) == []
    shared.chmod(0o700)
    store.put(Key("k"), b"v")
    assert store.get(Key("k")) == b"v"


def test_a_new_cache_folder_is_private(tmp_path, monkeypatch):
    root = tmp_path / "new" / "cache"
    monkeypatch.setenv(disk_cache.CACHE_DIR_ENV, str(root))
    disk_cache.DiskStore("test").put(Key("k"), b"v")
    assert root.stat().st_mode & 0o077 == 0


def test_a_key_is_a_frozen_dataclass(tmp_path, monkeypatch):
    monkeypatch.setenv(disk_cache.CACHE_DIR_ENV, str(tmp_path))
    with pytest.raises(TypeError, match="frozen dataclass"):
        disk_cache.DiskStore("test").put("a string", b"")


# --- where the cache is, and off -------------------------------------------------------------

def test_empty_cache_dir_turns_the_cache_off(program, tmp_path):
    home, xdg = tmp_path / "home", tmp_path / "xdg"
    home.mkdir()
    xdg.mkdir()
    report = run(program, "", HOME=str(home), XDG_CACHE_HOME=str(xdg))
    assert report["result"] == pytest.approx(expected(), rel=1e-12)
    assert report["directory"] is None and report["entries"] == 0
    zero = dict(hits=0, misses=0, writes=0, corrupt=0, evictions=0)
    assert report["modules"] == zero and report["executables"] == zero
    assert not list(home.iterdir()) and not list(xdg.iterdir())


def test_default_is_the_user_cache_folder(program, tmp_path):
    xdg = tmp_path / "xdg"
    env = dict(environment(""), XDG_CACHE_HOME=str(xdg))
    del env[disk_cache.CACHE_DIR_ENV]
    done = subprocess.run([sys.executable, program], env=env, capture_output=True,
                          text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    if sys.platform.startswith("linux"):
        assert report["directory"] == str(xdg / "psc-transpiler")
        assert len(entry_files(xdg / "psc-transpiler")) == 3


# --- psc-transpile --cache-info / --cache-clear, and the API ---------------------------------

def test_cli_cache_info_and_clear(program, tmp_path, monkeypatch, capsys):
    from transpiler import cache_info, cli
    cache = tmp_path / "cache"
    run(program, cache)
    monkeypatch.setenv(disk_cache.CACHE_DIR_ENV, str(cache))
    assert cli.main(["--cache-info"]) == 0
    out = capsys.readouterr().out
    assert str(cache) in out and "3 entries" in out and "executables: 1 entries" in out
    assert cli.main(["--cache-clear"]) == 0
    assert "removed 3 cache files" in capsys.readouterr().out
    assert entry_files(cache) == [] and cache_info().entries == 0
    monkeypatch.setenv(disk_cache.CACHE_DIR_ENV, "")
    assert cli.main(["--cache-info"]) == 0
    assert "off" in capsys.readouterr().out


def test_cli_cache_flags_take_no_sources(program, capsys):
    from transpiler import cli
    with pytest.raises(SystemExit) as info:
        cli.main(["--cache-info", program])
    assert info.value.code == 2 and "--cache-info" in capsys.readouterr().err


def test_clear_leaves_other_files_alone(tmp_path, monkeypatch):
    from transpiler import cache_clear
    monkeypatch.setenv(disk_cache.CACHE_DIR_ENV, str(tmp_path))
    disk_cache.DiskStore("test").put(Key("k"), b"v")
    mine = tmp_path / "test" / "notes.txt"
    mine.write_text("keep me")
    assert cache_clear() == 1
    assert mine.read_text() == "keep me" and entry_files(tmp_path) == []


def test_in_process_cache_hit_equals_numpy(tmp_path, monkeypatch):
    """Within one process a new jit_ps object of the same function reads the cache too."""
    from tests.conftest import assert_same
    from transpiler import cache_info, jit_ps
    monkeypatch.setenv(disk_cache.CACHE_DIR_ENV, str(tmp_path))

    def g(a):
        return np.cumsum(a * a) - a.mean()

    a = np.linspace(-1.0, 2.0, 9)
    before = cache_info()
    assert_same(jit_ps(g)(a), g(a))
    assert_same(jit_ps(g)(a), g(a))
    after = cache_info()
    assert after.modules.hits - before.modules.hits == 1
    assert after.executables.hits - before.executables.hits == 1


def test_a_changed_transpiler_is_a_miss(tmp_path, monkeypatch):
    """Text an older transpiler generated is never served: its code is in the key."""
    from tests.conftest import assert_same
    from transpiler import cache_info, jit_ps, module_cache
    monkeypatch.setenv(disk_cache.CACHE_DIR_ENV, str(tmp_path))

    def h(a):
        return np.sin(a) * a.sum()

    a = np.linspace(-1.0, 2.0, 5)
    assert_same(jit_ps(h)(a), h(a))
    before = cache_info()
    assert_same(jit_ps(h)(a), h(a))
    assert cache_info().modules.hits - before.modules.hits == 1
    monkeypatch.setattr(module_cache, "toolchain_stamp", lambda: "an edited transpiler")
    before = cache_info()
    assert_same(jit_ps(h)(a), h(a))
    assert cache_info().modules.hits == before.modules.hits
    assert cache_info().modules.misses - before.modules.misses == 1


def test_toolchain_stamp_follows_the_transpilers_files(tmp_path, monkeypatch):
    from transpiler import module_cache
    stamp = module_cache.toolchain_stamp()
    assert stamp == module_cache.toolchain_stamp() and len(stamp) == 64
    root = os.path.join(ROOT, "transpiler")
    path = os.path.join(root, sorted(f for f in os.listdir(root) if f.endswith(".py"))[0])
    stat = os.stat(path)
    try:
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
        module_cache.toolchain_stamp.cache_clear()
        assert module_cache.toolchain_stamp() != stamp
    finally:
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
        module_cache.toolchain_stamp.cache_clear()
    assert module_cache.toolchain_stamp() == stamp


def test_program_with_host_callbacks_is_not_cached(tmp_path, monkeypatch):
    from transpiler import cache_info, debug_print, jit_ps
    monkeypatch.setenv(disk_cache.CACHE_DIR_ENV, str(tmp_path))

    def noisy(a):
        debug_print("a = {}", a)
        return a + 1.0

    before = cache_info().executables
    assert_equal = np.testing.assert_array_equal
    assert_equal(jit_ps(noisy)(np.ones(3)), np.ones(3) + 1.0)
    assert cache_info().executables == before
    assert entry_files(tmp_path, "executables") == []
