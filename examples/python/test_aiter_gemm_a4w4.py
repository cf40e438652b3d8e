"""test_aiter_gemm_a4w4.py: AITER's op_tests/test_gemm_a4w4.py shape list (its l_mnk: 69
shapes, 67 distinct; cases/NOTICE names the source) through AITER's ASM path, judged bit for
bit instead of checkAllclose(rtol=1e-2, atol=1e-2). The kernel is a4w4check's `aiter-asm`
(aiter.gemm_a4w4 on the preshuffled weight, swizzled and shuffled scales; python/README.md),
on the GPU; without AITER every case is skipped and says why.

    PYTHONPATH=python python3 -m pytest examples/python/test_aiter_gemm_a4w4.py
"""
import pytest

import a4w4check
from a4w4check import kernels

try:
    KERNEL = kernels.load("aiter-asm")
    WHY = ""
except (kernels.KernelUnavailable, ValueError) as e:
    KERNEL, WHY = None, f"aiter-asm is not usable here: {e}"


@pytest.mark.skipif(KERNEL is None, reason=WHY or "aiter-asm")
@a4w4check.cases("aiter-op-test")
def test_gemm_a4w4(case):
    a4w4check.assert_bitexact(KERNEL, case)
