"""a4w4check.safetensors_codec against files the real `safetensors` library wrote (made on a
machine with torch >= 2.8 by python/tools/make_st_real.py into tests/data/st_real/, or
A4W4CHECK_ST_REAL): reading gives the source tensors, and writing them again gives the same
bytes."""
import hashlib
import json
import os

import pytest

from a4w4check import safetensors_codec as codec

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DIR = os.environ.get("A4W4CHECK_ST_REAL", os.path.join(ROOT, "tests", "data", "st_real"))
EXPECTED = os.path.join(DIR, "expected.json")

if not os.path.isfile(EXPECTED):
    pytest.skip(f"no library-written files: {EXPECTED} is absent (make them with "
                "python/tools/make_st_real.py DIR on a machine with torch >= 2.8 and "
                "safetensors)", allow_module_level=True)

with open(EXPECTED, encoding="utf-8") as f:
    FILES = json.load(f)["files"]


def header_shape(dtype, arr):
    s = list(arr.shape)
    return s[:-1] + [s[-1] * 2] if dtype == "F4" else s


@pytest.mark.parametrize("name", sorted(FILES))
def test_reading_gives_the_source_tensors(name):
    want = FILES[name]
    path = os.path.join(DIR, name)
    data = open(path, "rb").read()
    assert len(data) == want["size"] and hashlib.sha256(data).hexdigest() == want["sha256"]
    got = codec.load(path, backend="own")
    assert got.metadata == want["metadata"]
    assert set(got.tensors) == set(want["tensors"])
    for t, w in want["tensors"].items():
        arr = got.tensors[t]
        assert got.dtypes[t] == w["dtype"], t
        assert header_shape(w["dtype"], arr) == w["shape"], t
        assert arr.nbytes == w["nbytes"], t
        assert hashlib.sha256(arr.tobytes()).hexdigest() == w["sha256"], t


@pytest.mark.parametrize("name", sorted(FILES))
def test_writing_them_again_gives_the_same_bytes(name):
    path = os.path.join(DIR, name)
    got = codec.load(path, backend="own")  # metadata keeps the order the library wrote
    again = codec.dumps({t: codec.Raw(got.dtypes[t], a) for t, a in got.tensors.items()},
                     got.metadata)
    assert again == open(path, "rb").read()
