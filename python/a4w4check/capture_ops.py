"""a4w4check.capture_ops: what a4w4check.capture knows about each op it wraps: where the
function lives (SITES), its parameters in order (PARAMS), the contract the op itself declares
(CONTRACTS: "" for none), and describe(op, bound args) -> ((M, N, K), {parameter: tensor
name}, {metadata}), outputs()."""
from __future__ import annotations

import inspect
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import numpy.typing as npt

from .layouts import round_up, swizzle_supported

SITES = {
    "aiter.gemm_a4w4": ("aiter", "aiter.ops.gemm_op_a4w4"),
    "aiter.gemm_afp4wfp4": ("aiter.ops.triton.gemm_afp4wfp4",
                            "aiter.ops.triton.gemm.basic.gemm_afp4wfp4"),
    "aiter.per_1x32_f4_quant_hip": ("aiter", "aiter.ops.quant"),
}
PARAMS = {
    "aiter.gemm_a4w4": ("A", "B", "A_scale", "B_scale", "out", "bias", "alpha", "beta",
                        "bpreshuffle"),
    "aiter.gemm_afp4wfp4": ("x", "w", "x_scales", "w_scales", "dtype", "y", "config",
                            "skip_reduce"),
    "aiter.per_1x32_f4_quant_hip": ("x", "scale", "quant_dtype", "shuffle", "num_rows",
                                    "num_rows_factor"),
}
# AITER documents no accumulation order for its GEMMs, so none is declared for them: a capture
# records a contract only when its kernel declares one (an a4w4_contract attribute) or the user
# gives one (capture(contracts=...), e.g. what `a4w4check discover` found), and the harness
# never judges a capture against a contract its kernel did not declare (contracts §4.1).
CONTRACTS = {"aiter.gemm_a4w4": "", "aiter.gemm_afp4wfp4": "", "aiter.per_1x32_f4_quant_hip": ""}


# ((M, N, K), {parameter: tensor name}, {metadata}) of one call
Described = tuple[tuple[int, int, int], dict[str, str], dict[str, str]]


def signature_mismatch(op: str, fn: Callable[..., Any]) -> str | None:
    """One line when the installed fn's leading parameters are not PARAMS[op] in that order
    (the order positional callers such as SGLang and vLLM, the capture's bind and
    a4w4check.external pass them), else None: with another order an argument lands in the
    wrong parameter, as when an AITER signature change bound `out` as `bias`
    (vllm-project/vllm#40754)."""
    try:
        got = [n for n, p in inspect.signature(fn).parameters.items()
               if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):  # a builtin without a signature: nothing to check
        return None
    want = list(PARAMS[op])
    n = min(len(got), len(want))
    if got[:n] == want[:n] and len(got) >= 5:
        return None
    return (f"{op}: the installed function takes ({', '.join(got)}), positional callers pass "
            f"({', '.join(want[:5])}, ...): an argument lands in the wrong parameter "
            "(vllm-project/vllm#40754: out bound as bias)")


def bind(op: str, args: Sequence[Any], kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """Parameter name -> value of one call (positional args mapped by PARAMS[op])."""
    bound = dict(zip(PARAMS[op], args))
    bound.update(kwargs)
    return bound


def to_numpy(t: Any) -> tuple[str, npt.NDArray[Any]]:
    """A tensor as the capture stores it: (safetensors dtype name, numpy array) on CPU, copied."""
    import torch
    t = t.detach().contiguous().to("cpu", copy=True)
    if t.dtype == torch.bfloat16:
        return "BF16", t.view(torch.int16).numpy().view(np.uint16)
    if t.dtype in (torch.float16, torch.float32):
        return ("F16" if t.dtype == torch.float16 else "F32"), t.numpy()
    if t.element_size() == 1:  # uint8, float4_e2m1fn_x2, float8_e8m0fnu
        return "U8", t.view(torch.uint8).numpy()
    raise TypeError(f"cannot store a {t.dtype} tensor")


def _gemm_a4w4(b: Mapping[str, Any]) -> Described:
    A, B, a_s = b["A"], b["B"], b["A_scale"]
    M, N, K = A.shape[0], B.shape[0], A.shape[1] * 2
    pre = bool(b.get("bpreshuffle", True))
    a_pad = tuple(a_s.shape) == (round_up(M, 256), round_up(K // 32, 8))
    names = {"A": "a_fp4", "B": "w_fp4_shuffled" if pre else "w_fp4",
             "A_scale": "a_scale_shuffled" if a_pad else "a_scale",
             "B_scale": "w_scale_swizzled" if pre and swizzle_supported(N, K // 32) else "w_scale",
             "bias": "bias"}
    meta = {"bpreshuffle": str(pre), "alpha": str(b.get("alpha", 1.0)),
            "beta": str(b.get("beta", 0.0))}
    return (M, N, K), names, meta


def _gemm_afp4wfp4(b: Mapping[str, Any]) -> Described:
    x, w = b["x"], b["w"]
    names = {"x": "a_fp4", "x_scales": "a_scale", "w": "w_fp4", "w_scales": "w_scale"}
    meta = {"dtype": str(b.get("dtype", "torch.bfloat16")),
            "skip_reduce": str(bool(b.get("skip_reduce", False)))}
    return (x.shape[0], w.shape[0], x.shape[1] * 2), names, meta


def _quant(b: Mapping[str, Any]) -> Described:
    x = b["x"]
    return (x.shape[0], 0, x.shape[-1]), {"x": "x"}, {"shuffle": str(bool(b.get("shuffle")))}


_DESCRIBE: dict[str, Callable[[Mapping[str, Any]], Described]] = {
    "aiter.gemm_a4w4": _gemm_a4w4, "aiter.gemm_afp4wfp4": _gemm_afp4wfp4,
    "aiter.per_1x32_f4_quant_hip": _quant}


def describe(op: str, b: Mapping[str, Any]) -> Described:
    """((M, N, K), {parameter: tensor name}, {metadata}) of a bound call."""
    return _DESCRIBE[op](b)


def outputs(op: str, b: Mapping[str, Any], result: Any, dims: Sequence[int]) -> dict[str, Any]:
    """name -> output tensor of a call."""
    if op == "aiter.per_1x32_f4_quant_hip":
        q, s = result[0], result[1]
        return {"a_fp4": q, "a_scale_shuffled" if b.get("shuffle") else "a_scale": s}
    y = result if result is not None else b.get("out", b.get("y"))
    return {"y": y[:dims[0]]}
