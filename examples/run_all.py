"""Run every example script in this folder, in order; fail loudly if one fails."""
from __future__ import annotations

import pathlib
import runpy
import sys
import time

HERE = pathlib.Path(__file__).parent


def main() -> int:
    scripts = sorted(p for p in HERE.glob("*.py") if p.name != "run_all.py")
    for script in scripts:
        print(f"=== {script.name}")
        start = time.perf_counter()
        try:
            runpy.run_path(str(script), run_name="__main__")
        except SystemExit as exit_:   # an example's `sys.exit(main())` must not end the run
            if exit_.code not in (None, 0):
                raise
        print(f"=== {script.name} ok ({time.perf_counter() - start:.2f} s)\n")
    print(f"{len(scripts)} examples ran")
    return 0


if __name__ == "__main__":
    sys.exit(main())
