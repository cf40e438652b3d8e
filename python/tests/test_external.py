"""python -m a4w4check.external: kernels on operand bundles, outputs, manifests, exit codes."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from a4w4check import bundle, external
from a4w4check import safetensors_codec as codec
from conftest import subprocess_env
from helpers import exact_y, random_operands, with_layouts, write_operand_dir

torch = pytest.importorskip("torch")

# M, N, K: the ASM layouts need N % 32 == 0 and K % 256 == 0 (n24 lacks them); the planted
# wrong-rows bug shows where M > 16 and N <= 128 (seventeen, tall), not where N > 128 (wide).
CASES = [("one", 1, 32, 256), ("g/odd", 5, 64, 256), ("seventeen", 17, 32, 256),
         ("wide", 20, 160, 256), ("tall", 40, 64, 256), ("n24", 3, 24, 96)]


def run(ops, out, kernel, *extra):
    return external.main(["--ops", str(ops), "--out", str(out), "--kernel", kernel, *extra])


def outputs(out):
    m = json.loads((out / "manifest.json").read_text())
    ys = {n: bundle.load_output(out / bundle.file_name(n)).tensors["y"] for n in m["cases"]}
    return m, ys


@pytest.fixture(scope="module")
def opsdir(tmp_path_factory):
    d = tmp_path_factory.mktemp("ops")
    return d, write_operand_dir(d, CASES, np.random.default_rng(2024))


def test_torch_dequant_equals_the_exact_result(opsdir, tmp_path, capsys):
    d, want = opsdir
    assert run(d, tmp_path, "torch-dequant") == 0
    m, ys = outputs(tmp_path)
    assert m["cases"] == [c[0] for c in CASES] and m["failed"] == {}
    assert m["kernel"] == "torch-dequant" and m["contract"] == "bounded(1)"
    assert m["matrix_hash"] == "h123" and m["tool_version"] == "test-0"
    assert (tmp_path / "contract.txt").read_text() == "bounded(1)\n"
    for name, (_, y) in want.items():
        assert (ys[name] == y).all(), name
    b = bundle.load_output(tmp_path / "g__odd.safetensors")
    assert (b.meta["name"], b.meta["M"], b.meta["N"], b.meta["K"], b.meta["seed"]) == \
        ("g/odd", "5", "64", "256", "7")
    assert "6 cases written, 0 failed" in capsys.readouterr().out


def test_torch_dequant_edges_nan_overflow_and_underflow(tmp_path):
    rng = np.random.default_rng(9)
    ops = random_operands(rng, 6, 16, 32, scales=(0, 254))
    ops["a_scale"][:3, 0] = [254, 0, 255]
    ops["w_scale"][:3, 0] = [254, 0, 1]
    tensors, absent = with_layouts(ops, 6, 16, 32)
    bundle.save_operands(tmp_path, "edge", tensors, M=6, N=16, K=32, absent=absent)
    bundle.write_operand_manifest(tmp_path, set_name="e", matrix_hash="", tool_version="",
                                  seed_note="", cases=["edge"])
    assert run(tmp_path, tmp_path / "out", "torch-dequant") == 0
    y = outputs(tmp_path / "out")[1]["edge"]
    assert (y == exact_y(ops)).all()
    assert (y[2] == 0x7FC0).all()


def test_fake_aiter_kernels_keep_the_exact_contract(opsdir, tmp_path, fake_aiter):
    d, want = opsdir
    for kernel in ("aiter-asm", "aiter-triton"):
        out = tmp_path / kernel
        rc = run(d, out, kernel, "--device", "cpu")
        m, ys = outputs(out)
        assert m["contract"] == "exact" and m["kernel"] == kernel
        if kernel == "aiter-asm":  # n24 has no swizzled scale: the case fails, the rest go on
            assert rc == 1 and list(m["failed"]) == ["n24"]
            assert "w_fp4_shuffled, w_scale_swizzled" in m["failed"]["n24"]
        else:
            assert rc == 0 and m["failed"] == {}
        for name in m["cases"]:
            assert (ys[name] == want[name][1]).all(), (kernel, name)


def test_the_planted_wrong_rows_bug_shows_in_the_outputs(opsdir, tmp_path, fake_aiter):
    d, want = opsdir
    fake_aiter.BUG = "wrong-rows"
    run(d, tmp_path, "aiter-asm", "--device", "cpu")
    ys = outputs(tmp_path)[1]
    bad = {n for n in ys if not (ys[n] == want[n][1]).all()}
    assert bad == {"seventeen", "tall"}  # M > 16 and N <= 128
    y, ok = ys["tall"], want["tall"][1]
    assert (y[:16] == ok[:16]).all() and (y[16:] == y[0]).all()


USER = '''
import numpy as np
from a4w4check.kernels import dequant_torch
import torch

def gemm(a_fp4, a_scale, w_fp4, w_scale, **rest):
    if a_fp4.shape[0] == 17:
        raise RuntimeError("no kernel for M=17")
    y = dequant_torch(torch, a_fp4, a_scale) @ dequant_torch(torch, w_fp4, w_scale).T
    return y.to(torch.float32).to(torch.bfloat16)
gemm.a4w4_contract = "ordered(1)"

def nocontract(**t):
    return None

def wrong_dtype(a_fp4, w_fp4, **rest):
    return torch.zeros((a_fp4.shape[0], w_fp4.shape[0]))

def writes_w_scale(a_fp4, a_scale, w_fp4, w_scale, **rest):
    y = gemm(a_fp4, a_scale, w_fp4, w_scale)
    w_scale[0, 0] = 0  # right outputs, a weight scale changed for the next call
    return y
writes_w_scale.a4w4_contract = "ordered(1)"

def dies_at_17(a_fp4, a_scale, w_fp4, w_scale, **rest):
    if a_fp4.shape[0] == 17:
        import os
        os._exit(9)  # as a kill or the OOM killer ends it: no Python cleanup runs
    return gemm(a_fp4, a_scale, w_fp4, w_scale)
dies_at_17.a4w4_contract = "ordered(1)"
'''


@pytest.fixture
def user_module(tmp_path, monkeypatch):
    (tmp_path / "mykern_t.py").write_text(USER)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "mykern_t"
    sys.modules.pop("mykern_t", None)


def test_a_user_function_runs_and_a_failing_case_does_not_stop_the_rest(opsdir, tmp_path,
                                                                          user_module, capsys):
    d, want = opsdir
    assert run(d, tmp_path / "o", f"{user_module}:gemm", "--device", "cpu") == 1
    # the closing line says why the first failed case failed, not only how many failed; the
    # progress line gives the failed case's shape too (before: "?x?x?")
    said = capsys.readouterr()
    assert "5 cases written, 1 failed (first seventeen: RuntimeError: no kernel for M=17) -> " \
        in said.out
    assert " seventeen 17x32x256, " in said.err
    m, ys = outputs(tmp_path / "o")
    assert m["contract"] == "ordered(1)" and m["kernel"] == f"{user_module}:gemm"
    assert m["failed"] == {"seventeen": "RuntimeError: no kernel for M=17"}
    assert m["cases"] == ["one", "g/odd", "wide", "tall", "n24"]
    assert not (tmp_path / "o" / "seventeen.safetensors").exists()
    for n in m["cases"]:
        assert (ys[n] == want[n][1]).all()
    assert run(d, tmp_path / "p", f"{user_module}:gemm", "--contract", "bounded(4)") == 1
    assert outputs(tmp_path / "p")[0]["contract"] == "bounded(4)"
    # a tree contract (contracts §4.2) is written as given; the C harness parses it strictly
    tree = "tree(reduce=pairwise,split=0/64,fuse=2)"
    assert run(d, tmp_path / "q", f"{user_module}:gemm", "--contract", tree) == 1
    assert outputs(tmp_path / "q")[0]["contract"] == tree
    assert (tmp_path / "q" / "contract.txt").read_text() == tree + "\n"


def test_a_wrong_y_is_a_failed_case(opsdir, tmp_path, user_module):
    d, _ = opsdir
    assert run(d, tmp_path, f"{user_module}:wrong_dtype", "--contract", "exact") == 1
    m = outputs(tmp_path)[0]
    assert m["cases"] == [] and all("torch.bfloat16" in r for r in m["failed"].values())


def test_a_kernel_writing_into_an_operand_is_a_failed_case(opsdir, tmp_path, user_module):
    # its outputs are right (the library judges operands it generated itself): the write
    # alone fails the case, as a plugin's does (before: every case written, none failed)
    d, _ = opsdir
    assert run(d, tmp_path, f"{user_module}:writes_w_scale", "--device", "cpu") == 1
    m = outputs(tmp_path)[0]
    assert m["cases"] == [] and set(m["failed"]) == {n for n, *_ in CASES}
    assert m["failed"]["one"] == ("ValueError: the kernel wrote into its input w_scale "
                                  "(operands are read-only: docs/backends.md)")


def test_a_run_cut_short_leaves_no_earlier_manifest_or_output(opsdir, tmp_path, user_module):
    # OUT held a whole earlier run (manifest listing every case); a new run into it dies at
    # its third case. Before: the earlier manifest, contract.txt and the outputs of the cases
    # not reached stayed beside the new ones, and `run --backend bundle:OUT` judged that mix
    # as one run.
    d, _ = opsdir
    out = tmp_path / "o"
    assert run(d, out, "torch-dequant") == 0
    r = subprocess.run([sys.executable, "-m", "a4w4check.external", "--ops", str(d), "--out",
                        str(out), "--kernel", f"{user_module}:dies_at_17", "--device", "cpu",
                        "--quiet"], env=subprocess_env(extra_paths=[str(tmp_path)]),
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 9, r.stderr
    assert sorted(p.name for p in out.iterdir()) == sorted(bundle.file_name(n)
                                                           for n in ("one", "g/odd"))


def one_error_line(capsys):
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("a4w4check.external: "), err
    return err


@pytest.mark.parametrize("kernel,extra,needle", [
    ("nope", [], "unknown kernel 'nope'"),
    ("torch-dequant", ["--contract", "sometimes"], "contract 'sometimes'"),
    ("torch-dequant", ["--contract", "tree(leaf=16"], "contract 'tree(leaf=16'"),
    ("torch-dequant", ["--contract", "tree(leaf=16, fuse=2)"], "contract 'tree(leaf=16, fuse=2)'"),
    ("torch-dequant", ["--contract", "tree(depth=3)"], "contract 'tree(depth=3)'"),
    ("mykern_t:nocontract", [], "declares no contract"),
    ("mykern_t:absent", ["--contract", "exact"], "has no function absent"),
])
def test_bad_usage_exits_2_with_one_line(opsdir, tmp_path, capsys, user_module, kernel, extra,
                                         needle):
    assert run(opsdir[0], tmp_path / "o", kernel, *extra) == 2
    assert needle in one_error_line(capsys)
    assert not (tmp_path / "o").exists()


def test_an_unusable_out_exits_4_as_the_c_commands_do(opsdir, tmp_path, capsys, monkeypatch):
    # docs/cli/README.md: 4 an output file could not be written (before: exit 2, "bad input")
    (tmp_path / "file").write_text("x")
    assert run(opsdir[0], tmp_path / "file", "torch-dequant") == 4
    assert "file: cannot create the output directory" in one_error_line(capsys)
    assert run(opsdir[0], tmp_path / "file" / "sub", "torch-dequant") == 4
    one_error_line(capsys)

    # an output that cannot be written (a full disk) stops the run: no failure of the kernel's
    def full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(bundle.codec, "save", full)
    assert run(opsdir[0], tmp_path / "o", "torch-dequant") == 4
    assert "cannot write (No space left on device)" in one_error_line(capsys)
    assert not (tmp_path / "o" / "manifest.json").exists()


def corrupt(d, how):
    p = d / "seventeen.safetensors"
    data = bytearray(p.read_bytes())
    if how == "truncated":
        p.write_bytes(data[:-10])
    elif how == "lying-header":
        data[:8] = (len(data) * 2).to_bytes(8, "little")
        p.write_bytes(data)
    elif how == "wrong-shape":
        f = codec.load(p)
        t = {n: codec.Raw(f.dtypes[n], a) for n, a in f.tensors.items()}
        t["a_scale"] = np.zeros((17, 2), np.uint8)  # K/32 is 8
        codec.save(p, t, f.metadata)
    elif how == "missing":
        p.unlink()
    elif how == "manifest":
        (d / "manifest.json").write_text("{not json")
    elif how == "deep-manifest":  # a RecursionError in json, not a traceback and exit 1
        (d / "manifest.json").write_text("[" * 200_000 + "]" * 200_000)
    elif how == "fifo-bundle":  # a FIFO without a writer: refused at once, never opened blocking
        p.unlink()
        os.mkfifo(p)
    elif how == "fifo-manifest":
        (d / "manifest.json").unlink()
        os.mkfifo(d / "manifest.json")
    return p


@pytest.mark.parametrize("how,needle", [
    ("truncated", "seventeen.safetensors: truncated:"),
    ("lying-header", "seventeen.safetensors: header-length:"),
    ("wrong-shape", "seventeen.safetensors: shape: tensor a_scale"),
    ("missing", "seventeen.safetensors: missing-bundle:"),
    ("manifest", "manifest.json: manifest: not valid JSON"),
    ("deep-manifest", "manifest.json: manifest: not valid JSON (nested too deep)"),
    ("fifo-bundle", "seventeen.safetensors: missing-bundle: cannot read (not a regular file (a "
                    "FIFO); give a file)"),
    ("fifo-manifest", "manifest.json: manifest: cannot read (not a regular file (a FIFO)"),
])
def test_a_malformed_operand_bundle_exits_2_before_any_kernel_runs(tmp_path, capsys, how,
                                                                     needle):
    write_operand_dir(tmp_path, CASES[:3], np.random.default_rng(1))
    corrupt(tmp_path, how)
    assert run(tmp_path, tmp_path / "o", "torch-dequant") == 2
    assert needle in one_error_line(capsys)
    assert not (tmp_path / "o" / "manifest.json").exists()


def test_progress_lines_are_whole_lines_on_stderr_and_quiet_leaves_them_out(opsdir, tmp_path,
                                                                           capsys):
    d, _ = opsdir
    assert run(d, tmp_path / "o", "torch-dequant") == 0
    err = capsys.readouterr().err
    lines = err.splitlines()
    assert err.endswith("\n") and lines, err
    assert all(l.startswith("a4w4check.external: [") and " s elapsed, ETA " in l for l in lines)
    assert lines[-1].startswith(f"a4w4check.external: [{len(CASES)}/{len(CASES)}] "), lines
    # stderr is no terminal here (a log, CI): one line per case, in order
    assert [l.split("] ")[0] for l in lines] == \
        [f"a4w4check.external: [{i}/{len(CASES)}" for i in range(1, len(CASES) + 1)], lines
    assert run(d, tmp_path / "q", "torch-dequant", "--quiet") == 0
    assert capsys.readouterr().err == ""


def test_out_the_ops_directory_itself_is_refused_and_nothing_is_overwritten(tmp_path, capsys):
    write_operand_dir(tmp_path, CASES[:2], np.random.default_rng(3))
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    assert run(tmp_path, tmp_path / "." , "torch-dequant") == 2
    assert "is the operand directory --ops" in one_error_line(capsys)
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


def child(args, **env):
    cmd = [sys.executable, "-m", "a4w4check.external", *args]
    return subprocess.run(cmd, capture_output=True, text=True, env=subprocess_env(**env),
                          timeout=120)


@pytest.mark.parametrize("kernel,package", [("aiter-asm", "aiter"), ("aiter-triton", "aiter"),
                                            ("triton-dot-scaled", "triton"),
                                            ("no_such_mod_x:f", "no_such_mod_x")])
def test_a_missing_package_exits_3_with_one_line(opsdir, tmp_path, kernel, package):
    if package != "no_such_mod_x":
        probe = subprocess.run([sys.executable, "-c", f"import {package}"],
                               env=subprocess_env(), capture_output=True)
        if probe.returncode == 0:
            pytest.skip(f"{package} is importable here")
    r = child(["--ops", str(opsdir[0]), "--out", str(tmp_path), "--kernel", kernel])
    assert r.returncode == 3, r.stderr
    assert r.stderr == (f"a4w4check.external: kernel {kernel} needs the Python package "
                        f"'{package}' (not importable: No module named '{package}')\n")
    assert os.listdir(tmp_path) == []


def test_the_module_runs_as_a_program(opsdir, tmp_path):
    r = child(["--ops", str(opsdir[0]), "--out", str(tmp_path), "--kernel", "torch-dequant"])
    assert r.returncode == 0, r.stderr
    assert json.loads((tmp_path / "manifest.json").read_text())["failed"] == {}


def test_a_tree_contract_or_a_discovered_file_is_passed_through(opsdir, tmp_path):
    d, _ = opsdir
    found = tmp_path / "found.txt"
    # as discover writes it: its comment line first (left out of contract.txt)
    found.write_text("# discovered by a4w4check discover at 64x64x2048\n"
                     "tree(fuse=4,prec=27,round=rz)\n")
    for c, want in (("tree(order=desc)", "tree(order=desc)"),
                    (str(found), "tree(fuse=4,prec=27,round=rz)")):
        out = tmp_path / want.replace("(", "_").replace(")", "_")
        assert run(d, out, "torch-dequant", "--contract", c) == 0
        assert (out / "contract.txt").read_text() == want + "\n"


def test_the_lane_tile_align_and_fused_leaf_keys_are_contract_forms():
    from a4w4check import contract
    for text in ("tree(lanes=2)", "tree(lanes=8,lanecomb=pairwise)", "tree(lanes=4,chunk=256)",
                 "tree(tile=256)", "tree(leaf=64)", "tree(leaf=128,lround=rz)",
                 "tree(split=3,align=64)"):
        assert contract.check(text), text
        assert contract.resolve(text) == text
    assert not contract.check("tree(lanes=2 )")


def test_atomic_is_a_contract_form_up_to_six_splits():
    """contracts §4.1 "atomic(S)": S 1..6 (its S! orders are enumerated); a larger S, a
    leading zero or no S is not the form (the C side refuses it with the cap named)."""
    from a4w4check import contract
    for text in ("atomic(1)", "atomic(4)", "atomic(6)"):
        assert contract.check(text), text
        assert contract.resolve(text) == text
    for text in ("atomic(7)", "atomic(0)", "atomic(04)", "atomic", "atomic(4) "):
        assert not contract.check(text), text


def test_the_general_sum_tree_is_a_contract_form_and_a_file_of_it_resolves(tmp_path):
    """contracts §4.2 "The general form": tree(...,sum=(...)) nests parentheses inside the
    tree; the form check takes it, and a file discover writes (comment line, then the rule
    of its one shape) resolves to its rule."""
    from a4w4check import contract
    for text in ("tree(sum=((0,1),(2,3)))", "tree(acc=bf16,sum=(((0),2),(1,3)))",
                 "tree(prec=0,round=rne,acc=fp32,final=rne,sum=(0))"):
        assert contract.check(text), text
        assert contract.resolve(text) == text
    assert not contract.check("tree(sum=(0, 1))")
    assert not contract.check("tree(sum=[0,1])")
    found = tmp_path / "found.txt"
    found.write_text("# discovered by a4w4check discover\n"
                     "when M==8,N==64,K==128: tree(sum=((0,4),(1,5)))\n")
    assert contract.resolve(str(found)) == "when M==8,N==64,K==128: tree(sum=((0,4),(1,5)))"


def test_the_e8m0_code0_reading_a_kernel_declares_goes_to_the_manifest(opsdir, tmp_path,
                                                                      user_module):
    """contracts §1: torch-dequant reads code 0 as 2^-127 and declares it; --e8m0-code0
    overrides; a user function without a4w4_e8m0_code0 declares none (no field), with it its
    value; a value that is neither reading is bad input."""
    d, _ = opsdir
    manifest = lambda o: json.loads((tmp_path / o / "manifest.json").read_text())  # noqa: E731
    assert run(d, tmp_path / "t", "torch-dequant") == 0
    assert manifest("t")["e8m0_code0"] == "2^-127"
    assert run(d, tmp_path / "o", "torch-dequant", "--e8m0-code0", "2^-126") == 0
    assert manifest("o")["e8m0_code0"] == "2^-126"
    kern = f"{user_module}:gemm"
    assert run(d, tmp_path / "u", kern, "--device", "cpu") == 1  # its one failing case
    assert "e8m0_code0" not in manifest("u")
    fn = sys.modules[user_module].gemm
    fn.a4w4_e8m0_code0 = "2^-126"
    assert run(d, tmp_path / "v", kern, "--device", "cpu") == 1
    assert manifest("v")["e8m0_code0"] == "2^-126"
    fn.a4w4_e8m0_code0 = "2^-125"
    assert run(d, tmp_path / "w", kern, "--device", "cpu") == 2


def test_max_outputs_leaves_the_larger_cases_out_and_names_each(opsdir, tmp_path, capsys):
    d, _ = opsdir
    assert run(d, tmp_path / "o", "torch-dequant", "--max-outputs", "1000", "--quiet") == 0
    cap = capsys.readouterr()
    large = [n for n, M, N, _ in CASES if M * N > 1000]
    assert large == ["wide", "tall"]
    m, ys = outputs(tmp_path / "o")
    assert sorted(m["cases"]) == sorted(n for n, *_ in CASES if n not in large)
    assert not any((tmp_path / "o" / bundle.file_name(n)).exists() for n in large)
    for n, M, N, _ in CASES:
        said = f"--max-outputs 1000: {n} left out ({M * N} outputs)"
        assert (said in cap.err) == (n in large), cap.err
    assert "2 left out (--max-outputs)" in cap.out
    with pytest.raises(SystemExit) as e:
        run(d, tmp_path / "z", "torch-dequant", "--max-outputs", "0")
    assert e.value.code == 2
