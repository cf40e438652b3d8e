#!/usr/bin/env python3
"""capture_demo.py OUTDIR [--triton]: capture a tiny torch model whose linear layers call AITER's
MXFP4 ops, for `a4w4check verify OUTDIR/*.safetensors` / `a4w4check run --captures OUTDIR`.

The ops are the fake aiter of python/tests/fake_aiter (AITER's signatures, torch code). With
--triton, gemm_a4w4 is backed by a Triton `tl.dot_scaled` e2m1 GEMM on the GPU
(a4w4check.triton_mx) after undoing the preshuffle and the scale layouts, as a stand-in for the
real ASM kernel on a machine without an MI355X. Run from the repository root with
PYTHONPATH=python:python/tests/fake_aiter:python/tests."""
import sys

import torch


def triton_gemm_a4w4(A, B, A_scale, B_scale, out, bias=None, alpha=1.0, beta=0.0,
                     bpreshuffle=True):
    """gemm_a4w4's contract (contracts §3, §4): writes out[:M] and returns out."""
    from aiter.ops._mx import u8, unshuffle_weight, unswizzle
    from a4w4check import triton_mx
    M, K = A.shape[0], A.shape[1] * 2
    b = unshuffle_weight(u8(B)) if bpreshuffle else u8(B)
    a_s = unswizzle(u8(A_scale))[:M, :K // 32]
    b_s = unswizzle(u8(B_scale))
    dev = torch.device("cuda")
    y = triton_mx.gemm(u8(A).to(dev), a_s.contiguous().to(dev), b.to(dev), b_s.to(dev))
    out[:M] = y.to(out.device)
    return out


def main(argv):
    outdir, use_triton = argv[0], "--triton" in argv
    import aiter
    import aiter.ops.gemm_op_a4w4 as site
    if use_triton:
        aiter.gemm_a4w4 = site.gemm_a4w4 = triton_gemm_a4w4
    import tiny_model
    from a4w4check import capture
    torch.manual_seed(0)
    model = tiny_model.TinyModel()
    with capture.capture(outdir, budget_bytes=1 << 28, sample_every=1, seed=0):
        capture.name_layers(model)
        for M in (1, 5, 16, 33, 64):
            model(torch.randn(M, 256, dtype=torch.bfloat16))
    print(f"capture_demo: captured into {outdir} ({'triton' if use_triton else 'torch'} "
          "gemm_a4w4)")


if __name__ == "__main__":
    main(sys.argv[1:])
