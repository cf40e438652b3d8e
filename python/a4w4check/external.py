"""python -m a4w4check.external --ops DIR --out DIR --kernel NAME [--contract C|FILE]
[--e8m0-code0 2^-127|2^-126] [--device cuda|cpu] [--quiet]

Runs a GEMM kernel (a4w4check.kernels) on every case of an operand directory (DIR/manifest.json,
a4w4-operands/1) and writes one output bundle per case (OUT/<case>.safetensors, a4w4-output/1),
OUT/manifest.json (a4w4-outputs/1, with the cases written and those that failed) and
OUT/contract.txt. The C harness judges them: `a4w4check run --backend bundle:OUT`. OUT holds
one run of one kernel: before the first case runs, an earlier run's manifest.json,
contract.txt and outputs of these cases are removed, so a run cut short leaves no manifest
and no earlier output beside its own (`run` then skips the cases it did not reach:
INCOMPLETE). The
manifest records the reading of E8M0 scale code 0 the kernel declares (--e8m0-code0, or the
kernel's own; contracts §1) as "e8m0_code0": the harness judges cases holding code 0 under it,
and an undeclared kernel's under both readings (a match of one only is ambiguous).

The first case written is run again after the last one, in the same process (docs/backends.md
"Call sequences"): when its outputs differ from its first call's (a warm-up bug, a cache that
went stale), or the repeat fails, the case is listed as failed with both calls named and its
file is removed, so `run --backend bundle:OUT` fails it. Not for a bounded(S) or atomic(S)
contract (its outputs may differ from call to call within the bound or the set of orders) nor
for discover's probe rounds.

A module:function kernel (a runner) is called as kernels.call_runner says: every input tensor
of the case's operand bundle as a keyword (torch uint8 on the device), no M, N, K, and never the
expected values (y_exact, any y_*: they stay out of everything the kernel is handed, see
bundle.load_kernel_inputs). A runner whose signature cannot take that call is refused before
any case runs: one line naming the runner and the rule, exit 2.

Operand directories that `a4w4check discover` writes (manifest "set": "discover") are probe
rounds: their outputs are read by discover, never judged by a contract, so a kernel that
declares none runs without --contract (the outputs record "exact" as a placeholder and the
manifest says "probes").

Progress: a line on stderr ("a4w4check.external: [i/n] NAME MxNxK, S s elapsed, ETA E s",
newline-terminated) after every case when stderr is not a terminal, on a terminal at most every
2 s and after the last case; --quiet leaves them out.

Exit: 0 every case written; 1 some case's kernel failed (named in the manifest's "failed");
2 bad input (an operand bundle or manifest breaks a rule or is not a regular file, a FIFO
say, refused at once; unknown kernel, no or bad contract, or --out the --ops directory
itself); 3 the kernel's Python package, or numpy, is not importable; 4 an output could not be
written (--out cannot be created or is not a directory, an earlier run's file there cannot be
removed, an output or the manifest cannot be written), as for the C commands (docs/cli).
Failures are one line on stderr starting "a4w4check.external: ".
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any, Iterable, Sequence

PROG = "a4w4check.external"

try:
    from . import bundle, contract, kernels
    from . import safetensors_codec as codec
    from .errors import BundleError
except ImportError as _missing:  # numpy: every bundle is numpy arrays
    if __name__ != "__main__":
        raise
    from .errors import missing_package
    print(f"{PROG}: {missing_package(_missing)}", file=sys.stderr)
    sys.exit(3)


CODE0_READINGS = ("2^-127", "2^-126")


class Usage(Exception):
    """Bad input: one line, exit 2."""


class Unwritable(Exception):
    """An output that could not be written: one line, exit 4 (docs/cli/README.md)."""


def _say(msg: object) -> None:
    print(f"{PROG}: {' '.join(str(msg).split())}", file=sys.stderr)


def _parse(argv: Sequence[str] | None, prog: str) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog=prog, description="Run a GEMM on every "
                                "case of an operand-bundle directory; write output bundles.")
    p.add_argument("--ops", required=True, help="operand bundle directory (manifest.json)")
    p.add_argument("--out", required=True, help="output bundle directory (created)")
    p.add_argument("--kernel", required=True, help=f"{', '.join(kernels.BUILTIN)} or "
                   "module:function")
    p.add_argument("--contract", help="exact, ordered(S), bounded(S), atomic(S), tree(...), or "
                   "a file holding one (`a4w4check discover --out FILE`; default: the kernel's)")
    p.add_argument("--e8m0-code0", choices=CODE0_READINGS, help="the reading of E8M0 scale "
                   "code 0 the kernel implements (contracts §1; default: the kernel's "
                   "a4w4_e8m0_code0, else undeclared)")
    p.add_argument("--device", choices=("cuda", "cpu"), help="default: the kernel's")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    p.add_argument("--max-outputs", type=_positive, metavar="N", help="run only the cases of "
                   "at most N outputs (M x N); each larger one gets no output bundle, is "
                   "named on stderr, and `run` counts it skipped (INCOMPLETE, exit 5)")
    return p.parse_args(argv)


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is no positive decimal integer")
    return int(text)


def _outputs(path: str) -> int:
    """M x N of an operand bundle, from its metadata (0 when it names none: such a case runs)."""
    meta = codec.read_header(path).metadata or {}
    try:
        return int(meta.get("M", 0)) * int(meta.get("N", 0))
    except ValueError:
        return 0


class Progress:
    """A newline-terminated line on stderr per case, "[i/n] NAME MxNxK, S s elapsed, ETA E s":
    every case when stderr is not a terminal (a log, CI), else a case that ends at least
    `every` seconds after the last line, and the last case."""

    def __init__(self, total: int, quiet: bool, every: float = 2.0) -> None:
        self.total, self.quiet = total, quiet
        self.every = every if sys.stderr.isatty() else 0.0
        self.t0 = self.last = time.monotonic()

    def case_done(self, done: int, name: str, dims: str) -> None:
        now = time.monotonic()
        if self.quiet or (now - self.last < self.every and done < self.total):
            return
        self.last = now
        spent = now - self.t0
        eta = spent / done * (self.total - done) if done else 0.0
        print(f"{PROG}: [{done}/{self.total}] {name} {dims}, {spent:.0f} s elapsed, "
              f"ETA {eta:.0f} s", file=sys.stderr, flush=True)


def _contract(args: argparse.Namespace, kern: kernels.Kernel, probes: bool = False) -> str:
    c: str | None = args.contract or kern.contract or ("exact" if probes else None)
    if not c:
        raise Usage(f"kernel {kern.name} declares no contract: pass --contract or give the "
                    "function an a4w4_contract attribute")
    try:
        return contract.resolve(c)
    except ValueError as e:
        raise Usage(str(e)) from None


def _code0(args: argparse.Namespace, kern: kernels.Kernel) -> str | None:
    """The E8M0 code-0 reading to declare: --e8m0-code0, else the kernel's (None: none)."""
    c: str | None = args.e8m0_code0 or kern.e8m0_code0
    if c is not None and c not in CODE0_READINGS:
        raise Usage(f"kernel {kern.name}: a4w4_e8m0_code0 is {c!r}, not one of "
                    f"{', '.join(CODE0_READINGS)} (contracts §1)")
    return c


