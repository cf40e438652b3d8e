"""a4w4check.capture on a tiny model whose layers call the fake aiter's ops."""
import importlib
import logging
import os
import subprocess
import sys

import numpy as np
import pytest

from a4w4check import bundle, capture, layouts
from conftest import FAKE_AITER, HERE, subprocess_env
from helpers import exact_y

torch = pytest.importorskip("torch")


@pytest.fixture
def tiny(fake_aiter):
    sys.modules.pop("tiny_model", None)
    mod = importlib.import_module("tiny_model")
    yield mod
    sys.modules.pop("tiny_model", None)


def x_of(M, seed=0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(M, 256, generator=g) * 3).to(torch.bfloat16)


def bits(t):
    return t.contiguous().view(torch.int16).numpy().copy()


def names(d):
    return sorted(os.listdir(d))


def test_first_call_of_each_shape_is_recorded_and_outputs_do_not_change(tiny, fake_aiter,
                                                                         tmp_path):
    model = tiny.TinyModel()
    orig = fake_aiter.gemm_a4w4
    want4, want8 = bits(model(x_of(4))), bits(model(x_of(8)))
    with capture.capture(tmp_path, sample_every=0) as cap:
        assert tiny.gemm_a4w4 is not orig and fake_aiter.gemm_a4w4 is not orig
        assert (bits(model(x_of(4))) == want4).all()
        assert (bits(model(x_of(4, seed=1))) != want4).any()
        assert (bits(model(x_of(8))) == want8).all()
    assert tiny.gemm_a4w4 is orig and fake_aiter.gemm_a4w4 is orig
    assert names(tmp_path) == sorted(
        f"aiter.{op}_{M}x{shape}_0.safetensors" for M in (4, 8)
        for op, shape in (("per_1x32_f4_quant_hip", "0x256"), ("gemm_a4w4", "64x256"),
                          ("per_1x32_f4_quant_hip", "0x64"), ("gemm_afp4wfp4", "32x64")))
    assert len(cap.paths) == 8 and cap.written == sum(os.path.getsize(p) for p in cap.paths)


def test_a_capture_holds_what_the_op_received_and_returned(tiny, fake_aiter, tmp_path):
    model, x = tiny.TinyModel(), x_of(4)
    with capture.capture(tmp_path, sample_every=0):
        with capture.name_layers(model):
            model(x)
    g = bundle.load_capture(tmp_path / "aiter.gemm_a4w4_4x64x256_0.safetensors")
    xq, xs = fake_aiter.per_1x32_f4_quant_hip(x, shuffle=True)
    assert (g.tensors["a_fp4"] == xq.view(torch.uint8).numpy()).all()
    assert (g.tensors["a_scale_shuffled"] == xs.view(torch.uint8).numpy()).all()
    assert (g.tensors["w_fp4_shuffled"] == layouts.shuffle_weight(model.up.w_fp4)).all()
    assert (g.tensors["w_scale_swizzled"] == layouts.swizzle_scale(model.up.w_scale)).all()
    assert (g.tensors["y"].view(np.int16) == bits(model.up(x))).all()
    assert g.meta["call_site"] == f"{tiny.__file__}:{tiny.line_of('# ASM CALL')}"
    # AITER declares no order for gemm_a4w4: the capture records none (never "exact")
    assert (g.meta["layer"], g.meta["contract"], g.meta["bpreshuffle"]) == ("up", "", "True")
    assert g.meta["contract_source"] == "none"
    assert g.meta["layer_call_site"] == f"{tiny.__file__}:{tiny.line_of('# UP LAYER')}"
    assert g.meta["layouts"] == "a_fp4,w_fp4_shuffled,a_scale_shuffled,w_scale_swizzled,y"
    # judgeable: y is the exact GEMM of the operands the op received
    q, s = fake_aiter.per_1x32_f4_quant_hip(x)
    ops = {"a_fp4": q.view(torch.uint8).numpy(), "a_scale": s.view(torch.uint8).numpy(),
           "w_fp4": model.up.w_fp4, "w_scale": model.up.w_scale}
    assert (g.tensors["y"] == exact_y(ops)).all()
    t = bundle.load_capture(tmp_path / "aiter.gemm_afp4wfp4_4x32x64_0.safetensors")
    assert t.meta["layer"] == "down" and t.meta["call_site"].endswith(
        f"tiny_model.py:{tiny.line_of('# TRITON CALL')}")
    assert sorted(t.tensors) == ["a_fp4", "a_scale", "w_fp4", "w_scale", "y"]
    qb = bundle.load_capture(tmp_path / "aiter.per_1x32_f4_quant_hip_4x0x256_0.safetensors")
    assert qb.dtypes["x"] == "BF16" and (qb.tensors["x"].view(np.int16) == bits(x)).all()
    assert sorted(qb.tensors) == ["a_fp4", "a_scale_shuffled", "x"] and qb.meta["N"] == "0"


