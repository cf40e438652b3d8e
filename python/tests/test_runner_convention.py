"""The runner calling convention of `a4w4check.external` (kernels.call_runner): every input
tensor of the operand bundle as a keyword, no M, N, K, never an expected value. A runner that
cannot take that call is refused before any case runs (one line, exit 2); a runner never gets
y_exact, neither as a keyword nor through anything it is handed or can walk up to."""
import json
import sys

import numpy as np
import pytest

from a4w4check import bundle, external, kernels
from helpers import write_operand_dir

torch = pytest.importorskip("torch")

# "one" holds every layout; "n24" lacks w_fp4_shuffled and w_scale_swizzled (N % 32 != 0), so
# the keywords a runner gets differ from case to case.
CASES = [("one", 1, 32, 256), ("n24", 3, 24, 96)]

RUNNERS = '''
import sys
from a4w4check.kernels import dequant_torch
import torch

CALLS = []

def _y(a_fp4, a_scale, w_fp4, w_scale):
    y = dequant_torch(torch, a_fp4, a_scale) @ dequant_torch(torch, w_fp4, w_scale).T
    return y.to(torch.float32).to(torch.bfloat16)

def good(a_fp4, a_scale, w_fp4, w_scale, **rest):
    CALLS.append(sorted(rest))
    return _y(a_fp4, a_scale, w_fp4, w_scale)

def explicit(a_fp4, a_scale, w_fp4, w_scale, M, N, K):  # M, N, K are never passed
    CALLS.append("explicit")
    return _y(a_fp4, a_scale, w_fp4, w_scale)

def no_rest(a_fp4, a_scale, w_fp4, w_scale):  # the shuffled layouts come as keywords too
    CALLS.append("no_rest")
    return _y(a_fp4, a_scale, w_fp4, w_scale)

def positional(a_fp4, a_scale, w_fp4, w_scale, /, **rest):  # keywords cannot fill these
    CALLS.append("positional")
    return _y(a_fp4, a_scale, w_fp4, w_scale)

def every(a_fp4, a_scale, w_fp4, w_scale, a_scale_shuffled=None, w_fp4_shuffled=None,
          w_scale_swizzled=None, x=None):  # every input by name, the optional ones defaulted
    CALLS.append("every")
    return _y(a_fp4, a_scale, w_fp4, w_scale)

FIRST = []

def first_call(a_fp4, a_scale, w_fp4, w_scale, **rest):  # one bf16 ULP off on its first call
    y = _y(a_fp4, a_scale, w_fp4, w_scale)
    if not FIRST:
        FIRST.append(1)
        y = (y.view(torch.int16) + 1).view(torch.bfloat16)
    return y

def cheat(**t):  # returns the answer it is handed
    return t["y_exact"]

def cheat_frames(**t):  # walks up the calling frames for anything holding the answer
    f = sys._getframe(1)
    while f is not None:
        for v in list(f.f_locals.values()):
            for d in (v, getattr(v, "tensors", None), getattr(v, "__dict__", None)):
                if isinstance(d, dict) and "y_exact" in d:
                    return d["y_exact"]
        f = f.f_back
    raise LookupError("no y_exact within reach")

for _f in (good, explicit, no_rest, positional, every, first_call, cheat, cheat_frames):
    _f.a4w4_contract = "exact"
'''


@pytest.fixture(scope="module")
def opsdir(tmp_path_factory):
    d = tmp_path_factory.mktemp("ops")
    return d, write_operand_dir(d, CASES, np.random.default_rng(7), with_expected=True)


@pytest.fixture
def runners(tmp_path, monkeypatch):
    (tmp_path / "runners_t.py").write_text(RUNNERS)
    monkeypatch.syspath_prepend(str(tmp_path))
    import runners_t
    yield runners_t
    sys.modules.pop("runners_t", None)


def run(ops, out, kernel):
    return external.main(["--ops", str(ops), "--out", str(out), "--kernel", kernel,
                          "--device", "cpu"])


def manifest(out):
    return json.loads((out / "manifest.json").read_text())


