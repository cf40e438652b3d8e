"""A tiny torch model whose layers call AITER's MXFP4 ops the way SGLang's Quark W4A4 linear
does (contracts §6): names imported from aiter at module import, activations quantized per call.
Import it after the fake aiter is on sys.path (the fake_aiter fixture)."""
import numpy as np
import torch
from aiter import gemm_a4w4, per_1x32_f4_quant_hip
from aiter.ops.triton.gemm_afp4wfp4 import gemm_afp4wfp4
from torch import nn

from a4w4check import layouts
from helpers import pack


def random_weight(in_f, out_f, seed):
    rng = np.random.default_rng(seed)
    return pack(rng.integers(0, 16, (out_f, in_f))), \
        rng.integers(122, 127, (out_f, in_f // 32)).astype(np.uint8)


class MxLinearAsm(nn.Module):
    """The opt-in ASM path: preshuffled weight, swizzled weight scale, gemm_a4w4."""

    def __init__(self, in_f, out_f, seed):
        super().__init__()
        self.w_fp4, self.w_scale = random_weight(in_f, out_f, seed)
        self.register_buffer("w", torch.from_numpy(layouts.shuffle_weight(self.w_fp4)))
        self.register_buffer("ws", torch.from_numpy(layouts.swizzle_scale(self.w_scale)))
        self.n = out_f

    def forward(self, x):
        M = x.shape[0]
        xq, xs = per_1x32_f4_quant_hip(x, shuffle=True)
        out = torch.empty(((M + 31) // 32 * 32, self.n), dtype=torch.bfloat16, device=x.device)
        y = gemm_a4w4(xq, self.w, xs, self.ws, out, bpreshuffle=True)  # ASM CALL
        return y[:M]


class MxLinearTriton(nn.Module):
    """The default path: row-major operands, gemm_afp4wfp4."""

    def __init__(self, in_f, out_f, seed):
        super().__init__()
        w, ws = random_weight(in_f, out_f, seed)
        self.register_buffer("w", torch.from_numpy(w))
        self.register_buffer("ws", torch.from_numpy(ws))

    def forward(self, x):
        xq, xs = per_1x32_f4_quant_hip(x, shuffle=False)
        return gemm_afp4wfp4(xq, self.w, xs, self.ws, torch.bfloat16)  # TRITON CALL


class TinyModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.up = MxLinearAsm(256, 64, 1)
        self.down = MxLinearTriton(64, 32, 2)

    def forward(self, x):
        h = self.up(x)  # UP LAYER
        return self.down(h)  # DOWN LAYER


def line_of(marker):
    with open(__file__) as f:
        return next(i for i, line in enumerate(f, 1) if line.rstrip().endswith(marker))