def _cuda() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


def _device(args: argparse.Namespace, kern: kernels.Kernel) -> str:
    dev: str = args.device or kern.device
    if dev == "auto":
        dev = "cuda" if _cuda() else "cpu"
    if dev == "cuda" and not _cuda():
        raise Usage(f"kernel {kern.name} runs on --device cuda, and torch sees no CUDA device "
                    "here (--device cpu where the kernel allows it)")
    return dev


def _check_all(ops_dir: str) -> tuple[dict[str, Any], dict[str, str], set[frozenset[str]]]:
    """The operand manifest and every case's header, validated before any kernel runs.
    Returns the manifest, case name -> bundle path, and the distinct sets of input tensor
    names (what a runner is handed: the expected values left out)."""
    manifest = bundle.read_operand_manifest(ops_dir)
    paths: dict[str, str] = {}
    inputs: set[frozenset[str]] = set()
    for name in manifest["cases"]:
        path = os.path.join(ops_dir, bundle.file_name(name))
        try:
            head = codec.read_header(path)
        except OSError as e:
            raise BundleError(path, "missing-bundle", f"cannot read ({e.strerror})") from None
        bundle.check_operands(head)
        got = (head.metadata or {}).get("name")
        if got != name:
            raise BundleError(path, "name", f"metadata name={got!r}, the manifest says {name!r}")
        paths[name] = path
        inputs.add(frozenset(n for n in head.infos if not bundle.is_expected(n)))
    return manifest, paths, inputs


