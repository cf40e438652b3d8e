"""a4w4check.numerics: E2M1 / E8M0 decoding and float64 -> bf16 rounding (contracts §1, §4.1).

Everything here is numpy and exact: E2M1 values and E8M0 scales are powers of two times small
integers, so they are exact in float64; the bf16 rounding works on the float64 bit pattern
with integers only (no float cast is trusted for it).
"""
from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

# E2M1 code -> value (contracts §1): codes 8..15 are the negatives, 8 is -0.
E2M1 = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0,
                 -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0], dtype=np.float64)
# E8M0 code -> 2^(code - 127) (code 0 is 2^-127, as the oracles take it); 0xFF is NaN.
E8M0 = np.array([2.0 ** (s - 127) for s in range(255)] + [np.nan], dtype=np.float64)

BF16_NAN = 0x7FC0


def unpack_fp4(packed: npt.ArrayLike) -> npt.NDArray[np.uint8]:
    """uint8 [..., K/2] packed fp4x2 -> uint8 codes [..., K]: element 2i from the low nibble of
    byte i, element 2i+1 from the high nibble (contracts §1)."""
    packed = np.asarray(packed, dtype=np.uint8)
    codes = np.empty(packed.shape[:-1] + (packed.shape[-1] * 2,), dtype=np.uint8)
    codes[..., 0::2] = packed & 0x0F
    codes[..., 1::2] = packed >> 4
    return codes


def pack_fp4(codes: npt.ArrayLike) -> npt.NDArray[np.uint8]:
    """Inverse of unpack_fp4: uint8 codes [..., K] (K even, each < 16) -> bytes [..., K/2]."""
    c = np.asarray(codes, dtype=np.uint8)
    return np.asarray(c[..., 0::2] | (c[..., 1::2] << 4), dtype=np.uint8)


def dequant(packed: npt.ArrayLike, scales: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """Dequantize MXFP4 rows to float64: packed uint8 [R, K/2], scales uint8 E8M0 [R, K/32]
    (one per 32 consecutive elements along K) -> float64 [R, K]. Exact; scale 0xFF gives NaN
    for the whole block."""
    vals = E2M1[unpack_fp4(packed)]
    return vals * np.repeat(E8M0[np.asarray(scales, dtype=np.uint8)], 32, axis=-1)


def f64_to_bf16(x: npt.ArrayLike) -> npt.NDArray[np.uint16]:
    """float64 array -> bf16 bit patterns (uint16), round to nearest even, once, from the
    float64 value: bf16 has fp32's exponent range (subnormal quantum 2^-133); magnitudes that
    round past the largest finite bf16 become Inf with their sign; NaN becomes 0x7FC0; a zero
    keeps its sign bit. Integer arithmetic on the float64 bits only."""
    x = np.ascontiguousarray(x, dtype=np.float64)
    bits = x.view(np.uint64)
    sign = ((bits >> np.uint64(63)).astype(np.uint16)) << np.uint16(15)
    exp = ((bits >> np.uint64(52)) & np.uint64(0x7FF)).astype(np.int64)
    frac = (bits & np.uint64((1 << 52) - 1)).astype(np.int64)
    sig = np.where(exp > 0, frac | (1 << 52), frac)          # |x| = sig * 2^(e - 1075)
    e = np.maximum(exp, 1)
    # The bf16 quantum: 2^(max(E, -126) - 7) with E = e - 1023; drop `shift` low bits of sig.
    shift = np.maximum(e - 1023, -126) - 7 - (e - 1075)      # >= 45
    big = shift >= 62
    sh = np.where(big, 62, shift).astype(np.uint64)
    s64 = sig.astype(np.uint64)
    m = (s64 >> sh).astype(np.int64)
    rem = s64 & ((np.uint64(1) << sh) - np.uint64(1))
    half = np.uint64(1) << (sh - np.uint64(1))
    up = (rem > half) | ((rem == half) & ((m & 1) == 1))
    m = np.where(big, 0, m + up)
    qexp = np.maximum(e - 1023, -126) - 7
    mag = np.where(m == 0, 0, ((qexp + 134) << 7) + m - 128)
    mag = np.minimum(mag, 0x7F80).astype(np.uint16)           # overflow -> Inf
    out = sign | mag
    out = np.where(exp == 0x7FF, np.where(frac == 0, sign | np.uint16(0x7F80), BF16_NAN), out)
    return np.asarray(out, dtype=np.uint16)


def f32_to_bf16(x: npt.ArrayLike) -> npt.NDArray[np.uint16]:
    """float32 array -> bf16 bit patterns (uint16), round to nearest even: the same bits as
    f64_to_bf16 of the same values (float32 -> float64 is exact), in three integer passes over
    the float32 bits instead of f64_to_bf16's many int64 ones (a kernel that keeps fp32 totals,
    e.g. an ordered(S) one, contracts §4.1, should round them here). NaN becomes 0x7FC0."""
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    out = ((u + np.uint32(0x7FFF) + ((u >> np.uint32(16)) & np.uint32(1))) >> np.uint32(16))
    out = out.astype(np.uint16)
    out[(u & np.uint32(0x7FFFFFFF)) > np.uint32(0x7F800000)] = BF16_NAN
    return out


def bf16_to_f64(h: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """bf16 bit patterns (uint16) -> float64 values (exact)."""
    h = np.asarray(h, dtype=np.uint16).astype(np.uint32) << np.uint32(16)
    return h.view(np.float32).astype(np.float64)
