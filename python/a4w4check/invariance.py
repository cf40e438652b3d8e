"""python -m a4w4check.invariance --kernel NAME (--shapes FILE | --cases FILE) [--m LIST]
[--cli PATH] [--work DIR] [--contract C|FILE] [--device cuda|cpu] [--discover-breaks]

Batch invariance of a Python kernel in one command (docs/cli/invariance.md): `a4w4check
invariance --export-ops` writes every call of the measurement (the batch, its repeat, rows
alone, the reversed batch) as an operand bundle, a4w4check.external runs the kernel on each,
and `a4w4check invariance --measure bundle:` judges the outputs in C, against the contract
the kernel declares. The judgement's lines go to standard output.

With --discover-breaks the kernel's contract comes from `a4w4check discover` instead: every
break of the measurement (two measured M of one (N, K), next to each other in --m, one
invariant and one variant) is probed at both M (the runner is this kernel), and the
contracts found (the accepted one, else discover's closest candidate, said so) become per-M
rules (`when N==..,K==..,M>..: C`, contracts §4.2's file form) in WORK/breaks.contract; the
same outputs are judged again against those rules, so a break the discovered contracts do
not explain DISAGREES. A pair without a break is probed at its smallest measured M.

Exit: the judgement's (0 every measurement as predicted, 1 one disagrees or failed, 5 one was
n/a), or that of the step that failed first (2 bad input, 3 a package not importable);
with --discover-breaks 5 also when discover found no contract at all for a side of a break.
"""
from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
from typing import Any, Sequence

from . import contract

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
    p.add_argument("--discover-breaks", action="store_true", help="probe the kernel with "
                   "a4w4check discover at both M of every break and judge again by those "
                   "contracts as per-M rules (WORK/breaks.contract)")
    p.add_argument("--discover-timeout", type=int, default=120, help="seconds for each "
                   "discover call (default 120)")
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
    judged = ["--out", os.path.join(work, "judged")] if args.discover_breaks else []
    rc = subprocess.run([args.cli, "invariance", "--measure", f"bundle:{outs}", *sel,
                         *judged]).returncode
    if not args.discover_breaks or rc not in (0, 1):
        return rc
    return _discover_breaks(args, work, sel)


Measured = dict[str, Any]  # one of results.json's invariance measurements


def _breaks(measured: list[Measured]) -> dict[tuple[int, int], list[int]]:
    """Per (N, K): the M values to probe, sorted: both M of every break (neighbours in the
    measured M, one invariant and one variant), or the smallest M where none breaks."""
    by_pair: dict[tuple[int, int], list[Measured]] = {}
    for m in measured:
        by_pair.setdefault((m["N"], m["K"]), []).append(m)
    probe: dict[tuple[int, int], list[int]] = {}
    for pair, ms in by_pair.items():
        ms.sort(key=lambda m: int(m["M"]))
        ends: set[int] = set()
        for a, b in zip(ms, ms[1:]):
            if {a["verdict"], b["verdict"]} == {"invariant", "variant"}:
                ends |= {a["M"], b["M"]}
        probe[pair] = sorted(ends or {ms[0]["M"]})
    return probe


def _discover_at(args: argparse.Namespace, work: str, N: int, K: int,
                 ms: list[int]) -> tuple[dict[int, tuple[str, str]], str]:
    """discover's contract at each M x N x K of ms (one call); ({M: (contract, how)}, why):
    how is "accepted" or "closest candidate, not accepted", why says why an M has neither."""
    d = os.path.join(work, f"discover-n{N}-k{K}")
    runner = [sys.executable, "-m", "a4w4check.external", "--kernel", args.kernel, "--quiet"]
    runner += ["--device", args.device] if args.device else []
    runner += ["--contract", args.contract] if args.contract else []
    out = os.path.join(d, "kernel.contract")
    os.makedirs(d, exist_ok=True)
    for old in (out, out + ".closest"):
        if os.path.isfile(old):
            os.remove(old)
    try:
        step = subprocess.run([args.cli, "discover", "--backend", f"bundle:{d}/out", "--probes",
                               f"{d}/probes", "--runner", shlex.join(runner), "--runner-timeout",
                               str(args.discover_timeout), "--shapes",
                               ",".join(f"{m}x{N}x{K}" for m in ms), "--out", out, "--quiet"],
                              stdout=subprocess.DEVNULL, timeout=args.discover_timeout)
    except subprocess.TimeoutExpired:
        return {}, f"discover ran past {args.discover_timeout} s"
    found: dict[int, tuple[str, str]] = {}
    # the accepted rules (discover writes them for the shapes it fitted, even when another
    # shape fits none), then the closest candidates for the rest
    for path, how in ((out, "accepted"), (out + ".closest", "closest candidate, not accepted")):
        if os.path.isfile(path):
            with open(path, encoding="utf-8") as f:
                lines = contract.rules(f.read())
            for m in ms:
                c = contract.rule_at(lines, m, N, K)
                if c and m not in found:
                    found[m] = (c, how)
    if not found:
        return {}, f"discover exit {step.returncode}, no contract and no closest candidate"
    return found, f"discover exit {step.returncode}, no rule for it"



def _rules(pair: tuple[int, int], found: dict[int, str]) -> list[str]:
    """Per-M rules of one pair (contracts §4.2's file form): each probed M and the unprobed M
    below it down to the probed M before take the contract found at it; the last rule covers
    the smallest probed M and every M under it."""
    N, K = pair
    ms = sorted(found)
    lines = [f"when N=={N},K=={K},M>{ms[i - 1]}: {found[ms[i]]}"
             for i in range(len(ms) - 1, 0, -1)]
    return lines + [f"when N=={N},K=={K}: {found[ms[0]]}"]


def _discover_breaks(args: argparse.Namespace, work: str, sel: list[str]) -> int:
    """discover at both M of every break of the measurement in WORK/judged, the per-M rules
    to WORK/breaks.contract, the outputs judged again by them; the judgement's exit code (5
    when a probed shape got no contract)."""
    with open(os.path.join(work, "judged", "results.json"), encoding="utf-8") as f:
        measured = json.load(f)["invariance"]["measurements"]
    rules, missing = [], 0
    for (N, K), ms in sorted(_breaks(measured).items()):
        found, how = _discover_at(args, work, N, K, ms)
        for m in ms:
            print(f"{PROG}: N {N} K {K} M {m}: discovered "
                  f"{found[m][0] + ' (' + found[m][1] + ')' if m in found else 'nothing: ' + how}")
        missing += len(ms) - len(found)
        rules += _rules((N, K), {m: c for m, (c, _) in found.items()}) if found else []
    path = os.path.join(work, "breaks.contract")
    with open(path, "w", encoding="utf-8") as f:
        f.write(f"# discovered at both M of every break of {args.kernel}'s measurement\n")
        f.write("".join(line + "\n" for line in rules))
    print(f"{PROG}: the per-M rules: {path}")
    sys.stdout.flush()
    if missing:
        print(f"{PROG}: {missing} probed shapes got no contract: not judged again",
              file=sys.stderr)
        return 5
    outs = os.path.join(work, "outs")
    return subprocess.run([args.cli, "invariance", "--measure", f"bundle:{outs}", *sel,
                           "--contract", path]).returncode


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
