"""``@jit_ps``: transpile at definition time, compile per signature, run fast.

    @jit_ps
    def predict(params, inputs): ...

    @jit_ps(static_argnames=("iters",))
    def power(A, v, iters): ...

The function's source is transpiled when the decorator runs (unsupported syntax fails
there, at its line).  If an up-to-date module written by ``psc-transpile`` exists (the
content hash in its header matches, and so does the hash of its own text), its text is
used instead of transpiling again; so are the build functions of the helpers it holds.
"""
from __future__ import annotations

import functools
import os
import stat
import warnings
import weakref

from runtime import StagedFunction, set_transpile_hook
from runtime.errors import PSCError, PSCWarning, SourceLocation, from_python_error
from runtime.sourcemap import is_generated, location_from_traceback
from runtime.tracebacks import hide_internal_frames, is_internal_file
from runtime.staged import static_parameters

from emit.fileformat import generated_file_name, is_intact, records_function

from . import module_cache
from .loading import compile_generated, module_imports_of, names_read_by, namespace_for
from .pipeline import (generated_mapped_module, run_nested, runtime_resolver,
                       transpile_function)
from .source import function_source

GENERATED_DIR_ENV = "PSC_GENERATED_DIR"


_ANCESTORS = 8   # how far up a directory run of psc-transpile may have started
# A folder with one of these is a project's root: a directory run above it is not the
# project's, so the default lookup goes no higher.
_PROJECT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")


def generated_paths(source_file: str, generated_dir: str | None = None) -> list[str]:
    """Where ``psc-transpile`` may have put the module generated from ``source_file``.

    ``psc-transpile SRC... -o OUT`` writes ``OUT/<stem>_psc.py`` for a file, and keeps
    sub-folders for a directory (``OUT/sub/<stem>_psc.py``).  ``OUT`` is ``generated_dir``
    or ``$PSC_GENERATED_DIR`` if set (the sub-folder a directory run gave the module is
    tried for each of the source's ancestors), else ``__psc__`` in the source's folder or
    in an ancestor of it the user's project owns: the walk up stops after the project's
    root and before a folder that others may write to or that another user owns (``/tmp``:
    anyone could put a module there, and the decorator would run it).  A candidate is used
    only when its header's hash for the function matches (see `FunctionSource.digest`).
    """
    stem = generated_file_name(source_file)
    folder = os.path.dirname(os.path.abspath(source_file))
    explicit = generated_dir or os.environ.get(GENERATED_DIR_ENV)
    ancestors = _all_ancestors(folder) if explicit else _project_ancestors(folder,
                                                                           source_file)
    candidates = []
    for ancestor in ancestors:
        relative = os.path.relpath(folder, ancestor)
        base = explicit or os.path.join(ancestor, "__psc__")
        candidates.append(os.path.normpath(os.path.join(base, relative, stem)))
    return list(dict.fromkeys(candidates))


def _all_ancestors(folder: str) -> list[str]:
    """``folder`` and its ancestors, at most `_ANCESTORS` of them."""
    found = [folder]
    while len(found) < _ANCESTORS and os.path.dirname(found[-1]) != found[-1]:
        found.append(os.path.dirname(found[-1]))
    return found


def _project_ancestors(folder: str, source_file: str) -> list[str]:
    """The folders of `_all_ancestors` whose ``__psc__`` the default lookup may use."""
    try:
        owner = os.stat(source_file).st_uid
    except OSError:
        return []
    found = []
    for ancestor in _all_ancestors(folder):
        try:
            status = os.stat(ancestor)
        except OSError:
            break
        if status.st_mode & stat.S_IWOTH or status.st_uid != owner:
            break
        found.append(ancestor)
        if any(os.path.exists(os.path.join(ancestor, m)) for m in _PROJECT_MARKERS):
            break
    return found


def _up_to_date_module(paths, name: str, digest: str) -> str | None:
    """The text of the first module at ``paths`` whose header records function ``name``
    with ``digest`` and whose own text is what ``psc-transpile`` wrote (`is_intact`).  A
    module that records the function but was edited since is passed over with a
    `PSCWarning`: the function is transpiled from its source instead."""
    for path in paths:
        try:
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
        except (OSError, UnicodeDecodeError):
            continue
        if records_function(text, name, digest):
            if is_intact(text):
                return text
            warnings.warn(
                f"{path} was edited after psc-transpile wrote it (its text digest does "
                f"not match): ignoring it and transpiling {name} from its source; "
                f"regenerate it with psc-transpile", PSCWarning, stacklevel=2)
    return None


