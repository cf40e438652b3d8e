"""The in-process judge (a4w4check.inproc over liba4w4check, docs/bridge.md): verdicts, the
AssertionError's message and saved bundle, the library's refusals, the case sets, and the
same verdicts as the CLI's file path (export -> external -> run --backend bundle:) case by
case for three kernels with planted bugs (planted.py). The library is found at A4W4CHECK_LIB
(CTest sets it to the build's) or in the repository's build/."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import a4w4check
from a4w4check import casesets, inproc
from conftest import PYROOT, subprocess_env
from helpers import exact_y

REPO = os.path.dirname(PYROOT)
EXAMPLES = os.path.join(REPO, "examples", "python")
sys.path.insert(0, EXAMPLES)
import my_kernel  # noqa: E402
import planted  # noqa: E402

CLI = os.environ.get("A4W4CHECK_CLI")
SKIP = os.environ.get("A4W4CHECK_INPROC_SKIP")
pytestmark = pytest.mark.skipif(bool(SKIP), reason=SKIP or "")
needs_cli = pytest.mark.skipif(not CLI, reason="A4W4CHECK_CLI (path of the a4w4check binary) "
                               "is not set")

# Small cases over every regime; K 288 and 320 have a tail block (K % 256 != 0), N 32 the
# stale row: each planted bug shows on some and not on others.
SMALL = """name,M,N,K,regime,seed,tags
p_exact_tail,3,32,288,exact,7,t
p_exact_even,4,96,256,exact,8,t
p_normal_tail,5,80,320,normal,9,t
p_normal_row,3,48,512,normal,10,t
p_wide,2,128,512,wide,11,t
p_special,7,32,256,special,12,t
p_code0,4,96,256,code0,13,t
p_tiny,3,128,64,tiny,14,t
p_range,6,96,512,range,15,t
"""


def test_exports_and_version():
    assert callable(a4w4check.judge) and callable(a4w4check.assert_bitexact)
    assert inproc.library().a4w4check_tool_version().decode() == a4w4check.__version__


def test_example_kernel_passes_every_regime(tmp_path):
    f = tmp_path / "c.csv"
    f.write_text(SMALL)
    for case in casesets.read_case_file(str(f)):
        v = a4w4check.assert_bitexact(my_kernel.gemm, case, save_dir=str(tmp_path / "fail"))
        assert v.verdict == "pass" and v.checked == case.M * case.N, v.line
        assert v.judged_bit_exact + v.judged_in_bound + v.not_judged == case.M * case.N
    assert not (tmp_path / "fail").exists()


def test_judge_by_shape():
    v = a4w4check.judge(my_kernel.gemm, 16, 64, 512, regime="normal", seed=3)
    assert v.passed and v.contract == "ordered(1)" and v.case.name == "m16_n64_k512_normal"
    v = a4w4check.judge(my_kernel.gemm, 16, 64, 512, contract="bounded(2)")
    assert v.passed and "within a bound" in v.departures


def _first_difference(case, kernel):
    """(m, n, got, expected) of the first output, in row-major order, where kernel differs
    from the example kernel (exact on the exact regime: contracts §4.1) on case's operands."""
    ops = inproc.Operands(case)
    try:
        got = kernel(**ops.tensors)
        want = my_kernel.gemm(**ops.tensors)
    finally:
        ops.close()
    m, n = (int(i) for i in np.argwhere(got != want)[0])
    return m, n, int(got[m, n]), int(want[m, n])


@needs_cli
def test_failure_message_names_mismatch_signature_and_rerun(tmp_path):
    """The three parts a failing test must say, each held by itself: the first mismatch
    (m, n and both bits, found here by comparing with the example kernel), the signature
    naming the planted bug (the dropped last K block of K = 288), and the rerun command, whose
    saved file fails again through the CLI."""
    case = a4w4check.Case("k288", 3, 32, 288, "exact", 7)
    with pytest.raises(AssertionError) as e:
        a4w4check.assert_bitexact(planted.gemm, case, save_dir=str(tmp_path))
    msg = str(e.value)
    lines = msg.splitlines()
    m, n, got, want = _first_difference(case, planted.gemm)
    assert lines[0].startswith("FAIL k288: ordered(1), 96 checked, first mismatch y (")
    assert lines[1] == f"  y ({m}, {n}): got 0x{got:04x} expected 0x{want:04x}", msg
    sig = [line for line in lines if line.startswith("  signature: ")]
    assert len(sig) == 1 and "one K block missing: block 8 (K elements 256..287" in sig[0], msg
    saved = os.path.join(str(tmp_path), "k288@planted_gemm.safetensors")
    assert f"  rerun: a4w4check verify {saved}" in lines, msg
    r = subprocess.run([CLI, "verify", saved], capture_output=True, text=True)
    assert r.returncode == 1, r.stdout + r.stderr  # the saved case fails again from the file
    assert f"first mismatch at ({m}, {n}): got 0x{got:04x} expected 0x{want:04x}" in r.stdout
    assert "k288,3,32,288,exact,7," in msg  # the case-file line for run --cases and shrink


