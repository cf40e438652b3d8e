"""a4w4check.bundle: operand, output and capture bundles round trip; bad bundles are named."""
import json
import os

import numpy as np
import pytest

from a4w4check import bundle
from a4w4check import safetensors_codec as codec
from a4w4check.errors import BundleError
from helpers import random_operands, with_layouts


def operand_bundle(tmp_path, name="golden/g1", M=5, N=32, K=256):
    ops = random_operands(np.random.default_rng(3), M, N, K)
    tensors, absent = with_layouts(ops, M, N, K)
    tensors["y_exact"] = np.arange(M * N, dtype=np.uint16).reshape(M, N)
    path = bundle.save_operands(tmp_path, name, tensors, M=M, N=N, K=K, regime="exact",
                                seed=11, matrix_hash="abc", tool_version="t1", absent=absent)
    return path, tensors


def test_file_names_replace_slashes_like_the_c_bundle_backend():
    assert bundle.file_name("golden/g1") == "golden__g1.safetensors"
    with pytest.raises(ValueError):
        bundle.file_name("")


def test_operand_bundle_round_trip(tmp_path):
    path, tensors = operand_bundle(tmp_path)
    assert os.path.basename(path) == "golden__g1.safetensors"
    b = bundle.load_operands(path)
    assert b.name == "golden/g1" and b.dims() == (5, 32, 256)
    assert b.meta["format"] == "a4w4-operands/1" and b.meta["seed"] == "11"
    assert b.meta["layouts"].split(",") == ["a_fp4", "a_scale", "w_fp4", "w_scale",
                                            "a_scale_shuffled", "w_fp4_shuffled",
                                            "w_scale_swizzled", "y_exact"]
    assert bundle.parse_absent(b.meta["absent"]) == {}
    for n, a in tensors.items():
        assert (b.tensors[n] == a).all(), n
    assert b.dtypes["y_exact"] == "BF16" and b.dtypes["a_fp4"] == "U8"


def test_operand_bundle_as_torch(tmp_path):
    torch = pytest.importorskip("torch")
    path, tensors = operand_bundle(tmp_path)
    b = bundle.load_operands(path, as_torch=True)
    assert b.tensors["a_fp4"].dtype == torch.uint8
    assert b.tensors["y_exact"].dtype == torch.bfloat16
    assert (b.tensors["y_exact"].view(torch.int16).numpy().view(np.uint16) ==
            tensors["y_exact"]).all()
    v = bundle.view(b.tensors["a_fp4"], "fp4x2")
    assert v.dtype == getattr(torch, "float4_e2m1fn_x2", torch.uint8)


def test_absent_lists_what_a_shape_cannot_have(tmp_path):
    ops = random_operands(np.random.default_rng(4), 3, 24, 96)
    tensors, absent = with_layouts(ops, 3, 24, 96)
    path = bundle.save_operands(tmp_path, "c", tensors, M=3, N=24, K=96, absent=absent)
    b = bundle.load_operands(path)
    assert set(bundle.parse_absent(b.meta["absent"])) == {"w_fp4_shuffled", "w_scale_swizzled"}
    assert "w_scale_swizzled" not in b.tensors


def test_the_writer_checks_known_tensors_and_keeps_others(tmp_path):
    ops = random_operands(np.random.default_rng(4), 2, 32, 64)
    with pytest.raises(BundleError, match="uint8"):
        bundle.save_operands(tmp_path, "c", dict(ops, a_fp4=ops["a_fp4"].astype(np.int16)),
                             M=2, N=32, K=64)
    with pytest.raises(BundleError, match="shape"):
        bundle.save_operands(tmp_path, "c", ops, M=2, N=32, K=128)
    x = np.ones((2, 64), np.uint16)
    b = bundle.load_operands(bundle.save_operands(tmp_path, "c", dict(ops, x=x), M=2, N=32,
                                                  K=64))
    assert b.meta["layouts"].endswith(",x") and (b.tensors["x"] == x).all()


def test_readers_accept_f4_and_e8m0_dtypes(tmp_path):
    path, tensors = operand_bundle(tmp_path)
    f = codec.load(path)
    renamed = {n: codec.Raw("F4" if n in bundle.FP4 else "F8_E8M0" if n in bundle.SCALES else
                         f.dtypes[n], a) for n, a in f.tensors.items()}
    codec.save(path, renamed, f.metadata)
    b = bundle.load_operands(path)
    assert b.dtypes["w_fp4"] == "F4" and b.dtypes["w_scale"] == "F8_E8M0"
    assert (b.tensors["w_fp4"] == tensors["w_fp4"]).all()


