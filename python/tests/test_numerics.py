"""a4w4check.numerics against exact rational arithmetic (helpers.bf16_of_fraction)."""
from fractions import Fraction

import numpy as np
import pytest

from a4w4check import numerics
from helpers import bf16_of_fraction


def test_f64_to_bf16_is_the_correct_rounding_of_random_doubles():
    rng = np.random.default_rng(5)
    x = np.concatenate([
        rng.standard_normal(3000) * 2.0 ** rng.integers(-140, 130, 3000),
        (rng.integers(1, 1 << 10, 500) * 2.0 ** -16 + 1.0) * 2.0 ** rng.integers(-140, 128, 500),
    ])
    want = [bf16_of_fraction(Fraction(float(v))) for v in x]
    assert numerics.f64_to_bf16(x).tolist() == want


@pytest.mark.parametrize("value,bits", [
    (1.0 + 2.0 ** -8, 0x3F80),              # tie -> even
    (1.0 + 3 * 2.0 ** -8, 0x3F82),          # tie -> even (up)
    (2.0 ** -133, 0x0001),                  # smallest subnormal
    (2.0 ** -134, 0x0000),                  # half of it: tie -> 0
    (-1.5 * 2.0 ** -134, 0x8001),
    (-2.0 ** -140, 0x8000),                 # rounds to -0, sign kept
    (2.0 ** -126 * (1 - 2.0 ** -9), 0x0080),  # rounds up into the normals
    (3.3895313892515355e38, 0x7F7F),        # largest finite
    (3.4e38, 0x7F80), (-1e300, 0xFF80),     # overflow -> Inf
    (float("inf"), 0x7F80), (float("nan"), 0x7FC0), (-0.0, 0x8000), (0.0, 0),
])
def test_f64_to_bf16_edges(value, bits):
    assert int(numerics.f64_to_bf16(np.array([value]))[0]) == bits


def test_f32_to_bf16_gives_f64_to_bf16s_bits_for_every_kind_of_float32():
    rng = np.random.default_rng(7)
    bits = np.concatenate([
        rng.integers(0, 1 << 32, 200000, dtype=np.uint64).astype(np.uint32),  # any pattern
        np.array([0, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFFFFFFF, 0x7F800001,
                  0x7F7FFFFF, 0x7F7F8000, 0x3F808000, 0x3F818000, 0x00008000, 0x00018000,
                  0x80000001, 0x007FFFFF], dtype=np.uint32),           # specials and ties
    ])
    x = bits.view(np.float32)
    with np.errstate(invalid="ignore"):  # signalling NaNs quieten in the cast
        x64 = x.astype(np.float64)
    assert numerics.f32_to_bf16(x).tolist() == numerics.f64_to_bf16(x64).tolist()


def test_fp4_packing_puts_the_even_element_in_the_low_nibble():
    codes = np.array([[1, 2, 15, 8]], dtype=np.uint8)
    assert numerics.pack_fp4(codes).tolist() == [[0x21, 0x8F]]
    assert numerics.unpack_fp4(numerics.pack_fp4(codes)).tolist() == codes.tolist()


def test_dequant_scales_each_32_block_and_gives_nan_for_scale_ff():
    packed = numerics.pack_fp4(np.array([[7] * 32 + [9] * 32], dtype=np.uint8))
    d = numerics.dequant(packed, np.array([[128, 255]], dtype=np.uint8))
    assert (d[0, :32] == 12.0).all() and np.isnan(d[0, 32:]).all()
    assert numerics.dequant(packed, np.array([[0, 254]], dtype=np.uint8))[0, 0] == 6 * 2.0 ** -127
