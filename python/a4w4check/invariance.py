"""python -m a4w4check.invariance --kernel NAME (--shapes FILE | --cases FILE) [--m LIST]
[--cli PATH] [--work DIR] [--contract C|FILE] [--device cuda|cpu]

Batch invariance of a Python kernel in one command (docs/cli/invariance.md): `a4w4check
invariance --export-ops` writes every call of the measurement (the batch, its repeat, rows
alone, the reversed batch) as an operand bundle, a4w4check.external runs the kernel on each,
and `a4w4check invariance --measure bundle:` judges the outputs in C, against the contract
the kernel declares. The judgement's lines go to standard output.

Exit: the judgement's (0 every measurement as predicted, 1 one disagrees or failed, 5 one was
n/a), or that of the step that failed first (2 bad input, 3 a package not importable).
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from typing import Sequence

PROG = "a4w4check.invariance"


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog=f"python -m {PROG}", description="Measure the batch "
                                "invariance of a GEMM kernel; the judging is a4w4check's.")
    p.add_argument("--kernel", required=True, help="a4w4check.external's kernel: a built-in "
                   "name or module:function")
    pairs = p.add_mutually_exclusive_group(required=True)
    pairs.add_argument("--shapes", help="shape list (a CSV naming M, N, K): its (N, K) pairs")
    pairs.add_argument("--cases", help="case file: its (N, K) pairs")
    p.add_argument("--m", help="the M values measured (a4w4check's default without it)")
    p.add_argument("--cli", default=os.environ.get("A4W4CHECK", "build/a4w4check"),
                   help="the a4w4check program (default $A4W4CHECK, else build/a4w4check)")
    p.add_argument("--work", help="directory for the operands (ops/) and outputs (outs/); "
                   "default a temporary one, removed after")
    p.add_argument("--contract", help="passed to a4w4check.external (default: the kernel's)")
    p.add_argument("--device", choices=("cuda", "cpu"), help="passed to a4w4check.external")
    return p.parse_args(argv)


def _run(args: argparse.Namespace, work: str) -> int:
    from . import external  # numpy: after --help, so that it prints without numpy
    ops, outs = os.path.join(work, "ops"), os.path.join(work, "outs")
    sel = ["--shapes", args.shapes] if args.shapes else ["--cases", args.cases]
    sel += ["--m", args.m] if args.m else []
    step = subprocess.run([args.cli, "invariance", "--export-ops", ops, *sel],
                          stdout=subprocess.DEVNULL)
    if step.returncode:
        return step.returncode
    ext = ["--ops", ops, "--out", outs, "--kernel", args.kernel, "--quiet"]
    ext += ["--contract", args.contract] if args.contract else []
    ext += ["--device", args.device] if args.device else []
    rc = external.main(ext)
    if rc not in (0, 1):  # 1: some call failed; the judgement names it FAILED
        return rc
    sys.stdout.flush()
    return subprocess.run([args.cli, "invariance", "--measure", f"bundle:{outs}",
                           *sel]).returncode


def main(argv: Sequence[str] | None = None) -> int:
    """The program: parse argv (sys.argv[1:] when None), run the three steps; the exit code."""
    args = _parse(argv)
    try:
        if args.work:
            return _run(args, args.work)
        with tempfile.TemporaryDirectory(prefix="a4w4-invariance-") as work:
            return _run(args, work)
    except OSError as e:
        print(f"{PROG}: {args.cli}: {e.strerror or e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