def test_every_capture_names_its_layer_and_where_it_was_called_without_name_layers(
        tiny, tmp_path):
    model = torch.nn.Sequential(tiny.TinyModel())
    hooks = torch.nn.modules.module._global_forward_pre_hooks
    before = len(hooks)
    with capture.capture(tmp_path, sample_every=0):
        assert len(hooks) == before + 1
        model(x_of(4))
    assert len(hooks) == before, "the global hooks are removed when the capture stops"
    g = bundle.load_capture(tmp_path / "aiter.gemm_a4w4_4x64x256_0.safetensors")
    t = bundle.load_capture(tmp_path / "aiter.gemm_afp4wfp4_4x32x64_0.safetensors")
    q = bundle.load_capture(tmp_path / "aiter.per_1x32_f4_quant_hip_4x0x64_0.safetensors")
    assert (g.meta["layer"], t.meta["layer"], q.meta["layer"]) == ("0.up", "0.down", "0.down")
    assert g.meta["layer_call_site"] == f"{tiny.__file__}:{tiny.line_of('# UP LAYER')}"
    assert t.meta["layer_call_site"] == f"{tiny.__file__}:{tiny.line_of('# DOWN LAYER')}"
    assert g.meta["call_site"] == f"{tiny.__file__}:{tiny.line_of('# ASM CALL')}"


def run_sampled(tiny, d, seed):
    model = tiny.TinyModel()
    with capture.capture(d, sample_every=3, seed=seed):
        for i in range(12):
            model(x_of(4, seed=i))
    return names(d)


def test_later_calls_are_a_seeded_sample(tiny, tmp_path):
    a = run_sampled(tiny, tmp_path / "a", 5)
    assert a == run_sampled(tiny, tmp_path / "b", 5)
    per_op = [n for n in a if n.startswith("aiter.gemm_a4w4_")]
    assert 1 < len(per_op) < 12


def one_warning(caplog):
    recs = [r for r in caplog.records if r.name == "a4w4check.capture"]
    assert len(recs) == 1, [r.getMessage() for r in recs]
    return recs[0].getMessage()


def test_a_budget_of_zero_changes_nothing_and_logs_once(tiny, tmp_path, caplog):
    model = tiny.TinyModel()
    want = bits(model(x_of(4)))
    with caplog.at_level(logging.WARNING, logger="a4w4check.capture"):
        with capture.capture(tmp_path, budget_bytes=0):
            for _ in range(3):
                assert (bits(model(x_of(4))) == want).all()
    assert "budget of 0 bytes" in one_warning(caplog)
    assert names(tmp_path) == []


def test_the_budget_stops_capturing_once_reached(tiny, tmp_path, caplog):
    model = tiny.TinyModel()
    with caplog.at_level(logging.WARNING, logger="a4w4check.capture"):
        with capture.capture(tmp_path, budget_bytes=40_000, sample_every=1) as cap:
            for i in range(20):
                model(x_of(4, seed=i))
    assert 0 < len(cap.paths) < 80 and cap.written <= 40_000
    assert "budget of 40000 bytes reached" in one_warning(caplog)


