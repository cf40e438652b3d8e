"""The fake aiter itself: its closed-form inverse maps undo a4w4check's view/permute layouts,
its quantizer follows contracts §2 (round_up), its GEMMs keep the exact contract and the
planted bug does what it says."""
import numpy as np
import pytest

from a4w4check import layouts
from helpers import exact_y, random_operands

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("N,K", [(32, 256), (64, 512), (96, 256)])
def test_inverse_maps_undo_the_package_layouts(fake_aiter, N, K):
    from aiter.ops import _mx
    rng = np.random.default_rng(N + K)
    w = rng.integers(0, 256, (N, K // 2), dtype=np.uint8)
    s = rng.integers(0, 256, (N, K // 32), dtype=np.uint8)
    assert (_mx.unshuffle_weight(torch.from_numpy(layouts.shuffle_weight(w))).numpy() == w).all()
    assert (_mx.unswizzle(torch.from_numpy(layouts.swizzle_scale(s))).numpy() == s).all()
    assert (_mx.swizzle(torch.from_numpy(s)).numpy() == layouts.swizzle_scale(s)).all()


def test_quantizer_rounds_scale_up_and_elements_to_nearest_even(fake_aiter):
    x = torch.zeros(2, 32)
    x[0, :5] = torch.tensor([7.0, 1.75, -0.3, 0.25, -0.0])
    q, s = fake_aiter.per_1x32_f4_quant_hip(x)
    q, s = q.view(torch.uint8), s.view(torch.uint8)
    assert s.tolist() == [[128], [0]]  # 7/6 has mantissa bits: exponent 127 + 1; zero block: 0
    codes = torch.stack((q & 15, q >> 4), -1).reshape(2, 32)
    # 7/2 = 3.5 ties to 4 (code 6); 0.875 -> 1 (2); -0.15 -> -0 (8); 0.125 -> 0; -0 -> 8
    assert codes[0, :5].tolist() == [6, 2, 8, 0, 8] and codes[1].tolist() == [0] * 32


def test_shuffled_quantizer_scale_is_padded_and_swizzled(fake_aiter):
    x = torch.randn(3, 64)
    _, s = fake_aiter.per_1x32_f4_quant_hip(x)
    _, sh = fake_aiter.per_1x32_f4_quant_hip(x, shuffle=True)
    want = layouts.shuffle_act_scale(s.view(torch.uint8).numpy())
    assert (sh.view(torch.uint8).numpy() == want).all()


def asm_call(aiter, ops, M, N):
    t = {k: torch.from_numpy(v) for k, v in ops.items()}
    out = torch.full(((M + 31) // 32 * 32, N), float("nan"), dtype=torch.bfloat16)
    aiter.gemm_a4w4(t["a_fp4"], torch.from_numpy(layouts.shuffle_weight(ops["w_fp4"])),
                    torch.from_numpy(layouts.shuffle_act_scale(ops["a_scale"])),
                    torch.from_numpy(layouts.swizzle_scale(ops["w_scale"])), out)
    return out[:M].view(torch.int16).numpy().view(np.uint16)


def test_gemms_are_exact_and_the_bug_is_planted_only_where_asked(fake_aiter):
    ops = random_operands(np.random.default_rng(8), 20, 64, 256)
    want = exact_y(ops)
    assert (asm_call(fake_aiter, ops, 20, 64) == want).all()
    from aiter.ops.triton.gemm_afp4wfp4 import gemm_afp4wfp4
    t = {k: torch.from_numpy(v) for k, v in ops.items()}
    y = gemm_afp4wfp4(t["a_fp4"], t["w_fp4"], t["a_scale"], t["w_scale"])
    assert (y.view(torch.int16).numpy().view(np.uint16) == want).all()
    fake_aiter.BUG = "wrong-rows"
    bad = asm_call(fake_aiter, ops, 20, 64)
    assert (bad[:16] == want[:16]).all() and (bad[16:] == want[0]).all()
