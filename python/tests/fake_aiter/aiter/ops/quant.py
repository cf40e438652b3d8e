"""Fake aiter.ops.quant.per_1x32_f4_quant_hip (AITER's signature, round_up scale mode)."""
import torch

from .. import dtypes
from ._mx import quantize_round_up, swizzle


def per_1x32_f4_quant_hip(x, scale=None, quant_dtype=dtypes.fp4x2, shuffle=False,
                          num_rows=None, num_rows_factor=1):
    """x [M, K] -> (fp4x2 [M, K/2], E8M0 scale [M, K/32], or with shuffle=True padded to
    [round_up(M, 256), round_up(K/32, 8)] with 0x7F and swizzled, contracts §3.3)."""
    if scale is not None:
        raise ValueError("unsupported: static per token quant")
    m, k = x.shape
    q, s = quantize_round_up(x)
    if shuffle:
        padded = torch.full(((m + 255) // 256 * 256, (k // 32 + 7) // 8 * 8), 0x7F,
                            dtype=torch.uint8, device=x.device)
        padded[:m, :k // 32] = s
        s = swizzle(padded)
    return q.view(dtypes.fp4x2), s.view(dtypes.fp8_e8m0)
