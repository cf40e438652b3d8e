"""a4w4check.bundle: operand, output and capture bundles (contracts §7) and their manifests.

Operand bundle DIR/<case>.safetensors (format a4w4-operands/1): U8 tensors a_fp4 [M, K/2],
a_scale [M, K/32], w_fp4 [N, K/2], w_scale [N, K/32], and where supported a_scale_shuffled
[round_up(M, 256), round_up(K/32, 8)], w_fp4_shuffled [N, K/2], w_scale_swizzled [N, K/32];
optionally y_exact BF16 [M, N]. Readers also take F4 (fp4 tensors) and F8_E8M0 (scales).
Output bundle OUT/<case>.safetensors (a4w4-output/1): y BF16 [M, N]. Capture bundle
DIR/<op>_<M>x<N>x<K>_<n>.safetensors (a4w4-capture/1): the tensors an op received and returned.
<case> is the case name with every '/' replaced by "__" (as the C bundle backend names files).

Arrays are numpy (uint8; BF16 as uint16 bits) or, with as_torch=True, torch tensors (uint8;
bfloat16). Every bad file raises BundleError naming the file and the rule.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np
import numpy.typing as npt

from . import safetensors_codec as codec
from .errors import BundleError
from .layouts import round_up

OPERANDS, OUTPUT, OUTPUTS, CAPTURE = ("a4w4-operands/1", "a4w4-output/1", "a4w4-outputs/1",
                                      "a4w4-capture/1")
REQUIRED = ("a_fp4", "a_scale", "w_fp4", "w_scale")
OPTIONAL = ("a_scale_shuffled", "w_fp4_shuffled", "w_scale_swizzled", "y_exact")
OPERAND_KEYS = ("format", "name", "M", "N", "K", "regime", "seed", "matrix_hash",
                "tool_version", "layouts", "absent")
OUTPUT_KEYS = ("format", "name", "M", "N", "K", "seed", "matrix_hash", "tool_version",
               "kernel", "contract")
FP4 = {"a_fp4", "w_fp4", "w_fp4_shuffled"}
SCALES = {"a_scale", "a_scale_shuffled", "w_scale", "w_scale_swizzled"}


@dataclass
class Bundle:
    """A loaded bundle: path, metadata (str -> str), tensors (name -> array), stored dtypes."""
    path: str
    meta: dict[str, str]
    tensors: dict[str, Any]
    dtypes: dict[str, str]

    @property
    def name(self) -> str:
        return self.meta.get("name", "")

    def dims(self) -> tuple[int, int, int]:
        """(M, N, K) as ints."""
        return int(self.meta["M"]), int(self.meta["N"]), int(self.meta["K"])


def file_name(case: str) -> str:
    """File name of a case's bundle: '/' -> '__', then '.safetensors'."""
    if not case or "\0" in case:
        raise ValueError(f"case name {case!r} gives no file name")
    return case.replace("/", "__") + ".safetensors"


def parse_absent(text: str) -> dict[str, str]:
    """'tensor: reason; ...' -> {tensor: reason} (empty text -> {})."""
    out: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in text.split(";"))):
        name, _, why = part.partition(":")
        out[name.strip()] = why.strip()
    return out


