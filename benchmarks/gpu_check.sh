#!/usr/bin/env bash
# Checks psc-transpiler on an NVIDIA GPU and writes what it found to one file.
#
#   .venv/bin/pip install -e '.[test,cuda]'     # jax's CUDA 12 plugin of the pinned jaxlib
#   benchmarks/gpu_check.sh [RESULTS_FILE]      # default: benchmarks/gpu_results.md
#
# 1. that jax's default backend (and so ours: runtime/client.py asks jax) is the GPU;
# 2. a subset of the test suite (TESTS below: the API, NumPy rules, control flow,
#    derivatives, batching, linalg through cuSOLVER, results as NumPy) on the GPU;
# 3. benchmarks/selu_fusion.py (does XLA:GPU fuse the SeLU into the matmul?) and
#    benchmarks/table1.py (Table 1), each writing its section into RESULTS_FILE (never
#    into benchmarks/RESULTS.md: copy the figures there with the machine's description).
# Every step runs even when an earlier one fails; the exit status is 1 if any failed.
# Environment: PYTHON (default .venv/bin/python), TESTS (a space-separated list of test
# files to run instead of the default subset), TABLE1_SIZES (default "reference"),
# SELU_ARGS (extra arguments of selu_fusion.py), GPU_CHECK_DRY_RUN=1 (run every step on
# the CPU backend, to check this script; the file says so).
set -u
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-.venv/bin/python}
OUT=${1:-benchmarks/gpu_results.md}
TABLE1_SIZES=${TABLE1_SIZES:-reference}
TESTS=${TESTS:-"tests/test_readme_example.py tests/test_jit_api.py tests/test_builder_ops.py
  tests/test_numpy_elementwise.py tests/test_numpy_reductions.py tests/test_indexing.py
  tests/test_control_flow_corpus.py tests/test_autodiff.py tests/test_vmap.py
  tests/test_random.py tests/test_linalg_lapack.py tests/test_linalg_gpu_lowering.py
  tests/test_results_numpy.py tests/test_large_inputs.py"}
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
failed=0

{
  echo "# GPU check ($(date -u '+%Y-%m-%d %H:%M UTC'))"
  echo
  gpu=$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader \
        2>/dev/null | head -1)
  echo "Machine: ${gpu:-no nvidia-smi}, $(nproc) CPU cores, $(uname -sm)."
  echo
} > "$OUT"

echo "== backend" | tee -a "$OUT"
if ! "$PYTHON" - >> "$OUT" 2>&1 <<'PY'
import jax
import transpiler
print(f"jax {jax.__version__}: default backend {jax.default_backend()}, "
      f"devices {jax.devices()}, ours {transpiler.devices()}")
if jax.default_backend() != "gpu":
    import os
    if os.environ.get("GPU_CHECK_DRY_RUN") != "1":
        raise SystemExit("no GPU backend: install the [cuda] extra on a machine with a GPU")
    print("DRY RUN on", jax.default_backend(), "(GPU_CHECK_DRY_RUN=1): not a GPU result")
PY
then
  echo "no GPU backend: see $OUT" >&2
  exit 1
fi

echo "== tests" | tee -a "$OUT"
LOG=$(mktemp)
# shellcheck disable=SC2086  # TESTS and SELU_ARGS are lists
if ! timeout 3600 "$PYTHON" -m pytest $TESTS -q -p no:cacheprovider -o addopts= \
     > "$LOG" 2>&1; then
  failed=1
fi
{ echo '```'; grep -E "passed|failed|error" "$LOG" | tail -30; echo '```'; echo; } >> "$OUT"
rm -f "$LOG"

echo "== selu_fusion" | tee -a "$OUT"
timeout 1800 "$PYTHON" benchmarks/selu_fusion.py ${SELU_ARGS:-} --write "$OUT" || failed=1

echo "== table1" | tee -a "$OUT"
timeout 3600 "$PYTHON" benchmarks/table1.py --sizes "$TABLE1_SIZES" --write "$OUT" || failed=1

echo "results: $OUT (exit $failed)"
exit $failed
