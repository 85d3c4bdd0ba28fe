"""Long fuzz campaigns: ``python -m tests.fuzz --examples N --seed S``.

Runs hypothesis rounds over `programs()`; each failure class (`FuzzFailure.kind`) found is
shrunk to a minimal program and printed, then treated as passing so that later rounds look
for *other* classes, until ``N`` programs have run.  ``--disable FAMILY`` keeps a family
(e.g. one with a known bug) out of the programs; ``--focus FAMILY`` forces it in.
"""
from __future__ import annotations

import argparse
import sys
import time

from hypothesis import HealthCheck, Phase, given, seed, settings

from . import FAMILIES, programs
from .oracle import FuzzFailure, check

_CLASSES: dict[str, type] = {}


def failure_class(kind: str) -> type:
    """One exception type per failure kind: hypothesis reports (and shrinks) failures of
    different types as different bugs."""
    if kind not in _CLASSES:
        _CLASSES[kind] = type(f"FuzzFailure{len(_CLASSES)}", (FuzzFailure,), {})
    return _CLASSES[kind]


def campaign(examples: int, start_seed: int, focus=None, disabled=(), shrink=True,
             out=sys.stdout):
    found: dict[str, FuzzFailure] = {}
    count = 0

    def test(program):
        nonlocal count
        count += 1
        if count % 100 == 0:
            print(f"... {count} programs, {len(found)} failure classes", file=out, flush=True)
        try:
            check(program)
        except FuzzFailure as failure:
            if failure.kind in found:
                return                      # known class: keep looking for new ones
            raise failure_class(failure.kind)(failure.kind, failure.detail,
                                              failure.program) from None

    phases = [Phase.generate] + ([Phase.shrink] if shrink else [])
    round_ = 0
    while count < examples:
        budget = examples - count
        runner = settings(max_examples=budget, database=None, deadline=None,
                          phases=phases, report_multiple_bugs=True, print_blob=False,
                          suppress_health_check=list(HealthCheck))(
            seed(start_seed + round_)(given(programs(focus, disabled))(test)))
        round_ += 1
        before = count
        try:
            runner()
        except BaseException as error:      # noqa: BLE001 - FuzzFailure or a group of them
            failures = [e for e in getattr(error, "exceptions", [error])
                        if isinstance(e, FuzzFailure)]
            if not failures:
                raise
            for failure in failures:
                if failure.kind not in found:
                    found[failure.kind] = failure
                    report(failure, len(found), out)
        else:
            if count == before:
                break
            if count - before >= budget:
                break
    print(f"\n{count} programs, {len(found)} failure classes", file=out)
    for kind in found:
        print(f"  {kind}", file=out)
    return found


def report(failure: FuzzFailure, number: int, out):
    print(f"\n=== failure class {number}: {failure.kind}", file=out)
    print(failure.detail.strip()[:2000], file=out)
    print("--- minimized reproducer ---", file=out)
    print(failure.program.repro(), file=out, flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m tests.fuzz", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--examples", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--focus", choices=FAMILIES)
    parser.add_argument("--disable", default="",
                        help="comma-separated families to leave out: " + ",".join(FAMILIES))
    parser.add_argument("--no-shrink", action="store_true")
    args = parser.parse_args(argv)
    disabled = [d for d in args.disable.split(",") if d]
    unknown = set(disabled) - set(FAMILIES)
    if unknown:
        parser.error(f"unknown families: {sorted(unknown)}")
    started = time.perf_counter()
    found = campaign(args.examples, args.seed, args.focus, disabled, not args.no_shrink)
    print(f"{time.perf_counter() - started:.0f} s", file=sys.stdout)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
