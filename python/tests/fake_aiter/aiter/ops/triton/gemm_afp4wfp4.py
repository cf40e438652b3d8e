"""Fake aiter.ops.triton.gemm_afp4wfp4.gemm_afp4wfp4 (AITER's signature; row-major operands)."""
from typing import Optional

import torch

from .._mx import dequant, to_bf16, u8


def gemm_afp4wfp4(x, w, x_scales, w_scales, dtype: Optional[torch.dtype] = torch.bfloat16,
                  y: Optional[torch.Tensor] = None, config: Optional[dict] = None,
                  skip_reduce: Optional[bool] = False) -> torch.Tensor:
    """x [M, K/2], w [N, K/2] fp4x2; x_scales [M, K/32], w_scales [N, K/32] E8M0 -> y [M, N]."""
    r = to_bf16(dequant(u8(x), u8(x_scales)) @ dequant(u8(w), u8(w_scales)).T).to(dtype)
    if y is None:
        return r
    y.copy_(r)
    return y
