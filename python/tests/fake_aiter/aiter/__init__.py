"""A stand-in for AMD's `aiter` in a4w4check's tests: torch code (any CPU, torch >= 1.13) with
AITER's signatures for gemm_a4w4, per_1x32_f4_quant_hip and
ops.triton.gemm_afp4wfp4.gemm_afp4wfp4. It consumes preshuffled weights and swizzled / shuffled
scales through its own inverse index maps (contracts §3, closed form), not a4w4check's.

BUG (from FAKE_AITER_BUG, or set aiter.BUG in a test) plants a defect in gemm_a4w4:
"wrong-rows": when N <= 128, rows >= 16 of the output are copied from row 0 (the shape of the
untuned-heuristic bug of contracts §6.3).
"""
import os

from . import dtypes  # noqa: F401
from .ops.gemm_op_a4w4 import gemm_a4w4  # noqa: F401
from .ops.quant import per_1x32_f4_quant_hip  # noqa: F401

BUG = os.environ.get("FAKE_AITER_BUG", "")
