# Two commands on a fresh machine:  `make run` (the examples) and `make test` (the suite).
# Each creates the virtual environment and installs the project on first use.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python

.PHONY: venv run test bench fuzz clean

$(VENV)/.installed: setup.cfg pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $@

venv: $(VENV)/.installed

run: venv
	$(VENV)/bin/psc-transpile examples -o examples/__psc__
	$(PY) examples/run_all.py

test: venv
	$(PY) -m pytest

bench: venv
	$(PY) benchmarks/dispatch.py --write benchmarks/RESULTS.md
	$(PY) benchmarks/compile_latency.py --write benchmarks/RESULTS.md
	$(PY) benchmarks/selu_fusion.py --write benchmarks/RESULTS.md
	$(PY) benchmarks/table1.py --write benchmarks/RESULTS.md
	$(PY) benchmarks/allconv.py --write benchmarks/RESULTS.md
	$(PY) benchmarks/vmap.py --repeats 30 --write benchmarks/RESULTS.md
	$(PY) benchmarks/linalg.py --write benchmarks/RESULTS.md
	$(PY) benchmarks/loops.py --write benchmarks/RESULTS.md

# Differential fuzzing (tests/fuzz): random PSC programs run by plain NumPy and by jit_ps
# must agree.  `make fuzz FUZZ_EXAMPLES=100000 FUZZ_SEED=7 FUZZ_JOBS=4` for other campaigns.
FUZZ_EXAMPLES ?= 10000
FUZZ_SEED ?= 0
FUZZ_JOBS ?= 2

fuzz: venv
	$(PY) -m tests.fuzz --examples $(FUZZ_EXAMPLES) --seed $(FUZZ_SEED) --jobs $(FUZZ_JOBS)

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
