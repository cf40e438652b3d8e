# gt_common.sh — shared by the ground-truth kernel tests (tests/cli/gt_*.sh): the kernels of
# tests/plugins/gt/ (one plugin per known accumulation order, true and mis-declared builds),
# the pre-merge cases they are run on, and what their results must say. Source it after
# setting CLI, SRC and WORK.
GT_KERNELS="desc pairwise fuse2 fuse4 splits leaf16 rz tc27 il2 il8 rr4 tiles256 f64 f128 f64rz f128rz butterfly mbucket split3a64 splitk"
# the kernels whose trees discover reveals from one requested shape (tests/cli/discover_gt.sh):
# tiles256's tile=256, splits' fixed boundaries and split3a64's split=3,align=64 come out of
# the rule of K (three K probed, contracts §4.4), butterfly's lanecomb=xor out of FPRev's pair probes. gt-mbucket (split-K by
# M's bucket) is discovered at its default shapes GT_MBUCKET_SHAPES: Mpad 16 and 208 probed,
# the 11 buckets between checked for the rules of M (contracts §4.4), which locate its change
# between Mpad 32 and 48 (tests/cli/discover_rules.sh)
GT_DISCOVERABLE="desc pairwise fuse2 fuse4 splits leaf16 rz tc27 il2 il8 rr4 tiles256 f64 f128 f64rz f128rz butterfly split3a64"
GT_MBUCKET_SHAPES=8x16x1152,200x16x1152
# gt-splitk (a split count that changes with K) is discovered at GT_SPLITK_SHAPES: one family
# probed at K 1024, 3072 and 544 (counts 1, 4, 1), its count bisected between (contracts §4.4,
# tests/cli/discover_splitk.sh)
GT_SPLITK_SHAPES=32x8x1024,32x8x3072
GT_PLUGINS=$(dirname "$CLI")/plugins

# gt_backends SUFFIX: "plugin:.../liba4w4_gt_<k>SUFFIX_plugin.so,..." for every kernel
# (SUFFIX "" the true declaration, "_mis" the ordered(1) one).
gt_backends() {
  local list="" k lib
  for k in $GT_KERNELS; do
    lib="$GT_PLUGINS/liba4w4_gt_${k}$1_plugin.so"
    [ -f "$lib" ] || { echo "gt: no $lib (build the tests/plugins targets)" >&2; return 1; }
    list="$list,plugin:$lib"
  done
  echo "${list#,}"
}

# gt_contract_args: the `run --contract` arguments the true declarations need. gt-splits
# declares tree(split=160/1056), which holds for K > 1056 only (the text form wants every
# split boundary below K); tests/plugins/gt/gt_splits.contract gives its rule for every K.
gt_contract_args() {
  echo "--contract plugin:$GT_PLUGINS/liba4w4_gt_splits_plugin.so=$SRC/tests/plugins/gt/gt_splits.contract"
}

# gt_cases FILE NAME...: a case file holding the named cases of cases/premerge.csv, with their
# pre-merge seeds (the operands are a function of name and seed).
gt_cases() {
  local out=$1 n; shift
  echo "name,M,N,K,regime,seed,tags" > "$out"
  for n in "$@"; do
    grep "^$n," "$SRC/cases/premerge.csv" >> "$out" || { echo "gt: no case $n in premerge.csv" >&2; return 1; }
  done
}

# gt_tree_known: 0 when this CLI judges a plugin declaring a tree contract; 77 (a skip, with
# one line saying why) when the CLI refuses the declaration and the contract forms it lists as
# known name no tree form (a CLI built before tree contracts, docs/contracts.md §4.2); 1
# otherwise: a CLI that knows tree forms and still refuses fails, never skips.
gt_tree_known() {
  local probe=$WORK/tree-probe rc line
  mkdir -p "$probe"
  printf 'name,M,N,K,regime,seed,tags\nprobe,1,16,64,exact,1,probe\n' > "$probe/c.csv"
  set +e
  "$CLI" run --cases "$probe/c.csv" --no-golden --quiet --out "$probe/out" \
    --backend "plugin:$GT_PLUGINS/liba4w4_gt_desc_plugin.so" > "$probe/log" 2>&1
  rc=$?
  set -e
  [ $rc -eq 0 ] && return 0
  line=$(sed -n "/contract 'tree(order=desc)' is not one of/{p;q}" "$probe/log")
  if [ $rc -eq 2 ] && [ -n "$line" ] && ! grep -q "tree" <<<"${line##*is not one of}"; then
    echo "SKIP: this a4w4check does not know tree contracts (docs/contracts.md §4.2) yet: $line"
    return 77
  fi
  echo "gt: a plugin declaring tree(order=desc) on one exact case: exit $rc: $(cat "$probe/log")"
  return 1
}

