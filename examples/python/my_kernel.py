"""my_kernel.py: the smallest complete Python kernel for a4w4check (python/README.md, "Your own
kernel"): a numpy A4W4 GEMM on the row-major operands that keeps ordered(1) (contracts §4.1):
each 32-block's exact dot times its two scales rounded once to fp32, blocks added in ascending
K into an fp32 total from +0.0, the total rounded to bf16 (RNE). It reads E8M0 code 0 as
2^-127 (numerics.E8M0) and says so (contracts §1). Replace the body with a call into your
kernel; keep the signature: every operand arrives as a keyword, the ones not named go to **rest.

    build/a4w4check export --set edge --out ops
    PYTHONPATH=python:examples/python python3 -m a4w4check.external --ops ops --out outs \\
        --kernel my_kernel:gemm
    build/a4w4check run --set edge --backend bundle:outs --out my-run
"""
from typing import Any

import numpy as np
import numpy.typing as npt

from a4w4check.numerics import dequant, f32_to_bf16


ROWS = 1 << 24  # float64 elements of one [rows, max(N, K)] block: rows of A taken at a time


def _host(t: Any) -> npt.NDArray[np.uint8]:
    """A torch tensor (on any device) or numpy array -> numpy uint8."""
    return np.asarray(t.cpu() if hasattr(t, "cpu") else t, dtype=np.uint8)


def gemm(a_fp4: Any, a_scale: Any, w_fp4: Any, w_scale: Any,
         **rest: Any) -> npt.NDArray[np.uint16]:
    """y [M, N] as bf16 bits from a_fp4 [M, K/2], a_scale [M, K/32], w_fp4 [N, K/2], w_scale
    [N, K/32] (fp4x2 and E8M0, row-major)."""
    a, sa = _host(a_fp4), _host(a_scale)
    W = dequant(_host(w_fp4), _host(w_scale))  # float64 [N, K], exact; scale 0xFF: NaN
    y = np.empty((a.shape[0], W.shape[0]), dtype=np.uint16)
    rows = max(1, ROWS // max(W.shape))  # [rows, N] and [rows, K] blocks: memory stays small
    for m in range(0, a.shape[0], rows):
        A = dequant(a[m:m + rows], sa[m:m + rows])  # float64 [rows, K]
        total = np.zeros((A.shape[0], W.shape[0]), dtype=np.float32)
        with np.errstate(over="ignore", invalid="ignore"):  # inf and NaN outputs are expected
            for k in range(0, A.shape[1], 32):  # one block's dot is exact in float64
                total += (A[:, k:k + 32] @ W[:, k:k + 32].T).astype(np.float32)
        y[m:m + rows] = f32_to_bf16(total)  # RNE of the fp32 totals
    return y


gemm.a4w4_contract = "ordered(1)"  # type: ignore[attr-defined]
gemm.a4w4_e8m0_code0 = "2^-127"  # type: ignore[attr-defined]
