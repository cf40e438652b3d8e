"""gt_model.py PLUGIN_DIR [SEED] — the ground-truth kernels of tests/plugins/gt/ against a
model of their tree contracts (docs/contracts.md §4.2) written with exact rationals
(fractions.Fraction): a third, independent reading of each order besides the C kernel and the
harness's tree oracle. Each kernel is called through its plugin ABI (ctypes) on single outputs
built to make order visible (pairs of 32-blocks whose products cancel exactly, beside blocks
scaled far smaller: FPRev-style swamping), and must equal its model on every output. The
inputs must also be sharp: for each kernel, the ordered(1) model differs from the kernel on
some output (else this check could not fail). Exit 0, or 1 with one line per problem."""
import ctypes
import random
import sys
from fractions import Fraction as Q

TWICE = [0, 1, 2, 3, 4, 6, 8, 12]  # twice the E2M1 magnitudes (contracts §1)

# kernel -> the tree keys its contract sets (everything else at ordered(1)'s values)
KERNELS = {
    "desc": {"order": "desc"}, "pairwise": {"reduce": "pairwise"}, "fuse2": {"fuse": 2},
    "fuse4": {"fuse": 4}, "splits": {"split": [160, 1056]}, "leaf16": {"leaf": 16},
    "rz": {"round": "rz"}, "tc27": {"fuse": 4, "prec": 27, "round": "rz"},
    "il2": {"lanes": 2}, "il8": {"lanes": 8, "lanecomb": "pairwise"},
    "rr4": {"lanes": 4, "chunk": 256}, "tiles256": {"tile": 256},
    "f64": {"leaf": 64}, "f128": {"leaf": 128}, "f64rz": {"leaf": 64, "lround": "rz"},
    "f128rz": {"leaf": 128, "lround": "rz"},
    # no key spells it (tree(sum=...) does, one K at a time): 8 lanes, then the xor shuffle
    # v[l] = v[l] + v[l ^ x] for x = 4, 2, 1, every lane at once, empty lanes +0; lane 0's value
    "butterfly": {"lanes": 8, "lanecomb": "xor"},
    # S = 3 parts of round_up(ceil(K/3), 64) elements, the last ending at K (cuBLAS's split-K)
    "split3a64": {"parts": 3, "align": 64},
    # S parts of round_up(ceil(K/S), 64), S 1 up to K 1184, 2 up to 1760, 3 up to 2592, then 4
    "splitk": {"parts": [(1184, 1), (1760, 2), (2592, 3), (None, 4)], "align": 64},
}
INF = Q(2) ** 1000  # stands for fp32 overflow under RNE


def twice(code):
    return -TWICE[code & 7] if code & 8 else TWICE[code & 7]


def log2_floor(x):
    e = x.numerator.bit_length() - x.denominator.bit_length()
    return e - 1 if Q(2) ** e > x else e + 1 if Q(2) ** (e + 1) <= x else e


def fp32(x, mode="rne"):
    """x rounded to fp32 (RNE or toward zero; subnormals kept; RZ overflow: max finite)."""
    if x == 0:
        return Q(0)
    a = abs(x)
    q = Q(2) ** max(log2_floor(a) - 23, -149)
    n = a / q
    k = n.numerator // n.denominator
    if mode == "rne" and (n - k > Q(1, 2) or (n - k == Q(1, 2) and k % 2)):
        k += 1
    v = k * q
    if v >= Q(2) ** 128:
        v = Q(2) ** 128 - Q(2) ** 104 if mode == "rz" else INF
    return v if x > 0 else -v


def bf16_bits(x):
    """fp32 value x (a Fraction) -> bf16 bits, RNE."""
    if abs(x) >= INF:
        return 0x7F80 if x > 0 else 0xFF80
    if x == 0:
        return 0
    sign = 0x8000 if x < 0 else 0
    a = abs(x)
    e = log2_floor(a)
    if e < -126:  # fp32 subnormal: bits = a / 2^-149
        u = int(a / Q(2) ** -149)
    else:
        u = (e + 127) << 23 | int((a / Q(2) ** e - 1) * 2 ** 23)
    return sign | ((u + 0x7FFF + ((u >> 16) & 1)) >> 16)