def _check_runner(kern: kernels.Kernel, inputs: set[frozenset[str]]) -> None:
    """Usage (one line) when the runner cannot take the call of some case (kernels.check_runner),
    before any case runs."""
    for names in sorted(inputs, key=sorted):
        problem = kernels.check_runner(kern, names)
        if problem:
            raise Usage(problem)


def _operands(path: str, device: str) -> bundle.Bundle:
    """The case's input tensors (no expected values) on device: torch, or numpy without it."""
    try:
        import torch  # noqa: F401
    except ImportError:
        return bundle.load_kernel_inputs(path)
    b = bundle.load_kernel_inputs(path, as_torch=True)
    b.tensors = {n: t.to(device) for n, t in b.tensors.items()}
    return b


def _run_case(kern: kernels.Kernel, path: str, device: str) -> tuple[dict[str, str], Any]:
    """(the operand bundle's metadata, y as uint16 bf16 bits) of one case."""
    b = _operands(path, device)
    return b.meta, _call(kern, b, device)


def _call(kern: kernels.Kernel, b: bundle.Bundle, device: str) -> Any:
    """y as uint16 bf16 bits of the kernel on operand bundle b."""
    M, N, K = b.dims()
    y, wrote = kernels.run_watched(kern, b.tensors, (M, N, K), device)
    if wrote:
        raise ValueError(f"the kernel wrote into its input {', '.join(wrote)} (operands are "
                         "read-only: docs/backends.md)")
    return kernels.y_bits(y, M, N)


def _repeat_first(kern: kernels.Kernel, paths: dict[str, str], out: str, device: str,
                  written: list[str], failed: dict[str, str]) -> None:
    """The call sequence the file-based path allows (docs/backends.md "Call sequences"): the
    first case written runs again, in this process, after every other case; when the repeat
    fails or its outputs differ from the first call's, that case moves from written to failed
    (its file removed), the reason naming both calls."""
    if not written:
        return
    name, n = written[0], len(paths) + 1
    after = f"after {written[-1]}" if len(written) > 1 else "right after its first call"
    first = bundle.load_output(os.path.join(out, bundle.file_name(name))).tensors["y"]
    try:
        y = _run_case(kern, paths[name], device)[1]
    except Exception as e:  # the repeat is this case's call like any other
        failed[name] = (f"call {n} in one process, {name} again {after}, failed: "
                        + " ".join(f"{type(e).__name__}: {e}".split()))
    else:
        differ = int((y != first).sum())
        if differ:
            failed[name] = (f"call {n} in one process, {name} again {after}, differs from its "
                            f"first call (call 1): {differ} of {y.size} outputs")
    if name in failed:
        written.remove(name)
        os.remove(os.path.join(out, bundle.file_name(name)))


def _clear_earlier(out: str, names: Iterable[str]) -> None:
    """An earlier run's manifest, contract.txt and outputs of these cases removed from out
    before any case runs: OUT is one run of one kernel (docs/backends.md), so a run cut short
    (killed, out of memory) leaves no manifest and none of the earlier run's outputs beside
    its own, and a case failing now leaves no earlier output for `run` to refuse as stale."""
    for f in ["manifest.json", "contract.txt", *(bundle.file_name(n) for n in names)]:
        try:
            os.remove(os.path.join(out, f))
        except FileNotFoundError:
            pass
        except OSError as e:
            raise Unwritable(f"{out}: cannot remove an earlier run's {f} ({e.strerror})") from None


def _save(out: str, name: str, y: Any, meta: dict[str, str], kernel: str, contract: str) -> None:
    """Case name's output bundle into out; Unwritable when the file cannot be written (a full
    disk is no failure of the kernel's)."""
    try:
        bundle.save_output(out, name, y, source=meta, kernel=kernel, contract=contract)
    except OSError as e:
        raise Unwritable(f"{os.path.join(out, bundle.file_name(name))}: cannot write "
                         f"({e.strerror})") from None