# gt_found_dir: the directory where sh_gt_discover_found (tests/cli/gt_discover_found.sh, the
# CTest fixture gt_found) wrote the contract discover finds for every kernel of
# $GT_DISCOVERABLE at 32x8x1152, <kernel>.txt and <kernel>.log, for the tests that judge by them
# (discover_gt, discover_judged, gt_discovered_premerge): one discovery instead of one per
# test. Prints the directory; returns 1 with one line when a kernel's contract is missing.
GT_FOUND_SHAPE=32x8x1152
gt_found_dir() {
  local dir k
  dir=$(dirname "$WORK")/sh_gt_discover_found/found
  for k in $GT_DISCOVERABLE; do
    [ -s "$dir/$k.txt" ] || { echo "gt: no $dir/$k.txt: sh_gt_discover_found (the fixture gt_found) did not run or failed" >&2; return 1; }
  done
  echo "$dir"
}

# gt_kept_dir: the directory where sh_gt_misdeclared_premerge (the CTest fixture gt_mis_kept)
# kept the outputs of every ordered(1) build on its slice of the pre-merge set (run
# --keep-outputs, docs/cli/run.md "Kept outputs"), for gt_discovered_premerge, whose slice is
# part of that one: the same builds on the same operands (a function of name and seed) give the
# same outputs, so they are judged again under the discovered contracts instead of computed
# again. Prints the directory; returns 1 with one line when it is missing.
gt_kept_dir() {
  local dir
  dir=$(dirname "$WORK")/sh_gt_misdeclared_premerge/kept
  [ -d "$dir" ] || { echo "gt: no $dir: sh_gt_misdeclared_premerge (the fixture gt_mis_kept) did not run or failed" >&2; return 1; }
  echo "$dir"
}

# gt_replay KEPT LIB CASES OUT: an output bundle directory OUT/<lib's file name> (`bundle:DIR`,
# docs/backends.md) holding, as links, the outputs KEPT holds of `plugin:LIB` on every case of
# CASES, and nothing else (a bundle directory holds one run's matrix); prints `bundle:` and its
# path. Returns 1 with one line when KEPT lacks a case (sampled there, or not run).
gt_replay() {
  local kept=$1 lib=$2 cases=$3 dir src n
  dir=$4/$(basename "$lib")
  src=$kept/$(printf '%s' "plugin:$lib" | tr -c 'A-Za-z0-9._-' '_')
  local files=()
  mkdir -p "$dir"
  for n in $(grep -v '^#' "$cases" | tail -n +2 | cut -d, -f1); do
    [ -f "$src/$n.safetensors" ] || { echo "gt: no kept output $src/$n.safetensors" >&2; return 1; }
    files+=("$src/$n.safetensors")
  done
  ln -s "${files[@]}" "$dir/"
  echo "bundle:$dir"
}

