"""Differential fuzzing: random small PSC programs (`fuzz.generator`) must give what plain
Python + NumPy gives — values, dtypes, shapes — or both must raise (`fuzz.oracle.check`).

One test runs the general mix; one per construct family of the issue forces that family
into every program: (a) exits of loops over containers, (b) an early return before a
traced if/else, (c) in-place operators on static local arrays, (d) ufunc calls inside
staged branches and loop bodies, (e) arguments in non-native byte order, then native, on
one compiled function.  Hypothesis is derandomized (the same programs on every run) and
shrinks a failing program before reporting it.  With the default ``PSC_FUZZ_EXAMPLES``
(40) the suite runs 240 programs; `test_the_mix_holds_every_construct_of_the_issue` checks
that they hold every construct the issue names (traced if/elif/else, while, for over
ranges, containers and an array's rows, break/continue/early return, in-place updates,
ufuncs) over every argument kind (0-, 1-, 2-d and broadcasting shapes, float64/float32/
int64/int32, Python scalars, non-native byte order).  ``PSC_FUZZ_EXAMPLES`` sets the number of
programs per test (each costs an XLA compile); ``python -m tests.fuzz`` runs long
campaigns.
"""
from __future__ import annotations

import io
import os
import random
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from fuzz import FAMILIES, RandomChooser, generate, programs
from fuzz.__main__ import campaign
from fuzz.oracle import check

EXAMPLES = int(os.environ.get("PSC_FUZZ_EXAMPLES", "40"))


def fuzz_settings():
    return settings(max_examples=EXAMPLES, derandomize=True, database=None, deadline=None,
                    print_blob=False, suppress_health_check=list(HealthCheck))


@fuzz_settings()
@given(programs())
def test_mixed_programs_agree_with_numpy(program):
    check(program)


@pytest.mark.parametrize("family", FAMILIES)
def test_family_programs_agree_with_numpy(family):
    @fuzz_settings()
    @given(programs(focus=family))
    def run(program):
        check(program)
    run()


@pytest.mark.parametrize("family", FAMILIES)
def test_focus_puts_the_family_in_nearly_every_program(family):
    """The family tests exercise their family at a known rate (no compiles here)."""
    rng = random.Random(0)
    holding = sum(family in generate(RandomChooser(rng), focus=family).families
                  for _ in range(200))
    assert holding >= 190, holding


def test_disabled_family_stays_out_of_the_mix():
    rng = random.Random(1)
    for _ in range(200):
        program = generate(RandomChooser(rng), disabled=FAMILIES)
        assert not program.families, program.source


def test_generated_programs_run_as_plain_python():
    """The generator's own contract: programs compile and end (plain Python)."""
    from fuzz.oracle import load, run_python
    rng = random.Random(2)
    for i in range(100):
        program = generate(RandomChooser(rng), focus=([None] + list(FAMILIES))[i % 6])
        fn = load(program)
        for call in program.calls:
            outcome = run_python(fn, [a.make() for a in call])
            assert not type(outcome.error).__name__ == "_Timeout", program.source


def test_campaign_entry_point_runs():
    out = io.StringIO()
    found = campaign(examples=4, start_seed=0, disabled=FAMILIES, shrink=False, out=out)
    assert "programs" in out.getvalue()
    assert isinstance(found, dict)


# Every construct the issue lists, as a pattern of the generated source: the mixed test's
# programs must hold each one regularly (a generator change that loses one fails here).
CONSTRUCTS = {
    "traced if": r"^\s+if .*(sum|max|min|mean)\(",
    "elif/else": r"^\s+(elif .*|else):$",
    "while over a traced test": r"^\s+while w\d+ < \d and ",
    "for over range": r"^\s+for i\d+ in range\(",
    "for over a list/tuple/zip/enumerate": r"^\s+for .* in (\[|\(|zip\(|enumerate\()",
    "for over an array's rows": r"^\s+for c\d+ in a\d:$",
    "break": r"^\s+break$",
    "continue": r"^\s+continue$",
    "early return": r"^\s+if .*:\n\s+return ",
    "in-place operator": r"^\s+\w+ [-+*]= ",
    "setitem": r"^\s+\w+\[[^\]]+\] [-+*]?= ",
    "ufunc": r"np\.(add|multiply|subtract|maximum|minimum)\(",
    "np.where": r"np\.where\(",
    "astype": r"\.astype\(np\.",
    "reduction over an axis": r", axis=0\)",
}
ARGUMENT_FEATURES = {
    "2-d argument": lambda a: len(a.shape) == 2,
    "0-d argument": lambda a: a.kind == "array" and a.shape == (),
    "broadcasting shape": lambda a: a.shape in ((1,), (2, 1), (1, 3)),
    "float32": lambda a: "f4" in a.dtype,
    "int64": lambda a: "i8" in a.dtype,
    "int32": lambda a: "i4" in a.dtype,
    "Python scalar": lambda a: a.kind in ("float", "int"),
    "non-native byte order": lambda a: a.kind == "array" and not np.dtype(a.dtype).isnative,
}


def test_the_mix_holds_every_construct_of_the_issue():
    rng = random.Random(3)
    sample = [generate(RandomChooser(rng)) for _ in range(400)]
    for construct, pattern in CONSTRUCTS.items():
        holding = sum(bool(re.search(pattern, p.source, re.M)) for p in sample)
        assert holding >= 8, (construct, holding)
    for feature, test in ARGUMENT_FEATURES.items():
        holding = sum(any(test(a) for call in p.calls for a in call) for p in sample)
        assert holding >= 8, (feature, holding)
