"""Cross-checks against the C harness (`a4w4check verify`), found through A4W4CHECK_CLI: a case
bundle (a4w4-case/1) written by this package, with y_exact from the torch-dequant kernel and the
ASM layouts from a4w4check.layouts, must pass every check of the C oracles."""
import os
import subprocess

import numpy as np
import pytest

from a4w4check import kernels
from a4w4check import safetensors_codec as codec
from helpers import ordered1, random_operands, with_layouts

CLI = os.environ.get("A4W4CHECK_CLI")
pytestmark = pytest.mark.skipif(not CLI, reason="A4W4CHECK_CLI (path of the a4w4check binary) "
                                "is not set")


def case_bundle(path, M, N, K, seed):
    torch = pytest.importorskip("torch")
    ops = random_operands(np.random.default_rng(seed), M, N, K, scales=(100, 150))
    tensors, _ = with_layouts(ops, M, N, K)
    run = kernels.load("torch-dequant").run
    tensors["y_exact"] = run({k: torch.from_numpy(v) for k, v in ops.items()}, (M, N, K), "cpu")
    tensors["y_ordered"] = ordered1(ops)
    swz = "w_scale_swizzled" in tensors
    codec.save(path, tensors, {"format": "a4w4-case/1", "M": str(M), "N": str(N), "K": str(K),
                            "activation": "codes", "scale_swizzle_supported": str(swz).lower(),
                            "producer": "a4w4check python tests", "note": ""})
    return tensors


def verify(path):
    return subprocess.run([CLI, "verify", str(path)], capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("M,N,K", [(7, 64, 256), (33, 96, 512), (5, 48, 192)])
def test_c_verify_accepts_what_this_package_writes(tmp_path, M, N, K):
    p = tmp_path / "case.safetensors"
    case_bundle(p, M, N, K, seed=M)
    r = verify(p)
    assert r.returncode == 0, r.stdout + r.stderr
    for subject in ("a_scale_shuffled", "y_exact", "y_ordered", "cpu-fallback vs y_ordered"):
        assert any(line.startswith("PASS") and subject in line
                   for line in r.stdout.splitlines()), (subject, r.stdout)


def test_c_verify_catches_a_wrong_bit(tmp_path):
    p = tmp_path / "case.safetensors"
    t = case_bundle(p, 7, 64, 256, seed=1)
    t["y_exact"][3, 5] ^= 1
    f = codec.load(p)
    codec.save(p, {n: codec.Raw(f.dtypes[n], t.get(n, a)) for n, a in f.tensors.items()},
               f.metadata)
    r = verify(p)
    assert r.returncode == 1 and "FAIL" in r.stdout