def _same_dir(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:  # either does not exist (yet): not the same
        return False


def run(args: argparse.Namespace) -> int:
    """Do the work of main() for parsed args; returns the exit code (raises Usage,
    BundleError, KernelUnavailable for the caller to report)."""
    if _same_dir(args.ops, args.out):
        raise Usage(f"--out {args.out} is the operand directory --ops {args.ops}: writing "
                    "there would overwrite its bundles and manifest.json; give another directory")
    kern = kernels.load(args.kernel)
    manifest, paths, inputs = _check_all(args.ops)
    _check_runner(kern, inputs)
    probes = manifest.get("set") == "discover"
    contract, device = _contract(args, kern, probes), _device(args, kern)
    code0 = _code0(args, kern)
    try:
        os.makedirs(args.out, exist_ok=True)
    except OSError as e:
        raise Unwritable(f"{args.out}: cannot create the output directory ({e.strerror})") from None
    if not os.path.isdir(args.out):
        raise Unwritable(f"{args.out}: not a directory")
    _clear_earlier(args.out, paths)
    written: list[str] = []
    failed: dict[str, str] = {}
    left: list[str] = []
    if args.max_outputs:
        left = [n for n, p in paths.items() if _outputs(p) > args.max_outputs]
        for n in left:
            _say(f"--max-outputs {args.max_outputs}: {n} left out ({_outputs(paths[n])} "
                 "outputs); `run` counts it skipped")
        paths = {n: p for n, p in paths.items() if n not in left}
    progress = Progress(len(paths), args.quiet)
    for done, (name, path) in enumerate(paths.items(), 1):
        meta: dict[str, str] = {}
        try:
            b = _operands(path, device)
            meta = b.meta  # the shape in the progress line even when the kernel fails
            y = _call(kern, b, device)
        except BundleError:
            raise
        except Exception as e:  # the kernel's failure is this case's, the rest go on
            failed[name] = " ".join(f"{type(e).__name__}: {e}".split())
        else:
            _save(args.out, name, y, meta, kern.name, contract)
            written.append(name)
        progress.case_done(done, name, "x".join(meta.get(k, "?") for k in ("M", "N", "K")))
    # discover's probe rounds are read by discover, never judged; a bounded(S) or atomic(S)
    # kernel's outputs may differ from call to call within its bound or its set of orders,
    # which only the harness can judge
    if not probes and "bounded" not in contract and "atomic(" not in contract:
        _repeat_first(kern, paths, args.out, device, written, failed)
    try:
        bundle.write_outputs_manifest(args.out, kernel=kern.name, contract=contract,
                                      matrix_hash=manifest.get("matrix_hash", ""),
                                      tool_version=manifest.get("tool_version", ""),
                                      cases=written, failed=failed, e8m0_code0=code0,
                                      note="probes" if probes and not (args.contract or
                                                                       kern.contract) else None)
    except OSError as e:
        raise Unwritable(f"{args.out}: cannot write manifest.json ({e.strerror})") from None
    first = next(iter(failed.items()), None)  # why, beside the count: no need to open the manifest
    print(f"{PROG}: {kern.name} ({contract}) on {device}: {len(written)} cases written, "
          f"{len(failed)} failed" + (f" (first {first[0]}: {first[1]})" if first else "") +
          (f", {len(left)} left out (--max-outputs)" if left else "") + f" -> {args.out}")
    return 1 if failed else 0


def main(argv: Sequence[str] | None = None, prog: str = f"python -m {PROG}") -> int:
    """The program: parse argv (sys.argv[1:] when None), run, report; returns the exit code.
    prog names the program in --help (a4w4check-py external, or python -m ...)."""
    args = _parse(argv, prog)
    try:
        return run(args)
    except kernels.KernelUnavailable as e:
        _say(e)
        return 3
    except Unwritable as e:
        _say(e)
        return 4
    except (Usage, BundleError, ValueError) as e:
        _say(e)
        return 2
    except OSError as e:
        _say(f"{getattr(e, 'filename', '') or ''}: {e.strerror or e}")
        return 2


if __name__ == "__main__":
    sys.exit(main())
