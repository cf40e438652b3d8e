#!/usr/bin/env bash
# No file the tool reads can block it: a FIFO (or another non-regular file) where it expects a
# file is refused at once, exit 2, one line (harness/io/fsutil.c a4w4_read_regular, used by
# every reader). Reproducers (before the fix), each blocked forever:
#   mkfifo DIR/manifest.json    ; a4w4check run --backend bundle:DIR
#   mkfifo DIR/contract.txt     ; a4w4check run --backend bundle:DIR
#   mkfifo SHARD/results.jsonl  ; a4w4check merge --out M SHARD    (and run --resume --out SHARD)
#   mkfifo R.json               ; a4w4check compare R.json R.json   (and report R.json)
#   mkfifo C                    ; a4w4check run --contract cpu-asm=C   (and shrink --contract)
#   mkfifo P/discover.json      ; a4w4check discover --backend bundle:O --probes P
# Every command runs under `timeout 60`: a hang fails the test (124) instead of stalling it.
. "$(dirname "$0")/common.sh.inc"
printf 'name,M,N,K,regime,seed,tags\na,4,32,64,normal,1,\n' > c.csv

# refused WHAT CMD...: exit 2 within the minute, the last stderr line names a FIFO
refused() {
  local what=$1 rc; shift
  set +e
  timeout 60 "$@" > /dev/null 2> err.txt < /dev/null
  rc=$?
  set -e
  [ "$rc" != 124 ] || fail "$what: blocked (killed after 60 s)"
  [ "$rc" = 2 ] || { cat err.txt; fail "$what: exit $rc, expected 2"; }
  tail -n 1 err.txt | grep -q "not a regular file" || { cat err.txt; fail "$what: the line names no FIFO"; }
  echo "$what: $(tail -n 1 err.txt)"
}

mkdir b1 b2
mkfifo b1/manifest.json b2/contract.txt
refused "bundle manifest.json" "$CLI" run --cases c.csv --no-golden --backend bundle:b1 --out o1 --quiet
refused "bundle contract.txt" "$CLI" run --cases c.csv --no-golden --backend bundle:b2 --out o2 --quiet

mkdir shard
mkfifo shard/results.jsonl
refused "merge of a FIFO results.jsonl" "$CLI" merge --out m shard
refused "run --resume onto a FIFO results.jsonl" "$CLI" run --cases c.csv --no-golden --out shard --resume --quiet
refused "run onto a FIFO results.jsonl" "$CLI" run --cases c.csv --no-golden --out shard --quiet

mkfifo r.json
refused "compare of a FIFO" "$CLI" compare r.json r.json
refused "report of a FIFO" "$CLI" report r.json --out rep --quiet
mkfifo contract.fifo
refused "run --contract B=FIFO" "$CLI" run --cases c.csv --no-golden --backend cpu-asm \
  --contract cpu-asm=contract.fifo --out o3 --quiet
refused "shrink --contract B=FIFO" "$CLI" shrink --cases c.csv --case a --backend cpu-asm \
  --contract cpu-asm=contract.fifo --out s3

mkdir probes
mkfifo probes/discover.json
refused "discover --probes with a FIFO discover.json" "$CLI" discover --backend bundle:po \
  --probes probes --out d.txt
echo "fifo_inputs: every reader refuses a FIFO at once"
