"""planted.py: the example numpy kernel (examples/python/my_kernel.py) with bugs planted, for
the test that holds the in-process judge to the CLI's file path case by case.

gemm: the last K block is dropped when K % 256 != 0 (a tail loop that never runs), and row 2
repeats row 1 when N <= 64 (a stale row register). Declares ordered(1) and 2^-127."""
from typing import Any

import numpy as np
import numpy.typing as npt

from a4w4check.numerics import dequant, f64_to_bf16


def gemm(a_fp4: Any, a_scale: Any, w_fp4: Any, w_scale: Any,
         **rest: Any) -> npt.NDArray[np.uint16]:
    a, sa = np.asarray(a_fp4, dtype=np.uint8), np.asarray(a_scale, dtype=np.uint8)
    w, sw = np.asarray(w_fp4, dtype=np.uint8), np.asarray(w_scale, dtype=np.uint8)
    A, W = dequant(a, sa), dequant(w, sw)
    K = A.shape[1]
    end = K - 32 if K % 256 else K
    total = np.zeros((A.shape[0], W.shape[0]), dtype=np.float32)
    for k in range(0, end, 32):
        total += (A[:, k:k + 32] @ W[:, k:k + 32].T).astype(np.float32)
    y = f64_to_bf16(total.astype(np.float64))
    if W.shape[0] <= 64 and y.shape[0] > 2:
        y[2] = y[1]
    return y


gemm.a4w4_contract = "ordered(1)"  # type: ignore[attr-defined]
gemm.a4w4_e8m0_code0 = "2^-127"  # type: ignore[attr-defined]
