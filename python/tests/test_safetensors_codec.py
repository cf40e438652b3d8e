"""a4w4check.safetensors_codec: round trips, the library's byte layout, and strict reading."""
import json
import os

import numpy as np
import pytest

from a4w4check import safetensors_codec as codec
from a4w4check.errors import BundleError


def sample_tensors():
    rng = np.random.default_rng(1)
    return {
        "u8_odd": rng.integers(0, 256, (3, 5), dtype=np.uint8),
        "bf16_odd": rng.integers(0, 1 << 16, (7,), dtype=np.uint16),
        "f32": rng.standard_normal((2, 3)).astype(np.float32),
        "f16": rng.standard_normal((5,)).astype(np.float16),
        "fp4": codec.Raw("F4", rng.integers(0, 256, (3, 4), dtype=np.uint8)),
        "e8m0": codec.Raw("F8_E8M0", rng.integers(0, 256, (3, 1), dtype=np.uint8)),
        "empty": np.zeros((0, 4), dtype=np.uint8),
        "scalar": np.array(3.5, dtype=np.float32),
    }


def raw(f):
    return f if isinstance(f, np.ndarray) else f.array


@pytest.mark.parametrize("metadata", [None, {}, {"format": "x/1", "note": "ünïcode \"q\"\n"}])
def test_round_trip_keeps_every_dtype_shape_and_byte(metadata):
    t = sample_tensors()
    got = codec.loads(bytearray(codec.dumps(t, metadata)))
    assert got.metadata == metadata
    assert got.dtypes == {"u8_odd": "U8", "bf16_odd": "BF16", "f32": "F32", "f16": "F16",
                          "fp4": "F4", "e8m0": "F8_E8M0", "empty": "U8", "scalar": "F32"}
    for name, value in t.items():
        assert got.tensors[name].shape == raw(value).shape, name
        assert got.tensors[name].tobytes() == raw(value).tobytes(), name


def test_layout_is_the_libraries_widest_dtype_first_then_name_with_space_padding():
    t = {"b": np.zeros(1, np.uint8), "a": np.zeros(1, np.uint8), "w": np.zeros(1, np.float32),
         "z": codec.Raw("F4", np.array([0x21], np.uint8)),
         "s": codec.Raw("F8_E8M0", np.ones(2, np.uint8)),
         "h": np.zeros(1, np.uint16)}
    data = codec.dumps(t, {"k": "v"})
    n = int.from_bytes(data[:8], "little")
    want = ('{"__metadata__":{"k":"v"},'
            '"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},'
            '"h":{"dtype":"BF16","shape":[1],"data_offsets":[4,6]},'
            '"s":{"dtype":"F8_E8M0","shape":[2],"data_offsets":[6,8]},'
            '"a":{"dtype":"U8","shape":[1],"data_offsets":[8,9]},'
            '"b":{"dtype":"U8","shape":[1],"data_offsets":[9,10]},'
            '"z":{"dtype":"F4","shape":[2],"data_offsets":[10,11]}}')
    assert n % 8 == 0 and data[8:8 + n] == (want + " " * (n - len(want))).encode()
    assert len(data) == 8 + n + 11 and data[-1] == 0x21


def test_no_metadata_means_no_metadata_key():
    data = codec.dumps({"x": np.zeros(2, np.uint8)})
    assert b"__metadata__" not in data


def test_save_is_atomic_and_leaves_no_temporary_file(tmp_path):
    p = tmp_path / "f.safetensors"
    codec.save(p, {"x": np.arange(4, dtype=np.uint8)}, {"a": "b"}, backend="own")
    assert codec.load(p, backend="own").tensors["x"].tolist() == [0, 1, 2, 3]
    with pytest.raises(BundleError):
        codec.save(p, {"x": np.zeros(2, np.int64)}, backend="own")
    assert sorted(os.listdir(tmp_path)) == ["f.safetensors"]


def test_writer_rejects_bad_input():
    with pytest.raises(BundleError, match="bad-tensor"):
        codec.dumps({"x": np.zeros(2, np.int32)})
    with pytest.raises(BundleError, match="bad-tensor"):
        codec.dumps({"__metadata__": np.zeros(2, np.uint8)})
    with pytest.raises(BundleError, match="metadata"):
        codec.dumps({"x": np.zeros(2, np.uint8)}, {"k": 3})
    with pytest.raises(BundleError, match="not float32"):
        codec.dumps({"x": codec.Raw("BF16", np.zeros(2, np.float32))})


def test_big_endian_arrays_are_written_little_endian():
    got = codec.loads(bytearray(codec.dumps({"x": np.array([1, 258], dtype=">u2")})))
    assert got.dtypes["x"] == "BF16" and got.tensors["x"].tolist() == [1, 258]


# ---- strictness -------------------------------------------------------------------------------

def build(header, data=b"", pad=True):
    text = json.dumps(header, separators=(",", ":")).encode()
    if pad:
        text += b" " * (-len(text) % 8)
    return len(text).to_bytes(8, "little") + text + data


def expect(rule, buf, path="f.safetensors"):
    with pytest.raises(BundleError) as e:
        codec.loads(bytearray(buf), path)
    assert e.value.rule == rule, str(e.value)
    assert str(e.value).startswith(f"{path}: {rule}: ")
    return e.value


def ok_file():
    return codec.dumps({"a": np.arange(6, dtype=np.uint8).reshape(2, 3),
                     "b": np.arange(4, dtype=np.uint16)}, {"m": "v"})


