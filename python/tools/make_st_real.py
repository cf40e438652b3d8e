#!/usr/bin/env python3
"""make_st_real.py OUTDIR: safetensors files written by the real `safetensors` library, plus
OUTDIR/expected.json describing their contents from the source tensors (not from the files),
for python/tests/test_safetensors_real.py (which holds a4w4check.safetensors_codec byte-equal
to them).

Needs torch >= 2.8 (torch.float4_e2m1fn_x2, torch.float8_e8m0fnu) and safetensors with F4 /
F8_E8M0 support (0.6 or later). Deterministic: the same versions write the same bytes, except
the order of __metadata__ keys, which the library writes in hash order (the test rebuilds each
file with the metadata order the file has).

expected.json: {"generator": {versions}, "files": {name: {"size", "sha256", "metadata",
"tensors": {tensor: {"dtype", "shape" (header shape: F4 counted in 4-bit elements), "nbytes",
"sha256" (of the raw bytes)}}}}}.
"""
import hashlib
import json
import os
import sys

import numpy as np
import safetensors
import torch
from safetensors.torch import save_file

DTYPE_NAMES = {torch.uint8: "U8", torch.bfloat16: "BF16", torch.float16: "F16",
               torch.float32: "F32"}


def need_new_torch():
    missing = [d for d in ("float4_e2m1fn_x2", "float8_e8m0fnu") if not hasattr(torch, d)]
    if missing:
        sys.exit(f"make_st_real.py: torch {torch.__version__} lacks {', '.join(missing)} "
                 "(needs torch >= 2.8)")


def u8(rng, *shape):
    return torch.from_numpy(rng.integers(0, 256, shape, dtype=np.uint8))


def fp4(rng, rows, nbytes):
    return u8(rng, rows, nbytes).view(torch.float4_e2m1fn_x2)


def e8m0(rng, *shape):
    return u8(rng, *shape).view(torch.float8_e8m0fnu)


def bf16(rng, *shape):
    return torch.from_numpy(rng.integers(0, 1 << 16, shape, dtype=np.uint16).view(np.int16)) \
        .view(torch.bfloat16)


def files(rng):
    """name -> (tensors, metadata) to write."""
    nb = 128 // 32
    return {
        "mixed.safetensors": ({
            "u8_odd": u8(rng, 3, 5), "bf16_odd": bf16(rng, 7),
            "f32": torch.from_numpy(rng.standard_normal((2, 3)).astype(np.float32)),
            "f16_odd": torch.from_numpy(rng.standard_normal(5).astype(np.float16)),
            "fp4": fp4(rng, 3, 4), "e8m0": e8m0(rng, 3, 1),
            "empty_u8": torch.zeros((0, 4), dtype=torch.uint8),
            "empty_bf16": torch.zeros((0,), dtype=torch.bfloat16),
            "scalar": torch.tensor(2.5, dtype=torch.float32)}, {"format": "st-real/1"}),
        "names.safetensors": ({
            "b": u8(rng, 1), "a": u8(rng, 2), "B": u8(rng, 3), "a_b": u8(rng, 1),
            "\u00e4": u8(rng, 2), "a.b": bf16(rng, 2)}, None),
        "multi_meta.safetensors": ({"x": u8(rng, 4)},
                                   {"format": "a4w4-operands/1", "name": "g/1", "M": "5",
                                    "absent": "w: n % 32; z: \"quoted\"",
                                    "note": "\u00fcnicode\n"}),
        "operands.safetensors": ({
            "a_fp4": fp4(rng, 5, 64), "a_scale": e8m0(rng, 5, nb),
            "a_scale_shuffled": u8(rng, 256, 8), "w_fp4": u8(rng, 32, 64),
            "w_fp4_shuffled": fp4(rng, 32, 64), "w_scale": u8(rng, 32, nb),
            "w_scale_swizzled": e8m0(rng, 32, nb), "y_exact": bf16(rng, 5, 32)},
            {"format": "a4w4-operands/1"}),
        "f4_e8m0_only.safetensors": ({"q": fp4(rng, 2, 3), "s": e8m0(rng, 2, 1)}, None),
        "empty.safetensors": ({}, None),
    }


def describe(t):
    raw = t.contiguous().reshape(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b""
    if t.dtype == torch.float4_e2m1fn_x2:
        dtype, shape = "F4", list(t.shape[:-1]) + [t.shape[-1] * 2]
    elif t.dtype == torch.float8_e8m0fnu:
        dtype, shape = "F8_E8M0", list(t.shape)
    else:
        dtype, shape = DTYPE_NAMES[t.dtype], list(t.shape)
    return {"dtype": dtype, "shape": shape, "nbytes": len(raw),
            "sha256": hashlib.sha256(raw).hexdigest()}


def main(argv):
    if len(argv) != 2:
        sys.exit("usage: make_st_real.py OUTDIR")
    need_new_torch()
    out = argv[1]
    os.makedirs(out, exist_ok=True)
    expected = {"generator": {"torch": torch.__version__, "safetensors": safetensors.__version__,
                              "numpy": np.__version__}, "files": {}}
    for name, (tensors, meta) in files(np.random.default_rng(20240)).items():
        path = os.path.join(out, name)
        save_file(tensors, path, metadata=meta)
        data = open(path, "rb").read()
        expected["files"][name] = {
            "size": len(data), "sha256": hashlib.sha256(data).hexdigest(), "metadata": meta,
            "tensors": {k: describe(v) for k, v in tensors.items()}}
    with open(os.path.join(out, "expected.json"), "w", encoding="utf-8") as f:
        json.dump(expected, f, indent=2, ensure_ascii=False)
        f.write("\n")
    print(f"make_st_real.py: {len(expected['files'])} files in {out}")


if __name__ == "__main__":
    main(sys.argv)
