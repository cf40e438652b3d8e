"""a4w4check.safetensors_codec: a small safetensors codec (contracts §7).

File layout: an 8-byte little-endian header length n, n bytes of JSON header, then the data
section. The header maps each tensor name to {"dtype", "shape", "data_offsets": [begin, end]}
(byte offsets into the data section, end exclusive) plus an optional "__metadata__" object of
string values.

Writing follows the `safetensors` library byte for byte: tensors sorted by the library's dtype
order (widest first: F32, BF16, F16, F8_E8M0, U8, F4), then by name; packed without gaps;
compact JSON ("__metadata__" first, then the tensors in data order, fields dtype, shape,
data_offsets); header padded with spaces to a multiple of 8 bytes. Metadata keys keep the
caller's order (the library writes them in hash order, so only their set is comparable).

Reading is strict: every broken rule raises BundleError(path, rule, detail) with rule one of
truncated, header-too-large, header-length, header-json, header-start, duplicate-key,
metadata, tensor-entry, unknown-dtype, f4-odd, shape-size, offsets-range, offsets-overlap,
offsets-gap, trailing-bytes, bad-tensor (writer input).

Arrays (numpy): U8 and F8_E8M0 -> uint8; F4 -> uint8 bytes of packed fp4x2 (element 2i in the
low nibble), shape [..., C] for a header shape [..., 2C] (safetensors counts F4 in 4-bit
elements); BF16 -> uint16 raw bits; F16 -> float16; F32 -> float32; all little-endian.

Where the `safetensors` library and torch import, load() also reads each file through it and
holds the two readings equal; save() goes through it on request (backend="lib" or
A4W4CHECK_ST=lib), see a4w4check.safetensors_library.
"""
from __future__ import annotations

import errno
import json
import os
import stat
from typing import Any, Callable, Iterable, Mapping, NamedTuple, Union

import numpy as np
import numpy.typing as npt

from . import safetensors_library as library
from .errors import BundleError

Array = npt.NDArray[Any]

MAX_HEADER = 100_000_000

# dtype name -> (bits per element, numpy dtype of the array, rank in safetensors' Dtype enum)
DTYPES: dict[str, tuple[int, np.dtype[Any], int]] = {
    "F4": (4, np.dtype(np.uint8), 1),
    "U8": (8, np.dtype(np.uint8), 4),
    "F8_E8M0": (8, np.dtype(np.uint8), 8),
    "F16": (16, np.dtype("<f2"), 11),
    "BF16": (16, np.dtype("<u2"), 12),
    "F32": (32, np.dtype("<f4"), 15),
}
_BY_NUMPY: dict[np.dtype[Any], str] = {np.dtype(np.uint8): "U8", np.dtype("<u2"): "BF16",
                                        np.dtype("<f2"): "F16", np.dtype("<f4"): "F32"}


class Raw(NamedTuple):
    """A tensor written under an explicit dtype: Raw("F4", bytes [..., C]) is written with
    header shape [..., 2C]; Raw("F8_E8M0", uint8 array); Raw("U8"|"BF16"|..., array)."""
    dtype: str
    array: npt.ArrayLike


# A writer input: a numpy array (its dtype picks the safetensors dtype) or a Raw.
TensorIn = Union[npt.ArrayLike, Raw]
# (safetensors dtype, header shape, contiguous little-endian array) of one writer input
Spec = tuple[str, tuple[int, ...], Array]


class Info(NamedTuple):
    """One header entry: dtype name, header shape (F4 in 4-bit elements), data offsets."""
    dtype: str
    shape: tuple[int, ...]
    begin: int
    end: int


class Header(NamedTuple):
    """A validated header. infos: name -> Info in data order; metadata: dict or None."""
    path: str
    size: int
    data_start: int
    metadata: dict[str, str] | None
    infos: dict[str, Info]


class Loaded(NamedTuple):
    """A loaded file: tensors name -> numpy array (see the module docstring), metadata (dict or
    None), dtypes name -> dtype name as stored."""
    tensors: dict[str, Array]
    metadata: dict[str, str] | None
    dtypes: dict[str, str]


