# Two commands on a fresh machine:  `make run` (the examples) and `make test` (the suite).
# Each creates the virtual environment and installs the project on first use.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python

.PHONY: venv run test bench clean

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

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
