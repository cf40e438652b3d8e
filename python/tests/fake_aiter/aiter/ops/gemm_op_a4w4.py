"""Fake aiter.ops.gemm_op_a4w4.gemm_a4w4 (AITER's signature; see aiter/__init__.py)."""
from typing import Optional

import torch

from ._mx import dequant, to_bf16, u8, unshuffle_weight, unswizzle


def gemm_a4w4(A, B, A_scale, B_scale, out, bias: Optional[torch.Tensor] = None,
              alpha: Optional[float] = 1.0, beta: Optional[float] = 0.0,
              bpreshuffle: Optional[bool] = True) -> torch.Tensor:
    """A [M, K/2] fp4x2, B [N, K/2] fp4x2 (preshuffled when bpreshuffle), A_scale padded
    [round_up(M, 256), round_up(K/32, 8)] and shuffled, B_scale [N, K/32] swizzled, out bf16
    with at least M rows; writes out[:M] and returns out."""
    import aiter
    M, N, K = A.shape[0], B.shape[0], A.shape[1] * 2
    a, b = u8(A), u8(B)
    if bpreshuffle:
        b = unshuffle_weight(b)
    a_s = unswizzle(u8(A_scale))[:M, :K // 32]
    b_s = unswizzle(u8(B_scale))
    y64 = dequant(a, a_s) @ dequant(b, b_s).T
    if bias is not None:
        y64 = y64 + bias.to(torch.float64)
    y = to_bf16(y64)
    if aiter.BUG == "wrong-rows" and N <= 128 and M > 16:
        y[16:] = y[0]
    out[:M] = y
    return out