# ---- writing ---------------------------------------------------------------------------------

def _spec(name: str, value: TensorIn) -> Spec:
    """(dtype, header shape, contiguous array) of one writer input; BundleError when unusable."""
    dtype: str | None = value.dtype if isinstance(value, Raw) else None
    arr = np.asarray(value.array if isinstance(value, Raw) else value)
    if not arr.flags.c_contiguous:  # (ascontiguousarray would make a scalar 1-d)
        arr = arr.copy(order="C")
    if dtype is None:
        dtype = _BY_NUMPY.get(arr.dtype.newbyteorder("<"))
        if dtype is None:
            raise BundleError(name, "bad-tensor", f"numpy dtype {arr.dtype} has no safetensors "
                              "dtype here (uint8, uint16 as BF16 bits, float16, float32)")
    if dtype not in DTYPES:
        raise BundleError(name, "bad-tensor", f"dtype {dtype!r} is not one of {sorted(DTYPES)}")
    want = DTYPES[dtype][1]
    if (arr.dtype.kind, arr.dtype.itemsize) != (want.kind, want.itemsize):
        raise BundleError(name, "bad-tensor", f"{dtype} is written from {want} arrays, not "
                          f"{arr.dtype}")
    arr = arr.astype(want, copy=False)  # byte order only
    shape = tuple(int(d) for d in arr.shape)
    if dtype == "F4":
        if not shape:
            raise BundleError(name, "bad-tensor", "an F4 tensor needs at least one dimension")
        shape = shape[:-1] + (shape[-1] * 2,)
    return dtype, shape, arr


def _order(items: Iterable[tuple[str, Spec]]) -> list[tuple[str, Spec]]:
    return sorted(items, key=lambda kv: (-DTYPES[kv[1][0]][2], kv[0]))


def header_json(entries: Iterable[tuple[str, str, tuple[int, ...], int, int]],
                metadata: Mapping[str, str] | None) -> bytes:
    """Header bytes (padded) for entries [(name, dtype, shape, begin, end)] and metadata."""
    obj: dict[str, Any] = {}
    if metadata is not None:
        obj["__metadata__"] = _check_metadata("<writer>", metadata)
    for name, dtype, shape, begin, end in entries:
        obj[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [begin, end]}
    text = json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    return text + b" " * (-len(text) % 8)


def dumps(tensors: Mapping[str, TensorIn],
          metadata: Mapping[str, str] | None = None) -> bytes:
    """Serialize tensors (name -> numpy array or Raw) and metadata (str -> str, or None for no
    "__metadata__") to bytes, exactly as the safetensors library lays them out."""
    specs: dict[str, Spec] = {}
    for name, value in tensors.items():
        if not isinstance(name, str) or not name or name == "__metadata__":
            raise BundleError(repr(name), "bad-tensor", "tensor names are non-empty strings, "
                              "not __metadata__")
        specs[name] = _spec(name, value)
    entries: list[tuple[str, str, tuple[int, ...], int, int]] = []
    chunks: list[bytes] = []
    pos = 0
    for name, (dtype, shape, arr) in _order(specs.items()):
        data = arr.tobytes()
        entries.append((name, dtype, shape, pos, pos + len(data)))
        chunks.append(data)
        pos += len(data)
    head = header_json(entries, metadata)
    return len(head).to_bytes(8, "little") + head + b"".join(chunks)


def write_atomic(path: str | os.PathLike[str], data: bytes) -> None:
    """Write bytes to path through a temporary file in the same directory (mode 0666 & ~umask),
    fsynced and renamed over path; the temporary file is removed on failure. Raises OSError."""
    dest = os.fspath(path)
    tmp = f"{dest}.tmp.{os.getpid()}.{os.urandom(4).hex()}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, dest)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def save(path: str | os.PathLike[str], tensors: Mapping[str, TensorIn],
         metadata: Mapping[str, str] | None = None, backend: str | None = None) -> None:
    """Write tensors and metadata to path atomically (see dumps). backend: "own", "lib" or None
    (A4W4CHECK_ST; see a4w4check.safetensors_library.wanted). Raises BundleError for bad input,
    OSError."""
    data = None
    if library.wanted(backend, writing=True):
        data = library.dumps(tensors, metadata)
    if data is None:
        data = dumps(tensors, metadata)
    write_atomic(path, data)


