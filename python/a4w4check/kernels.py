"""a4w4check.kernels: the GEMMs `python -m a4w4check.external` runs on operand bundles.

Each kernel is load(name) -> Kernel; loading imports what the kernel needs, so a missing
package shows before any case runs (KernelUnavailable). Kernel.run(ops, dims, device) takes the
operand bundle's tensors (name -> torch tensor on device; numpy arrays where torch is absent)
and (M, N, K), and returns y [M, N] as a torch bfloat16 tensor or numpy uint16 bf16 bits.

  aiter-asm          aiter.gemm_a4w4(a_fp4, w_fp4_shuffled, a_scale_shuffled, w_scale_swizzled,
                     out, bpreshuffle=True), out allocated with rows padded to 32 as SGLang does
                     (contracts §4, §6); contract exact.
  aiter-triton       aiter.ops.triton.gemm_afp4wfp4.gemm_afp4wfp4 (or, in newer AITER,
                     aiter.ops.triton.gemm.basic.gemm_afp4wfp4) on the row-major operands;
                     contract exact.
  triton-dot-scaled  a tl.dot_scaled e2m1 x e2m1 GEMM (a4w4check.triton_mx); contract exact.
  torch-dequant      E2M1 x 2^(scale-127) dequantized to float64, float64 matmul, rounded to
                     bf16 RNE on the bits (numerics.f64_to_bf16); any CPU; contract bounded(1)
                     (float64 sums are exact only while the terms' spread fits 53 bits).
  torch-dequant-bf16 A and W dequantized to bf16 (exact: bf16 has fp32's exponent range, so
                     every E2M1 value times 2^(scale-127) is a bf16 value, except the
                     magnitudes 2^128 and above, at scale 254 with |v| >= 2 or scale 253 with
                     |v| >= 4, which become inf), then one torch.matmul of the whole [M, K] by
                     [K, N] on the device (cuda: cuBLAS with torch's defaults, fp32 accumulate,
                     its own tiles and split-K), bf16 out; contract unknown (None): find it
                     with `a4w4check discover`.
  module:function    the user's function, a runner: called as call_runner describes (every
                     input tensor a keyword, torch uint8, no M, N, K, never an expected value);
                     check_runner refuses a signature that cannot take that call before any
                     case runs. Its contract comes from --contract or the function's
                     a4w4_contract attribute, its reading of E8M0 code 0 from --e8m0-code0 or
                     its a4w4_e8m0_code0 attribute ("2^-127" or "2^-126"; contracts §1).
The two torch-dequant kernels read E8M0 code 0 as 2^-127 and declare it; the AITER and Triton
kernels declare no reading (the hardware's is the open question of contracts §1).
"""
from __future__ import annotations

import hashlib
import importlib
import inspect
from dataclasses import dataclass
from functools import partial
from types import ModuleType
from typing import Any, Callable, Collection, Optional

import numpy as np
import numpy.typing as npt

from . import capture_ops
from .layouts import round_up
from .numerics import E2M1, E8M0, f64_to_bf16

BUILTIN = ("aiter-asm", "aiter-triton", "triton-dot-scaled", "torch-dequant",
           "torch-dequant-bf16")


class KernelUnavailable(Exception):
    """A kernel's Python package cannot be imported; str() is the one-line explanation."""

    def __init__(self, kernel: str, package: str, reason: str) -> None:
        self.kernel, self.package, self.reason = kernel, package, reason
        super().__init__(f"kernel {kernel} needs the Python package '{package}' "
                         f"(not importable: {reason})")


@dataclass
class Kernel:
    """name; contract (None: the caller must supply one); default device ("cuda", "cpu" or
    "auto": cuda where torch sees one); run(ops, (M, N, K), device) -> y; runner: the user's
    function behind a module:function kernel (None for the built-in ones); e8m0_code0: the
    reading of E8M0 scale code 0 the kernel implements, "2^-127" or "2^-126" (contracts §1;
    None: undeclared, so the C harness judges cases holding code 0 under both readings)."""
    name: str
    contract: Optional[str]
    device: str
    run: Callable[[dict[str, Any], tuple[int, int, int], str], Any]
    runner: Optional[Callable[..., Any]] = None
    e8m0_code0: Optional[str] = None


