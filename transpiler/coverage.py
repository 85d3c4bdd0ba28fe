"""Which NumPy functions PSC code can call on traced arrays: ``docs/numpy_coverage.md``.

The page lists every public function that NumPy and ``jax.numpy`` both define (the
*shared list*: the measure of NumPy breadth a JAX user expects), and the shared functions
of ``numpy.linalg`` and ``numpy.fft``, each with its status, read from the translation-rule
registry (`runtime.translation`) and from the rule modules' own notes:

- **supported**: a translation rule is registered under the function's name;
- **partial**: a rule exists, with a restriction stated in the module's
  ``COVERAGE_NOTES = {"numpy.name": "partial: ..."}``;
- **static arguments only**: the function only ever takes static arguments (dtypes,
  shapes, print options): NumPy itself runs while the program is built (`STATIC_ONLY`);
- **not supported**: no rule, with the reason from a module's ``UNSUPPORTED`` dict or
  `NOT_SUPPORTED` below (a call with a traced argument is a `PSCUnsupportedCallError`).

The shared lists are frozen here (NumPy 2.4 and jax 0.10.2: ``callable``, not a class,
public, in both), so a newer NumPy does not silently change what the page measures;
``tests/test_numpy_coverage.py`` checks that every listed name still exists in both
libraries, and that the page is what ``python -m transpiler.coverage --write`` produces.
"""
from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from pathlib import Path

SHARED_NUMPY = tuple("""
abs absolute acos acosh add all allclose amax amin angle any append apply_along_axis
apply_over_axes arange arccos arccosh arcsin arcsinh arctan arctan2 arctanh argmax argmin
argpartition argsort argwhere around array array_equal array_equiv array_repr array_split
array_str asarray asin asinh astype atan atan2 atanh atleast_1d atleast_2d atleast_3d
average bartlett bincount bitwise_and bitwise_count bitwise_invert bitwise_left_shift
bitwise_not bitwise_or bitwise_right_shift bitwise_xor blackman block broadcast_arrays
broadcast_shapes broadcast_to can_cast cbrt ceil choose clip column_stack compress concat
concatenate conj conjugate convolve copy copysign corrcoef correlate cos cosh
count_nonzero cov cross cumprod cumsum cumulative_prod cumulative_sum deg2rad degrees
delete diag diag_indices diag_indices_from diagflat diagonal diff digitize divide divmod
dot dsplit dstack ediff1d einsum einsum_path empty empty_like equal exp exp2 expand_dims
expm1 extract eye fabs fill_diagonal flatnonzero flip fliplr flipud float_power floor
floor_divide fmax fmin fmod frexp from_dlpack frombuffer fromfile fromfunction fromiter
frompyfunc fromstring full full_like gcd geomspace get_printoptions gradient greater
greater_equal hamming hanning heaviside histogram histogram2d histogram_bin_edges
histogramdd hsplit hstack hypot i0 identity imag indices inner insert interp intersect1d
invert isclose iscomplex iscomplexobj isdtype isfinite isin isinf isnan isneginf isposinf
isreal isrealobj isscalar issubdtype iterable ix_ kaiser kron lcm ldexp left_shift less
less_equal lexsort linspace load log log10 log1p log2 logaddexp logaddexp2 logical_and
logical_not logical_or logical_xor logspace mask_indices matmul matrix_transpose matvec
max maximum mean median meshgrid min minimum mod modf moveaxis multiply nan_to_num
nanargmax nanargmin nancumprod nancumsum nanmax nanmean nanmedian nanmin nanpercentile
nanprod nanquantile nanstd nansum nanvar ndim negative nextafter nonzero not_equal ones
ones_like outer packbits pad partition percentile permute_dims piecewise place poly
polyadd polyder polydiv polyfit polyint polymul polysub polyval positive pow power
printoptions prod promote_types ptp put put_along_axis quantile rad2deg radians ravel
ravel_multi_index real reciprocal remainder repeat reshape resize result_type right_shift
rint roll rollaxis roots rot90 round save savez searchsorted select set_printoptions
setdiff1d setxor1d shape sign signbit sin sinc sinh size sort sort_complex spacing split
sqrt square squeeze stack std subtract sum swapaxes take take_along_axis tan tanh
tensordot tile trace transpose trapezoid tri tril tril_indices tril_indices_from
trim_zeros triu triu_indices triu_indices_from true_divide trunc union1d unique unique_all
unique_counts unique_inverse unique_values unpackbits unravel_index unstack unwrap vander
var vdot vecdot vecmat vsplit vstack where zeros zeros_like
""".split())

SHARED_LINALG = tuple("""
cholesky cond cross det diagonal eig eigh eigvals eigvalsh inv lstsq matmul matrix_norm
matrix_power matrix_rank matrix_transpose multi_dot norm outer pinv qr slogdet solve svd
svdvals tensordot tensorinv tensorsolve trace vecdot vector_norm
""".split())

SHARED_FFT = tuple("""
fft fft2 fftfreq fftn fftshift hfft ifft ifft2 ifftn ifftshift ihfft irfft irfft2 irfftn
rfft rfft2 rfftfreq rfftn
""".split())

# Functions whose every argument is static by nature: NumPy runs them while the program
# is built, which is all they can mean.
STATIC_ONLY = {
    "numpy.get_printoptions": "reads NumPy's print options",
    "numpy.broadcast_shapes": "takes shapes, which are static",
    "numpy.promote_types": "takes dtypes, which are static",
}