def test_a_runner_gets_every_input_tensor_as_a_keyword_and_nothing_else(opsdir, tmp_path,
                                                                         runners):
    d, want = opsdir
    assert run(d, tmp_path, "runners_t:good") == 0
    one = ["a_scale_shuffled", "w_fp4_shuffled", "w_scale_swizzled"]  # "one" again at the end
    assert runners.CALLS == [one, ["a_scale_shuffled"], one]
    m = manifest(tmp_path)
    assert m["cases"] == ["one", "n24"] and m["failed"] == {}
    for name, (_, y) in want.items():
        assert (bundle.load_output(tmp_path / bundle.file_name(name)).tensors["y"] == y).all()


def test_a_runner_naming_every_input_with_defaults_is_accepted(opsdir, tmp_path, runners):
    assert run(opsdir[0], tmp_path, "runners_t:every") == 0
    assert runners.CALLS == ["every", "every", "every"]


def test_a_runner_wrong_on_its_first_call_fails_that_case_by_the_repeat(opsdir, tmp_path,
                                                                         runners):
    assert run(opsdir[0], tmp_path, "runners_t:first_call") == 1
    m = manifest(tmp_path)
    assert m["cases"] == ["n24"] and list(m["failed"]) == ["one"]
    assert m["failed"]["one"] == ("call 3 in one process, one again after n24, differs from "
                                  "its first call (call 1): 32 of 32 outputs")
    assert not (tmp_path / bundle.file_name("one")).exists()


@pytest.mark.parametrize("name,why", [
    ("explicit", "missing a required argument: 'M'"),
    ("no_rest", "got an unexpected keyword argument 'a_scale_shuffled'"),
    ("positional", "'a_fp4' parameter is positional only"),
])
def test_a_runner_that_cannot_take_the_call_is_refused_before_any_case(opsdir, tmp_path, capsys,
                                                                       runners, name, why):
    # Before the check: "0 cases written, 2 failed", exit 1, the reason only in the manifest.
    assert run(opsdir[0], tmp_path / "out", f"runners_t:{name}") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert err.startswith(f"a4w4check.external: kernel runners_t:{name}: a runner is called "
                          "with every input tensor of the operand bundle as a keyword"), err
    assert "and no M, N, K" in err and why in err and "**rest" in err
    assert runners.CALLS == [] and not (tmp_path / "out").exists()


def test_check_runner_holds_a_signature_against_one_cases_keywords(runners):
    # a callable without a readable signature (a builtin) is let through, to fail per case
    k = kernels.Kernel("builtins:max", "exact", "cpu", lambda ops, dims, dev: None, runner=max)
    assert kernels.check_runner(k, {"a_fp4"}) is None
    k = kernels.Kernel("runners_t:no_rest", "exact", "cpu", lambda ops, dims, dev: None,
                       runner=runners.no_rest)
    assert kernels.check_runner(k, {"a_fp4", "a_scale", "w_fp4", "w_scale"}) is None
    assert "unexpected keyword argument 'x'" in kernels.check_runner(
        k, {"a_fp4", "a_scale", "w_fp4", "w_scale", "x"})


@pytest.mark.parametrize("name,why", [("cheat", "KeyError: 'y_exact'"),
                                      ("cheat_frames", "LookupError: no y_exact within reach")])
def test_a_runner_never_reaches_the_expected_values(opsdir, tmp_path, runners, name, why):
    # Reproducer: export --with-expected, then a runner returning y_exact passed every case.
    assert run(opsdir[0], tmp_path, f"runners_t:{name}") == 1
    m = manifest(tmp_path)
    assert m["cases"] == [] and m["failed"] == {"one": why, "n24": why}


def test_kernel_inputs_leave_out_the_expected_values_and_share_no_file_buffer(opsdir):
    d, want = opsdir
    path = d / bundle.file_name("one")
    assert "y_exact" in bundle.load_operands(path).tensors
    b = bundle.load_kernel_inputs(path)
    assert set(b.tensors) == {"a_fp4", "a_scale", "w_fp4", "w_scale", "a_scale_shuffled",
                              "w_fp4_shuffled", "w_scale_swizzled"}
    assert set(b.dtypes) == set(b.tensors)
    for name, a in b.tensors.items():
        root = a
        while getattr(root, "base", None) is not None:
            root = root.base
        assert memoryview(root).nbytes == a.nbytes, name  # its own copy, not the whole file
        assert (a == want["one"][0][name]).all() if name in want["one"][0] else True
    t = bundle.load_kernel_inputs(path, as_torch=True)
    assert set(t.tensors) == set(b.tensors) and t.tensors["a_fp4"].dtype == torch.uint8
