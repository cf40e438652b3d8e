"""a4w4check.capture: record the MXFP4 calls a running model makes, as capture bundles
(a4w4-capture/1) the C harness can judge.

    with capture.capture("/tmp/cap", budget_bytes=2 << 30, sample_every=100, seed=0):
        model(x)

or, for a server (SGLang) you do not edit: A4W4CHECK_CAPTURE=DIR [A4W4CHECK_CAPTURE_BUDGET=
bytes, suffix K/M/G allowed; A4W4CHECK_CAPTURE_SAMPLE_EVERY; A4W4CHECK_CAPTURE_SEED;
A4W4CHECK_CAPTURE_CONTRACTS="op=CONTRACT;..."] in the environment of a process that imports
a4w4check (an explicit `import a4w4check.capture` in the launch script, or a sitecustomize.py on
PYTHONPATH that does it).

Each GEMM capture records the contract its kernel keeps (metadata `contract`, and
`contract_source`): the user's (capture(contracts={op: text or file}), e.g. the file
`a4w4check discover --out FILE` wrote), else the wrapped function's `a4w4_contract` attribute,
else the op's own declaration (capture_ops.CONTRACTS: none for AITER's ops), else none ("").
A capture with no contract is judged only where the exact regime is proven and says so; it is
never judged against a contract its kernel did not declare.

Wrapped ops: aiter.gemm_a4w4, aiter.per_1x32_f4_quant_hip and
aiter.ops.triton.gemm_afp4wfp4.gemm_afp4wfp4, in aiter's modules and in every module already
imported that holds the same function (e.g. `from aiter import gemm_a4w4`). Recorded: the first
call of each distinct (op, M, N, K) and a seeded sample (one in sample_every) of later ones,
while the bytes written stay within budget_bytes. Tensors are copied to CPU as the op received
them (fp4x2 and E8M0 stored as U8, bf16 as BF16) plus its output; names as in case bundles
(a_scale_shuffled when A_scale has the padded shape of contracts §3.3; w_fp4_shuffled and
w_scale_swizzled when bpreshuffle=True and the swizzle is supported, else w_fp4 / w_scale).

Every bundle names its layer in both modes: `layer` is the module path of the innermost torch
module running when the op was called ("model.layers.3.mlp.down_proj", as named_modules names
it from the outermost module called), `layer_call_site` the file:line of the code that called
that module (the model's own line, one per layer), and `call_site` the file:line of the code
that called the op (outside a4w4check, aiter and torch: the linear layer's method, the same
line for every layer of a kind). While a capture runs, global forward hooks of torch
(torch.nn.modules.module.register_module_forward_pre_hook) keep that module stack; name_layers
(optional) still names a model's modules explicitly.

A capture never changes a result and never raises into the model: the op runs exactly as
called, and the first failure of the capture itself (a write error, the budget reached) is
logged once through logging ("a4w4check.capture") and stops capturing. stop() (the context's
exit) puts the original functions back. Calls made while a CUDA graph is being captured are not
recorded (a copy to the CPU would break the graph), and calls replayed from a CUDA graph never
reach Python: to record decode shapes, run the server with CUDA graphs off (SGLang:
--disable-cuda-graph). Code that torch.compile traces is passed through unrecorded too.
"""
from __future__ import annotations

import functools
import importlib
import logging
import os
import random
import sys
import threading
from types import FrameType, ModuleType
from typing import Any, Callable, Mapping, Optional

from . import bundle, contract
from . import safetensors_codec as codec
from .capture_ops import CONTRACTS, SITES, bind, describe, outputs, signature_mismatch, to_numpy

log = logging.getLogger("a4w4check.capture")

# What _plan keeps of a call to record: the bound arguments, (M, N, K), the input tensors
# (name -> (safetensors dtype, numpy copy)) and the metadata so far.
_Plan = tuple[dict[str, Any], tuple[int, int, int], dict[str, tuple[str, Any]], dict[str, str]]

_SKIP = ("a4w4check", "aiter", "torch")
_LOCAL = threading.local()


def _stack() -> list[str]:
    if not hasattr(_LOCAL, "stack"):
        _LOCAL.stack = []
    stack: list[str] = _LOCAL.stack
    return stack


def _modules() -> list[tuple[str, str]]:
    """This thread's stack of (module path, call site) the global module hooks keep."""
    if not hasattr(_LOCAL, "modules"):
        _LOCAL.modules = []
    modules: list[tuple[str, str]] = _LOCAL.modules
    return modules


