"""torch_gemm.py: the example kernel (examples/python/my_kernel.py, ordered(1)) in torch, on the
device of its inputs: torch uint8 tensors on "cuda" (the in-process judge uploads them for a
kernel whose a4w4_device is "cuda") or numpy arrays (a CPU callable), computed on the CPU.
Each 32-block's dot is exact in float64 (fp4 products times two powers of two), rounded once
to fp32, the blocks added in ascending K into an fp32 total from +0.0, the total rounded to
bf16 by torch's RNE; y is a bf16 tensor on the inputs' device.

gemm_planted: the same with the last K block dropped when K % 256 != 0 (a K-tail loop that
never runs)."""
from typing import Any

import torch

from a4w4check.kernels import dequant_torch


def _on_device(t: Any) -> Any:
    return t if torch.is_tensor(t) else torch.as_tensor(t)


def _gemm(a_fp4: Any, a_scale: Any, w_fp4: Any, w_scale: Any, tail: bool) -> Any:
    a, sa, w, sw = (_on_device(t) for t in (a_fp4, a_scale, w_fp4, w_scale))
    A, W = dequant_torch(torch, a, sa), dequant_torch(torch, w, sw)  # float64, exact
    K = A.shape[1]
    end = K if tail or K % 256 == 0 else K - 32
    total = torch.zeros((A.shape[0], W.shape[0]), dtype=torch.float32, device=A.device)
    for k in range(0, end, 32):
        total += (A[:, k:k + 32] @ W[:, k:k + 32].T).to(torch.float32)
    return total.to(torch.bfloat16)


def gemm(a_fp4: Any, a_scale: Any, w_fp4: Any, w_scale: Any, **rest: Any) -> Any:
    return _gemm(a_fp4, a_scale, w_fp4, w_scale, tail=True)


def gemm_planted(a_fp4: Any, a_scale: Any, w_fp4: Any, w_scale: Any, **rest: Any) -> Any:
    return _gemm(a_fp4, a_scale, w_fp4, w_scale, tail=False)


for _f in (gemm, gemm_planted):
    _f.a4w4_contract = "ordered(1)"  # type: ignore[attr-defined]
    _f.a4w4_e8m0_code0 = "2^-127"  # type: ignore[attr-defined]
