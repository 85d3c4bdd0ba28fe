"""Long fuzz campaigns: ``python -m tests.fuzz --examples N --seed S [--jobs J]``.

Runs hypothesis rounds over `programs()`; each failure class (`FuzzFailure.kind`) found is
shrunk to a minimal program and printed, then treated as passing so that later rounds look
for *other* classes, until ``N`` programs have run.  ``--disable FAMILY`` keeps a family
(e.g. one with a known bug) out of the programs; ``--focus FAMILY`` forces it in.
``--jobs J`` splits the programs over ``J`` processes, process ``k`` seeded ``S + k *
JOB_SEED_STRIDE`` (so a campaign's programs depend only on ``S``, ``N`` and ``J``); the
exit status is 1 if any process found a failure class.  ``make fuzz`` runs 10^4.
"""
from __future__ import annotations

import argparse
import os
import re
import signal
import subprocess
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
    try:
        _rounds(test, examples, start_seed, focus, disabled, phases, found, out,
                lambda: count)
        interrupted = ""
    except KeyboardInterrupt:           # Ctrl-C (or a parent's SIGINT): report the count
        interrupted = " (interrupted)"
    print(f"\n{count} programs, {len(found)} failure classes{interrupted}", file=out)
    for kind in found:
        print(f"  {kind}", file=out)
    return found


def _rounds(test, examples, start_seed, focus, disabled, phases, found, out, counted):
    """Hypothesis rounds until ``examples`` programs have run (``counted()``)."""
    round_ = 0
    while counted() < examples:
        count = counted()
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
            if counted() == before or counted() - before >= budget:
                break


def report(failure: FuzzFailure, number: int, out):
    print(f"\n=== failure class {number}: {failure.kind}", file=out)
    print(failure.detail.strip()[:2000], file=out)
    print("--- minimized reproducer ---", file=out)
    print(failure.program.repro(), file=out, flush=True)


JOB_SEED_STRIDE = 1_000_003


def parallel(args, disabled, out=sys.stdout) -> int:
    """Run the campaign as ``args.jobs`` child processes; print each one's output and the
    totals.  Returns the exit status."""
    share = [args.examples // args.jobs + (k < args.examples % args.jobs)
             for k in range(args.jobs)]
    children = []
    for k, examples in enumerate(share):
        command = [sys.executable, "-m", "tests.fuzz", "--examples", str(examples),
                   "--seed", str(args.seed + k * JOB_SEED_STRIDE), "--jobs", "1"]
        command += ["--disable", ",".join(disabled)] if disabled else []
        command += ["--focus", args.focus] if args.focus else []
        command += ["--no-shrink"] if args.no_shrink else []
        children.append(subprocess.Popen(command, stdout=subprocess.PIPE,
                                         stderr=subprocess.STDOUT, text=True,
                                         cwd=os.getcwd()))
    programs = classes = 0
    status, interrupted = 0, False
    for k, child in enumerate(children):
        while True:
            try:
                text, _ = child.communicate()
                break
            except KeyboardInterrupt:        # the children got it too: they report, end
                interrupted = True
        interrupted = interrupted or "(interrupted)" in text
        print(f"--- job {k} (seed {args.seed + k * JOB_SEED_STRIDE}) ---", file=out)
        print(text.rstrip(), file=out, flush=True)
        totals = re.findall(r"^(\d+) programs, (\d+) failure classes", text, re.M)
        if child.returncode not in (0, 1) or not totals:
            status = 2                       # a child died: count what it reported
            totals = re.findall(r"^\.\.\. (\d+) programs, (\d+) failure classes", text,
                                re.M) or [("0", "0")]
        programs += int(totals[-1][0])
        classes += int(totals[-1][1])
        status = max(status, child.returncode if child.returncode in (0, 1) else 2)
    print(f"\nTOTAL: {programs} programs in {args.jobs} processes, {classes} failure "
          f"classes{' (a job did not finish)' if status == 2 else ''}"
          f"{' (interrupted)' if interrupted else ''}", file=out)
    return status


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m tests.fuzz", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--examples", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--focus", choices=FAMILIES)
    parser.add_argument("--disable", default="",
                        help="comma-separated families to leave out: " + ",".join(FAMILIES))
    parser.add_argument("--no-shrink", action="store_true")
    parser.add_argument("--jobs", type=int, default=1,
                        help="processes to split the programs over (default 1)")
    args = parser.parse_args(argv)
    # Started in the background by a shell, a process inherits SIGINT ignored: take it
    # back, so that Ctrl-C or a parent's SIGINT stops a campaign with its count printed.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    disabled = [d for d in args.disable.split(",") if d]
    unknown = set(disabled) - set(FAMILIES)
    if unknown:
        parser.error(f"unknown families: {sorted(unknown)}")
    started = time.perf_counter()
    if args.jobs > 1:
        status = parallel(args, disabled)
        print(f"{time.perf_counter() - started:.0f} s", file=sys.stdout)
        return status
    found = campaign(args.examples, args.seed, args.focus, disabled, not args.no_shrink)
    print(f"{time.perf_counter() - started:.0f} s", file=sys.stdout)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
