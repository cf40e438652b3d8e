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


def test_the_fake_aiter_asm_path_on_the_gpu(tmp_path, fake_aiter):
    # M past 256 (two 256-row groups of the shuffled activation scale); N = 24: no ASM layouts
    cases = [("p", 33, 64, 512), ("q", 260, 32, 256), ("r", 3, 24, 256)]
    want = write_operand_dir(tmp_path / "ops", cases, np.random.default_rng(5), scales=(125, 129))
    rc = external.main(["--ops", str(tmp_path / "ops"), "--out", str(tmp_path / "o"),
                        "--kernel", "aiter-asm"])
    m = json.loads((tmp_path / "o" / "manifest.json").read_text())
    assert rc == 1 and m["cases"] == ["p", "q"] and list(m["failed"]) == ["r"]
    for name in m["cases"]:
        got = bundle.load_output(tmp_path / "o" / bundle.file_name(name)).tensors["y"]
        assert (got == want[name][1]).all(), name


def test_capture_copies_cuda_operands_without_changing_outputs(fake_aiter, tmp_path):
    import importlib
    import sys
    from a4w4check import capture
    sys.modules.pop("tiny_model", None)
    tiny = importlib.import_module("tiny_model")
    model = tiny.TinyModel().cuda()
    x = torch.randn(8, 256, device="cuda").to(torch.bfloat16)
    want = model(x).view(torch.int16).cpu()
    with capture.capture(tmp_path, sample_every=0) as cap:
        got = model(x).view(torch.int16).cpu()
    sys.modules.pop("tiny_model", None)
    assert torch.equal(got, want) and len(cap.paths) == 4
    g = bundle.load_capture(tmp_path / "aiter.gemm_a4w4_8x64x256_0.safetensors")
    assert (g.tensors["w_fp4_shuffled"] == model.up.w.cpu().numpy()).all()
