"""a4w4check.layouts (view/permute form) against the closed-form index maps of contracts §3."""
import numpy as np
import pytest

from a4w4check import layouts


def closed_form_weight(w):
    N, Kb = w.shape
    dst = np.empty(N * Kb, dtype=np.uint8)
    for n in range(N):
        for k in range(Kb):
            n0, n1, k0, k1, k2 = n // 16, n % 16, k // 32, (k // 16) % 2, k % 16
            dst[(((n0 * (Kb // 32) + k0) * 2 + k1) * 16 + n1) * 16 + k2] = w[n, k]
    return dst.reshape(N, Kb)


def closed_form_scale(s):
    rows, cols = s.shape
    dst = np.empty(rows * cols, dtype=np.uint8)
    for r in range(rows):
        for c in range(cols):
            d0, d1, d2, d3, d4, d5 = r // 32, (r // 16) % 2, r % 16, c // 8, (c // 4) % 2, c % 4
            dst[((((d0 * (cols // 8) + d3) * 4 + d5) * 16 + d2) * 2 + d4) * 2 + d1] = s[r, c]
    return dst.reshape(rows, cols)


@pytest.mark.parametrize("N,Kb", [(16, 32), (32, 64), (48, 96)])
def test_weight_preshuffle_matches_the_index_map(N, Kb):
    w = np.random.default_rng(N).integers(0, 256, (N, Kb), dtype=np.uint8)
    assert (layouts.shuffle_weight(w) == closed_form_weight(w)).all()


@pytest.mark.parametrize("rows,cols", [(32, 8), (64, 16), (96, 24)])
def test_scale_swizzle_matches_the_index_map(rows, cols):
    s = np.random.default_rng(rows).integers(0, 256, (rows, cols), dtype=np.uint8)
    assert (layouts.swizzle_scale(s) == closed_form_scale(s)).all()


def test_unsupported_shapes_are_refused():
    with pytest.raises(ValueError):
        layouts.shuffle_weight(np.zeros((24, 32), np.uint8))
    with pytest.raises(ValueError):
        layouts.swizzle_scale(np.zeros((32, 4), np.uint8))


def test_activation_scale_is_padded_with_the_fills_then_swizzled():
    s = np.arange(3 * 5, dtype=np.uint8).reshape(3, 5)
    got = layouts.shuffle_act_scale(s, row_fill=0xFF, col_fill=0x00)
    padded = np.full((256, 8), 0xFF, np.uint8)
    padded[:3, :] = 0
    padded[:3, :5] = s
    assert got.shape == (256, 8) and (got == closed_form_scale(padded)).all()