def _need(kernel: str, module: str, package: Optional[str] = None) -> ModuleType:
    try:
        return importlib.import_module(module)
    except Exception as e:  # ImportError, or whatever a broken package raises on import
        reason = str(e) if isinstance(e, ImportError) else f"{type(e).__name__}: {e}"
        raise KernelUnavailable(kernel, package or module.split(".")[0], reason) from None


def _require(ops: dict[str, Any], *names: str) -> list[Any]:
    missing = [n for n in names if n not in ops]
    if missing:
        raise ValueError(f"the operand bundle lacks {', '.join(missing)} (see its 'absent')")
    return [ops[n] for n in names]


def _aiter_dtype(aiter: Any, attr: str, t: Any) -> Any:
    dt = getattr(getattr(aiter, "dtypes", None), attr, None)
    return t if dt is None else t.view(dt)


def _aiter_asm(torch: Any, aiter: Any, ops: dict[str, Any], dims: tuple[int, int, int],
               device: str) -> Any:
    M, N, _ = dims
    a, w, a_s, w_s = _require(ops, "a_fp4", "w_fp4_shuffled", "a_scale_shuffled",
                              "w_scale_swizzled")
    a, w = _aiter_dtype(aiter, "fp4x2", a), _aiter_dtype(aiter, "fp4x2", w)
    a_s, w_s = _aiter_dtype(aiter, "fp8_e8m0", a_s), _aiter_dtype(aiter, "fp8_e8m0", w_s)
    out = torch.empty((round_up(M, 32), N), dtype=torch.bfloat16, device=device)
    r = aiter.gemm_a4w4(a, w, a_s, w_s, out, bpreshuffle=True)
    return (r if isinstance(r, torch.Tensor) else out)[:M]


def _aiter_triton(torch: Any, fn: Any, ops: dict[str, Any], dims: tuple[int, int, int],
                  device: str) -> Any:
    a, w, a_s, w_s = _require(ops, "a_fp4", "w_fp4", "a_scale", "w_scale")
    return fn(a, w, a_s, w_s, torch.bfloat16)


def _triton_dot_scaled(mx: Any, ops: dict[str, Any], dims: tuple[int, int, int],
                       device: str) -> Any:
    return mx.gemm(*_require(ops, "a_fp4", "a_scale", "w_fp4", "w_scale"))


def dequant_torch(torch: Any, packed: Any, scales: Any) -> Any:
    """torch uint8 [R, K/2] fp4x2 and [R, K/32] E8M0 -> float64 [R, K] on their device."""
    lut = torch.tensor(E2M1, dtype=torch.float64, device=packed.device)
    sc = torch.tensor(E8M0, dtype=torch.float64, device=packed.device)
    codes = torch.stack((packed & 15, packed >> 4), dim=-1).reshape(packed.shape[0], -1)
    return lut[codes.long()] * sc[scales.long()].repeat_interleave(32, dim=1)