def test_a_failed_write_changes_nothing_and_logs_once(tiny, tmp_path, caplog):
    model, d = tiny.TinyModel(), tmp_path / "cap"
    want = bits(model(x_of(4)))
    with caplog.at_level(logging.WARNING, logger="a4w4check.capture"):
        with capture.capture(d):
            os.rmdir(d)
            d.write_text("not a directory any more")
            for _ in range(3):
                assert (bits(model(x_of(4))) == want).all()
    assert "cannot write a capture bundle" in one_warning(caplog)


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0,
                    reason="root writes into read-only directories")
def test_a_read_only_directory_changes_nothing_and_logs_once(tiny, tmp_path, caplog):
    model = tiny.TinyModel()
    want = bits(model(x_of(4)))
    tmp_path.chmod(0o555)
    try:
        with caplog.at_level(logging.WARNING, logger="a4w4check.capture"):
            with capture.capture(tmp_path):
                assert (bits(model(x_of(4))) == want).all()
        one_warning(caplog)
    finally:
        tmp_path.chmod(0o755)


def test_an_error_of_the_op_itself_reaches_the_caller_unchanged(fake_aiter, tmp_path):
    x = torch.zeros(4, 100)  # K not a multiple of 32: the fake quantizer's reshape fails
    with pytest.raises(RuntimeError) as plain:
        fake_aiter.per_1x32_f4_quant_hip(x)
    with capture.capture(tmp_path) as cap:
        with pytest.raises(RuntimeError) as wrapped:
            fake_aiter.per_1x32_f4_quant_hip(x)
    assert str(wrapped.value) == str(plain.value) and cap.paths == []


SCRIPT = """
import a4w4check, torch, tiny_model
from a4w4check import bundle
m = tiny_model.TinyModel()
m(torch.ones(4, 256, dtype=torch.bfloat16))
cap = a4w4check.capture.ENV_CAPTURE
print(len(cap.paths))
for p in sorted(cap.paths):
    b = bundle.load_capture(p)
    print(b.meta["op"], b.meta["layer"], b.meta["layer_call_site"].rsplit(":", 1)[1])
"""


def test_the_environment_starts_a_capture_when_the_package_is_imported(tmp_path):
    r = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                       timeout=120, env=subprocess_env((HERE, FAKE_AITER),
                                                       A4W4CHECK_CAPTURE=str(tmp_path / "c"),
                                                       A4W4CHECK_CAPTURE_BUDGET="10M"))
    assert r.returncode == 0, r.stderr
    out = r.stdout.split("\n")
    assert out[0] == "4" and len(names(tmp_path / "c")) == 4
    with open(os.path.join(HERE, "tiny_model.py")) as f:  # the markers' lines
        lines = f.read().split("\n")
    up, down = (next(i for i, t in enumerate(lines, 1) if t.rstrip().endswith(m))
                for m in ("# UP LAYER", "# DOWN LAYER"))
    # the layers are named in the environment-variable mode too
    assert sorted(out[1:5]) == sorted([f"aiter.gemm_a4w4 up {up}",
                                       f"aiter.gemm_afp4wfp4 down {down}",
                                       f"aiter.per_1x32_f4_quant_hip up {up}",
                                       f"aiter.per_1x32_f4_quant_hip down {down}"])


