#!/usr/bin/env python3
"""make_corpus.py [--cli build/a4w4check] — (re)build the seed corpus of the fuzz targets,
tests/fuzz/corpus/<target>/, from the files in cases/ and tests/data/, and the dictionary
dict/results.dict from the results schema. Run from anywhere. With --cli, also the results
seed of a real run (run-edge.json: `run` of the first cases of cases/edge.csv on cpu-asm and
cpu-fallback, golden bundles included); without it the committed run-* seeds are kept.

The corpus stays small (a few hundred KB): big tables are cut to their first rows and golden
bundles are shrunk to every dimension <= 4 (same tensor names, dtypes, metadata and leading
data bytes, offsets repacked), so libFuzzer's default input size limit stays a few KB.
Files named regress-* are regression inputs (crashes found and fixed): kept as they are.
Capture seeds use operands whose every output is exact and known (E2M1 code 2 = 1.0, scale
127: y = K), so the accept path is reached without an oracle here."""
import json
import os
import struct
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CORPUS = os.path.join(ROOT, "tests", "fuzz", "corpus")
# bits per element (harness/io/safetensors.h: an F4 shape counts 4-bit elements, two per byte)
DTYPE_BITS = {"U8": 8, "F8_E8M0": 8, "F4": 4, "BF16": 16, "F16": 16, "F32": 32}