def test_not_a_pass_without_judging(tmp_path):
    """code0 outputs under one reading with no reading declared: ambiguous, which raises."""
    def undeclared(**ops):
        return my_kernel.gemm(**ops)
    undeclared.a4w4_contract = "ordered(1)"
    case = a4w4check.Case("c0", 4, 32, 256, "code0", 16)
    v = a4w4check.judge_case(undeclared, case)
    assert v.verdict == "ambiguous"
    with pytest.raises(AssertionError, match="^AMBIGUOUS c0"):
        a4w4check.assert_bitexact(undeclared, case, save_dir=str(tmp_path))
    assert a4w4check.judge_case(my_kernel.gemm, case).verdict == "pass"  # declares 2^-127


@pytest.mark.parametrize("case,why", [
    (("bad", 1, 32, 33, "exact", 1), "K a positive multiple of 32"),
    (("bad", 1, 32, 64, "sparse", 1), "regime 'sparse'"),
])
def test_library_refuses_bad_cases(case, why):
    with pytest.raises(a4w4check.JudgeError, match=why) as e:
        a4w4check.judge_case(my_kernel.gemm, a4w4check.Case(*case))
    assert "\n" not in str(e.value)


def test_bad_contract_and_output_shape():
    with pytest.raises(a4w4check.JudgeError, match="ordered\\(0\\)"):
        a4w4check.judge(my_kernel.gemm, 2, 32, 64, contract="ordered(0)")
    with pytest.raises(ValueError, match="shape"):
        a4w4check.judge(lambda **ops: np.zeros((1, 32), np.uint16), 2, 32, 64,
                        contract="exact")


def test_a_kernel_writing_into_an_operand_fails(tmp_path):
    # right outputs, but a_fp4 (numpy, the kernel's own copy) zeroed after computing them:
    # fail, the note naming the operand, as a plugin's write into an operand fails its case
    # (before: PASS)
    def zeroes_a(a_fp4, a_scale, w_fp4, w_scale, **rest):
        y = my_kernel.gemm(a_fp4, a_scale, w_fp4, w_scale)
        a_fp4[...] = 0
        return y
    zeroes_a.a4w4_contract = "ordered(1)"
    v = a4w4check.judge(zeroes_a, 4, 32, 256)
    assert v.verdict == "fail" and not v.passed, v.line
    assert v.note.startswith("the kernel wrote into its input a_fp4"), v.note
    assert v.line.startswith("FAIL m4_n32_k256_normal: the kernel wrote into its input a_fp4")
    with pytest.raises(AssertionError, match="wrote into its input a_fp4"):
        a4w4check.assert_bitexact(zeroes_a, (4, 32, 256), save_dir=str(tmp_path / "f"))
    assert a4w4check.judge(my_kernel.gemm, 4, 32, 256).passed  # reading them is no write


def test_missing_library_is_one_line():
    code = "import a4w4check; a4w4check.judge(lambda **o: None, 1, 32, 32)"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env=subprocess_env(A4W4CHECK_LIB="/nonexistent/liba4w4check.so"))
    assert r.returncode != 0
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("a4w4check.inproc.LibraryNotFound: a4w4check: liba4w4check.so not "
                           "found (looked at /nonexistent/liba4w4check.so): set A4W4CHECK_LIB")