def test_a_gemm_a4w4_whose_parameters_moved_is_named_with_the_bug_it_causes():
    """vllm-project/vllm#40754: an AITER signature change bound `out` as `bias` in positional
    calls. The capture warns and the external adapter refuses such an installed AITER."""
    from a4w4check import capture_ops, kernels

    def moved(A, B, A_scale, B_scale, bias=None, out=None, bpreshuffle=True):
        return out

    def right(A, B, A_scale, B_scale, out, bias=None, alpha=1.0, beta=0.0, bpreshuffle=True):
        return out
    msg = capture_ops.signature_mismatch("aiter.gemm_a4w4", moved)
    assert msg and "vllm-project/vllm#40754" in msg and "(A, B, A_scale, B_scale, bias" in msg
    assert capture_ops.signature_mismatch("aiter.gemm_a4w4", right) is None

    class FakeAiter:
        gemm_a4w4 = staticmethod(moved)
    sys.modules["aiter"], old = FakeAiter, sys.modules.get("aiter")
    try:
        with pytest.raises(ValueError, match="vllm-project/vllm#40754"):
            kernels.load("aiter-asm")
    finally:
        if old is None:
            sys.modules.pop("aiter", None)
        else:
            sys.modules["aiter"] = old


def gemm_contracts(d):
    """op -> (contract, contract_source) recorded in the GEMM captures of directory d."""
    out = {}
    for name in names(d):
        if "gemm" in name:
            m = bundle.load_capture(os.path.join(d, name)).meta
            out[m["op"]] = (m["contract"], m["contract_source"])
    return out


def test_a_kernels_a4w4_contract_attribute_is_recorded(tiny, fake_aiter, tmp_path, monkeypatch):
    monkeypatch.setattr(fake_aiter.gemm_a4w4, "a4w4_contract", "ordered(1)", raising=False)
    with capture.capture(tmp_path, sample_every=0):
        tiny.TinyModel()(x_of(4))
    assert gemm_contracts(tmp_path) == {"aiter.gemm_a4w4": ("ordered(1)", "kernel attribute"),
                                        "aiter.gemm_afp4wfp4": ("", "none")}


def test_a_user_contract_text_or_file_wins_over_the_attribute(tiny, fake_aiter, tmp_path,
                                                              monkeypatch):
    monkeypatch.setattr(fake_aiter.gemm_a4w4, "a4w4_contract", "ordered(1)", raising=False)
    found = tmp_path / "discovered.txt"
    found.write_text("# discovered by a4w4check discover at 64x64x2048\ntree(order=desc)\n")
    with capture.capture(tmp_path / "c", sample_every=0,
                         contracts={"aiter.gemm_a4w4": str(found),
                                    "aiter.gemm_afp4wfp4": "ordered(2)"}):
        tiny.TinyModel()(x_of(4))
    assert gemm_contracts(tmp_path / "c") == {
        "aiter.gemm_a4w4": ("tree(order=desc)", "user"),
        "aiter.gemm_afp4wfp4": ("ordered(2)", "user")}


@pytest.mark.parametrize("contracts,why", [
    ({"aiter.gemm_a4w4": "sometimes"}, "contract .sometimes. is not exact"),
    ({"aiter.gemm_a4w5": "exact"}, "capture wraps only"),
])
def test_a_bad_user_contract_is_refused_before_anything_runs(tmp_path, contracts, why):
    with pytest.raises(ValueError, match=why):
        capture.capture(tmp_path, contracts=contracts)


def test_the_environment_gives_contracts_to_a_server_capture(tmp_path):
    code = ("import logging, sys; logging.basicConfig()\n"
            "import aiter, a4w4check.capture as c\n"
            "print(c.ENV_CAPTURE.user if c.ENV_CAPTURE else None)\n")
    env = subprocess_env([FAKE_AITER], A4W4CHECK_CAPTURE=str(tmp_path),
                         A4W4CHECK_CAPTURE_CONTRACTS="aiter.gemm_a4w4=ordered(1); "
                                                     "aiter.gemm_afp4wfp4=exact")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "{'aiter.gemm_a4w4': 'ordered(1)', 'aiter.gemm_afp4wfp4': 'exact'}"
    env["A4W4CHECK_CAPTURE_CONTRACTS"] = "aiter.gemm_a4w4"
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=120)
    assert r.stdout.strip() == "None" and "not op=CONTRACT" in r.stderr
