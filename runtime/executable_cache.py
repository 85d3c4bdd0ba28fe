"""Compiled executables kept on disk (`runtime.disk_cache`): a warm process deserializes
the executable XLA compiled in an earlier one instead of compiling again.

The key is everything the compiled code depends on: the StableHLO text (its digest), the
platform, its version and the device kind, jaxlib's version, the compile options, and on
CPU the host's instruction set (XLA:CPU compiles for the CPU it runs on; a cache folder
shared by different machines must not hand one's code to the other).  The payload is
jaxlib's own serialization of the loaded executable (``LoadedExecutable.serialize``,
read back by ``client.deserialize_executable``), as jax's persistent compilation cache
stores it.  Programs with host callbacks are not cached: their Python functions are
registered with the executable and cannot be serialized.
"""
from __future__ import annotations

import dataclasses
import functools
import hashlib
import platform as host_platform

import jaxlib
from jaxlib import _jax

from .disk_cache import DiskStore

STORE = DiskStore("executables")


@dataclasses.dataclass(frozen=True)
class ExecutableKey:
    stablehlo_sha256: str
    platform: str
    platform_version: str
    device_kind: str
    jaxlib_version: str
    compile_options_sha256: str
    host: str


def _sha256(data) -> str:
    return hashlib.sha256(data if isinstance(data, bytes) else data.encode()).hexdigest()


@functools.lru_cache(maxsize=1)
def _cpu_identity() -> str:
    """The machine and its CPU's feature flags (Linux: ``/proc/cpuinfo``), as a digest."""
    flags = ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as handle:
            for line in handle:
                if line.startswith(("flags", "Features", "model name")):
                    flags += line
                if line.strip() == "":   # the first processor's block is enough
                    break
    except OSError:
        flags = host_platform.processor()
    return f"{host_platform.machine()}:{_sha256(flags)[:16]}"


def executable_key(client, device, text: str, options) -> ExecutableKey:
    host = _cpu_identity() if client.platform == "cpu" else ""
    return ExecutableKey(_sha256(text), client.platform, str(client.platform_version),
                         str(device.device_kind), jaxlib.version.__version__,
                         _sha256(options.SerializeAsString()), host)


def load(client, device, key: ExecutableKey, options):
    """The loaded executable stored under ``key``, or None.  Bytes jaxlib refuses (a
    checksum cannot tell an old format) are removed with a warning, as a damaged entry."""
    payload = STORE.get(key)
    if payload is None:
        return None
    try:
        return client.deserialize_executable(payload, _jax.DeviceList((device,)), options)
    except _jax.JaxRuntimeError as err:
        STORE.discard(key, f"jaxlib could not deserialize it ({err})")
        return None


def store(key: ExecutableKey, loaded) -> None:
    try:
        payload = loaded.serialize()
    except _jax.JaxRuntimeError:   # a backend that cannot serialize: nothing to keep
        return
    STORE.put(key, payload)
