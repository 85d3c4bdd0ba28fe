"""`examples/run_all.py` (the main job, `make run`) runs every example, even one that ends
with `sys.exit(main())`, and fails when one fails."""
from __future__ import annotations

import importlib.util
import pathlib

import pytest

RUN_ALL = pathlib.Path(__file__).parents[1] / "examples" / "run_all.py"


def load_runner(folder):
    spec = importlib.util.spec_from_file_location("psc_run_all", RUN_ALL)
    runner = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(runner)
    runner.HERE = folder
    return runner


def test_an_example_exiting_cleanly_does_not_end_the_run(tmp_path, capsys):
    (tmp_path / "a_exits.py").write_text("import sys\nsys.exit(0)\n")
    (tmp_path / "b_runs.py").write_text("print('b ran')\n")
    assert load_runner(tmp_path).main() == 0
    out = capsys.readouterr().out
    assert "b ran" in out and "2 examples ran" in out


def test_a_failing_example_fails_the_run(tmp_path):
    (tmp_path / "a_fails.py").write_text("import sys\nsys.exit(3)\n")
    with pytest.raises(SystemExit) as info:
        load_runner(tmp_path).main()
    assert info.value.code == 3