# gt_golden_args: `--case golden/<stem>` for every bundle of cases/golden (run only them).
gt_golden_args() {
  local f
  for f in "$SRC"/cases/golden/*.safetensors; do
    printf -- '--case golden/%s ' "$(basename "$f" .safetensors)"
  done
}

# gt_need_tree: end the calling test with gt_tree_known's skip (77) or failure (1) unless this
# CLI knows tree contracts.
gt_need_tree() {
  local known
  set +e; gt_tree_known; known=$?; set -e
  [ $known -eq 0 ] || exit $known
}

# gt_judge DIR MODE: what results.json in DIR must say. MODE "mis": verdict FAIL, every
# mis-declared kernel has a failing entry, every failing entry is a mis-declared kernel's;
# prints, per kernel, the cases that caught it. MODE "true": verdict PASS, every kernel's
# entries pass (none n/a or skipped) and every output the oracle saw was judged.
gt_judge() {
  /usr/bin/python3 - "$1" "$2" "$GT_KERNELS" <<'PY'
import collections, json, re, sys
d, mode, kernels = sys.argv[1], sys.argv[2], sys.argv[3].split()
try:
    doc = json.load(open(d + "/results.json"))
except (OSError, ValueError) as e:
    sys.exit("gt: no results to judge: %s" % e)
kern = lambda b: (re.search(r"liba4w4_gt_([a-z0-9]+?)(_mis)?_plugin\.so$", b) or [None, None])[1]
bad, caught = [], collections.defaultdict(list)
oracle_outputs = sum(e["checked_outputs"] for e in doc["cases"]
                     if e["backend"] == "oracle" and e["regime"] != "golden")
seen = collections.Counter()
for e in doc["cases"]:
    k = kern(e["backend"])
    if e["verdict"] == "fail":
        if mode != "mis" or not k or "_mis_" not in e["backend"]:
            bad.append("%s failed on %s: %s" % (e["backend"], e["name"], e.get("note", "")))
        else:
            caught[k].append("%s (%s, %d of %d)" % (e["name"], e["regime"], e["mismatches"],
                                                    e["checked_outputs"]))
    elif k and mode == "true":
        if e["verdict"] != "pass":
            bad.append("%s on %s: verdict %s: %s" % (k, e["name"], e["verdict"], e.get("note", "")))
        if e["regime"] != "golden" and not e["name"].endswith("/call-sequence"):
            seen[k] += e["checked_outputs"]  # (the call sequence's are its own cases')
want = "FAIL" if mode == "mis" else "PASS"
if doc["verdict"] != want:
    bad.append("verdict %s, expected %s (%s)" % (doc["verdict"], want, doc["verdict_reason"]))
for k in kernels:
    if mode == "mis" and not caught[k]:
        bad.append("gt-%s declared ordered(1) was not caught" % k)
    if mode == "true" and seen[k] != oracle_outputs:
        bad.append("gt-%s: %d outputs judged, the oracle saw %d" % (k, seen[k], oracle_outputs))
for k in kernels:
    if caught[k]:
        print("gt-%s declared ordered(1): caught by %d cases: %s" % (k, len(caught[k]), "; ".join(caught[k])))
for b in bad:
    print("gt: " + b)
sys.exit(1 if bad else 0)
PY
}

# gt_run MODE RUN_ARGS...: `a4w4check run RUN_ARGS` into $WORK/out with every kernel, then its
# results judged by gt_judge MODE. MODE "mis": the ordered(1) builds beside the reference
# plugin, exit 1 expected; "true": the true declarations (gt_contract_args), exit 0 expected.
# Every kernel reads E8M0 code 0 as 2^-127, and the run states it (contracts §1: otherwise a
# code-0 case matching only that reading is ambiguous, never a pass).
# gt_premerge_small OUT [MACS]: a representative slice of cases/premerge.csv up to 2^30 (or MACS)
# MACs: for every N, K, regime, tag and (K, regime) pair of the cases under the bound, the
# case with the fewest MACs that has it (ties: the first in the file). Every K the kernels'
# orders depend on meets every regime it meets under the bound; the scalar ground-truth kernels
# spend most of a run computing the large cases, which only repeat those pairs. M is no key:
# the kernels reduce along K row by row, and the padded-M buckets the bucket cases walk are the
# AITER dispatch's, which these plugins do not have (one bucket case stays, by its tag). The
# cases keep their names and seeds. A4W4_GT_FULL=1 runs take the whole set instead (label
# `wholeset`, ci/nightly-cpu.sh).
gt_premerge_small() {
  /usr/bin/python3 - "$SRC/cases/premerge.csv" "$1" "${2:-1073741824}" <<'PY'
import sys
src, out, lim = sys.argv[1], sys.argv[2], int(sys.argv[3])
lines = open(src).read().splitlines()
keep, best = [], {}
for i, line in enumerate(lines):
    f = line.split(",")
    if line.startswith("#") or f[0] == "name":
        keep.append(i)
        continue
    macs = int(f[1]) * int(f[2]) * int(f[3])
    if macs > lim:
        continue
    keys = [("N", f[2]), ("K", f[3]), ("regime", f[4]), ("K,regime", f[3], f[4])]
    keys += [("tag", t) for t in f[6].split(";") if t]
    for k in keys:
        if k not in best or macs < best[k][0]:
            best[k] = (macs, i)
keep = sorted(set(keep) | {i for _, i in best.values()})
open(out, "w").write("".join(lines[i] + "\n" for i in keep))
PY
}

gt_run() {
  local mode=$1 want=0 backends rc; shift
  if [ "$mode" = mis ]; then
    want=1 backends="$(gt_backends _mis),plugin:$GT_PLUGINS/liba4w4_ref_plugin.so"
    set -- "$@" --backend "$backends"
  else
    set -- "$@" --backend "$(gt_backends "")" $(gt_contract_args)
  fi
  set -- "$@" --e8m0-code0 2^-127
  set +e
  "$CLI" run "$@" --quiet --out "$WORK/out" > "$WORK/log" 2>&1
  rc=$?
  set -e
  if [ $rc -ne $want ]; then
    echo "gt: run $*: exit $rc, expected $want: $(cat "$WORK/log")"
    gt_judge "$WORK/out" "$mode"
    return 1
  fi
  gt_judge "$WORK/out" "$mode"
}

# gt_discover_all DIR SHAPE: `discover` on the ordered(1) build of every kernel of
# $GT_DISCOVERABLE at SHAPE, each contract written to DIR/<kernel>.txt (the file discover
# writes, its comment line included). Returns 1 with one line when a discovery fails. Each
# probe runs once (--repeats 1), as in gt_run_mbucket and gt_run_splitk: the ground-truth
# kernels are deterministic and no test of them asserts nondeterminism (discover_gt's
# random-combine kernel does, with --repeats 8); the default 3 runs computed every probe's
# outputs three times.
gt_discover_all() {
  local dir=$1 shape=$2 k
  mkdir -p "$dir"
  for k in $GT_DISCOVERABLE; do
    "$CLI" discover --backend "plugin:$GT_PLUGINS/liba4w4_gt_${k}_mis_plugin.so" --shapes "$shape" \
      --out "$dir/$k.txt" --quiet --no-evidence --repeats 1 > "$dir/$k.log" 2>&1 \
      || { echo "gt: discover gt-$k at $shape: exit $? ($(cat "$dir/$k.log"))"; return 1; }
  done
}

# The discoverable kernels whose discovered contract is a rule of K: it holds at every K (every
# one of them since splits' boundaries fixed in K are a rule of K, contracts §4.4).
GT_SHAPE_FREE=$GT_DISCOVERABLE

# gt_run_as OUT "LIB..." "CONTRACT_FILE..." RUN_ARGS...: `a4w4check run RUN_ARGS` into OUT with
# the plugins LIB (space-separated paths), each judged by its CONTRACT_FILE (`--contract B=FILE`),
# code 0 read as 2^-127; the log in OUT.log; returns run's exit code. With GT_KEPT set (a kept
# directory, gt_kept_dir) and GT_KEPT_CASES (the case file RUN_ARGS names, part of the kept
# run's), the plugins' outputs on those cases are not computed again: each LIB's kept outputs
# are replayed (gt_replay, `bundle:DIR`, every output checked) under the same contract file
# into OUT, the golden bundles left out (their outputs are never kept), and the plugins run on
# the golden bundles alone into OUT-golden (log OUT-golden.log); the larger exit code returned.
gt_run_as() {
  local out=$1 libs=$2 files=$3 list="" args=() lib f b rc rc2; shift 3
  set -- $files "$@"
  for lib in $libs; do
    f=$1; shift
    if [ -n "${GT_KEPT:-}" ]; then
      b=$(gt_replay "$GT_KEPT" "$lib" "$GT_KEPT_CASES" "$out-replay") || return 1
    else
      b="plugin:$lib"
    fi
    list="$list,$b"
    args+=(--contract "$b=$f")
  done
  set +e
  "$CLI" run "$@" ${GT_KEPT:+--no-golden} --backend "${list#,}" "${args[@]}" --e8m0-code0 2^-127 \
    --quiet --out "$out" > "$out.log" 2>&1
  rc=$?
  set -e
  [ -n "${GT_KEPT:-}" ] || return $rc
  list="" args=()
  set -- $files
  for lib in $libs; do
    list="$list,plugin:$lib"
    args+=(--contract "plugin:$lib=$1")
    shift
  done
  set +e
  "$CLI" run --cases "$GT_KEPT_CASES" $(gt_golden_args) --no-isolate --backend "${list#,}" \
    "${args[@]}" --e8m0-code0 2^-127 --quiet --out "$out-golden" > "$out-golden.log" 2>&1
  rc2=$?
  set -e
  return $((rc > rc2 ? rc : rc2))
}

# gt_run_discovered DIR RUN_ARGS...: `a4w4check run RUN_ARGS` with the ordered(1) build of every
# kernel of $GT_SHAPE_FREE, each judged by the contract discover wrote to DIR/<kernel>.txt
# (--contract B=FILE; gt_run_as, the kept outputs replayed with GT_KEPT); exit 0 and gt_judge's
# "true" checks over those kernels expected (of the golden run too, with GT_KEPT).
gt_run_discovered() {
  local dir=$1 libs="" files="" k rc=0; shift
  for k in $GT_SHAPE_FREE; do
    libs="$libs $GT_PLUGINS/liba4w4_gt_${k}_mis_plugin.so"
    files="$files $dir/$k.txt"
  done
  gt_run_as "$WORK/out" "$libs" "$files" "$@" || rc=$?
  GT_KERNELS=$GT_SHAPE_FREE gt_judge "$WORK/out" true || rc=1
  if [ -n "${GT_KEPT:-}" ]; then
    GT_KERNELS=$GT_SHAPE_FREE gt_judge "$WORK/out-golden" true || rc=1
  fi
  [ $rc -eq 0 ] || { echo "gt: run $* under the discovered contracts: exit $rc: $(head -c 2000 "$WORK/out.log"; head -c 2000 "$WORK/out-golden.log" 2>/dev/null)"; return 1; }
}

# gt_run_mbucket DIR RUN_ARGS...: gt-mbucket's ordered(1) build discovered at GT_MBUCKET_SHAPES
# into DIR/mbucket.txt (rules of M: `when Mpad<=32: ordered(2)`, `when Mpad>=48: ordered(1)`),
# then `a4w4check run RUN_ARGS` judged by that file: exit 0, verdict PASS, every entry of the
# kernel passes with every output the oracle saw judged (no bucket left without a rule).
gt_run_mbucket() { gt_run_found_rules mbucket "$GT_MBUCKET_SHAPES" "$@"; }

# gt_run_found_rules NAME SHAPES DIR RUN_ARGS...: gt-NAME's ordered(1) build discovered at SHAPES
# into DIR/NAME.txt, `a4w4check run RUN_ARGS` judged by that file, each run's results checked by
# gt_check_NAME OUT RC RULES (gt_run_mbucket, gt_run_splitk).
gt_run_found_rules() {
  local name=$1 shapes=$2 dir=$3 lib rc out; shift 3
  lib="plugin:$GT_PLUGINS/liba4w4_gt_${name}_mis_plugin.so"
  mkdir -p "$dir"
  "$CLI" discover --backend "$lib" --shapes "$shapes" --out "$dir/$name.txt" --quiet \
    --no-evidence --repeats 1 > "$dir/$name.log" 2>&1 || { echo "gt: discover gt-$name: exit $? ($(cat "$dir/$name.log"))"; return 1; }
  rc=0
  gt_run_as "$WORK/out-$name" "${lib#plugin:}" "$dir/$name.txt" "$@" || rc=$?
  for out in "$WORK/out-$name" ${GT_KEPT:+"$WORK/out-$name-golden"}; do
    "gt_check_$name" "$out" "$rc" "$dir/$name.txt" || return 1
  done
}

# gt_check_mbucket OUT RC RULES: gt_run_mbucket's checks of one run's results.
gt_check_mbucket() {
  /usr/bin/python3 - "$1" "$2" "$3" <<'PY'
import json, sys
d, rc, rules = json.load(open(sys.argv[1] + "/results.json")), int(sys.argv[2]), open(sys.argv[3]).read()
body = [l for l in rules.splitlines() if l and not l.startswith("#")]
oracle = {e["name"]: e["checked_outputs"] for e in d["cases"] if e["backend"] == "oracle"}
bad, judged, buckets = [], 0, set()
def mpad(m):  # getPaddedM gl 0 (contracts §5.1)
    for top, q in ((256, 16), (1024, 32), (4096, 64)):
        if m <= top:
            return -(-m // q) * q
    return -(-m // 128) * 128
for e in d["cases"]:
    if "_gt_mbucket" not in e["backend"]:
        continue
    judged += 1
    buckets.add(mpad(e["M"]))
    if e["verdict"] != "pass" or (e["regime"] != "golden" and e["name"] in oracle and
                                  e["checked_outputs"] != oracle[e["name"]]):
        bad.append("%s (Mpad %d): %s, %s of %s outputs judged: %s" % (e["name"], mpad(e["M"]), e["verdict"],
                   e["checked_outputs"], oracle.get(e["name"]), e.get("note", "")))
if body != ["when Mpad<=32: ordered(2)", "when Mpad>=48: ordered(1)"]:
    bad.append("discover wrote %s" % body)
if rc != 0 or d["verdict"] != "PASS" or not judged:
    bad.append("exit %d, verdict %s, expected 0 and PASS; %d entries" % (rc, d["verdict"], judged))
for b in bad:
    print("gt: gt-mbucket under its discovered rules of M: " + b)
print("gt-mbucket: %d entries of %d buckets (Mpad %d to %d) pass under its rules of M" % (judged, len(buckets), min(buckets), max(buckets)))
sys.exit(1 if bad else 0)
PY
}

# gt_run_splitk DIR RUN_ARGS...: gt-splitk's ordered(1) build discovered at GT_SPLITK_SHAPES
# into DIR/splitk.txt (the split count as a function of K, contracts §4.4: `when K<=1184:
# ordered(1)`, `when K<=1760: tree(...split=2...align=64)`, `when K<=2592: ..split=3..`, then
# split=4), then `a4w4check run RUN_ARGS` judged by that file: exit 0, verdict PASS, every
# entry of the kernel passes with every output the oracle saw judged (every K has a rule).
gt_run_splitk() { gt_run_found_rules splitk "$GT_SPLITK_SHAPES" "$@"; }

# gt_check_splitk OUT RC RULES: gt_run_splitk's checks of one run's results.
gt_check_splitk() {
  /usr/bin/python3 - "$1" "$2" "$3" <<'PY'
import json, sys
d, rc, rules = json.load(open(sys.argv[1] + "/results.json")), int(sys.argv[2]), open(sys.argv[3]).read()
body = [l for l in rules.splitlines() if l and not l.startswith("#")]
t = "tree(leaf=32,order=asc,fuse=1,reduce=chain,prec=0,round=rne,acc=fp32,split=%d,combine=chain,final=rne,align=64)"
want = ["when K<=1184: ordered(1)", "when K<=1760: " + t % 2, "when K<=2592: " + t % 3, t % 4]
oracle = {e["name"]: e["checked_outputs"] for e in d["cases"] if e["backend"] == "oracle"}
bad, ks = [], set()
for e in d["cases"]:
    if "_gt_splitk" not in e["backend"]:
        continue
    ks.add(e["K"])
    if e["verdict"] != "pass" or (e["regime"] != "golden" and e["name"] in oracle and
                                  e["checked_outputs"] != oracle[e["name"]]):
        bad.append("%s (K %d): %s, %s of %s outputs judged: %s" % (e["name"], e["K"], e["verdict"],
                   e["checked_outputs"], oracle.get(e["name"]), e.get("note", "")))
if body != want:
    bad.append("discover wrote %s" % body)
if rc != 0 or d["verdict"] != "PASS" or not ks:
    bad.append("exit %d, verdict %s, expected 0 and PASS; %d K" % (rc, d["verdict"], len(ks)))
for b in bad:
    print("gt: gt-splitk under its discovered split count by K: " + b)
print("gt-splitk: %d K (%d to %d) pass under its rule of K" % (len(ks), min(ks or [0]), max(ks or [0])))
sys.exit(1 if bad else 0)
PY
}
