"""a4w4check.safetensors_library: the `safetensors` library behind a4w4check.safetensors_codec,
where it and torch import.

wanted(backend, writing): backend "own" -> False; "lib" -> True (ImportError if absent); None
-> the environment's A4W4CHECK_ST ("own", "lib", default "auto"). "auto" reads through the
library where it imports but writes with the codec: the library writes __metadata__ keys in
hash order, a new order each run, and the bundles here are meant to be reproducible byte for
byte (the codec's layout is otherwise the library's, as tests/test_safetensors_real.py checks).
dumps(): bytes from safetensors.torch.save (None when a dtype needs a newer torch: F4 wants
torch.float4_e2m1fn_x2, F8_E8M0 torch.float8_e8m0fnu). crosscheck(): the library's reading of
each tensor must agree with the codec's strict parse (BundleError rule "library").
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Mapping

import numpy as np

from .errors import BundleError

if TYPE_CHECKING:  # the codec imports this module; its types only, no import cycle at run time
    from .safetensors_codec import Array, Header, TensorIn

_IMPORTABLE: list[bool] = []


def _importable() -> bool:
    if not _IMPORTABLE:
        try:
            import safetensors.torch  # noqa: F401
            import torch  # noqa: F401
            _IMPORTABLE.append(True)
        except Exception:
            _IMPORTABLE.append(False)
    return _IMPORTABLE[0]


def wanted(backend: str | None, writing: bool = False) -> bool:
    """Whether to go through the library (see the module docstring)."""
    choice = backend or os.environ.get("A4W4CHECK_ST", "auto")
    if choice == "own" or (writing and choice == "auto"):
        return False
    if choice == "lib" and not _importable():
        raise ImportError("A4W4CHECK_ST=lib, but safetensors.torch or torch does not import")
    return _importable()


def _torch_of(dtype: str, arr: Array) -> Any:
    import torch
    if dtype == "BF16":
        return torch.from_numpy(arr.view(np.int16).copy()).view(torch.bfloat16)
    if dtype in ("F4", "F8_E8M0"):
        tdt = getattr(torch, "float4_e2m1fn_x2" if dtype == "F4" else "float8_e8m0fnu", None)
        return None if tdt is None else torch.from_numpy(arr.copy()).view(tdt)
    return torch.from_numpy(arr.copy())


def dumps(tensors: Mapping[str, TensorIn], metadata: Mapping[str, str] | None) -> bytes | None:
    """Bytes from safetensors.torch.save, or None when a dtype needs a newer torch."""
    import safetensors.torch

    from . import safetensors_codec as codec
    out = {}
    for name, value in tensors.items():
        dtype, _, arr = codec._spec(name, value)
        t = _torch_of(dtype, arr)
        if t is None:
            return None
        out[name] = t
    if metadata is not None:
        codec._check_metadata("<writer>", metadata)
    data: bytes = safetensors.torch.save(out, metadata=metadata)
    return data


def crosscheck(head: Header, buf: bytes | bytearray, tensors: Mapping[str, Array]) -> None:
    """The library's reading (safetensors.deserialize: names, dtypes, header shapes, bytes) must
    equal the strict parse of the same file; BundleError (rule "library") where it does not."""
    import safetensors
    try:
        items = dict(safetensors.deserialize(bytes(buf)))
    except Exception as e:
        raise BundleError(head.path, "library", f"safetensors rejects the file: {e}") from None
    if set(items) != set(head.infos):
        raise BundleError(head.path, "library", "safetensors finds other tensors: "
                          f"{sorted(items)} vs {sorted(head.infos)}")
    for name, d in items.items():
        info = head.infos[name]
        same = np.array_equal(np.frombuffer(d["data"], dtype=np.uint8),
                              tensors[name].reshape(-1).view(np.uint8))
        if d["dtype"] != info.dtype or tuple(d["shape"]) != info.shape or not same:
            raise BundleError(head.path, "library", f"safetensors reads tensor {name!r} "
                              "differently from the strict parse")