# Functions no PSC program can run on traced arrays, and why.
NOT_SUPPORTED = {
    "numpy.load": "file I/O: read the file outside the jit_ps function and pass the array",
    "numpy.save": "file I/O: return the array and save it outside the jit_ps function",
    "numpy.savez": "file I/O: return the arrays and save them outside the jit_ps function",
    "numpy.fromfile": "file I/O: read the file outside the jit_ps function",
    "numpy.frombuffer": "reads a Python buffer's bytes: static arguments only",
    "numpy.fromstring": "parses a string: static arguments only",
    "numpy.fromiter": "consumes a Python iterator: static arguments only",
    "numpy.from_dlpack": "exchanges a device buffer: pass the array in as an argument",
    "numpy.frompyfunc": "wraps an opaque Python callable as an object-dtype ufunc",
    "numpy.array_repr": "formats the array's contents, which are not known while the "
                        "program is built (use transpiler.debug_print)",
    "numpy.array_str": "formats the array's contents, which are not known while the "
                       "program is built (use transpiler.debug_print)",
    "numpy.set_printoptions": "changes global state: call it outside the jit_ps function",
    "numpy.printoptions": "changes global state: use it outside the jit_ps function",
}

SECTIONS = (("numpy", "numpy", SHARED_NUMPY), ("numpy.linalg", "numpy.linalg", SHARED_LINALG),
            ("numpy.fft", "numpy.fft", SHARED_FFT))
SUPPORTED, PARTIAL, STATIC, MISSING = ("supported", "partial", "static arguments only",
                                       "not supported")
PAGE = Path(__file__).resolve().parent.parent / "docs" / "numpy_coverage.md"


def _module_notes() -> tuple[dict, dict]:
    """``COVERAGE_NOTES`` and ``UNSUPPORTED`` of every rule module, merged."""
    import runtime.numpy_rules as rules   # noqa: PLC0415  (registers every rule)
    partial, unsupported = {}, {}
    for info in pkgutil.iter_modules(rules.__path__):
        module = importlib.import_module(f"{rules.__name__}.{info.name}")
        partial.update(getattr(module, "COVERAGE_NOTES", {}))
        unsupported.update(getattr(module, "UNSUPPORTED", {}))
    return partial, unsupported


def statuses() -> dict[str, tuple[str, str]]:
    """``{"numpy.linalg.svd": (status, note)}`` for every name of the shared lists."""
    from runtime.translation import lookup_rule   # noqa: PLC0415
    partial, unsupported = _module_notes()
    result = {}
    for _, prefix, names in SECTIONS:
        for name in names:
            qualified = f"{prefix}.{name}"
            if qualified in unsupported:   # a rule that only refuses, with its reason
                result[qualified] = (MISSING, unsupported[qualified])
            elif lookup_rule(qualified) is not None:
                note = partial.get(qualified, "")
                result[qualified] = (PARTIAL if note else SUPPORTED,
                                     note.removeprefix("partial: "))
            elif qualified in STATIC_ONLY:
                result[qualified] = (STATIC, STATIC_ONLY[qualified])
            else:
                why = NOT_SUPPORTED.get(qualified) or "no translation rule yet"
                result[qualified] = (MISSING, why)
    return result


def _counts(found: dict, prefix: str, names) -> dict[str, int]:
    counts = dict.fromkeys((SUPPORTED, PARTIAL, STATIC, MISSING), 0)
    for name in names:
        counts[found[f"{prefix}.{name}"][0]] += 1
    return counts


def usable(counts: dict[str, int]) -> int:
    """Functions a PSC program can call: supported, partial or static by nature."""
    return counts[SUPPORTED] + counts[PARTIAL] + counts[STATIC]


def render() -> str:
    found = statuses()
    lines = ["# NumPy coverage", "",
             "Generated by `python -m transpiler.coverage --write` from the translation-rule "
             "registry; `tests/test_numpy_coverage.py` fails when this page is stale.  "
             "*Supported* means a call with traced arrays compiles and matches NumPy "
             "(values, dtype, shape), differential-tested against NumPy; *partial* states "
             "what is missing; *static arguments only* functions run in NumPy while the "
             "program is built.  The lists are the public functions NumPy 2.4 and "
             "`jax.numpy` 0.10.2 both define.", ""]
    summary = ["| namespace | shared | usable | supported | partial | static only "
               "| not supported |", "|---|---|---|---|---|---|---|"]
    body = []
    for title, prefix, names in SECTIONS:
        counts = _counts(found, prefix, names)
        summary.append(f"| `{title}` | {len(names)} | {usable(counts)} | "
                       f"{counts[SUPPORTED]} | {counts[PARTIAL]} | {counts[STATIC]} | "
                       f"{counts[MISSING]} |")
        body += ["", f"## `{title}`", "", "| function | status | notes |", "|---|---|---|"]
        for name in names:
            status, note = found[f"{prefix}.{name}"]
            body.append(f"| `{name}` | {status} | {note.replace('|', '/')} |")
    return "\n".join(lines + summary + body) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help=f"write {PAGE}")
    args = parser.parse_args(argv)
    text = render()
    if args.write:
        PAGE.write_text(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
