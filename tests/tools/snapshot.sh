#!/bin/sh
# snapshot.sh — every command's outputs on a fixed set of invocations, for refactors that must
# not change behaviour: run it before and after, then `diff -r BEFORE AFTER` must print nothing.
#
#   sh tests/tools/snapshot.sh BUILD_DIR OUT_DIR
#
# Each invocation writes OUT_DIR/<name>.out (stdout), .err (stderr), .rc (exit code) and, for
# commands that write files, OUT_DIR/<name>.d/ (their documents). Only what differs from run
# to run is masked: timings (keys ending in _ms or _s, "N ms", "N s", rates), dates, the
# host's environment record, and the scratch paths. Run from the repository root.
set -u
B=${1:?usage: snapshot.sh BUILD_DIR OUT_DIR}
O=${2:?usage: snapshot.sh BUILD_DIR OUT_DIR}
A="$B/a4w4check"
P="$B/plugins"
rm -rf "$O"
mkdir -p "$O"
O=$(cd "$O" && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

mask() { # mask FILE...: timings, dates, paths
    for f in "$@"; do
        sed -E -i \
            -e "s#$T#TMP#g" -e "s#$O#OUT#g" \
            -e 's/"([a-z_]*_ms|[a-z_]*seconds|[a-z_]*_s|elapsed|rate[a-z_]*|started|finished|date|created|timestamp|host|hostname|cpu|cpu_model|threads|compiler|build|version_git|git|git_commit|git_dirty|[a-z_]*ratio|timed)":[[:space:]]*("[^"]*"|[-0-9.eE+]+|null|true|false)/"\1": "~"/g' \
            -e 's/[0-9]+(\.[0-9]+)? ?(ms|s|µs|us|G-MAC\/s|MAC\/s|M-out\/s)\b/~\2/g' \
            -e 's/\| [0-9]+\.[0-9]+ \|/| ~ |/g' -e 's/\| [0-9]+\.[0-9]+ \|/| ~ |/g' \
            -e 's/^\| commit \| .* \|$/| commit | ~ |/' -e 's/commit [0-9a-f]{12,40}/commit ~/g' \
            -e 's/[0-9]{4}-[0-9]{2}-[0-9]{2}([T ][0-9:.]+Z?)?/DATE/g' \
            "$f"
    done
}

# one NAME CMD...: run CMD, keep stdout, stderr and the exit code under NAME
one() {
    n=$1
    shift
    "$@" >"$O/$n.out" 2>"$O/$n.err"
    echo $? >"$O/$n.rc"
    mask "$O/$n.out" "$O/$n.err"
}

# docs NAME DIR: keep DIR's documents (masked) as NAME.d/
docs() {
    [ -d "$2" ] || return 0
    mkdir -p "$O/$1.d"
    for f in "$2"/*; do
        [ -f "$f" ] || continue
        case "$f" in *.lock) continue ;; esac
        cp "$f" "$O/$1.d/"
        mask "$O/$1.d/$(basename "$f")"
    done
}

cat >"$T/small.csv" <<'CSV'
name,M,N,K,regime,seed,tags
s_exact,33,64,512,exact,7,
s_wide,17,48,320,wide,8,
s_tiny,8,32,256,tiny,9,
s_special,5,32,128,special,10,
s_range,4,16,96,range,11,
s_code0,6,32,256,code0,12,
CSV

# run: the CPU backends, golden bundles, a contract override, the mutants that fail by
# value, by poison, by pad variant, by guard zone, and the layout and quantizer backends
one run_edge "$A" run --set edge --out "$T/run_edge" --quiet --full
docs run_edge "$T/run_edge"
one run_small "$A" run --cases "$T/small.csv" --out "$T/run_small" --quiet --full \
    --backend cpu-asm,cpu-fallback,mut-pad-ff,mut-pad-00,mut-tail-unwritten,mut-read-past-a,mut-drop-kblock,mut-bounded-drop-block,mut-e8m0-code0,mut-nibble-swap,mut-swizzle-d1d4,mut-zero-sign
docs run_small "$T/run_small"
one run_sampled "$A" run --cases "$T/small.csv" --out "$T/run_sampled" --quiet \
    --budget-seconds 0 --no-golden --backend cpu-asm,mut-splitk-bf16
docs run_sampled "$T/run_sampled"
one run_contract "$A" run --cases "$T/small.csv" --out "$T/run_contract" --quiet --full \
    --no-golden --backend cpu-asm,cpu-fallback --contract cpu-asm=exact \
    --contract 'cpu-fallback=bounded(2)'
docs run_contract "$T/run_contract"
one run_code0 "$A" run --cases "$T/small.csv" --out "$T/run_code0" --quiet --full \
    --no-golden --e8m0-code0 2^-126 --backend cpu-asm,mut-e8m0-code0
docs run_code0 "$T/run_code0"
if [ -f "$P/liba4w4_ref_plugin.so" ]; then
    one run_plugins "$A" run --cases "$T/small.csv" --out "$T/run_plugins" --quiet --full \
        --no-golden --backend "plugin:$P/liba4w4_ref_plugin.so,plugin:$P/liba4w4_tree_plugin.so,plugin:$P/liba4w4_nowrite_plugin.so,plugin:$P/liba4w4_pastend_plugin.so,plugin:$P/liba4w4_stale_plugin.so,plugin:$P/liba4w4_code0drv_plugin.so"
    docs run_plugins "$T/run_plugins"
fi
one run_savefail "$A" run --cases "$T/small.csv" --case s_wide --out "$T/run_sf" --quiet \
    --full --no-golden --backend mut-drop-kblock --save-failing "$T/failing"
docs run_savefail "$T/run_sf"
docs savefail_bundles "$T/failing"

# export, then the saved operands back through bundle: and run --bundle
one export "$A" export --cases "$T/small.csv" --out "$T/ops" --quiet
one run_bundle_file "$A" run --bundle "$T/failing/s_wide@mut-drop-kblock.safetensors" \
    --out "$T/run_bf" --quiet --full --backend cpu-asm
docs run_bundle_file "$T/run_bf"

# verify, report, compare, merge, known
one verify "$A" verify cases/golden/g1_m1_n256_k512.safetensors cases/golden/q1_quant_modes.safetensors
one verify_failing "$A" verify "$T/failing/s_wide@mut-drop-kblock.safetensors"
one report "$A" report "$T/run_small/results.json" --format all --reproducible --out "$T/report"
docs report "$T/report"
one compare "$A" compare "$T/run_small/results.json" "$T/run_contract/results.json" --reproducible --slower 1000 --out "$T/compare"
docs compare "$T/compare"
for i in 1 2; do
    "$A" run --cases "$T/small.csv" --out "$T/shard$i" --quiet --full --no-golden \
        --backend cpu-asm,mut-drop-kblock --shard "$i/2" >/dev/null 2>&1
done
one merge "$A" merge --out "$T/merged" "$T/shard1" "$T/shard2"
docs merge "$T/merged"
one known "$A" known

# the other commands
one selftest "$A" selftest --quiet
one shrink "$A" shrink --backend mut-drop-kblock --cases "$T/small.csv" --case s_wide \
    --out "$T/shrink" --max-calls 40
docs shrink "$T/shrink"
one layers "$A" layers --quiet --out "$T/layers"
docs layers "$T/layers"
one invariance "$A" invariance
one coverage "$A" coverage --cases cases/edge.csv
one fingerprint "$A" fingerprint --quantizer mut-mode-ceil
one hazards "$A" hazards --quick --quiet --out "$T/hazards"
docs hazards "$T/hazards"
one route "$A" route --cases cases/edge.csv
one quant_parity "$A" quant-parity --cases "$T/small.csv"
if [ -f "$P/liba4w4_ref_plugin.so" ]; then
    mkdir -p "$T/disc"
    one discover "$A" discover --backend "plugin:$P/liba4w4_ref_plugin.so" \
        --shapes 32x64x512 --out "$T/disc/ref.contract" --quiet
    docs discover "$T/disc"
fi
exit 0
