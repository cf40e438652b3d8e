"""Test helpers: random MXFP4 operands and an exact expected y computed with fractions.Fraction,
independent of a4w4check.numerics and of float arithmetic."""
from fractions import Fraction

import numpy as np

from a4w4check import bundle, layouts

HALF_UNITS = (0, 1, 2, 3, 4, 6, 8, 12)  # 2 * |E2M1 value| for codes 0..7
TWO = Fraction(2)


def pack(codes):
    codes = np.asarray(codes, dtype=np.uint8)
    return (codes[:, 0::2] | (codes[:, 1::2] << 4)).astype(np.uint8)


def codes_of(packed):
    out = np.empty((packed.shape[0], packed.shape[1] * 2), dtype=np.int64)
    out[:, 0::2], out[:, 1::2] = packed & 15, packed >> 4
    return out


def random_operands(rng, M, N, K, scales=(118, 136)):
    """Random codes and scales: {a_fp4, a_scale, w_fp4, w_scale} numpy uint8."""
    lo, hi = scales
    return {"a_fp4": pack(rng.integers(0, 16, (M, K))),
            "a_scale": rng.integers(lo, hi + 1, (M, K // 32)).astype(np.uint8),
            "w_fp4": pack(rng.integers(0, 16, (N, K))),
            "w_scale": rng.integers(lo, hi + 1, (N, K // 32)).astype(np.uint8)}


def with_layouts(ops, M, N, K):
    """ops plus the shuffled tensors where contracts §3 supports them; (tensors, absent)."""
    out, absent = dict(ops), {}
    out["a_scale_shuffled"] = layouts.shuffle_act_scale(ops["a_scale"])
    if layouts.preshuffle_supported(N, K):
        out["w_fp4_shuffled"] = layouts.shuffle_weight(ops["w_fp4"])
    else:
        absent["w_fp4_shuffled"] = "preshuffle needs N % 16 == 0 and K % 64 == 0"
    if layouts.swizzle_supported(N, K // 32):
        out["w_scale_swizzled"] = layouts.swizzle_scale(ops["w_scale"])
    else:
        absent["w_scale_swizzled"] = "swizzle needs N % 32 == 0 and (K/32) % 8 == 0"
    return out, absent


def signed_half_units(codes):
    mag = np.array(HALF_UNITS, dtype=np.int64)[codes & 7]
    return np.where(codes & 8, -mag, mag)


def exact_sum(ops, m, n):
    """The exact y[m][n] as a Fraction, or None when a scale of the row or column is 0xFF."""
    a = signed_half_units(codes_of(ops["a_fp4"][m:m + 1])[0])
    w = signed_half_units(codes_of(ops["w_fp4"][n:n + 1])[0])
    total = Fraction(0)
    for b in range(a.size // 32):
        sa, sb = int(ops["a_scale"][m, b]), int(ops["w_scale"][n, b])
        if sa == 255 or sb == 255:
            return None
        isum = sum(int(x) * int(y) for x, y in zip(a[32 * b:32 * b + 32], w[32 * b:32 * b + 32]))
        total += Fraction(isum) * TWO ** (sa + sb - 256)  # (ia/2)(ib/2) 2^(sa-127) 2^(sb-127)
    return total


def bf16_of_fraction(q):
    """Correctly rounded (RNE) bf16 bits of an exact rational; exact zero -> +0."""
    if q is None:
        return 0x7FC0
    if q == 0:
        return 0
    sign, a = (0x8000, -q) if q < 0 else (0, q)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    while TWO ** e > a:
        e -= 1
    while TWO ** (e + 1) <= a:
        e += 1
    quantum = TWO ** (max(e, -126) - 7)
    v = round(a / quantum) * quantum  # Fraction.__round__ rounds half to even
    if v == 0:
        return sign
    if v >= TWO ** 128:
        return sign | 0x7F80
    if v < TWO ** -126:
        return sign | int(v / TWO ** -133)
    e2 = v.numerator.bit_length() - v.denominator.bit_length()
    while TWO ** e2 > v:
        e2 -= 1
    return sign | ((e2 + 127) << 7) | int(v / TWO ** (e2 - 7) - 128)


def exact_y(ops):
    M, N = ops["a_fp4"].shape[0], ops["w_fp4"].shape[0]
    return np.array([[bf16_of_fraction(exact_sum(ops, m, n)) for n in range(N)]
                     for m in range(M)], dtype=np.uint16)


def write_operand_dir(directory, cases, rng, with_expected=True, scales=(118, 136)):
    """Write operand bundles + manifest for cases [(name, M, N, K)]; returns {name: (ops, y)}."""
    out = {}
    for name, M, N, K in cases:
        ops = random_operands(rng, M, N, K, scales)
        y = exact_y(ops)
        tensors, absent = with_layouts(ops, M, N, K)
        if with_expected:
            tensors["y_exact"] = y
        bundle.save_operands(directory, name, tensors, M=M, N=N, K=K, regime="test", seed=7,
                             matrix_hash="h123", tool_version="test-0", absent=absent)
        out[name] = (ops, y)
    bundle.write_operand_manifest(directory, set_name="test", matrix_hash="h123",
                                  tool_version="test-0", seed_note="numpy default_rng",
                                  cases=[c[0] for c in cases])
    return out


def ordered1(ops, parts=1, align=32):
    """ordered(1) (contracts §4.1): exact 32-blocks, each times its scales rounded to fp32,
    accumulated in fp32 from +0 in K order, then bf16 RNE. ops: numpy uint8 a_fp4, a_scale,
    w_fp4, w_scale. Returns uint16 bf16 bits [M, N]. With parts S > 1: K cut into parts of
    round_up(ceil(K/S), align) elements (contracts §4.2 rule 1), each accumulated so, the part
    totals then added in order into an fp32 sum from +0."""
    a = signed_half_units(codes_of(ops["a_fp4"]))
    w = signed_half_units(codes_of(ops["w_fp4"]))
    M, K = a.shape
    nb = K // 32
    isum = np.einsum("mbk,nbk->mnb", a.reshape(M, nb, 32), w.reshape(-1, nb, 32))
    e = ops["a_scale"].astype(np.int64)[:, None, :] + ops["w_scale"].astype(np.int64)[None]
    nan = (ops["a_scale"] == 0xFF).any(axis=1)[:, None] | (ops["w_scale"] == 0xFF).any(axis=1)
    per = -(-(-(-K // parts)) // align) * align // 32  # blocks per part
    with np.errstate(over="ignore", invalid="ignore"):
        blocks = np.ldexp(isum.astype(np.float64), e - 256).astype(np.float32)
        acc = np.zeros(blocks.shape[:2], dtype=np.float32)
        for b0 in range(0, nb, per):
            part = np.zeros(blocks.shape[:2], dtype=np.float32)
            for b in range(b0, min(b0 + per, nb)):
                part = (part + blocks[:, :, b]).astype(np.float32)
            acc = (acc + part).astype(np.float32) if b0 else part
    u = acc.view(np.uint32).astype(np.uint64)
    y = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    y[np.isnan(acc) | nan] = 0x7FC0
    return y


def ordered1_gemm(a_fp4, a_scale, w_fp4, w_scale, **rest):
    """A numpy kernel keeping ordered(1), for `python -m a4w4check.external --kernel
    helpers:ordered1_gemm` (torch tensors or numpy arrays in, uint16 bf16 bits out)."""
    ops = {k: (v.cpu().numpy() if hasattr(v, "cpu") else np.asarray(v))
           for k, v in dict(a_fp4=a_fp4, a_scale=a_scale, w_fp4=w_fp4, w_scale=w_scale).items()}
    return ordered1(ops)


ordered1_gemm.a4w4_contract = "ordered(1)"


def splitk_gemm(a_fp4, a_scale, w_fp4, w_scale, **rest):
    """A numpy kernel whose split count changes with K, as cuBLAS's does (contracts §4.4, "The
    split count as a function of K"): one part up to K 288, three parts of
    round_up(ceil(K/3), 64) elements above (two parts would read as tile=256 at the small K a
    CPU test probes). It declares ordered(1), which it keeps up to K 288 only: `discover` finds
    the rest."""
    ops = {k: (v.cpu().numpy() if hasattr(v, "cpu") else np.asarray(v))
           for k, v in dict(a_fp4=a_fp4, a_scale=a_scale, w_fp4=w_fp4, w_scale=w_scale).items()}
    K = ops["a_fp4"].shape[1] * 2
    return ordered1(ops, 1 if K <= 288 else 3, 64)


splitk_gemm.a4w4_contract = "ordered(1)"
