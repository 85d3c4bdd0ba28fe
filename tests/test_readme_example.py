"""The README's minimal program runs from a file and prints what the README says."""
from __future__ import annotations

import pathlib
import re
import subprocess
import sys

README = pathlib.Path(__file__).resolve().parent.parent / "README.md"


def _minimal_program() -> tuple[str, str]:
    text = README.read_text(encoding="utf-8")
    section = text[text.index("A minimal program (`hello_psc.py`"):]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    printed = re.search(r"`\.venv/bin/python hello_psc\.py` prints `([^`]+)` twice", section)
    return code, printed.group(1)


def test_minimal_program_prints_what_the_readme_says(tmp_path):
    code, printed = _minimal_program()
    script = tmp_path / "hello_psc.py"
    script.write_text(code, encoding="utf-8")
    root = str(README.parent)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=300, cwd=tmp_path,
                          env={"PYTHONPATH": root, "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [printed, printed]


def test_code_given_to_python_dash_c_is_refused_with_a_hint():
    done = subprocess.run([sys.executable, "-c", "import numpy as np\n"
                           "from transpiler import jit_ps\n"
                           "print(jit_ps(lambda x: x * 2)(np.ones(2)))"],
                          capture_output=True, text=True, timeout=300,
                          env={"PYTHONPATH": str(README.parent), "PATH": "/usr/bin:/bin"})
    assert done.returncode != 0
    assert "PSCSyntaxError" in done.stderr and "source of this lambda is not available" \
        in done.stderr and "define it in a .py file" in done.stderr
