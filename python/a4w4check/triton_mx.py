"""a4w4check.triton_mx: an MXFP4 x MXFP4 GEMM written with Triton's tl.dot_scaled (e2m1 x e2m1),
the `triton-dot-scaled` kernel of `external`. Needs torch and triton (tested with Triton 3.6 on
an NVIDIA H200, where dot_scaled is emulated by upcasting to bf16: products exact, fp32
accumulation, so the result is the exact one in the exact regime, contracts §4.1).

Operands as the bundles store them: a_fp4 uint8 [M, K/2] and w_fp4 uint8 [N, K/2] packed fp4x2
(element 2i in the low nibble, contracts §1), a_scale [M, K/32] and w_scale [N, K/32] E8M0.
"""
from typing import Any

import torch
import triton
import triton.language as tl


# Triton reads a kernel's annotations (tl.constexpr marks compile-time values), so the runtime
# parameters stay bare: they are Triton tensors and scalars, not Python types.
@triton.jit
def _mx_gemm(a_ptr, as_ptr, w_ptr, ws_ptr, y_ptr, M, N, K,  # type: ignore[no-untyped-def]
             s_am, s_ak, s_asm, s_ask, s_wn, s_wk, s_wsn, s_wsk, s_ym, s_yn,
             BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    kb = tl.arange(0, BK // 2)
    ks = tl.arange(0, BK // 32)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        kbb = k0 // 2 + kb
        kss = k0 // 32 + ks
        a = tl.load(a_ptr + rm[:, None] * s_am + kbb[None, :] * s_ak,
                    mask=(rm[:, None] < M) & (kbb[None, :] < K // 2), other=0)
        a_s = tl.load(as_ptr + rm[:, None] * s_asm + kss[None, :] * s_ask,
                      mask=(rm[:, None] < M) & (kss[None, :] < K // 32), other=127)
        w = tl.load(w_ptr + rn[None, :] * s_wn + kbb[:, None] * s_wk,
                    mask=(rn[None, :] < N) & (kbb[:, None] < K // 2), other=0)
        w_s = tl.load(ws_ptr + rn[:, None] * s_wsn + kss[None, :] * s_wsk,
                      mask=(rn[:, None] < N) & (kss[None, :] < K // 32), other=127)
        acc = tl.dot_scaled(a, a_s, "e2m1", w, w_s, "e2m1", acc)
    y = acc.to(tl.bfloat16)
    tl.store(y_ptr + rm[:, None] * s_ym + rn[None, :] * s_yn, y,
             mask=(rm[:, None] < M) & (rn[None, :] < N))


def gemm(a_fp4: Any, a_scale: Any, w_fp4: Any, w_scale: Any, BM: int = 64, BN: int = 64,
         BK: int = 128) -> Any:
    """y = dequant(a) @ dequant(w)^T as bfloat16 [M, N] on the operands' (CUDA) device."""
    a_fp4, a_scale, w_fp4, w_scale = (t.contiguous().view(torch.uint8)
                                      for t in (a_fp4, a_scale, w_fp4, w_scale))
    M, N, K = a_fp4.shape[0], w_fp4.shape[0], a_fp4.shape[1] * 2
    y = torch.empty((M, N), dtype=torch.bfloat16, device=a_fp4.device)
    grid = (triton.cdiv(M, BM), triton.cdiv(N, BN))
    _mx_gemm[grid](a_fp4, a_scale, w_fp4, w_scale, y, M, N, K,
                   a_fp4.stride(0), a_fp4.stride(1), a_scale.stride(0), a_scale.stride(1),
                   w_fp4.stride(0), w_fp4.stride(1), w_scale.stride(0), w_scale.stride(1),
                   y.stride(0), y.stride(1), BM=BM, BN=BN, BK=BK)
    return y
