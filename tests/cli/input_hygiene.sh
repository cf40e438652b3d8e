#!/usr/bin/env bash
# Inputs that used to block, mislead or leak, each held to its right behaviour (one line on
# stderr, the exit code of README.md's "Exit codes" table):
#   - a FIFO as --cases (run, route) or --tuned (route): refused at once, exit 2;
#   - a NUL byte in a case file: reported as a NUL byte at its line and column, exit 2;
#   - an allowed shape too large for this machine: exit 2 "too large for this machine: needs
#     N GB", not 4 (4 is "an output could not be written"); run under a 4 GB address-space
#     limit (ASan builds: allocator_may_return_null with a 4 GB allocation cap) so it fails
#     the same way everywhere;
#   - `route 0 1024 5120`: exit 2 (under ASan with detect_leaks a leak would exit 87);
#   - bundle metadata numbers are strict decimal: "+1" and " 1" are refused;
#   - a case file's tags hold printable ASCII only: a byte 0xfe there (no UTF-8) went into
#     results.json as it was, which python's json then refused; now exit 2, no results.
set -euo pipefail
CLI=$1 SRC=$2 WORK=$3
rm -rf "$WORK"; mkdir -p "$WORK"
cd "$SRC"
fail() { echo "input_hygiene: $*"; exit 1; }
expect() { # expect CODE PATTERN CMD...: exit CODE, one line on stderr matching PATTERN
  local want=$1 pat=$2; shift 2
  set +e; timeout 60 "$@" > "$WORK/out" 2> "$WORK/err"; local rc=$?; set -e
  [ "$rc" -eq "$want" ] || fail "exit $rc, expected $want: $*: $(head -c 600 "$WORK/err")"
  [ "$(wc -l < "$WORK/err")" -eq 1 ] || fail "not one line on stderr: $*: $(cat "$WORK/err")"
  grep -q -- "$pat" "$WORK/err" || fail "stderr lacks '$pat': $(cat "$WORK/err")"
}

# FIFOs (nothing ever writes to them: a reader that opens one blocks until timeout's 124)
mkfifo "$WORK/cases.fifo" "$WORK/tuned.fifo" "$WORK/shapes.fifo"
expect 2 "cases.fifo: not a regular file (a FIFO)" \
  "$CLI" run --cases "$WORK/cases.fifo" --no-golden --out "$WORK/o1" --quiet
expect 2 "tuned.fifo: not a regular file" "$CLI" route --tuned "$WORK/tuned.fifo" 1 512 4096
expect 2 "shapes.fifo: not a regular file" "$CLI" route --cases "$WORK/shapes.fifo"
expect 2 "cases.fifo: not a regular file (a FIFO)" \
  "$CLI" hazards --quick --cases "$WORK/cases.fifo" --out "$WORK/o2"

# a NUL byte is a NUL byte, not an overlong line
printf 'name,M,N,K,regime,seed,tags\nok,1,32,256,exact,1,\nbad,1,32,2\x0056,exact,1,\n' > "$WORK/nul.csv"
expect 2 "nul.csv:3: NUL byte at column 11 (a case file is text)" \
  "$CLI" run --cases "$WORK/nul.csv" --no-golden --out "$WORK/o3" --quiet

# a shape the case rule allows but this machine cannot hold
printf 'name,M,N,K,regime,seed,tags\nsmall,16,256,512,exact,1,\nhuge,4194304,4194304,8192,exact,1,\n' \
  > "$WORK/huge.csv"
# (ldd's output is read whole: `ldd | grep -q` under pipefail fails when grep exits first and
#  ldd dies of SIGPIPE, which took the plain branch on an ASan build in CI)
libs=$(ldd "$CLI" 2>/dev/null) || libs=""
if [[ "$libs" == *libasan* ]] || nm "$CLI" 2>/dev/null | grep -c __asan_init >/dev/null; then
  export ASAN_OPTIONS="${ASAN_OPTIONS:-}:allocator_may_return_null=1:max_allocation_size_mb=4096"
  limit=unlimited
else
  limit=4000000   # KiB of address space
fi
set +e
( ulimit -v "$limit"; exec "$CLI" run --cases "$WORK/huge.csv" --no-golden --backend cpu-fallback \
    --out "$WORK/o4" --quiet ) > "$WORK/out" 2> "$WORK/err"
rc=$?
set -e
# (under ASan, allocator_may_return_null reports each refused allocation on a "==PID==" line)
sed -i '/^==[0-9]*==WARNING: AddressSanitizer failed to allocate/d' "$WORK/err"
[ "$rc" -eq 2 ] || fail "a shape too large for this machine: exit $rc, expected 2: $(cat "$WORK/err")"
grep -q "case huge: M=4194304 N=4194304 K=8192 is too large for this machine: needs 55.8 GB" "$WORK/err" ||
  fail "too large: $(cat "$WORK/err")"
[ "$(grep -c . "$WORK/err")" -eq 1 ] || fail "too large: not one line: $(cat "$WORK/err")"
[ ! -e "$WORK/o4/results.json" ] || fail "a run stopped by a shape too large wrote results.json"
! grep -q '"case":"huge"' "$WORK/o4/results.jsonl" || fail "the case that never ran is recorded"

# route with M = 0: exit 2, one line, nothing on stdout
expect 2 "route: shape 1 M '0' is not an integer in 1..1073741824" "$CLI" route 0 1024 5120
[ ! -s "$WORK/out" ] || fail "route 0 1024 5120 printed on stdout"

# bundle metadata numbers: strict decimal
python3 - "$SRC/cases/golden/g1_m1_n256_k512.safetensors" "$WORK" <<'EOF'
import json, struct, sys
src, work = sys.argv[1], sys.argv[2]
raw = open(src, 'rb').read()
n = struct.unpack('<Q', raw[:8])[0]
head, data = json.loads(raw[8:8 + n]), raw[8 + n:]
assert head['__metadata__']['M'] == '1', head['__metadata__']
for tag, value in (('plus', '+1'), ('space', ' 1'), ('plain', '1')):
    head['__metadata__']['M'] = value
    h = json.dumps(head).encode()
    h += b' ' * (-len(h) % 8)
    open(f'{work}/{tag}.safetensors', 'wb').write(struct.pack('<Q', len(h)) + h + data)
EOF
"$CLI" verify "$WORK/plain.safetensors" > /dev/null   # the rewrite itself is sound
expect 2 "plus.safetensors: metadata M, N and K must be positive integers" \
  "$CLI" verify "$WORK/plus.safetensors"
expect 2 "space.safetensors: metadata M, N and K must be positive integers" \
  "$CLI" verify "$WORK/space.safetensors"
printf 'name,M,N,K,regime,seed,tags\nok,4,32,64,normal,1,a\xfeb\n' > "$WORK/tag.csv"
expect 2 "tag.csv:2: column 7 (tags) 'a.xfeb' may hold only printable ASCII" \
  "$CLI" run --cases "$WORK/tag.csv" --no-golden --backend cpu-fallback --out "$WORK/tag-out"
[ ! -e "$WORK/tag-out/results.json" ] || fail "results written for a refused case file"
echo "input hygiene ok"