def operand_shapes(M: int, N: int, K: int) -> dict[str, tuple[int, int]]:
    """name -> shape of every operand-bundle tensor for a case (contracts §7)."""
    nb = K // 32
    return {"a_fp4": (M, K // 2), "a_scale": (M, nb),
            "a_scale_shuffled": (round_up(M, 256), round_up(nb, 8)), "w_fp4": (N, K // 2),
            "w_fp4_shuffled": (N, K // 2), "w_scale": (N, nb), "w_scale_swizzled": (N, nb),
            "y_exact": (M, N)}


def _allowed(name: str) -> tuple[str, ...]:
    if name in FP4:
        return ("U8", "F4")
    if name in SCALES:
        return ("U8", "F8_E8M0")
    return ("BF16",)


def _dim(path: str, meta: Mapping[str, str], key: str) -> int:
    v = meta.get(key, "")
    if not (v.isascii() and v.isdigit()) or v[0] == "0":
        raise BundleError(path, "metadata", f"{key}={v!r} is not a positive decimal integer")
    return int(v)


def _need_keys(path: str, meta: Mapping[str, str] | None, keys: Sequence[str],
               fmt: str) -> Mapping[str, str]:
    """meta, when it has format fmt and every key of keys; else BundleError."""
    if meta is None or meta.get("format") != fmt:
        got = None if meta is None else meta.get("format")
        raise BundleError(path, "format", f"metadata format={got!r}, expected {fmt!r}")
    missing = [k for k in keys if k not in meta]
    if missing:
        raise BundleError(path, "metadata", f"missing metadata {', '.join(missing)}")
    return meta


def _check_tensor(path: str, name: str, dtype: str, shape: Sequence[int],
                  want: Sequence[int]) -> None:
    if dtype not in _allowed(name):
        raise BundleError(path, "dtype", f"tensor {name} is {dtype}, expected one of "
                          f"{'/'.join(_allowed(name))}")
    if tuple(shape) != tuple(want):
        raise BundleError(path, "shape", f"tensor {name} has shape {list(shape)}, expected "
                          f"{list(want)}")


def _byte_shape(info: codec.Info) -> tuple[int, ...]:
    return info.shape[:-1] + (info.shape[-1] // 2,) if info.dtype == "F4" else info.shape


def check_operands(head: codec.Header) -> tuple[int, int, int]:
    """Validate an operand bundle's header (codec.Header): format, metadata, the required tensors,
    every known tensor's dtype and shape, and that `layouts` lists exactly the tensors present.
    Returns (M, N, K). Raises BundleError."""
    path = head.path
    meta = _need_keys(path, head.metadata, OPERAND_KEYS, OPERANDS)
    M, N, K = (_dim(path, meta, k) for k in ("M", "N", "K"))
    if K % 32:
        raise BundleError(path, "metadata", f"K={K} breaks K % 32 == 0 (contracts §1)")
    shapes = operand_shapes(M, N, K)
    for name in REQUIRED:
        if name not in head.infos:
            raise BundleError(path, "missing-tensor", f"tensor {name} is missing")
    for name, info in head.infos.items():
        if name in shapes:
            _check_tensor(path, name, info.dtype, _byte_shape(info), shapes[name])
    listed = [x.strip() for x in meta["layouts"].split(",") if x.strip()]
    if sorted(listed) != sorted(head.infos):
        raise BundleError(path, "layouts", f"layouts={meta['layouts']!r} does not list exactly "
                          f"the tensors present ({', '.join(head.infos)})")
    return M, N, K


def to_torch(arr: npt.NDArray[Any], dtype: str) -> Any:
    """numpy array stored as dtype -> torch tensor (uint8, bfloat16, float16, float32)."""
    import torch
    if dtype == "BF16":
        return torch.from_numpy(np.ascontiguousarray(arr).view(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(np.ascontiguousarray(arr))


def view(t: Any, kind: str) -> Any:
    """View a uint8 torch tensor as torch.float4_e2m1fn_x2 (kind "fp4x2") or
    torch.float8_e8m0fnu (kind "e8m0") where this torch has those dtypes; else return t."""
    import torch
    tdt = getattr(torch, {"fp4x2": "float4_e2m1fn_x2", "e8m0": "float8_e8m0fnu"}[kind], None)
    return t if tdt is None else t.view(tdt)


def _load(path: str | os.PathLike[str], as_torch: bool) -> tuple[codec.Loaded, Bundle]:
    f = codec.load(path)
    tensors: dict[str, Any] = dict(f.tensors)
    if as_torch:
        tensors = {n: to_torch(a, f.dtypes[n]) for n, a in tensors.items()}
    return f, Bundle(str(path), dict(f.metadata or {}), tensors, dict(f.dtypes))


def load_operands(path: str | os.PathLike[str], as_torch: bool = False) -> Bundle:
    """Load and validate an operand bundle (see check_operands). Raises BundleError, OSError."""
    check_operands(codec.read_header(path))
    return _load(path, as_torch)[1]


def is_expected(name: str) -> bool:
    """Whether tensor `name` of an operand bundle is an expected value (y_exact, any y_*): the
    answer, which a kernel under test must never be handed."""
    return name == "y" or name.startswith("y_")


def load_kernel_inputs(path: str | os.PathLike[str], as_torch: bool = False) -> Bundle:
    """An operand bundle as a kernel under test may see it: load_operands without the expected
    values (is_expected), the other tensors copied out of the file's buffer so that nothing
    they lead to (numpy's .base) holds the expected values either. Raises BundleError,
    OSError."""
    check_operands(codec.read_header(path))
    f = codec.load(path)
    inputs = {n: np.array(a, copy=True) for n, a in f.tensors.items() if not is_expected(n)}
    tensors: dict[str, Any] = inputs
    if as_torch:
        tensors = {n: to_torch(a, f.dtypes[n]) for n, a in inputs.items()}
    return Bundle(str(path), dict(f.metadata or {}), tensors,
                  {n: d for n, d in f.dtypes.items() if not is_expected(n)})


def save_operands(directory: str | os.PathLike[str], name: str,
                  tensors: Mapping[str, npt.ArrayLike], *, M: int, N: int, K: int,
                  regime: str | int = "", seed: str | int = "", matrix_hash: str = "",
                  tool_version: str = "", absent: Mapping[str, str] | None = None) -> str:
    """Write DIR/<case>.safetensors (a4w4-operands/1) from numpy tensors: the known names as
    uint8 (y_exact uint16 bf16 bits) of the shapes of operand_shapes(M, N, K), any other name
    as the codec writes it; absent: {tensor: reason}. BundleError for a wrong dtype or shape.
    The directory is created. Returns the path."""
    shapes = operand_shapes(M, N, K)
    for n, a in tensors.items():
        if n in shapes:
            want = np.uint16 if n == "y_exact" else np.uint8
            if np.asarray(a).dtype != want:
                raise BundleError(directory, "dtype", f"tensor {n} must be a numpy "
                                  f"{np.dtype(want).name} array, not {np.asarray(a).dtype}")
            _check_tensor(str(directory), n, "BF16" if n == "y_exact" else "U8", np.shape(a),
                          shapes[n])
    names = [n for n in REQUIRED + OPTIONAL if n in tensors] + \
        [n for n in tensors if n not in shapes]
    meta = {"format": OPERANDS, "name": name, "M": str(M), "N": str(N), "K": str(K),
            "regime": str(regime), "seed": str(seed), "matrix_hash": matrix_hash,
            "tool_version": tool_version, "layouts": ",".join(names),
            "absent": "; ".join(f"{k}: {v}" for k, v in (absent or {}).items())}
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, file_name(name))
    codec.save(path, {n: np.asarray(tensors[n]) for n in names}, meta)
    return path


def save_output(directory: str | os.PathLike[str], name: str, y: npt.ArrayLike, *,
                source: Mapping[str, str], kernel: str, contract: str) -> str:
    """Write OUT/<case>.safetensors: y uint16 bf16 bits [M, N]; metadata copied from source
    (the operand bundle's metadata: name, M, N, K, seed, matrix_hash, tool_version) plus
    kernel and contract. The directory is created. Returns the path."""
    bits = np.ascontiguousarray(y, dtype=np.uint16)
    M, N = int(source["M"]), int(source["N"])
    if bits.shape != (M, N):
        raise BundleError(directory, "shape", f"y has shape {list(bits.shape)}, expected "
                          f"[{M}, {N}]")
    meta = {"format": OUTPUT, "name": name}
    meta.update({k: source.get(k, "") for k in OUTPUT_KEYS[2:8]})
    meta.update(kernel=kernel, contract=contract)
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, file_name(name))
    codec.save(path, {"y": bits}, meta)
    return path


def load_output(path: str | os.PathLike[str], as_torch: bool = False) -> Bundle:
    """Load and validate an output bundle (format, metadata, y BF16 [M, N])."""
    f, b = _load(path, as_torch)
    _need_keys(b.path, f.metadata, OUTPUT_KEYS, OUTPUT)
    M, N = _dim(b.path, b.meta, "M"), _dim(b.path, b.meta, "N")
    if "y" not in f.tensors:
        raise BundleError(b.path, "missing-tensor", "tensor y is missing")
    _check_tensor(b.path, "y", f.dtypes["y"], f.tensors["y"].shape, (M, N))
    return b


def write_json(path: str, obj: object) -> None:
    """Write obj as indented JSON (trailing newline) atomically; the directory is created."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    codec.write_atomic(path, (json.dumps(obj, indent=2) + "\n").encode("utf-8"))


def read_operand_manifest(directory: str) -> dict[str, Any]:
    """DIR/manifest.json of an operand directory, validated: format a4w4-operands/1 and cases a
    list of names. Raises BundleError."""
    path = os.path.join(directory, "manifest.json")
    try:
        with codec.open_regular(path) as f:
            m = json.loads(f.read().decode("utf-8"))
    except OSError as e:
        raise BundleError(path, "manifest", f"cannot read ({e.strerror})") from None
    except RecursionError:
        raise BundleError(path, "manifest", "not valid JSON (nested too deep)") from None
    except ValueError as e:
        raise BundleError(path, "manifest", f"not valid JSON ({e})") from None
    if not isinstance(m, dict) or m.get("format") != OPERANDS:
        raise BundleError(path, "manifest", f"format is not {OPERANDS!r}")
    cases = m.get("cases")
    if not isinstance(cases, list) or not all(isinstance(c, str) and c for c in cases):
        raise BundleError(path, "manifest", "cases is not a list of case names")
    return m


def write_operand_manifest(directory: str, *, set_name: str, matrix_hash: str, tool_version: str,
                           seed_note: str, cases: Sequence[str]) -> None:
    """DIR/manifest.json of an operand directory (a4w4-operands/1; "set" holds set_name)."""
    write_json(os.path.join(directory, "manifest.json"),
               {"format": OPERANDS, "set": set_name, "matrix_hash": matrix_hash,
                "tool_version": tool_version, "seed_note": seed_note, "cases": list(cases)})


def write_outputs_manifest(directory: str, *, kernel: str, contract: str, matrix_hash: str,
                           tool_version: str, cases: Sequence[str], failed: Mapping[str, str],
                           note: str | None = None, e8m0_code0: str | None = None) -> None:
    """OUT/manifest.json (a4w4-outputs/1) and OUT/contract.txt (the contract line the C bundle
    backend reads for the directory). note (optional) is kept in the manifest: "probes" for
    outputs of discover's probe rounds, whose contract is a placeholder. e8m0_code0 (optional:
    "2^-127" or "2^-126") is the reading of E8M0 code 0 the kernel declares (contracts §1)."""
    m: dict[str, object] = {"format": OUTPUTS, "kernel": kernel, "contract": contract,
                            "matrix_hash": matrix_hash, "tool_version": tool_version,
                            "cases": list(cases), "failed": dict(failed)}
    if e8m0_code0:
        m["e8m0_code0"] = e8m0_code0
    if note:
        m["note"] = note
    write_json(os.path.join(directory, "manifest.json"), m)
    codec.write_atomic(os.path.join(directory, "contract.txt"), (contract + "\n").encode())


def claim_path(directory: str, stem: str, start: int = 0) -> tuple[str, int]:
    """Create the first DIR/<stem>_<n>.safetensors (n >= start) that does not exist yet
    (O_EXCL, so concurrent writers never share a name); returns (path, n). Raises OSError."""
    n = start
    while True:
        path = os.path.join(directory, f"{stem}_{n}.safetensors")
        try:
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
            return path, n
        except FileExistsError:
            n += 1


def save_capture(directory: str, op: str, dims: Sequence[int],
                 tensors: Mapping[str, codec.TensorIn], meta: Mapping[str, str],
                 start: int = 0) -> tuple[str, int]:
    """Write one capture bundle DIR/<op>_<M>x<N>x<K>_<n>.safetensors, n the first free number
    >= start: tensors (name -> numpy array or codec.Raw), meta (str -> str, written after format,
    op, M, N, K). Returns (path, n)."""
    M, N, K = dims
    full = {"format": CAPTURE, "op": op, "M": str(M), "N": str(N), "K": str(K)}
    full.update(meta)
    path, n = claim_path(directory, f"{op}_{M}x{N}x{K}", start)
    try:
        codec.save(path, tensors, full)
    except BaseException:
        os.unlink(path)
        raise
    return path, n


def load_capture(path: str | os.PathLike[str], as_torch: bool = False) -> Bundle:
    """Load a capture bundle; checks format, op and M, N, K."""
    f, b = _load(path, as_torch)
    _need_keys(b.path, f.metadata,
               ("op", "M", "N", "K", "call_site", "layer", "contract", "layouts"),
               CAPTURE)
    for k in ("M", "N", "K"):
        if not (b.meta[k].isascii() and b.meta[k].isdigit()):
            raise BundleError(b.path, "metadata", f"{k}={b.meta[k]!r} is not an integer")
    return b