def current_layer() -> str:
    """Module path of the innermost module running in this thread (name_layers' name when it
    named it, else the global module hooks'), or ""."""
    s, g = _stack(), _modules()
    return s[-1] if s else g[-1][0] if g else ""


def current_layer_call_site() -> str:
    """file:line where the innermost running module (global module hooks) was called, or ""."""
    g = _modules()
    return g[-1][1] if g else ""


class _ModuleHooks:
    """Global torch forward hooks that keep _modules(): each module's path (named_modules of
    the outermost module called, cached per root) and the line that called it."""

    def __init__(self) -> None:
        import weakref
        self.names: weakref.WeakKeyDictionary[Any, dict[int, str]] = weakref.WeakKeyDictionary()
        self.handles: list[Any] = []

    def start(self) -> _ModuleHooks:
        mm = getattr(getattr(sys.modules.get("torch"), "nn", None), "modules", None)
        reg = getattr(getattr(mm, "module", None), "register_module_forward_pre_hook", None)
        post = getattr(getattr(mm, "module", None), "register_module_forward_hook", None)
        if reg is None or post is None:
            return self
        self.handles = [reg(self._pre), post(self._post)]
        return self

    def stop(self) -> None:
        for h in self.handles:
            h.remove()
        self.handles = []

    def _path(self, root: Any, mod: Any) -> str:
        names = self.names.get(root)
        if names is None or id(mod) not in names:
            names = {id(m): n for n, m in root.named_modules()}
            self.names[root] = names
        name = names.get(id(mod))
        return name if name is not None else f"<{type(mod).__name__}>"

    def _pre(self, mod: Any, _inp: Any) -> None:
        try:
            g = _modules()
            if not g:
                _LOCAL.root = mod
            g.append((self._path(_LOCAL.root, mod) or type(mod).__name__, call_site()))
        except Exception:  # never raise into the model
            pass

    def _post(self, _mod: Any, _inp: Any, _out: Any) -> None:
        g = _modules()
        if g:
            g.pop()


class _Hooks:
    def __init__(self, handles: list[Any]) -> None:
        self.handles = handles

    def remove(self) -> None:
        for h in self.handles:
            h.remove()

    def __enter__(self) -> _Hooks:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


def name_layers(model: Any) -> _Hooks:
    """Forward-pre/forward hooks on every submodule of a torch model so captures record the
    qualified module name (model.named_modules) as `layer`. Returns a handle with remove()
    (also a context manager)."""
    handles: list[Any] = []
    for name, mod in model.named_modules():
        def pre(_m: Any, _inp: Any, _n: str = name, _root: bool = mod is model) -> None:
            if _root:
                _stack().clear()
            _stack().append(_n)

        def post(_m: Any, _inp: Any, _out: Any, _n: str = name) -> None:
            s = _stack()
            while s and s.pop() != _n:
                pass
        handles += [mod.register_forward_pre_hook(pre), mod.register_forward_hook(post)]
    return _Hooks(handles)


def call_site() -> str:
    """file:line of the innermost caller outside a4w4check, aiter and torch."""
    f: Optional[FrameType] = sys._getframe(1)
    while f is not None and str(f.f_globals.get("__name__", "")).split(".")[0] in _SKIP:
        f = f.f_back
    return f"{f.f_code.co_filename}:{f.f_lineno}" if f is not None else ""