def test_case_sets():
    lines = open(os.path.join(REPO, "cases", "premerge.csv")).read().splitlines()
    premerge = casesets.load("premerge")
    assert len(premerge) == len([t for t in lines if t and not t.startswith("#")]) - 1
    assert len({c.name for c in premerge}) == len(premerge)
    op = casesets.load("aiter-op-test")
    assert len(op) == 67 and op[0].name == "aiter_m256_n2048_k8192"  # 69 listed, 2 repeated
    assert (op[-1].M, op[-1].N, op[-1].K) == (3072, 8192, 28672)
    assert len(casesets.load("dsv3-layers")) == 30
    mine = casesets.load([(1, 4096, 4096), (1, 4096, 4096), (8, 11008, 4096)])
    assert [c.name for c in mine] == ["layer_m1_n4096_k4096", "layer_m8_n11008_k4096"]
    with pytest.raises(ValueError, match="one of premerge"):
        casesets.load("premerg")


PLANTED = ("gemm", "gemm_code0_126", "gemm_ftz")


def _record(v):
    """The fields a verdict shares with a results.json entry, as results.json spells them."""
    return {"verdict": v.verdict, "checked_outputs": v.checked, "mismatches": v.mismatches,
            "unwritten": v.unwritten, "max_ulp": v.max_ulp, "judged_bit_exact":
            v.judged_bit_exact, "judged_in_bound": v.judged_in_bound, "not_judged": v.not_judged,
            "first": [(r, c, f"0x{g:04x}", f"0x{e:04x}") for r, c, g, e in v.first],
            "signature": v.signature, "contract": v.contract}


def _cli_verdicts(tmp_path, csv_path):
    """{kernel: {case: record}} of each planted kernel through the file path: one export,
    one external per kernel, one run over every kernel's bundles."""
    env = subprocess_env([os.path.dirname(os.path.abspath(__file__))])
    run = dict(capture_output=True, text=True, cwd=str(tmp_path), env=env)
    r = subprocess.run([CLI, "export", "--cases", csv_path, "--no-golden", "--quiet",
                        "--out", "ops"], **run)
    assert r.returncode == 0, r.stderr
    for k in PLANTED:
        r = subprocess.run([sys.executable, "-m", "a4w4check.external", "--ops", "ops", "--out",
                            k, "--kernel", f"planted:{k}", "--device", "cpu", "--quiet"], **run)
        assert r.returncode == 0, r.stderr
    r = subprocess.run([CLI, "run", "--cases", csv_path, "--no-golden", "--quiet", "--full",
                        "--backend", ",".join(f"bundle:{k}" for k in PLANTED), "--out", "run"],
                       **run)
    assert r.returncode in (0, 1), r.stderr
    doc = json.loads((tmp_path / "run" / "results.json").read_text())
    out = {k: {} for k in PLANTED}
    for e in (e for e in doc["cases"] if e["backend"].startswith("bundle:")):
        k = e["backend"][len("bundle:"):]
        out[k][e["name"]] = {
            "verdict": e["verdict"], "checked_outputs": e["checked_outputs"],
            "mismatches": e["mismatches"], "unwritten": e["unwritten"],
            "max_ulp": e["max_ulp"], "judged_bit_exact": e["judged_bit_exact"],
            "judged_in_bound": e["judged_in_bound"], "not_judged": e["not_judged"],
            "first": [(f["row"], f["col"], f["got"], f["expected"])
                      for f in e.get("first_mismatches", [])],
            "signature": e.get("signature", ""), "contract": e["contract"]}
    return out


@needs_cli
def test_same_verdicts_as_the_cli_case_by_case(tmp_path):
    """Three planted kernels (planted.py: a dropped K tail and a stale row, code 0 read as
    2^-126, subnormal outputs flushed to zero) over nine small cases of every regime, both
    ways: each case's verdict, outputs checked, mismatches, ULP, judged split, first
    mismatches and signature are the same in-process as through export -> external -> run
    --backend bundle:."""
    f = tmp_path / "c.csv"
    f.write_text(SMALL)
    cli = _cli_verdicts(tmp_path, str(f))
    cases = casesets.read_case_file(str(f))
    fails = {}
    for k in PLANTED:
        assert sorted(cli[k]) == sorted(c.name for c in cases), k
        mine = {c.name: _record(a4w4check.judge_case(getattr(planted, k), c)) for c in cases}
        for name in mine:
            assert mine[name] == cli[k][name], (k, name)
        fails[k] = {n for n, r in cli[k].items() if r["verdict"] == "fail"}
        assert fails[k] and fails[k] != set(cli[k]), \
            f"{k}: the planted bug must fail some cases and pass others"
    assert len({frozenset(v) for v in fails.values()}) == len(PLANTED), fails