def _torch_dequant(torch: Any, ops: dict[str, Any], dims: tuple[int, int, int], device: str,
                   chunk_bytes: int = 1 << 28) -> npt.NDArray[np.uint16]:
    M, N, K = dims
    a, a_s, w, w_s = _require(ops, "a_fp4", "a_scale", "w_fp4", "w_scale")
    ad = dequant_torch(torch, a, a_s)
    y = np.empty((M, N), dtype=np.uint16)
    step = max(1, chunk_bytes // (8 * K))
    for n0 in range(0, N, step):
        wd = dequant_torch(torch, w[n0:n0 + step], w_s[n0:n0 + step])
        y64 = (ad @ wd.T) + 0.0  # an exactly-zero sum is +0, as the exact oracle has it
        y[:, n0:n0 + step] = f64_to_bf16(y64.cpu().numpy())
    return y


def _torch_dequant_bf16(torch: Any, ops: dict[str, Any], dims: tuple[int, int, int],
                        device: str, chunk_bytes: int = 1 << 28) -> Any:
    M, N, K = dims
    a, a_s, w, w_s = _require(ops, "a_fp4", "a_scale", "w_fp4", "w_scale")
    ab = dequant_torch(torch, a, a_s).to(torch.bfloat16)
    wb = torch.empty((N, K), dtype=torch.bfloat16, device=w.device)
    step = max(1, chunk_bytes // (8 * K))
    for n0 in range(0, N, step):  # float64 in chunks; one matmul over the whole W below
        wb[n0:n0 + step] = dequant_torch(torch, w[n0:n0 + step], w_s[n0:n0 + step])
    return torch.matmul(ab, wb.T)


def call_runner(fn: Callable[..., Any], ops: dict[str, Any], dims: tuple[int, int, int],
                device: str) -> Any:
    """Call a module:function runner the one way every runner is called (python/README.md,
    "Your own kernel"): fn(**ops).

    ops holds every input tensor of the case's operand bundle, each as a keyword named as in
    the bundle: a_fp4 [M, K/2] and w_fp4 [N, K/2] (fp4x2, element 2i in the low nibble),
    a_scale [M, K/32] and w_scale [N, K/32] (E8M0), and where the shape allows them
    a_scale_shuffled, w_fp4_shuffled, w_scale_swizzled (contracts §3), plus x (the bf16
    activations) where the bundle holds it. Tensors arrive as torch.uint8 (x torch.bfloat16) on
    the kernel's device, numpy arrays where torch does not import; reinterpret them with
    a4w4check.bundle.view(t, "fp4x2" | "e8m0") where a library wants those dtypes. M, N and K
    are not passed: M = a_fp4.shape[0], N = w_fp4.shape[0], K = 2 * a_fp4.shape[1]. Expected
    values (y_exact, any y_*) are never passed. Which tensors a bundle holds varies by case, so
    a runner names the tensors it uses and takes the rest with **rest; check_runner refuses one
    that cannot take the call. It returns y [M, N]: a torch.bfloat16 tensor or numpy uint16
    bf16 bits (y_bits). dims and device are the harness's, not passed on."""
    return fn(**ops)


def _digest(t: Any) -> bytes:
    """BLAKE2b of a tensor's bytes: a numpy array, or a torch tensor on any device (copied to
    the host)."""
    if hasattr(t, "detach"):
        import torch
        t = t.detach().cpu().contiguous().flatten().view(torch.uint8).numpy()
    return hashlib.blake2b(np.ascontiguousarray(t).view(np.uint8).data, digest_size=16).digest()


def run_watched(kern: Kernel, ops: dict[str, Any], dims: tuple[int, int, int],
                device: str) -> tuple[Any, list[str]]:
    """kern.run(ops, dims, device) and the names of the operands it wrote into (hashed before
    and after the call; empty when none). The operands are the kernel's inputs: a kernel that
    writes into one fails its case, as a plugin does (docs/backends.md, "What every backend
    call goes through")."""
    before = {n: _digest(t) for n, t in ops.items()}
    y = kern.run(ops, dims, device)
    return y, [n for n, t in ops.items() if _digest(t) != before[n]]


def check_runner(kern: Kernel, names: Collection[str]) -> Optional[str]:
    """One line saying why kern's runner cannot take call_runner's call with the keywords
    names (one case's input tensors), or None when it can (or kern has no runner, or its
    signature cannot be read)."""
    if kern.runner is None:
        return None
    try:
        sig = inspect.signature(kern.runner)
    except (TypeError, ValueError):
        return None
    try:
        sig.bind(**dict.fromkeys(sorted(names)))
        return None
    except TypeError as e:
        why = str(e)
    return (f"kernel {kern.name}: a runner is called with every input tensor of the operand "
            f"bundle as a keyword ({', '.join(sorted(names))}; torch uint8) and no M, N, K; "
            f"its signature {sig} cannot take that call ({why}): name the tensors it uses, "
            "take the rest with **rest, and read M, N, K from the shapes")


def _load_user(name: str) -> Kernel:
    modname, _, fname = name.partition(":")
    if not modname or not fname:
        raise ValueError(f"kernel {name!r}: expected module:function")
    mod = _need(name, modname)
    fn = getattr(mod, fname, None)
    if not callable(fn):
        raise ValueError(f"kernel {name}: module {modname} has no function {fname}")
    return Kernel(name, getattr(fn, "a4w4_contract", None), "auto", partial(call_runner, fn),
                  runner=fn, e8m0_code0=getattr(fn, "a4w4_e8m0_code0", None))


def load(name: str) -> Kernel:
    """The Kernel for a name (see the module docstring). Raises KernelUnavailable when a needed
    package does not import, ValueError for an unknown name or a bad module:function."""
    if name == "torch-dequant":
        torch = _need(name, "torch")
        return Kernel(name, "bounded(1)", "cpu", partial(_torch_dequant, torch),
                      e8m0_code0="2^-127")  # numerics.E8M0: 2^(code-127) for every code
    if name == "torch-dequant-bf16":
        torch = _need(name, "torch")
        return Kernel(name, None, "cuda", partial(_torch_dequant_bf16, torch),
                      e8m0_code0="2^-127")
    if name == "aiter-asm":
        aiter, torch = _need(name, "aiter"), _need(name, "torch")
        if not hasattr(aiter, "gemm_a4w4"):
            raise KernelUnavailable(name, "aiter", "it has no gemm_a4w4")
        wrong = capture_ops.signature_mismatch("aiter.gemm_a4w4", aiter.gemm_a4w4)
        if wrong:  # the positional call below would bind out as another parameter
            raise ValueError(f"kernel {name}: {wrong}")
        return Kernel(name, "exact", "cuda", partial(_aiter_asm, torch, aiter))
    if name == "aiter-triton":
        try:
            m = _need(name, "aiter.ops.triton.gemm_afp4wfp4", "aiter")
        except KernelUnavailable:  # newer AITER keeps it under gemm/basic/
            m = _need(name, "aiter.ops.triton.gemm.basic.gemm_afp4wfp4", "aiter")
        torch = _need(name, "torch")
        return Kernel(name, "exact", "cuda", partial(_aiter_triton, torch, m.gemm_afp4wfp4))
    if name == "triton-dot-scaled":
        _need(name, "triton"), _need(name, "torch")
        mx = importlib.import_module("a4w4check.triton_mx")
        return Kernel(name, "exact", "cuda", partial(_triton_dot_scaled, mx))
    if ":" in name:
        return _load_user(name)
    raise ValueError(f"unknown kernel {name!r} (known: {', '.join(BUILTIN)}, module:function)")


def y_bits(y: Any, M: int, N: int) -> npt.NDArray[np.uint16]:
    """A kernel's y -> numpy uint16 bf16 bits [M, N]; ValueError unless y is bfloat16 (torch)
    or uint16 bits (numpy) of shape [M, N]."""
    if hasattr(y, "detach"):
        import torch
        if y.dtype != torch.bfloat16:
            raise ValueError(f"the kernel returned {y.dtype}, y must be torch.bfloat16")
        y = y.detach().contiguous().cpu().view(torch.int16).numpy().view(np.uint16)
    elif not isinstance(y, np.ndarray) or y.dtype != np.uint16:
        what = f"{type(y).__name__} of {y.dtype}" if isinstance(y, np.ndarray) else type(y).__name__
        raise ValueError(f"the kernel returned {what}, y must be a bfloat16 tensor "
                         "or numpy uint16 bf16 bits")
    if tuple(y.shape) != (M, N):
        raise ValueError(f"the kernel returned shape {list(y.shape)}, y must be [{M}, {N}]")
    return np.ascontiguousarray(y)