class Capture:
    """One capture session (see the module docstring); start() wraps, stop() restores."""

    def __init__(self, directory: str | os.PathLike[str], budget_bytes: int = 1 << 30,
                 sample_every: int = 100, seed: int = 0,
                 contracts: Optional[Mapping[str, str]] = None) -> None:
        """contracts: {op: contract text or the path of a file holding one} the user gives
        (ValueError when one is neither, or the op is not one capture wraps)."""
        self.dir, self.budget, self.sample_every = str(directory), int(budget_bytes), sample_every
        unknown = sorted(set(contracts or {}) - set(SITES))
        if unknown:
            raise ValueError(f"contracts for {', '.join(unknown)}: capture wraps only "
                             f"{', '.join(SITES)}")
        self.user = {op: contract.resolve(c) for op, c in (contracts or {}).items()}
        self.rng, self.lock = random.Random(seed), threading.RLock()
        self.seen: set[tuple[Any, ...]] = set()
        self.counts: dict[str, int] = {}
        self.paths: list[str] = []
        self.written = 0
        self.active = False
        self.patches: list[tuple[ModuleType, str, Any, Any]] = []
        self.module_hooks = _ModuleHooks()

    def _fail(self, why: str) -> None:
        with self.lock:
            if self.active:
                self.active = False
                log.warning("a4w4check.capture: capture stopped: %s", why)

    def start(self) -> Capture:
        self.active = True
        try:
            os.makedirs(self.dir, exist_ok=True)
        except OSError as e:
            self._fail(f"cannot create {self.dir} ({e})")
            return self
        for op in SITES:
            self._wrap(op)
        self.module_hooks.start()
        return self

    def _wrap(self, op: str) -> None:
        mods = [sys.modules.get(m) or _try_import(m) for m in SITES[op]]
        attr = op.rsplit(".", 1)[1]
        orig = next((getattr(m, attr) for m in mods if m is not None and hasattr(m, attr)), None)
        if orig is None or getattr(orig, "_a4w4_capture", None) is not None:
            return
        if op == "aiter.gemm_a4w4" and signature_mismatch(op, orig):
            log.warning("a4w4check.capture: %s", signature_mismatch(op, orig))
        wrapper = self._wrapper(op, orig, self._declared(op, orig))
        for mod in list(sys.modules.values()):
            if _holds(mod, attr, orig):
                setattr(mod, attr, wrapper)
                self.patches.append((mod, attr, orig, wrapper))

    def stop(self) -> None:
        """Put every original function back (where our wrapper is still in place)."""
        for mod, attr, orig, wrapper in reversed(self.patches):
            if mod.__dict__.get(attr) is wrapper:
                setattr(mod, attr, orig)
        self.patches, self.active = [], False
        self.module_hooks.stop()

    def _declared(self, op: str, fn: Any) -> tuple[str, str]:
        """(contract, source) recorded for op's calls: the user's, the function's
        a4w4_contract attribute, the op's own (CONTRACTS), or ("", "none")."""
        if op in self.user:
            return self.user[op], "user"
        attr = getattr(fn, "a4w4_contract", None)
        if attr:
            return str(attr).strip(), "kernel attribute"
        if CONTRACTS.get(op):
            return CONTRACTS[op], "runner"
        return "", "none"

    def _wrapper(self, op: str, orig: Callable[..., Any],
                 declared: tuple[str, str]) -> Callable[..., Any]:
        @functools.wraps(orig)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if _compiling():  # torch.compile tracing: stay out of the graph
                return orig(*args, **kwargs)
            plan = self._plan(op, args, kwargs) if self.active else None
            result = orig(*args, **kwargs)
            if plan is not None:
                self._finish(op, plan, result, declared)
            return result
        setattr(wrapper, "_a4w4_capture", self)
        return wrapper

    def _plan(self, op: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Optional[_Plan]:
        """Decide whether to record this call; if so snapshot its inputs. Never raises."""
        try:
            if _graph_capturing():
                return None
            b = bind(op, args, kwargs)
            dims, names, meta = describe(op, b)
            key = (op,) + tuple(dims)
            with self.lock:
                first = key not in self.seen
                self.seen.add(key)
                if not first and not (self.sample_every and
                                      self.rng.randrange(self.sample_every) == 0):
                    return None
            inputs = {names[k]: to_numpy(v) for k, v in b.items()
                      if k in names and hasattr(v, "detach")}
            meta.update(call_site=call_site(), layer=current_layer(),
                        layer_call_site=current_layer_call_site())
            return b, dims, inputs, meta
        except Exception as e:
            self._fail(f"{op}: cannot read the call ({type(e).__name__}: {e})")
            return None

    def _finish(self, op: str, plan: _Plan, result: Any, declared: tuple[str, str]) -> None:
        """Snapshot the outputs and write the bundle within the budget. Never raises."""
        b, dims, tensors, meta = plan
        try:
            tensors.update({n: to_numpy(t) for n, t in outputs(op, b, result, dims).items()})
            size = sum(a.nbytes for _, a in tensors.values()) + 4096
            with self.lock:
                if not self.active:
                    return
                if self.written + size > self.budget:
                    self._fail(f"budget of {self.budget} bytes reached ({self.written} written)")
                    return
                full = {"call_site": meta.pop("call_site"), "layer": meta.pop("layer"),
                        "layer_call_site": meta.pop("layer_call_site"),
                        "contract": declared[0], "contract_source": declared[1],
                        "layouts": ",".join(tensors)}
                full.update(meta)
                stem = f"{op}_{dims[0]}x{dims[1]}x{dims[2]}"
                start = self.counts.get(stem, 0)
                raw = {n: codec.Raw(d, a) for n, (d, a) in tensors.items()}
                path, n = bundle.save_capture(self.dir, op, dims, raw, full, start)
                self.counts[stem] = n + 1
                self.paths.append(path)
                self.written += os.path.getsize(path)
        except Exception as e:
            self._fail(f"cannot write a capture bundle in {self.dir} ({type(e).__name__}: {e})")


def _compiling() -> bool:
    """True while torch.compile (dynamo) traces the caller."""
    torch = sys.modules.get("torch")
    probe = getattr(getattr(torch, "compiler", None), "is_compiling", None)
    return bool(probe and probe())


def _graph_capturing() -> bool:
    """True while a CUDA graph is being captured: copying to the CPU then would break it."""
    torch: Any = sys.modules.get("torch")
    probe = getattr(getattr(torch, "cuda", None), "is_current_stream_capturing", None)
    try:
        return bool(probe and torch.cuda.is_available() and probe())
    except Exception:
        return True


def _holds(mod: object, attr: str, obj: object) -> bool:
    try:
        return vars(mod).get(attr) is obj
    except Exception:  # None entries, objects without a __dict__
        return False


def _try_import(name: str) -> Optional[ModuleType]:
    try:
        return importlib.import_module(name)
    except Exception:
        return None


def capture(directory: str | os.PathLike[str], budget_bytes: int = 1 << 30,
            sample_every: int = 100, seed: int = 0,
            contracts: Optional[Mapping[str, str]] = None) -> _Session:
    """Context manager: a started Capture, stopped on exit (see the module docstring)."""
    return _Session(Capture(directory, budget_bytes, sample_every, seed, contracts))


class _Session:
    def __init__(self, cap: Capture) -> None:
        self.cap = cap

    def __enter__(self) -> Capture:
        return self.cap.start()

    def __exit__(self, *exc: object) -> None:
        self.cap.stop()


def _bytes(text: str) -> int:
    text = text.strip()
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:].upper(), 1)
    return int(text[:-1] if mult > 1 else text) * mult