def test_builtin_kernel_by_name_gets_torch_tensors():
    """A built-in kernel by name (torch-dequant: torch tensors on the CPU, declared
    bounded(1) and 2^-127) is judged by its own declarations."""
    pytest.importorskip("torch")
    v = a4w4check.judge("torch-dequant", 4, 64, 256, device="cpu")
    assert v.passed and v.contract == "bounded(1)" and v.judged_in_bound == 256, v.line
    assert "within a bound" in v.departures


def test_torch_kernel_in_process(tmp_path):
    """torch_gemm (the example kernel in torch; test_gpu.py runs it on CUDA tensors) on a CPU
    callable's numpy inputs passes every regime; its planted twin fails exactly the cases whose
    K has a tail past a multiple of 256, each naming the dropped last block."""
    pytest.importorskip("torch")
    import torch_gemm
    f = tmp_path / "c.csv"
    f.write_text(SMALL)
    for case in casesets.read_case_file(str(f)):
        v = a4w4check.assert_bitexact(torch_gemm.gemm, case, save_dir=str(tmp_path / "fail"))
        assert v.checked == case.M * case.N, v.line
        w = a4w4check.judge_case(torch_gemm.gemm_planted, case)
        last = case.K // 32 - 1
        if case.K % 256:
            assert w.verdict == "fail" and w.signature.startswith(
                f"one K block missing: block {last} "), (case.name, w.line, w.signature)
        else:
            assert w.passed, (case.name, w.line)


def test_readme_file_is_the_quick_set_and_passes_its_stand_ins(tmp_path):
    """README's four-line file (examples/python/test_my_gemm.py) as a user runs it, no
    A4W4CHECK_SET: pytest collects one test per premerge-quick case, by name, none of the
    large premerge cases; the example kernel passes three of them in-process on every output
    (a small one verbatim from premerge, two bucket stand-ins up to M = 8193)."""
    env = subprocess_env([EXAMPLES], PYTHONDONTWRITEBYTECODE="1")
    env.pop("A4W4CHECK_SET", None)
    r = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p",
                        "no:cacheprovider", os.path.join(EXAMPLES, "test_my_gemm.py")],
                       capture_output=True, text=True, env=env, cwd=str(tmp_path))
    assert r.returncode == 0, r.stdout + r.stderr
    ids = [line.split("[", 1)[1][:-1] for line in r.stdout.splitlines() if "::" in line]
    quick = casesets.load("premerge-quick")
    assert ids == [c.name for c in quick] and len(ids) == 207
    assert not set(ids) & {c.name for c in casesets.load("premerge") if c.M * c.N > 1 << 22}
    by_name = {c.name: c for c in quick}
    for name in ("m1_n192_k1024", "qb_m1025_n32_k256", "qb_m8193_n32_k768"):
        case = by_name[name]
        v = a4w4check.assert_bitexact(my_kernel.gemm, case, save_dir=str(tmp_path / "fail"))
        assert v.checked == case.M * case.N, v.line


def test_premerge_quick_keeps_the_small_cases_and_replaces_each_large_one():
    """premerge-quick (the CLI's cases/premerge-quick.csv): every pre-merge case of at most
    2^22 outputs verbatim, and for each larger one exactly one smaller case tagged for:<it>
    with its M, K and regime (the padded-M bucket), named anew (never the large case's name)."""
    def rows(name):
        return [r.split(",") for r in open(os.path.join(REPO, "cases", name)).read()
                .splitlines() if r and not r.startswith("#")][1:]
    full, quick = rows("premerge.csv"), rows("premerge-quick.csv")
    small = [r for r in full if int(r[1]) * int(r[2]) <= 1 << 22]
    large = {r[0]: r for r in full if int(r[1]) * int(r[2]) > 1 << 22}
    assert len(small) == 146 and len(large) == 61
    assert quick[:len(small)] == small
    stand_ins = quick[len(small):]
    fors = [t[4:] for r in stand_ins for t in r[6].split(";") if t.startswith("for:")]
    assert sorted(fors) == sorted(large) and len(stand_ins) == len(large)
    for r in stand_ins:
        orig = large[[t[4:] for t in r[6].split(";") if t.startswith("for:")][0]]
        assert r[0].startswith(("qb_", "qg_")) and r[0] not in large
        assert int(r[1]) * int(r[2]) < int(orig[1]) * int(orig[2])
        assert (r[1], r[4]) == (orig[1], orig[4]), (r, orig)  # the bucket's M, the regime
    assert sum(int(r[1]) * int(r[2]) for r in quick) < 200_000_000
    params = casesets.cases("premerge-quick").mark.args[1]
    assert [c.name for c in params] == [r[0] for r in quick]
    assert [(c.M, c.N, c.K, c.seed) for c in params[:3]] == \
        [(int(r[1]), int(r[2]), int(r[3]), int(r[5])) for r in quick[:3]]


