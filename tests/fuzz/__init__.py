"""A differential fuzzer: random small PSC programs, run as plain Python + NumPy and
through ``jit_ps``, must agree (`oracle.check`).

* `generator` writes the programs (`generate`, one `Chooser` stream of decisions);
* `oracle` runs and compares them;
* `programs(...)` is the hypothesis strategy (programs shrink to minimal reproducers);
* ``python -m tests.fuzz --examples N --seed S`` runs a long campaign (see `__main__`).

``tests/test_fuzz.py`` runs a bounded, derandomized number in CI.
"""
from __future__ import annotations

from .generator import (BYTEORDER, EARLY_RETURN, EXITS, FAMILIES, INPLACE, UFUNC_STAGED,
                        DrawChooser, Program, RandomChooser, generate)


def programs(focus=None, disabled=()):
    """Hypothesis strategy of `Program`s; ``focus`` forces one construct family in."""
    from hypothesis import strategies as st

    @st.composite
    def draw_program(draw):
        return generate(DrawChooser(draw), focus, disabled)
    return draw_program()


__all__ = ["BYTEORDER", "EARLY_RETURN", "EXITS", "FAMILIES", "INPLACE", "UFUNC_STAGED",
           "DrawChooser", "Program", "RandomChooser", "generate", "programs"]