class _Generated:
    """A function's generated module: text, compiled code, and the names it needs."""

    def __init__(self, fn, static_argnames=(), generated_dir=None):
        self.fn = fn
        # Deeply nested code needs a deeper stack to parse, analyse and print; a lambda's
        # source lookup parses its whole file.
        self.source = run_nested(function_source, fn)
        location = SourceLocation(self.source.file, self.source.first_line if
                                  self.source.lambda_at is None else self.source.lambda_at[0])
        self.location = location
        run_nested(self._load, static_argnames, generated_dir, location=location)

    def _load(self, static_argnames, generated_dir):
        fn = self.fn
        # Named by its own code: a functools.wraps wrapper carries the wrapped function's
        # names.  A lambda is named after its line by the parser.
        code = getattr(fn, "__code__", None)
        code_name = getattr(code, "co_name", fn.__name__)
        self.name = code_name if code_name != "<lambda>" else self.source.parse().name
        imports = module_imports_of(self.source.file)
        digest = self.source.digest(static_argnames, imports)
        on_disk = _up_to_date_module(generated_paths(self.source.file, generated_dir),
                                     self.name, digest)
        label = f"{self.source.file}:{getattr(code, 'co_qualname', fn.__qualname__)}"
        self.from_disk, self.from_cache = on_disk is not None, False
        cache_key = None
        if on_disk is None and module_cache.STORE.enabled():
            cache_key = module_cache.module_key(fn, self.name, self.source.file, digest)
            on_disk = module_cache.load(cache_key)
            self.from_cache = on_disk is not None
        if on_disk is not None:   # no parse of the source: its names come from the code
            self.text = on_disk
            self.code = compile_generated(self.text, self.source.file, label, self.location)
            self.free_names = names_read_by(self.code)
        else:
            transpiled = transpile_function(
                self.source, resolver=runtime_resolver(fn), module_ast=imports,
                module_name=fn.__module__, static_argnames=static_argnames)
            emitted = generated_mapped_module(self.source.file, [transpiled], imports)
            self.text = emitted.text
            self.free_names = set(transpiled.free_names)
            self.code = compile_generated(self.text, self.source.file, label, self.location,
                                          emitted.line_map)
            if cache_key is not None:   # compiled: Python accepts it
                module_cache.store(cache_key, self.text)

    def build_function(self):
        namespace = namespace_for(self.fn, self.free_names)
        exec(self.code, namespace)
        return namespace[f"build_{self.name}"]

    def build(self, b, *args, **kwargs):
        try:
            return self.build_function()(b, *args, **kwargs)
        except PSCError as err:
            if err.location is None:
                err.location = location_from_traceback(err.__traceback__)
            raise
        except Exception as err:   # Python's own, running the user's line: name the line
            converted = python_error_at_line(err)
            if converted is err:
                raise
            raise converted from err


def python_error_at_line(err: Exception) -> Exception:
    """A Python error raised by generated code as a `PSCError` at the user's line (of a
    class deriving from the original's), chained by the caller; ``err`` itself where no
    generated line is in its traceback."""
    location = location_from_traceback(err.__traceback__)
    if location is None:
        return err
    hint = None
    if _raised_inside_runtime(err.__traceback__):
        hint = ("raised inside psc-transpiler's runtime: if this line is valid NumPy, this "
                "is a bug in psc-transpiler, please report it with the function")
    return from_python_error(err, location, hint)


def _raised_inside_runtime(tb) -> bool:
    """Did the innermost frame belong to this project (not generated code, not the user's
    or NumPy's)?"""
    while tb.tb_next is not None:
        tb = tb.tb_next
    file = tb.tb_frame.f_code.co_filename
    return is_internal_file(file) and not is_generated(file)


class PSCFunction(StagedFunction):
    """A transpiled function: call it like the original; it runs compiled."""

    __psc_function__ = True

    def __init__(self, fn, *, static_argnums=(), static_argnames=(), generated_dir=None,
                 checks=None, return_device_arrays=False, device=None, backend=None,
                 if_conversion=True, in_shardings=None, out_shardings=None):
        names = set(static_argnames)
        self._generated = _Generated(fn, tuple(_static_names(fn, static_argnums, names)),
                                     generated_dir)
        super().__init__(self._generated.build, interface=fn, name=fn.__name__,
                         static_argnums=static_argnums, static_argnames=static_argnames,
                         checks=checks, return_device_arrays=return_device_arrays,
                         device=device, platform=backend, if_conversion=if_conversion,
                         in_shardings=in_shardings, out_shardings=out_shardings)
        self.__wrapped__ = fn
        self.__name__, self.__qualname__ = fn.__name__, fn.__qualname__
        self.__doc__, self.__module__ = fn.__doc__, fn.__module__
        self.__psc_build__ = self._generated.build
        if generated_dir is not None:   # where its file's helpers are looked for too
            _helper_dirs[self._generated.source.file] = generated_dir

    @property
    def generated_source(self) -> str:
        """The generated module's text (like AutoGraph's ``to_code``)."""
        return self._generated.text

    def __repr__(self) -> str:
        return f"<jit_ps function {self.__qualname__}>"