def rewrite(path, drop=None, meta=None, change=None):
    f = codec.load(path)
    t = {n: codec.Raw(f.dtypes[n], a) for n, a in f.tensors.items() if n != drop}
    t.update(change or {})
    m = dict(f.metadata, **(meta or {}))
    codec.save(path, t, m)


@pytest.mark.parametrize("how,rule", [
    (dict(drop="w_scale_swizzled"), "layouts"),
    (dict(drop="w_scale", meta={"layouts": "a_fp4,a_scale,w_fp4,a_scale_shuffled,"
                                "w_fp4_shuffled,w_scale_swizzled,y_exact"}), "missing-tensor"),
    (dict(change={"a_scale": np.zeros((5, 7), np.uint8)}), "shape"),
    (dict(change={"y_exact": np.zeros((5, 32), np.float32)}), "dtype"),
    (dict(meta={"format": "a4w4-case/1"}), "format"),
    (dict(meta={"K": "250"}), "metadata"),
    (dict(meta={"M": "05"}), "metadata"),
])
def test_bad_operand_bundles_name_the_rule(tmp_path, how, rule):
    path, _ = operand_bundle(tmp_path)
    rewrite(path, **how)
    with pytest.raises(BundleError) as e:
        bundle.load_operands(path)
    assert e.value.rule == rule and e.value.path == str(path)


def test_missing_metadata_is_refused(tmp_path):
    path, _ = operand_bundle(tmp_path)
    f = codec.load(path)
    meta = {k: v for k, v in f.metadata.items() if k != "matrix_hash"}
    codec.save(path, {n: codec.Raw(f.dtypes[n], a) for n, a in f.tensors.items()}, meta)
    with pytest.raises(BundleError, match="matrix_hash"):
        bundle.load_operands(path)


def test_output_bundle_round_trip(tmp_path):
    src = {"name": "a/b", "M": "2", "N": "3", "K": "64", "seed": "5", "matrix_hash": "h",
           "tool_version": "v", "regime": "x"}
    y = np.arange(6, dtype=np.uint16).reshape(2, 3)
    path = bundle.save_output(tmp_path, "a/b", y, source=src, kernel="k", contract="exact")
    b = bundle.load_output(path)
    assert list(b.meta) == list(bundle.OUTPUT_KEYS)
    assert b.meta["format"] == "a4w4-output/1" and b.meta["kernel"] == "k"
    assert (b.tensors["y"] == y).all() and b.dtypes["y"] == "BF16"
    with pytest.raises(BundleError, match="shape"):
        bundle.save_output(tmp_path, "a/b", y[:1], source=src, kernel="k", contract="exact")


def test_manifests(tmp_path):
    bundle.write_operand_manifest(tmp_path, set_name="s", matrix_hash="h", tool_version="v",
                                  seed_note="n", cases=["a", "b/c"])
    assert bundle.read_operand_manifest(tmp_path)["cases"] == ["a", "b/c"]
    (tmp_path / "manifest.json").write_text(json.dumps({"format": "other"}))
    with pytest.raises(BundleError, match="manifest"):
        bundle.read_operand_manifest(tmp_path)
    bundle.write_outputs_manifest(tmp_path, kernel="k", contract="ordered(2)", matrix_hash="h",
                                  tool_version="v", cases=["a"], failed={"b": "boom"})
    m = json.loads((tmp_path / "manifest.json").read_text())
    assert m == {"format": "a4w4-outputs/1", "kernel": "k", "contract": "ordered(2)",
                 "matrix_hash": "h", "tool_version": "v", "cases": ["a"], "failed": {"b": "boom"}}
    assert (tmp_path / "contract.txt").read_text() == "ordered(2)\n"


def test_capture_bundle_round_trip_and_numbering(tmp_path):
    t = {"a_fp4": np.zeros((4, 32), np.uint8), "y": codec.Raw("BF16", np.ones((4, 32), np.uint16))}
    meta = {"call_site": "m.py:3", "layer": "l.0", "contract": "exact", "layouts": "a_fp4,y",
            "bpreshuffle": "True"}
    p0, n0 = bundle.save_capture(tmp_path, "aiter.gemm_a4w4", (4, 32, 64), t, meta)
    p1, n1 = bundle.save_capture(tmp_path, "aiter.gemm_a4w4", (4, 32, 64), t, meta)
    assert (n0, n1) == (0, 1)
    assert os.path.basename(p1) == "aiter.gemm_a4w4_4x32x64_1.safetensors"
    b = bundle.load_capture(p0)
    assert b.meta["op"] == "aiter.gemm_a4w4" and b.meta["layer"] == "l.0"
    assert list(b.meta)[:5] == ["format", "op", "M", "N", "K"]
    assert b.dtypes == {"a_fp4": "U8", "y": "BF16"}