def _contracts(text: str) -> dict[str, str]:
    """"op=CONTRACT;op=CONTRACT" -> {op: CONTRACT} (CONTRACT text or a file path)."""
    out: dict[str, str] = {}
    for item in filter(None, (t.strip() for t in text.split(";"))):
        op, eq, c = item.partition("=")
        if not eq or not op.strip() or not c.strip():
            raise ValueError(f"{item!r} is not op=CONTRACT")
        out[op.strip()] = c.strip()
    return out


ENV_CAPTURE: Optional[Capture] = None


def install_from_env() -> Optional[Capture]:
    """Start the capture A4W4CHECK_CAPTURE asks for (once per process); returns it or None."""
    global ENV_CAPTURE
    directory = os.environ.get("A4W4CHECK_CAPTURE")
    if not directory or ENV_CAPTURE is not None:
        return ENV_CAPTURE
    try:
        budget = _bytes(os.environ.get("A4W4CHECK_CAPTURE_BUDGET", "1G"))
        every = int(os.environ.get("A4W4CHECK_CAPTURE_SAMPLE_EVERY", "100"))
        seed = int(os.environ.get("A4W4CHECK_CAPTURE_SEED", "0"))
        contracts = _contracts(os.environ.get("A4W4CHECK_CAPTURE_CONTRACTS", ""))
    except ValueError as e:
        log.warning("a4w4check.capture: not started: bad A4W4CHECK_CAPTURE_* value (%s)", e)
        return None
    if _try_import("aiter") is None:
        log.warning("a4w4check.capture: not started: the Python package 'aiter' is not "
                    "importable")
        return None
    try:
        cap = Capture(directory, budget, every, seed, contracts)
    except ValueError as e:
        log.warning("a4w4check.capture: not started: A4W4CHECK_CAPTURE_CONTRACTS: %s", e)
        return None
    ENV_CAPTURE = cap.start()
    return ENV_CAPTURE


install_from_env()