def out(target, name, data):
    d = os.path.join(CORPUS, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def clean(target):
    d = os.path.join(CORPUS, target)
    if os.path.isdir(d):
        for n in os.listdir(d):
            if not n.startswith(("regress-", "run-")):
                os.remove(os.path.join(d, n))


def safetensors(entries, meta, pad_to=8):
    """entries: list of (name, dtype, shape, bytes) packed in order."""
    hdr, data, at = {}, b"", 0
    if meta is not None:
        hdr["__metadata__"] = meta
    for name, dtype, shape, raw in entries:
        hdr[name] = {"dtype": dtype, "shape": shape, "data_offsets": [at, at + len(raw)]}
        data += raw
        at += len(raw)
    text = json.dumps(hdr, separators=(",", ":")).encode()
    text += b" " * ((-(8 + len(text))) % pad_to)
    return struct.pack("<Q", len(text)) + text + data


def shrink_bundle(path):
    blob = open(path, "rb").read()
    n = struct.unpack("<Q", blob[:8])[0]
    hdr = json.loads(blob[8:8 + n])
    base = 8 + n
    entries = []
    for name, e in hdr.items():
        if name == "__metadata__":
            continue
        shape = [min(d, 4) for d in e["shape"]]
        if e["dtype"] == "F4" and shape and shape[-1] % 2:
            shape[-1] += 1  # an F4 tensor holds an even element count
        count = 1
        for d in shape:
            count *= d
        nbytes = count * DTYPE_BITS[e["dtype"]] // 8
        begin = base + e["data_offsets"][0]
        entries.append((name, e["dtype"], shape, blob[begin:begin + nbytes]))
    return safetensors(entries, hdr.get("__metadata__"))


def make_safetensors():
    clean("safetensors")
    gdir = os.path.join(ROOT, "cases", "golden")
    for f in sorted(os.listdir(gdir)):
        if f.endswith(".safetensors"):
            out("safetensors", f.replace(".safetensors", ".st"), shrink_bundle(os.path.join(gdir, f)))
    y = bytes(range(16))
    out("safetensors", "outputs_bundle.st", safetensors(
        [("y", "BF16", [2, 4], y)],
        {"format": "a4w4-outputs/1", "case": "golden/g1", "M": "2", "N": "4", "contract": "ordered(1)"}))
    out("safetensors", "scalar_and_empty.st", safetensors(
        [("s", "F32", [], b"\x00\x00\x80\x3f"), ("e", "U8", [0, 3], b""), ("f4", "F4", [2, 4], b"\x12\x34\x56\x78"),
         ("sc", "F8_E8M0", [2, 1], b"\x7f\x80")], None))
    # files the real safetensors library wrote (F4 and F8_E8M0 tensors among them)
    rdir = os.path.join(ROOT, "tests", "data", "st_real")
    for f in sorted(os.listdir(rdir)):
        if f.endswith(".safetensors"):
            out("safetensors", "real_" + f.replace(".safetensors", ".st"), open(os.path.join(rdir, f), "rb").read())
    out("safetensors", "no_tensors.st", safetensors([], {"format": "a4w4-case/1"}))
    out("safetensors", "empty_header.st", struct.pack("<Q", 2) + b"{}")


def head_lines(path, rows, keep_comments=3):
    """The first comment lines, the header and the first rows of a CSV file."""
    lines = open(path, encoding="utf-8").read().splitlines()
    kept, comments, data = [], 0, 0
    header_seen = False
    for line in lines:
        if line.startswith("#") or not line.strip():
            if comments < keep_comments:
                kept.append(line)
                comments += 1
            continue
        if header_seen:
            if data >= rows:
                break
            data += 1
        header_seen = True
        kept.append(line)
    return "\n".join(kept) + "\n"


def make_csvs():
    for t in ("casefile", "tuned", "kernels"):
        clean(t)
    cdir = os.path.join(ROOT, "cases")
    for f in ("premerge.csv", "edge.csv", "selftest.csv", "hazard.csv", "nightly.csv"):
        out("casefile", f, head_lines(os.path.join(cdir, f), 12))
    out("casefile", "report_cases.csv", head_lines(os.path.join(ROOT, "tests", "data", "report_cases.csv"), 12))
    adir = os.path.join(cdir, "aiter")
    tuned = head_lines(os.path.join(adir, "a4w4_blockscale_tuned_gemm.csv"), 24)
    out("tuned", "tuned_head.csv", tuned)
    out("tuned", "dsv3_tuned.csv", head_lines(os.path.join(adir, "dsv3_a4w4_blockscale_tuned_gemm.csv"), 40))
    no_gfx = "\n".join(",".join(line.split(",")[1:]) for line in tuned.splitlines()[:12]) + "\n"
    out("tuned", "tuned_no_gfx.csv", no_gfx)
    out("tuned", "untuned_shapes.csv", head_lines(os.path.join(adir, "a4w4_blockscale_untuned_gemm.csv"), 12))
    out("tuned", "route_shapes.csv", head_lines(os.path.join(cdir, "route_shapes.csv"), 12))
    kern = head_lines(os.path.join(adir, "gfx950_f4gemm_bf16_per1x32Fp4.csv"), 64)
    out("kernels", "gfx950_kernels.csv", kern)
    out("kernels", "kernels_no_co.csv",
        "\n".join(",".join(line.split(",")[:5]) for line in kern.splitlines()[:10]) + "\n")


def schema_words(node, words):
    """Property names and enum / const strings of the results schema."""
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "properties":
                words.update(v.keys())
            if k in ("enum", "required") or (k == "const" and isinstance(v, str)):
                words.update(x for x in (v if isinstance(v, list) else [v]) if isinstance(x, str))
            schema_words(v, words)
    elif isinstance(node, list):
        for v in node:
            schema_words(v, words)


def run_seed(cli):
    """results.json of a small real run, compacted."""
    with tempfile.TemporaryDirectory() as tmp:
        cases = os.path.join(tmp, "cases.csv")
        with open(cases, "w") as f:
            f.write(head_lines(os.path.join(ROOT, "cases", "edge.csv"), 6, keep_comments=0))
        subprocess.run([cli, "run", "--cases", cases, "--backend", "cpu-asm,cpu-fallback",
                        "--out", os.path.join(tmp, "out"), "--quiet"], check=True)
        doc = json.load(open(os.path.join(tmp, "out", "results.json")))
    return json.dumps(doc, separators=(",", ":")) + "\n"


def make_results(cli):
    clean("results")
    if cli:
        for n in os.listdir(os.path.join(CORPUS, "results")):
            if n.startswith("run-"):
                os.remove(os.path.join(CORPUS, "results", n))
        out("results", "run-edge.json", run_seed(cli))
    for f in ("report_small_results.json", "report_compare_base.json", "report_compare_cand.json"):
        out("results", f, open(os.path.join(ROOT, "tests", "data", f), "rb").read())
    words = set()
    schema_words(json.load(open(os.path.join(ROOT, "reports", "schema", "results.schema.json"))), words)
    lines = ["# libFuzzer dictionary: results documents, generated by make_corpus.py from",
             "# reports/schema/results.schema.json (property names, enum and const values)"]
    lines += [json.dumps(json.dumps(w)) for w in sorted(words)]
    with open(os.path.join(ROOT, "tests", "fuzz", "dict", "results.dict"), "w") as f:
        f.write("\n".join(lines) + "\n")


def plugin_seed(flags, init, name, contract, msg="", abi=1, asm=0):
    head = bytes([flags]) + struct.pack("<I", abi) + struct.pack("<i", asm) + bytes([init])
    return head + name.encode() + b"\0" + contract.encode() + b"\0" + msg.encode()


def make_plugin():
    clean("plugin_info")
    contracts = ["ordered(1)", "ordered(8)", "ordered(65536)", "exact", "bounded", "bounded(4)"]
    for i, c in enumerate(contracts):
        out("plugin_info", "ok_%d" % i, plugin_seed(16 | 32, 8, "aiter-gemm_a4w4", c))
    out("plugin_info", "asm_layout", plugin_seed(0, 32, "asm", "ordered(2)"))
    out("plugin_info", "init_fails", plugin_seed(16, 1 | 4, "x", "ordered(1)", "no device"))
    out("plugin_info", "abi_2", plugin_seed(64, 0, "x", "ordered(1)", abi=2))
    out("plugin_info", "bad_contract", plugin_seed(0, 0, "x", "ordered(65537)"))
    out("plugin_info", "query_null", plugin_seed(1, 0, "", ""))


def capture(op, dims, entries, extra=None):
    """A capture bundle (a4w4-capture/1) image: entries (name, dtype, shape, bytes) in order."""
    M, N, K = dims
    meta = {"format": "a4w4-capture/1", "op": op, "M": str(M), "N": str(N), "K": str(K),
            "call_site": "model.py:1", "layer": "l0", "contract": "exact", "layouts": ""}
    meta.update(extra or {})
    return safetensors(entries, meta)


def gemm_entries(M, N, K, y_bits, a=b"\x22", w=b"\x22", w_name="w_fp4"):
    """Operands of E2M1 code 2 (1.0) and scale 127 (2^0): every output is K exactly."""
    return [("a_fp4", "U8", [M, K // 2], a * (M * K // 2)), ("a_scale", "U8", [M, K // 32], b"\x7f" * (M * K // 32)),
            (w_name, "U8", [N, K // 2], w * (N * K // 2)), ("w_scale", "U8", [N, K // 32], b"\x7f" * (N * K // 32)),
            ("y", "BF16", [M, N], struct.pack("<H", y_bits) * (M * N))]


def make_capture():
    clean("capture")
    a4w4 = {"bpreshuffle": "False", "alpha": "1.0", "beta": "0.0"}
    y64 = 0x4280  # 64.0: K = 64 terms of 1.0 x 1.0
    out("capture", "gemm_a4w4.st", capture("aiter.gemm_a4w4", (2, 16, 64), gemm_entries(2, 16, 64, y64), a4w4))
    bad = gemm_entries(2, 16, 64, y64)
    bad[4] = ("y", "BF16", [2, 16], struct.pack("<H", y64) * 31 + struct.pack("<H", y64 + 1))
    out("capture", "gemm_a4w4_wrong_y.st", capture("aiter.gemm_a4w4", (2, 16, 64), bad, a4w4))
    out("capture", "gemm_a4w4_bias.st", capture("aiter.gemm_a4w4", (2, 16, 64), gemm_entries(2, 16, 64, 0x7FC0)
                                                + [("bias", "F32", [2, 16], b"\0" * 128)], a4w4))
    out("capture", "gemm_a4w4_alpha.st", capture("aiter.gemm_a4w4", (2, 16, 64), gemm_entries(2, 16, 64, y64),
                                                 dict(a4w4, alpha="0.5", beta="None")))
    out("capture", "gemm_a4w4_preshuffled.st", capture(
        "aiter.gemm_a4w4", (2, 16, 64), gemm_entries(2, 16, 64, y64, w_name="w_fp4_shuffled"),
        dict(a4w4, bpreshuffle="True")))
    shuffled = gemm_entries(2, 16, 64, y64)
    shuffled[1] = ("a_scale_shuffled", "U8", [256, 8], b"\x7f" * 2048)
    out("capture", "gemm_a4w4_act_shuffled.st", capture("aiter.gemm_a4w4", (2, 16, 64), shuffled, a4w4))
    out("capture", "gemm_afp4wfp4.st", capture("aiter.gemm_afp4wfp4", (2, 16, 64), gemm_entries(2, 16, 64, y64),
                                               {"dtype": "torch.bfloat16", "skip_reduce": "False",
                                                "contract": "ordered(1)"}))
    # y at an odd offset of the data section: a_scale [3, 1] (3 bytes) first; 32 terms -> 32.0
    e = gemm_entries(3, 16, 32, 0x4200)
    out("capture", "gemm_odd_offset.st", capture("aiter.gemm_a4w4", (3, 16, 32), [e[1], e[4], e[0], e[2], e[3]], a4w4))
    # the quantizer: x = 1.0 -> amax 1, t = 1/6, s = 125 (round_up), q = 4.0 = code 6
    q = [("a_scale", "U8", [2, 1], b"\x7d" * 2), ("x", "BF16", [2, 32], struct.pack("<H", 0x3F80) * 64),
         ("a_fp4", "U8", [2, 16], b"\x66" * 32)]
    out("capture", "quant_odd_offset.st", capture("aiter.per_1x32_f4_quant_hip", (2, 0, 32), q,
                                                  {"shuffle": "False", "contract": ""}))
    out("capture", "op_control_bytes.st", capture("aiter.gemm_a4w4\n\x1b[2J", (2, 16, 64), gemm_entries(2, 16, 64, y64)))


def bundle_dir_seed(manifest, contract, files):
    """A bundle_dir input: manifest text, contract text, files [(name, content)]."""
    parts = [manifest, contract] + ["%s\n%s" % f for f in files]
    return "\n--8<--\n".join(parts)


def make_bundle_dir():
    clean("bundle_dir")
    m = {"format": "a4w4-outputs/1", "kernel": "k", "contract": "ordered(1)", "matrix_hash": "00000000000000aa",
         "tool_version": "0.4.0", "cases": ["c1", "golden/g1"], "failed": {"c2": "RuntimeError: boom"}}
    good = [("c1.safetensors", "st:2,4;name=c1;kernel=k;seed=0;contract=ordered(1)"),
            ("golden__g1.safetensors", "st:2,4;name=golden/g1;matrix_hash=00000000000000aa")]
    js = json.dumps(m)
    out("bundle_dir", "manifest.txt", bundle_dir_seed(js, "ordered(1)\n", good))
    out("bundle_dir", "stale.txt", bundle_dir_seed(js, "", good + [("c2.safetensors", "st:1,8;name=c2")]))
    out("bundle_dir", "no_manifest.txt", bundle_dir_seed("", "bounded\n", good + [("old.safetensors", "st:1,1")]))
    out("bundle_dir", "raw_file.txt", bundle_dir_seed("", "", [("c2.safetensors", "garbage")]))
    out("bundle_dir", "contract_conflict.txt", bundle_dir_seed(js, "exact\n", good))
    out("bundle_dir", "tool_version.txt", bundle_dir_seed(json.dumps(dict(m, tool_version="0.0.1")), "", good))
    out("bundle_dir", "unlisted.txt", bundle_dir_seed(json.dumps(dict(m, cases=["c1"], failed={})), "", good[:1]))
    out("bundle_dir", "other_kernel.txt", bundle_dir_seed(json.dumps(dict(m, kernel="other")), "", good))
    out("bundle_dir", "other_matrix.txt", bundle_dir_seed(json.dumps(dict(m, matrix_hash="00000000000000bb")), "", good))


def main():
    cli = None
    if len(sys.argv) == 3 and sys.argv[1] == "--cli":
        cli = os.path.abspath(sys.argv[2])
    elif len(sys.argv) != 1:
        print(__doc__.splitlines()[0], file=sys.stderr)
        return 2
    make_safetensors()
    make_csvs()
    make_results(cli)
    make_plugin()
    make_capture()
    make_bundle_dir()
    total = sum(os.path.getsize(os.path.join(dp, f)) for dp, _, fs in os.walk(CORPUS) for f in fs)
    print("corpus: %d bytes under %s" % (total, os.path.relpath(CORPUS, ROOT)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
