"""Kernels that need a CUDA GPU: triton-dot-scaled (Triton's tl.dot_scaled) and torch-dequant on
the device. Skipped where torch has no CUDA device or Triton is absent."""
import json

import numpy as np
import pytest

from a4w4check import bundle, external
from helpers import write_operand_dir

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

# Scales 125..129 keep every case in the exact regime (contracts §4.1): any fp32 accumulation
# order gives the exact sum, so an exact-contract kernel must match bit for bit.
CASES = [("a", 1, 32, 256), ("b", 5, 64, 96), ("c", 70, 130, 512), ("d", 129, 40, 224)]


@pytest.fixture(scope="module")
def opsdir(tmp_path_factory):
    d = tmp_path_factory.mktemp("gpu_ops")
    return d, write_operand_dir(d, CASES, np.random.default_rng(77), scales=(125, 129))


@pytest.mark.parametrize("kernel", ["triton-dot-scaled", "torch-dequant"])
def test_gpu_kernels_match_the_exact_result(opsdir, tmp_path, kernel):
    if kernel == "triton-dot-scaled":
        pytest.importorskip("triton")
    d, want = opsdir
    rc = external.main(["--ops", str(d), "--out", str(tmp_path), "--kernel", kernel,
                        "--device", "cuda"])
    m = json.loads((tmp_path / "manifest.json").read_text())
    assert rc == 0, m["failed"]
    for name, (_, y) in want.items():
        got = bundle.load_output(tmp_path / bundle.file_name(name)).tensors["y"]
        assert (got == y).all(), (kernel, name, int((got != y).sum()))
