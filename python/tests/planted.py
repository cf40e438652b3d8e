"""planted.py: the example numpy kernel (examples/python/my_kernel.py) with bugs planted, for
the tests that hold the in-process judge to the CLI's file path case by case. Each declares
ordered(1) and E8M0 code 0 as 2^-127, as the example does; each breaks it differently:

gemm: the last K block is dropped when K % 256 != 0 (a tail loop that never runs), and row 2
repeats row 1 when N <= 64 (a stale row register).
gemm_code0_126: reads E8M0 code 0 as 2^-126 (code 1's value) while declaring 2^-127.
gemm_ftz: flushes subnormal bf16 outputs to zero (a flush-to-zero mode left on)."""
from typing import Any

import numpy as np
import numpy.typing as npt

from a4w4check.numerics import dequant, f32_to_bf16, f64_to_bf16


def _u8(t: Any) -> npt.NDArray[np.uint8]:
    return np.asarray(t, dtype=np.uint8)


def _totals(A: npt.NDArray[np.float64], W: npt.NDArray[np.float64],
            end: int) -> npt.NDArray[np.float32]:
    """fp32 totals of the exact 32-block dots over K elements [0, end), ascending."""
    total = np.zeros((A.shape[0], W.shape[0]), dtype=np.float32)
    with np.errstate(over="ignore", invalid="ignore"):  # inf and NaN outputs are expected
        for k in range(0, end, 32):
            total += (A[:, k:k + 32] @ W[:, k:k + 32].T).astype(np.float32)
    return total


def gemm(a_fp4: Any, a_scale: Any, w_fp4: Any, w_scale: Any,
         **rest: Any) -> npt.NDArray[np.uint16]:
    A, W = dequant(_u8(a_fp4), _u8(a_scale)), dequant(_u8(w_fp4), _u8(w_scale))
    K = A.shape[1]
    y = f64_to_bf16(_totals(A, W, K - 32 if K % 256 else K).astype(np.float64))
    if W.shape[0] <= 64 and y.shape[0] > 2:
        y[2] = y[1]
    return y


def gemm_code0_126(a_fp4: Any, a_scale: Any, w_fp4: Any, w_scale: Any,
                   **rest: Any) -> npt.NDArray[np.uint16]:
    sa, sw = _u8(a_scale), _u8(w_scale)
    A = dequant(_u8(a_fp4), np.where(sa == 0, 1, sa).astype(np.uint8))
    W = dequant(_u8(w_fp4), np.where(sw == 0, 1, sw).astype(np.uint8))
    return f32_to_bf16(_totals(A, W, A.shape[1]))


def gemm_ftz(a_fp4: Any, a_scale: Any, w_fp4: Any, w_scale: Any,
             **rest: Any) -> npt.NDArray[np.uint16]:
    A, W = dequant(_u8(a_fp4), _u8(a_scale)), dequant(_u8(w_fp4), _u8(w_scale))
    y = f32_to_bf16(_totals(A, W, A.shape[1]))
    subnormal = ((y & 0x7F80) == 0) & ((y & 0x007F) != 0)
    y[subnormal] &= 0x8000  # flushed to a zero of the same sign
    return y


for _f in (gemm, gemm_code0_126, gemm_ftz):
    _f.a4w4_contract = "ordered(1)"  # type: ignore[attr-defined]
    _f.a4w4_e8m0_code0 = "2^-127"  # type: ignore[attr-defined]
