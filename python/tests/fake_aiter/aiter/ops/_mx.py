"""The fake's MXFP4 arithmetic and layout maps, written from contracts §1-§3 alone."""
import torch

E2M1 = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0]


def u8(t):
    return t.view(torch.uint8) if t.dtype != torch.uint8 else t


def weight_index(N, Kb, device):
    """Flat destination index of src[n][k] under the weight preshuffle (contracts §3.1)."""
    n = torch.arange(N, device=device).view(N, 1)
    k = torch.arange(Kb, device=device).view(1, Kb)
    n0, n1, k0, k1, k2 = n // 16, n % 16, k // 32, (k // 16) % 2, k % 16
    return (((n0 * (Kb // 32) + k0) * 2 + k1) * 16 + n1) * 16 + k2


def scale_index(rows, cols, device):
    """Flat destination index of src[r][c] under the scale swizzle (contracts §3.2)."""
    r = torch.arange(rows, device=device).view(rows, 1)
    c = torch.arange(cols, device=device).view(1, cols)
    d0, d1, d2 = r // 32, (r // 16) % 2, r % 16
    d3, d4, d5 = c // 8, (c // 4) % 2, c % 4
    return ((((d0 * (cols // 8) + d3) * 4 + d5) * 16 + d2) * 2 + d4) * 2 + d1


def unshuffle_weight(w):
    N, Kb = w.shape
    if N % 16 or Kb % 32:
        raise RuntimeError(f"preshuffled weight needs N % 16 == 0, K/2 % 32 == 0: {list(w.shape)}")
    return w.reshape(-1)[weight_index(N, Kb, w.device)]


def unswizzle(s):
    rows, cols = s.shape
    if rows % 32 or cols % 8:
        raise RuntimeError(f"swizzled scale needs rows % 32 == 0, cols % 8 == 0: {list(s.shape)}")
    return s.reshape(-1)[scale_index(rows, cols, s.device)]


def swizzle(s):
    out = torch.empty_like(s).reshape(-1)
    out[scale_index(*s.shape, s.device).reshape(-1)] = s.reshape(-1)
    return out.view(s.shape)


def dequant(packed, scales):
    """fp4x2 bytes [R, K/2] and E8M0 [R, K/32] -> float64 [R, K] (scale 0xFF -> NaN)."""
    lut = torch.tensor(E2M1, dtype=torch.float64, device=packed.device)
    codes = torch.stack((packed & 15, packed >> 4), dim=-1).reshape(packed.shape[0], -1)
    s = scales.to(torch.float64)
    sc = torch.where(scales == 255, torch.full_like(s, float("nan")), torch.pow(2.0, s - 127))
    return lut[codes.long()] * sc.repeat_interleave(32, dim=1)


def to_bf16(y64):
    """float64 -> bfloat16 through float32 (both RNE in torch; exact for the small sums the
    tests use, where the float32 step is exact)."""
    return y64.to(torch.float32).to(torch.bfloat16)


def e2m1_codes(q):
    """fp32 values already divided by their scale -> E2M1 codes, RNE with ties to the even
    code, saturating at 6, sign kept (contracts §2, step 3)."""
    a = q.abs()
    code = torch.zeros_like(a, dtype=torch.uint8)
    for bound, strict, c in ((0.25, True, 1), (0.75, False, 2), (1.25, True, 3),
                             (1.75, False, 4), (2.5, True, 5), (3.5, False, 6), (5.0, True, 7)):
        code = torch.where((a > bound) if strict else (a >= bound),
                           torch.full_like(code, c), code)
    return code | (torch.signbit(q).to(torch.uint8) << 3)


def quantize_round_up(x):
    """per_1x32 quantization, round_up scale mode (contracts §2): x [M, K] -> (codes packed
    uint8 [M, K/2], scales uint8 [M, K/32])."""
    m, k = x.shape
    xf = x.to(torch.float32).reshape(m, k // 32, 32)
    t = xf.abs().amax(dim=-1) / 6.0
    bits = t.view(torch.int32)
    e, man = (bits >> 23) & 0xFF, bits & 0x7FFFFF
    s = torch.where(e == 0xFF, e, e + (man != 0).to(torch.int32))
    sbits = torch.where(s == 0, torch.full_like(s, 0x00400000), s << 23)
    q = xf / sbits.view(torch.float32).unsqueeze(-1)
    codes = e2m1_codes(q).reshape(m, k)
    return codes[:, 0::2] | (codes[:, 1::2] << 4), s.to(torch.uint8)