def _static_names(fn, static_argnums, static_argnames):
    return static_parameters(fn, static_argnums, static_argnames)[1]


def jit_ps(fn=None, *, static_argnums=(), static_argnames=(), generated_dir=None,
           checks=None, return_device_arrays=False, device=None, backend=None,
           if_conversion=True, in_shardings=None, out_shardings=None):
    """Compile a PSC function with XLA: ``@jit_ps``, ``@jit_ps(static_argnames=...)``,
    or ``jit_ps(fn, static_argnames=...)``.

    ``checks``: run-time checks compiled in (``True``, or some of ``"index"``, ``"nan"``,
    ``"div"``; None follows ``transpiler.config``), see `runtime.checks`.  Results are
    NumPy arrays and scalars, as the plain function returns them (read-only views of
    XLA's buffers on CPU); ``return_device_arrays=True`` returns jax arrays instead, for
    feeding results back without a trip through NumPy (on an accelerator).

    Placement is jax.jit's (`runtime.placement`): a call runs on the device its committed
    arguments are on (`device_put`), and its jax-array results stay there; ``device``
    (a jax Device) pins every call to one device, moving arguments there; ``backend``
    (``"cpu"``, ``"gpu"``...) pins them to that backend's first device (both as jax.jit's
    ``device=`` and ``backend=`` do).
    ``if_conversion=False`` keeps every traced ``if`` a conditional, where by default one
    with cheap branches runs both and selects (`runtime.if_conversion`).

    ``in_shardings``/``out_shardings`` (jax.sharding objects: a ``NamedSharding`` over a
    ``Mesh``, a ``SingleDeviceSharding``; one for all, or a pytree prefix of the traced
    arguments / the results, ``None`` for unspecified) make the program SPMD, partitioned
    by XLA over the mesh (`runtime.spmd`); its results are then jax arrays with their
    shardings."""
    if isinstance(static_argnums, int):
        static_argnums = (static_argnums,)
    if isinstance(static_argnames, str):
        static_argnames = (static_argnames,)
    options = dict(static_argnums=tuple(static_argnums),
                   static_argnames=tuple(static_argnames), generated_dir=generated_dir,
                   checks=checks, return_device_arrays=bool(return_device_arrays),
                   device=device, backend=backend, if_conversion=bool(if_conversion),
                   in_shardings=in_shardings, out_shardings=out_shardings)
    if fn is None:
        return functools.partial(jit_ps, **options)
    if isinstance(fn, PSCFunction):   # jit_ps(jit_ps(f), ...): f with these options
        return PSCFunction(fn.__wrapped__, **options)
    if getattr(fn, "__psc_primitive__", False):   # e.g. jit_ps(grad(f)): nothing to transpile
        return _staged_primitive(fn, **{k: v for k, v in options.items()
                                        if k != "generated_dir"})
    try:
        return PSCFunction(fn, **options)
    except PSCError as err:   # unsupported syntax...: the message names the user's line
        hide_internal_frames(err)
        raise


def _staged_primitive(fn, static_argnums, static_argnames, checks=None,
                      return_device_arrays=False, device=None, backend=None,
                      if_conversion=True, in_shardings=None,
                      out_shardings=None) -> StagedFunction:
    """A runtime callable (a transform such as ``grad(f)``, or a primitive) compiled as it
    is: it builds its own program when called inside a build."""
    def build(b, *args, **kwargs):
        return fn(*args, **kwargs)
    staged = StagedFunction(build, interface=fn, name=getattr(fn, "__name__", "staged"),
                            static_argnums=static_argnums, static_argnames=static_argnames,
                            checks=checks, return_device_arrays=return_device_arrays,
                            device=device, platform=backend,
                            if_conversion=if_conversion, in_shardings=in_shardings,
                            out_shardings=out_shardings)
    staged.__wrapped__ = fn
    return staged


jit_ps.__psc_primitive__ = True

# Plain Python helpers called from PSC code are transpiled on first use, once per function
# object (weakly keyed: the entry goes with the function); the namespace is rebuilt per
# build so each closure sees its own values.
_helpers: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


# A helper's module is looked for where the generated_dir of a jit_ps function of its file
# points (psc-transpile writes a file's helpers into that file's module), else as usual.
_helper_dirs: dict[str, str] = {}


def _helper_build(fn):
    generated = _helpers.get(fn)
    if generated is None:
        file = getattr(getattr(fn, "__code__", None), "co_filename", None)
        generated = _helpers[fn] = _Generated(fn, (), _helper_dirs.get(file))
    return generated.build


set_transpile_hook(_helper_build)