def test_cases_parametrises_the_selected_cases(monkeypatch):
    monkeypatch.delenv("A4W4CHECK_SET", raising=False)
    mark = casesets.cases("edge", select=lambda c: c.M * c.N <= 64).mark
    chosen = mark.args[1]
    assert mark.args[0] == "case" and chosen and all(c.M * c.N <= 64 for c in chosen)
    assert mark.kwargs["ids"] == [c.name for c in chosen]
    assert len(chosen) < len(casesets.load("edge"))
    monkeypatch.setenv("A4W4CHECK_SET", "dsv3-layers")
    assert len(casesets.cases("premerge").mark.args[1]) == 30


def test_cases_over_no_case_and_shapes_not_integers_are_refused(monkeypatch, tmp_path):
    # before: cases([]) and a select= keeping none made a test pytest skips (a green run that
    # judged nothing); judge(4.5, ...) judged M 4, judge(4, 32, -64) named K 2^64 - 64
    monkeypatch.delenv("A4W4CHECK_SET", raising=False)
    with pytest.raises(ValueError, match=r"^a4w4check.cases: \[\] selects no case$"):
        casesets.cases([])
    with pytest.raises(ValueError, match=r"'edge' selects no case \(select= kept none\)"):
        casesets.cases("edge", select=lambda c: False)
    empty = tmp_path / "none.csv"
    empty.write_text("name,M,N,K,regime,seed,tags\n# only a comment\n")
    monkeypatch.setenv("A4W4CHECK_SET", str(empty))
    with pytest.raises(ValueError, match="selects no case"):
        casesets.cases("edge")
    monkeypatch.delenv("A4W4CHECK_SET")
    with pytest.raises(ValueError, match=r"shape \(4\.5, 32, 64\): M, N and K must be integers"):
        casesets.cases([(4.5, 32, 64)])
    with pytest.raises(a4w4check.JudgeError, match="M, N and K must be integers"):
        a4w4check.judge(my_kernel.gemm, 4.5, 32, 64)
    with pytest.raises(a4w4check.JudgeError, match="K=-64: M, N and K must be integers >= 1"):
        a4w4check.judge(my_kernel.gemm, 4, 32, -64)
    with pytest.raises(a4w4check.JudgeError, match="M=0 N=32 K=64: M, N and K must be"):
        a4w4check.judge_case(my_kernel.gemm, a4w4check.Case("z", 0, 32, 64))


def _zero_off_exact(a_fp4, a_scale, w_fp4, w_scale, **rest):
    """Declares nothing (judged as exact); the example kernel's ordered(1), but +0 wherever
    that differs from the exact sum (outputs outside the exact regime necessarily)."""
    y = my_kernel.gemm(a_fp4=a_fp4, a_scale=a_scale, w_fp4=w_fp4, w_scale=w_scale)
    ex = exact_y({"a_fp4": a_fp4, "a_scale": a_scale, "w_fp4": w_fp4, "w_scale": w_scale})
    y[ex != y] = 0
    return y


def test_undeclared_kernel_never_passes_outputs_not_judged(tmp_path):
    """contracts §4.1: an undeclared kernel is judged inside the exact regime only; wrong
    outside it, it passed on a case with outputs on both sides (the case of test_run_gemm.c's
    exact_never_passes_outputs_it_did_not_judge). Now the case is skip (not judged) and
    assert_bitexact raises; held to ordered(1) it fails."""
    case = a4w4check.Case("rt", 32, 64, 256, "wide", 17)
    v = a4w4check.judge_case(_zero_off_exact, case)
    assert v.verdict == "skip" and v.mismatches == 0, v.line
    assert v.judged_bit_exact > 0 and v.not_judged > 0, v.line
    assert "so the entry is not judged" in v.note, v.note
    with pytest.raises(AssertionError):
        a4w4check.assert_bitexact(_zero_off_exact, case, save_dir=str(tmp_path))
    v = a4w4check.judge_case(_zero_off_exact, case, contract="ordered(1)")
    assert v.verdict == "fail" and v.mismatches > 0, v.line