def test_reads_a_valid_file():
    assert codec.loads(bytearray(ok_file())).tensors["a"].shape == (2, 3)


@pytest.mark.parametrize("cut", [0, 3, 7])
def test_rejects_a_file_shorter_than_the_length_field(cut):
    expect("truncated", ok_file()[:cut])


def test_rejects_a_file_cut_inside_the_data():
    e = expect("truncated", ok_file()[:-3])
    assert "past the end of the data section" in e.detail


def test_rejects_a_header_length_past_the_end():
    data = bytearray(ok_file())
    data[:8] = (len(data)).to_bytes(8, "little")
    expect("header-length", data)


def test_rejects_a_huge_header_length():
    expect("header-too-large", (10 ** 9).to_bytes(8, "little") + b"{}")


def test_rejects_overlapping_offsets():
    h = {"a": {"dtype": "U8", "shape": [4], "data_offsets": [0, 4]},
         "b": {"dtype": "U8", "shape": [4], "data_offsets": [2, 6]}}
    expect("offsets-overlap", build(h, bytes(6)))


def test_rejects_a_gap_and_trailing_bytes():
    h = {"a": {"dtype": "U8", "shape": [2], "data_offsets": [1, 3]}}
    expect("offsets-gap", build(h, bytes(3)))
    h = {"a": {"dtype": "U8", "shape": [2], "data_offsets": [0, 2]}}
    expect("trailing-bytes", build(h, bytes(5)))


def test_rejects_offsets_out_of_order_or_negative():
    expect("offsets-range", build({"a": {"dtype": "U8", "shape": [0], "data_offsets": [3, 2]}}))
    expect("offsets-range", build({"a": {"dtype": "U8", "shape": [0], "data_offsets": [-1, 0]}}))


def test_rejects_a_shape_that_disagrees_with_the_byte_count():
    h = {"a": {"dtype": "BF16", "shape": [3], "data_offsets": [0, 4]}}
    e = expect("shape-size", build(h, bytes(4)))
    assert "needs 6 bytes" in e.detail


def test_rejects_an_unknown_dtype():
    expect("unknown-dtype", build({"a": {"dtype": "Q7", "shape": [1], "data_offsets": [0, 1]}},
                                  bytes(1)))


@pytest.mark.parametrize("shape,nbytes", [([3], 2), ([2, 3], 3), ([], 1)])
def test_rejects_f4_tensors_whose_rows_do_not_fill_whole_bytes(shape, nbytes):
    h = {"a": {"dtype": "F4", "shape": shape, "data_offsets": [0, nbytes]}}
    expect("f4-odd", build(h, bytes(nbytes)))


def test_f4_counts_four_bit_elements():
    h = {"a": {"dtype": "F4", "shape": [2, 4], "data_offsets": [0, 4]}}
    got = codec.loads(bytearray(build(h, bytes([1, 2, 3, 4]))))
    assert got.tensors["a"].tolist() == [[1, 2], [3, 4]]


def test_reads_empty_tensors_anywhere():
    h = {"e": {"dtype": "F32", "shape": [0, 3], "data_offsets": [2, 2]},
         "a": {"dtype": "U8", "shape": [2], "data_offsets": [0, 2]},
         "z": {"dtype": "BF16", "shape": [2, 0], "data_offsets": [2, 2]}}
    got = codec.loads(bytearray(build(h, b"\x01\x02")))
    assert got.tensors["e"].shape == (0, 3) and got.tensors["z"].shape == (2, 0)


def test_rejects_bad_json_duplicates_and_bad_metadata():
    expect("header-json", (4).to_bytes(8, "little") + b"{nop")
    expect("header-start", (4).to_bytes(8, "little") + b"[1] ")
    dup = b'{"a":{"dtype":"U8","shape":[0],"data_offsets":[0,0]},"a":{"dtype":"U8","shape":[0],' \
          b'"data_offsets":[0,0]}}'
    expect("duplicate-key", len(dup).to_bytes(8, "little") + dup)
    expect("metadata", build({"__metadata__": {"k": 1}}))
    expect("tensor-entry", build({"a": {"dtype": "U8", "shape": [1]}}))
    expect("tensor-entry", build({"a": {"dtype": "U8", "shape": [True], "data_offsets": [0, 1]}},
                                 bytes(1)))


def test_read_header_checks_without_reading_data(tmp_path):
    p = tmp_path / "x.safetensors"
    p.write_bytes(ok_file())
    h = codec.read_header(p)
    assert list(h.infos) == ["b", "a"] and h.metadata == {"m": "v"}
    p.write_bytes(ok_file()[:-1])
    with pytest.raises(BundleError, match="truncated"):
        codec.read_header(p)


def test_library_and_own_codec_write_the_same_bytes_where_the_library_is_present(tmp_path):
    pytest.importorskip("safetensors.torch")
    torch = pytest.importorskip("torch")
    t = {k: v for k, v in sample_tensors().items() if k not in ("fp4", "e8m0") or
         hasattr(torch, "float4_e2m1fn_x2")}
    for meta in (None, {"one": "key"}):
        codec.save(tmp_path / "lib.st", t, meta, backend="lib")
        assert (tmp_path / "lib.st").read_bytes() == codec.dumps(t, meta)
        got = codec.load(tmp_path / "lib.st", backend="lib")
        assert {k: a.tobytes() for k, a in got.tensors.items()} == \
            {k: raw(v).tobytes() for k, v in t.items()}