def node(inputs, t):
    """One tree node: exact sum (or aligned and truncated at prec bits), rounded once."""
    if t["prec"]:
        nz = [abs(v) for v in inputs if v != 0]
        if not nz:
            return Q(0)
        q = Q(2) ** (log2_floor(max(nz)) - t["prec"] + 1)
        inputs = [(abs(v) / q).__floor__() * q * (1 if v >= 0 else -1) for v in inputs]
    return fp32(sum(inputs, Q(0)), t["round"])


def reduce_pairwise(v, t):
    while len(v) > 1:
        v = [node(v[i:i + 2], t) if i + 1 < len(v) else v[i] for i in range(0, len(v), 2)]
    return v[0]


def lane_value(a, w, sa, sw, chunks, t):
    """One lane (rule 1a; the whole split when lanes = 1): its chunks' leaves, each the exact
    sum of its products rounded once (lround), reduced by the split's rules."""
    leaves = []
    for c0, c1 in chunks:
        for k0 in range(c0, c1, t["leaf"]):
            ex = sum(twice(a[k]) * twice(w[k]) * Q(2) ** (sa[k // 32] + sw[k // 32] - 256)
                     for k in range(k0, min(k0 + t["leaf"], c1)))
            leaves.append(fp32(ex, t["lround"]))
    if t["order"] == "desc":
        leaves.reverse()
    groups = [leaves[i:i + t["fuse"]] for i in range(0, len(leaves), t["fuse"])]
    if t["reduce"] == "chain":
        acc = Q(0)
        for g in groups:
            acc = node([acc] + g, t)
        return acc
    return reduce_pairwise([node(g, t) for g in groups], t)


def model(a, w, sa, sw, K, keys):
    t = {"leaf": 32, "order": "asc", "fuse": 1, "reduce": "chain", "prec": 0, "round": "rne",
         "split": [], "lround": "rne", "lanes": 1, "chunk": 32, "lanecomb": "chain", "tile": 0,
         "parts": 0, "align": 256}
    t.update(keys)
    bounds = ([0] + t["split"] + [K]) if not t["tile"] else list(range(0, K, t["tile"])) + [K]
    if t["parts"]:
        S = t["parts"] if isinstance(t["parts"], int) else \
            next(s for top, s in t["parts"] if top is None or K <= top)
        per = -(-(-(-K // S)) // t["align"]) * t["align"]
        bounds = list(range(0, K, per)) + [K]
    total = Q(0)
    for s in range(len(bounds) - 1):
        lo, hi = min(bounds[s], K), min(bounds[s + 1], K)
        if t["lanes"] == 1:
            acc = lane_value(a, w, sa, sw, [(lo, hi)], t)
        else:
            C, L = t["chunk"], t["lanes"]
            lanes = [[(c0, min(c0 + C, hi)) for c0 in range(lo + l * C, hi, L * C)]
                     for l in range(L)]
            vals = [lane_value(a, w, sa, sw, ch, t) for ch in lanes if ch]
            if t["lanecomb"] == "xor":
                v, x = vals + [Q(0)] * (L - len(vals)), L // 2
                while x:
                    v = [node([v[lane], v[lane ^ x]], t) for lane in range(L)]
                    x //= 2
                acc = v[0]
            elif t["lanecomb"] == "chain":
                acc = Q(0)
                for v in vals:
                    acc = node([acc, v], t)
            else:
                acc = reduce_pairwise(vals, t)
        total = node([total, acc], t)
    return bf16_bits(total)


def operands(rng):
    """One output's operands: random codes, scales spread around complementary centres, and
    most blocks paired with a twin whose W is negated (the pair's products cancel exactly);
    the unpaired rest are scaled 10..40 binades down, so the order decides what survives."""
    K = rng.choice([32, 64, 160, 192, 512, 1088, 1344, 2048])
    nb = K // 32
    a = [rng.randrange(16) for _ in range(K)]
    w = [rng.randrange(16) for _ in range(K)]
    c = rng.randrange(100, 150)
    sa = [max(0, min(254, c + rng.randrange(-40, 41))) for _ in range(nb)]
    sw = [max(0, min(254, 254 - c + rng.randrange(-40, 41))) for _ in range(nb)]
    idx = list(range(nb))
    rng.shuffle(idx)
    for p in range(0, nb - 1, 2):
        i, j = idx[p], idx[p + 1]
        if rng.random() < 0.8:
            sa[j], sw[j] = sa[i], sw[i]
            for t in range(32):
                a[j * 32 + t], w[j * 32 + t] = a[i * 32 + t], w[i * 32 + t] ^ 8
        else:
            sa[i], sa[j] = max(sa[i] - rng.randrange(10, 40), 0), max(sa[j] - rng.randrange(10, 40), 0)
    return a, w, sa, sw, K


class Args(ctypes.Structure):  # a4w4_plugin_gemm_args (harness/backends/a4w4_plugin.h)
    _fields_ = [(n, ctypes.c_size_t) for n in ("M", "N", "K")] + [
        ("a_fp4", ctypes.c_void_p), ("a_scale", ctypes.c_void_p),
        ("a_scale_shuffled", ctypes.c_void_p), ("a_rows_padded", ctypes.c_size_t),
        ("a_cols_padded", ctypes.c_size_t), ("w_fp4", ctypes.c_void_p),
        ("w_scale", ctypes.c_void_p), ("w_fp4_shuffled", ctypes.c_void_p),
        ("w_scale_swizzled", ctypes.c_void_p), ("rows", ctypes.c_void_p),
        ("nrows", ctypes.c_size_t), ("cols", ctypes.c_void_p), ("ncols", ctypes.c_size_t),
        ("y", ctypes.c_void_p), ("msg", ctypes.c_char_p), ("msglen", ctypes.c_size_t)]


GEMM = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(Args))


class Info(ctypes.Structure):  # a4w4_plugin_info
    _fields_ = [("abi_version", ctypes.c_uint32), ("name", ctypes.c_char_p),
                ("contract", ctypes.c_char_p), ("asm_layout", ctypes.c_int),
                ("init", ctypes.c_void_p), ("gemm", GEMM), ("fini", ctypes.c_void_p)]


def call(info, a, w, sa, sw, K):
    pack = lambda c: bytes(c[2 * i] | c[2 * i + 1] << 4 for i in range(K // 2))
    bufs = [ctypes.create_string_buffer(b) for b in (pack(a), bytes(sa), pack(w), bytes(sw))]
    y, msg = (ctypes.c_uint16 * 1)(0x7FA5), ctypes.create_string_buffer(256)
    ad = [ctypes.addressof(b) for b in bufs]
    args = Args(1, 1, K, ad[0], ad[1], None, 0, 0, ad[2], ad[3], None, None, None, 1, None, 1,
                ctypes.addressof(y), ctypes.cast(msg, ctypes.c_char_p), 256)
    rc = info.gemm(None, ctypes.byref(args))
    if rc:
        raise RuntimeError(f"gemm returned {rc}: {msg.value.decode()}")
    return y[0]


def main(plugin_dir, seed):
    problems = []
    for name, keys in KERNELS.items():
        lib = ctypes.CDLL(f"{plugin_dir}/liba4w4_gt_{name}_plugin.so")
        lib.a4w4_plugin_query.restype = ctypes.POINTER(Info)
        info = lib.a4w4_plugin_query().contents
        rng, wrong, sharp = random.Random(seed), 0, 0
        for _ in range(60):
            a, w, sa, sw, K = operands(rng)
            got = call(info, a, w, sa, sw, K)
            want = model(a, w, sa, sw, K, keys)
            if got != want:
                wrong += 1
                problems.append(f"gt-{name} K={K}: got 0x{got:04x}, model 0x{want:04x}")
            sharp += got != model(a, w, sa, sw, K, {})
        if not sharp:
            problems.append(f"gt-{name}: no output tells it from ordered(1): the check is blunt")
        print(f"gt-{name} ({info.contract.decode()}): {60 - wrong} of 60 outputs equal the "
              f"model, {sharp} differ from ordered(1)")
    for p in problems:
        print("gt_model: " + p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 0))
