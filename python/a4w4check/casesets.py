"""a4w4check.casesets: the case sets as Case lists, and the pytest parametrisation over them.

    @a4w4check.cases("premerge-quick")       # "premerge" for a kernel on a GPU
    def test_my_gemm(case):
        a4w4check.assert_bitexact(my_gemm, case)

Sets (load(which)):
  premerge, edge, nightly, hazard   cases/<set>.csv, the CLI's sets (name, M, N, K, regime,
                                    seed: the same operands `a4w4check run --set` generates)
  aiter-op-test                     the 69 (M, N, K) of AITER's op_tests/test_gemm_a4w4.py
                                    (cases/aiter/op_test_gemm_a4w4_shapes.csv, source in
                                    cases/NOTICE), 67 distinct, regime normal, seed 1
  dsv3-layers                       the 30 (M, N, K) of AITER's DeepSeek-V3 tuned table
                                    (cases/aiter/dsv3_a4w4_blockscale_tuned_gemm.csv): a
                                    model's layer shapes, regime normal, seed 1
  premerge-quick                    cases/premerge-quick.csv, the CLI's `run --set
                                    premerge-quick`: the pre-merge set for a kernel judged on
                                    the CPU in minutes: its 146 cases of at most 2^22 outputs,
                                    and each of its 61 larger ones replaced by a smaller case
                                    (qb_*, qg_*, tagged for:<the case>) that keeps its padded-M
                                    bucket, tile edges and grid; docs/bridge.md states what it
                                    does not keep
  a path to a case file             name,M,N,K,regime,seed,tags
  a list of (M, N, K)               a model's layer shapes of your own (regime normal, seed 1)
The case files are found at $A4W4CHECK_CASES, in the package (a4w4check/cases, where
`pip install ./python` puts them) or in the repository's cases/.
"""
from __future__ import annotations

import csv
import operator
import os
from typing import Any, Callable, Iterable, Optional, Sequence, TypeVar, Union

from .inproc import Case

SHAPE_SETS = {"aiter-op-test": ("aiter/op_test_gemm_a4w4_shapes.csv", "aiter"),
              "dsv3-layers": ("aiter/dsv3_a4w4_blockscale_tuned_gemm.csv", "dsv3")}
CASE_SETS = ("premerge", "premerge-quick", "edge", "nightly", "hazard")

F = TypeVar("F", bound=Callable[..., Any])


def cases_dir() -> str:
    """The directory holding the case files (see the module docstring)."""
    here = os.path.dirname(os.path.abspath(__file__))
    for d in (os.environ.get("A4W4CHECK_CASES"), os.path.join(here, "cases"),
              os.path.join(os.path.dirname(os.path.dirname(here)), "cases")):
        if d and os.path.isfile(os.path.join(d, "edge.csv")):
            return d
    raise FileNotFoundError("a4w4check: no case files found (set A4W4CHECK_CASES to the "
                            "repository's cases/ directory)")


def read_case_file(path: str) -> list[Case]:
    """The cases of a case file (docs/cases.md: '#' comments, header name,M,N,K,regime,seed,
    tags). The library checks each case's shape and regime when it generates it."""
    with open(path, newline="") as f:
        rows = [r for r in csv.reader(f) if r and not r[0].startswith("#")]
    if not rows or rows[0][:6] != ["name", "M", "N", "K", "regime", "seed"]:
        raise ValueError(f"{path}: header must be name,M,N,K,regime,seed,tags")
    return [Case(r[0], int(r[1]), int(r[2]), int(r[3]), r[4], int(r[5]),
                 r[6] if len(r) > 6 else "") for r in rows[1:]]


def shapes_cases(shapes: Iterable[Sequence[int]], prefix: str = "layer",
                 regime: str = "normal", seed: int = 1) -> list[Case]:
    """One case per distinct (M, N, K), in the order given, named <prefix>_m<M>_n<N>_k<K>."""
    out: list[Case] = []
    seen: set[tuple[int, int, int]] = set()
    for s in shapes:
        try:
            M, N, K = (operator.index(d) for d in s[:3])  # 4.5 refused, never cut to 4
        except TypeError:
            raise ValueError(f"shape {tuple(s)!r}: M, N and K must be integers") from None
        if (M, N, K) not in seen:
            seen.add((M, N, K))
            out.append(Case(f"{prefix}_m{M}_n{N}_k{K}", M, N, K, regime, seed))
    return out


def load(which: Union[str, Iterable[Sequence[int]]], regime: str = "normal") -> list[Case]:
    """The cases of a set name, a case-file path or a list of (M, N, K) (module docstring)."""
    if not isinstance(which, str):
        return shapes_cases(which, regime=regime)
    if which in CASE_SETS:
        return read_case_file(os.path.join(cases_dir(), f"{which}.csv"))
    if which in SHAPE_SETS:
        rel, prefix = SHAPE_SETS[which]
        with open(os.path.join(cases_dir(), rel), newline="") as f:
            rows = list(csv.DictReader(f))
        return shapes_cases([(int(r["M"]), int(r["N"]), int(r["K"])) for r in rows], prefix,
                            regime)
    if os.path.isfile(which):
        return read_case_file(which)
    raise ValueError(f"a4w4check.cases: {which!r}: one of {', '.join(CASE_SETS)}, "
                     f"{', '.join(SHAPE_SETS)}, a case file or a list of (M, N, K)")


def cases(which: Union[str, Iterable[Sequence[int]]], regime: str = "normal",
          select: Optional[Callable[[Case], bool]] = None) -> Callable[[F], F]:
    """pytest.mark.parametrize("case", ...) over load(which) (those select keeps), one test
    per case, its id the case name. $A4W4CHECK_SET, when set, replaces which (a set name or
    case file) in every such test: `A4W4CHECK_SET=premerge-quick pytest ...` is the quick
    pre-merge run. ValueError when no case is chosen (pytest would skip the test, judging
    nothing) or a shape is not three integers."""
    import pytest
    which = os.environ.get("A4W4CHECK_SET") or which
    chosen = [c for c in load(which, regime) if select is None or select(c)]
    if not chosen:  # pytest would skip the test: a green run that judged nothing
        raise ValueError(f"a4w4check.cases: {which!r} selects no case"
                         + (" (select= kept none)" if select is not None else ""))
    mark: Callable[[F], F] = pytest.mark.parametrize("case", chosen, ids=[c.name for c in chosen])
    return mark