# ---- reading ---------------------------------------------------------------------------------

def _check_metadata(path: str, meta: object) -> dict[str, str]:
    if not isinstance(meta, dict) or not all(isinstance(k, str) and isinstance(v, str)
                                             for k, v in meta.items()):
        raise BundleError(path, "metadata", "__metadata__ must be an object of string values")
    return meta


def _no_duplicates(path: str) -> Callable[[list[tuple[str, Any]]], dict[str, Any]]:
    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        seen: dict[str, Any] = {}
        for k, v in pairs:
            if k in seen:
                raise BundleError(path, "duplicate-key", f"key {k!r} appears twice")
            seen[k] = v
        return seen
    return hook


def _is_count(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def _entry(path: str, name: str, e: object) -> Info:
    if not isinstance(e, dict) or not {"dtype", "shape", "data_offsets"} <= e.keys():
        raise BundleError(path, "tensor-entry", f"tensor {name!r} needs dtype, shape and "
                          "data_offsets")
    dtype, shape, offs = e["dtype"], e["shape"], e["data_offsets"]
    if not isinstance(dtype, str) or dtype not in DTYPES:
        raise BundleError(path, "unknown-dtype", f"tensor {name!r} has dtype {dtype!r} (known: "
                          f"{', '.join(DTYPES)})")
    if not isinstance(shape, list) or not all(_is_count(d) for d in shape):
        raise BundleError(path, "tensor-entry", f"tensor {name!r}: shape {shape!r} is not a "
                          "list of non-negative integers")
    if not (isinstance(offs, list) and len(offs) == 2 and all(_is_count(o) for o in offs)
            and offs[0] <= offs[1]):
        raise BundleError(path, "offsets-range", f"tensor {name!r}: data_offsets {offs!r} is "
                          "not [begin, end] with 0 <= begin <= end")
    count = int(np.prod(shape, dtype=object)) if shape else 1
    if dtype == "F4" and (not shape or shape[-1] % 2):
        raise BundleError(path, "f4-odd", f"tensor {name!r}: F4 shape {shape} does not end in "
                          "an even count (rows must fill whole bytes)")
    nbytes = count * DTYPES[dtype][0] // 8
    if nbytes != offs[1] - offs[0]:
        raise BundleError(path, "shape-size", f"tensor {name!r}: {dtype} {shape} needs {nbytes} "
                          f"bytes, data_offsets {offs} span {offs[1] - offs[0]}")
    return Info(dtype, tuple(shape), offs[0], offs[1])


def _check_layout(path: str, infos: Mapping[str, Info], data_len: int) -> None:
    pos = 0
    for name, i in infos.items():
        if i.begin < pos:
            raise BundleError(path, "offsets-overlap", f"tensor {name!r} starts at {i.begin}, "
                              f"inside the previous tensor (which ends at {pos})")
        if i.begin > pos:
            raise BundleError(path, "offsets-gap", f"tensor {name!r} starts at {i.begin}, "
                              f"leaving bytes {pos}..{i.begin} unused")
        if i.end > data_len:
            raise BundleError(path, "truncated", f"tensor {name!r} ends at {i.end}, past the "
                              f"end of the data section ({data_len} bytes)")
        pos = i.end
    if pos != data_len:
        raise BundleError(path, "trailing-bytes", f"the data section has {data_len - pos} "
                          "bytes after the last tensor")


def parse_header(path: str | os.PathLike[str], prefix: bytes | bytearray | memoryview,
                 size: int) -> Header:
    """Validate a header given the file's first bytes (at least 8 + header length of them, or
    all of them when shorter) and the file size. Returns Header; raises BundleError."""
    path = str(path)
    if size < 8:
        raise BundleError(path, "truncated", f"file has {size} bytes, fewer than the 8-byte "
                          "header length")
    n = int.from_bytes(prefix[:8], "little")
    if n > MAX_HEADER:
        raise BundleError(path, "header-too-large", f"header length {n} exceeds {MAX_HEADER}")
    if 8 + n > size:
        raise BundleError(path, "header-length", f"header length {n} runs past the end of the "
                          f"file ({size} bytes)")
    try:
        text = bytes(prefix[8:8 + n]).decode("utf-8")
    except UnicodeDecodeError as e:
        raise BundleError(path, "header-json", f"header is not UTF-8 ({e.reason})") from None
    if not text.startswith("{"):
        raise BundleError(path, "header-start", "header does not start with '{'")
    try:
        obj = json.loads(text, object_pairs_hook=_no_duplicates(path))
    except RecursionError:
        raise BundleError(path, "header-json", "nested too deep to parse") from None
    except ValueError as e:
        raise BundleError(path, "header-json", f"header is not valid JSON ({e})") from None
    meta = obj.pop("__metadata__", None)
    if meta is not None:
        _check_metadata(path, meta)
    entries = [(name, _entry(path, name, e)) for name, e in obj.items()]
    infos = dict(sorted(entries, key=lambda kv: (kv[1].begin, kv[1].end)))
    _check_layout(path, infos, size - 8 - n)
    return Header(path, size, 8 + n, meta, infos)


def _kind(mode: int) -> str:
    return ("a FIFO" if stat.S_ISFIFO(mode) else "a directory" if stat.S_ISDIR(mode) else
            "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else
            "a socket" if stat.S_ISSOCK(mode) else "not a plain file")


def open_regular(path: str | os.PathLike[str]) -> Any:
    """path opened for reading ("rb") only when it is a regular file: a FIFO, a device or a
    directory raises OSError(EINVAL, "not a regular file (a FIFO); give a file") at once
    (opened non-blocking, so a FIFO without a writer cannot block), as the C side's
    a4w4_read_regular refuses it."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise OSError(errno.EINVAL, f"not a regular file ({_kind(mode)}); give a file",
                          os.fspath(path))
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_header(path: str | os.PathLike[str]) -> Header:
    """Validate path's header and layout against its size without reading the data section.
    Raises BundleError, OSError (a FIFO or another non-regular file: open_regular)."""
    with open_regular(path) as f:
        size = os.fstat(f.fileno()).st_size
        prefix = f.read(8)
        if len(prefix) == 8:
            prefix += f.read(min(int.from_bytes(prefix, "little"), MAX_HEADER + 1))
    return parse_header(path, prefix, size)


def _array(info: Info, buf: bytes | bytearray, data_start: int) -> Array:
    bits, npdt, _ = DTYPES[info.dtype]
    shape = info.shape[:-1] + (info.shape[-1] // 2,) if info.dtype == "F4" else info.shape
    count = (info.end - info.begin) // npdt.itemsize
    a = np.frombuffer(buf, dtype=npdt, count=count, offset=data_start + info.begin)
    return a.reshape(shape)


def loads(buf: bytes | bytearray, path: str = "<bytes>",
          backend: str | None = "own") -> Loaded:
    """Parse a whole file held in buf (bytes-like) into Loaded. Arrays share buf's memory
    (writable when buf is a bytearray). Raises BundleError."""
    head = parse_header(path, memoryview(buf), len(buf))
    tensors = {n: _array(i, buf, head.data_start) for n, i in head.infos.items()}
    if library.wanted(backend):
        library.crosscheck(head, buf, tensors)
    return Loaded(tensors, head.metadata, {n: i.dtype for n, i in head.infos.items()})


def load(path: str | os.PathLike[str], backend: str | None = None) -> Loaded:
    """Read and validate the file at path (see loads). Raises BundleError, OSError (a FIFO or
    another non-regular file: open_regular)."""
    with open_regular(path) as f:
        buf = bytearray(os.fstat(f.fileno()).st_size)
        got = f.readinto(buf)
    return loads(buf[:got] if got != len(buf) else buf, str(path), backend)
