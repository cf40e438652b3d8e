"""make_captures.py OPS_DIR OUT_DIR SCENARIO... — capture bundles for the capture-judgement
tests (tests/cli/capture_judge_same.sh, capture_judge_tree.sh): numpy GEMMs of known order
standing in for aiter's gemm_afp4wfp4 (the fake aiter of python/tests), called on operand
bundles `a4w4check export` wrote, recorded by a4w4check.capture exactly as a model's call
would be. Each scenario writes OUT_DIR/<scenario>.safetensors:

  declared      ordered(1) kernel declaring a4w4_contract = "ordered(1)", wide operands
  user          the same kernel declaring nothing, the user giving capture(contracts=...)
                a contract file holding "ordered(1)" ($A4W4_TEST_CONTRACT_FILE when set: a
                file `a4w4check discover` wrote)
  outside       the same kernel declaring nothing, wide operands (outside the exact regime;
                the kernel's y differs from y_exact there: checked here, else exit 1)
  wrong         declaring nothing, exact-regime operands, one output one ULP off (an output
                of the exact regime: it must be caught)
  tree          blocks in descending K, declaring a4w4_contract = "tree(order=desc)", wide
                operands (differs from ordered(1) and from y_exact: checked here)

The wide operands are OPS_DIR/wide.safetensors, the exact ones OPS_DIR/exact.safetensors."""
import os
import shutil
import sys

import numpy as np
import torch

from a4w4check import bundle, capture

HALF = np.array([0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12], dtype=np.int64)


def block_values(x, w, xs, ws):
    """[M, N, K/32] fp32: each 32-block's exact dot times its scales, rounded once."""
    def units(p):
        p = p.numpy().astype(np.int64)
        c = np.stack((p & 15, p >> 4), axis=-1).reshape(p.shape[0], -1)
        return HALF[c]
    a, b = units(x), units(w)
    M, K = a.shape
    nb = K // 32
    isum = np.einsum("mbk,nbk->mnb", a.reshape(M, nb, 32), b.reshape(-1, nb, 32))
    e = xs.numpy().astype(np.int64)[:, None, :] + ws.numpy().astype(np.int64)[None]
    return np.ldexp(isum.astype(np.float64), e - 256).astype(np.float32)


def to_bf16(acc):
    u = acc.view(np.uint32).astype(np.uint64)
    bits = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    return torch.from_numpy(bits.view(np.int16)).view(torch.bfloat16)


def ordered1(x, w, x_scales, w_scales, dtype=None, y=None, config=None, skip_reduce=False):
    v = block_values(x, w, x_scales, w_scales)
    acc = np.zeros(v.shape[:2], dtype=np.float32)
    for b in range(v.shape[2]):
        acc = (acc + v[:, :, b]).astype(np.float32)
    return to_bf16(acc)


def descending(x, w, x_scales, w_scales, dtype=None, y=None, config=None, skip_reduce=False):
    v = block_values(x, w, x_scales, w_scales)
    acc = np.zeros(v.shape[:2], dtype=np.float32)
    for b in reversed(range(v.shape[2])):
        acc = (acc + v[:, :, b]).astype(np.float32)
    return to_bf16(acc)


def bits(t):
    return t.contiguous().view(torch.int16).numpy().view(np.uint16)


def one_call(ops, kernel, path, contracts=None):
    """Record one call of kernel (as aiter's gemm_afp4wfp4) on ops into path."""
    import aiter.ops.triton.gemm_afp4wfp4 as site
    site.gemm_afp4wfp4 = kernel
    tmp = path + ".d"
    with capture.capture(tmp, sample_every=0, contracts=contracts):
        t = {k: torch.from_numpy(ops[k]) for k in ("a_fp4", "a_scale", "w_fp4", "w_scale")}
        y = site.gemm_afp4wfp4(t["a_fp4"], t["w_fp4"], t["a_scale"], t["w_scale"], torch.bfloat16)
    (name,) = os.listdir(tmp)
    shutil.move(os.path.join(tmp, name), path)
    os.rmdir(tmp)
    return bits(y)


def need(cond, what):
    if not cond:
        print(f"make_captures: {what}")
        sys.exit(1)


def main(ops_dir, out, scenarios):
    wide = bundle.load_operands(os.path.join(ops_dir, "wide.safetensors")).tensors
    exact = bundle.load_operands(os.path.join(ops_dir, "exact.safetensors")).tensors
    os.makedirs(out, exist_ok=True)
    for s in scenarios:
        path = os.path.join(out, s + ".safetensors")
        if s == "declared":
            kernel = lambda *a, **k: ordered1(*a, **k)  # noqa: E731 (its own attribute)
            kernel.a4w4_contract = "ordered(1)"
            one_call(wide, kernel, path)
        elif s == "user":
            cfile = os.environ.get("A4W4_TEST_CONTRACT_FILE") or os.path.join(out, "discovered.txt")
            if cfile == os.path.join(out, "discovered.txt"):
                with open(cfile, "w") as f:
                    f.write("ordered(1)\n")
            one_call(wide, ordered1, path, {"aiter.gemm_afp4wfp4": cfile})
        elif s == "outside":
            y = one_call(wide, ordered1, path)
            need((y != wide["y_exact"]).any(), "ordered(1) equals y_exact on the wide operands: "
                 "the outside scenario would prove nothing")
        elif s == "wrong":
            def wrong(*a, **k):
                y = bits(ordered1(*a, **k)).copy()
                y[1, 2] += 1
                return torch.from_numpy(y.view(np.int16)).view(torch.bfloat16)
            one_call(exact, wrong, path)
        elif s == "tree":
            kernel = lambda *a, **k: descending(*a, **k)  # noqa: E731
            kernel.a4w4_contract = "tree(order=desc)"
            y = one_call(wide, kernel, path)
            need((y != bits(ordered1(*(torch.from_numpy(wide[k]) for k in (
                "a_fp4", "w_fp4", "a_scale", "w_scale"))))).any(),
                 "descending equals ordered(1) on the wide operands: the tree scenario would "
                 "prove nothing")
        else:
            need(False, f"unknown scenario {s}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3:])
