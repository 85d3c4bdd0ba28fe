"""``psc-transpile SRC... -o OUTDIR [--check]``: write generated modules to disk."""
from __future__ import annotations

import argparse
import sys


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog="psc-transpile",
        description="Transpile @jit_ps functions to generated builder modules, without "
                    "importing or running the source.")
    parser.add_argument("sources", nargs="+", metavar="SRC", help="files or directories")
    parser.add_argument("-o", "--output", required=True, metavar="OUTDIR")
    parser.add_argument("--check", action="store_true",
                        help="exit 1 when a committed generated module is stale or missing")
    return parser.parse_args(argv)


def main(argv=None) -> int:
    parse_args(sys.argv[1:] if argv is None else argv)
    print("psc-transpile: the front end is not built yet in this version; only the runtime "
          "(builder, translation rules, compilation) is available.", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
