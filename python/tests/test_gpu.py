"""Kernels that need a CUDA GPU: triton-dot-scaled (Triton's tl.dot_scaled) and torch-dequant on
the device, and the in-process judge (a4w4check.assert_bitexact) on a kernel that gets and
returns CUDA tensors. Skipped where torch has no CUDA device or Triton is absent."""
import functools
import json

import numpy as np
import pytest

import a4w4check
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


# Small cases over the normal regimes: K 288 and 320 have a K tail (the planted bug's), M and N
# not multiples of any tile.
INPROC_CASES = [("g_exact_tail", 3, 32, 288, "exact", 7), ("g_normal", 70, 130, 512, "normal", 3),
                ("g_normal_tail", 5, 80, 320, "normal", 9), ("g_code0", 4, 96, 256, "code0", 13),
                ("g_tiny", 3, 128, 64, "tiny", 14)]


def _on_cuda(fn, seen):
    """fn as a kernel on "cuda" (a4w4_device): the judge uploads its inputs; seen records the
    (device, dtype) of every input and of the output."""
    @functools.wraps(fn)  # its name and a4w4_contract, a4w4_e8m0_code0
    def kernel(**ops):
        seen.update((t.device.type, str(t.dtype)) for t in ops.values())
        y = fn(**ops)
        seen.add(("out:" + y.device.type, str(y.dtype)))
        return y
    kernel.a4w4_device = "cuda"
    return kernel


def test_in_process_judge_on_cuda_tensors(tmp_path):
    """assert_bitexact on a torch kernel running on CUDA tensors (python/tests/torch_gemm.py):
    its uint8 inputs arrive on the device and its bf16 output comes back from it; the kernel
    passes every case on every output, torch-dequant by name passes on cuda (tiny aside: a
    skip under bounded(1)), and the planted twin's verdicts on the device are the CPU run's,
    record for record (first mismatches and signature), the failing ones raising with the
    first mismatch and the rerun command."""
    import torch_gemm
    seen = set()
    good = _on_cuda(torch_gemm.gemm, seen)
    bad = _on_cuda(torch_gemm.gemm_planted, seen)
    for c in INPROC_CASES:
        case = a4w4check.Case(*c)
        v = a4w4check.assert_bitexact(good, case, save_dir=str(tmp_path / "none"))
        assert v.checked == case.M * case.N and v.contract == "ordered(1)", v.line
        if case.regime != "tiny":  # there bounded(1) admits 0: not judged, a skip
            v = a4w4check.assert_bitexact("torch-dequant", case, device="cuda",
                                          save_dir=str(tmp_path / "none"))
            assert v.checked == case.M * case.N and v.contract == "bounded(1)", v.line
        on_gpu = a4w4check.judge_case(bad, case)
        on_cpu = a4w4check.judge_case(torch_gemm.gemm_planted, case, device="cpu")
        for field in ("verdict", "checked", "mismatches", "max_ulp", "first", "signature"):
            assert getattr(on_gpu, field) == getattr(on_cpu, field), (c[0], field)
        if case.K % 256:
            with pytest.raises(AssertionError) as e:
                a4w4check.assert_bitexact(bad, case, save_dir=str(tmp_path / "fail"))
            r, col, g, x = on_cpu.first[0]
            lines = str(e.value).splitlines()
            assert lines[1] == f"  y ({r}, {col}): got 0x{g:04x} expected 0x{x:04x}", lines
            assert any(line.startswith("  rerun: a4w4check verify ") for line in lines)
        else:
            assert on_gpu.passed, on_gpu.line
    assert seen == {("cuda", "torch.uint8"), ("out:cuda", "torch.bfloat16")}, seen
    assert not (tmp_path / "none").exists()
