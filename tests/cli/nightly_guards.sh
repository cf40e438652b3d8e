#!/usr/bin/env bash
# The nightly scripts' guards hold against bad luck (ci/nightly-shard.sh, ci/nightly-merge.sh):
#   a second nightly-shard.sh into a group directory another one is using, or one started
#   beside a running `a4w4check run --out DIR`, exits 2 and removes nothing (it used to delete
#   the live results.jsonl before the run's lock refused it: the first group then died, exit 4);
#   nightly-merge.sh refuses an OUT that is a group directory under another name (a symlink
#   either way), which its old `cd && pwd` comparison let through.
# The holders are `sleep` processes holding flock on the two lock files; each is killed at the end.
. "$(dirname "$0")/common.sh.inc"
pids=()
trap 'for p in "${pids[@]}"; do if kill "$p" 2>/dev/null; then :; fi; done' EXIT

# hold FILE: a background process holds flock FILE until killed; returns once it does
hold() {
  ( exec 7>>"$1"; flock 7; exec sleep 120 ) > /dev/null 2>&1 < /dev/null & pids+=($!)
  for _ in $(seq 100); do flock -n "$1" true || return 0; sleep 0.05; done
  fail "could not take $1"
}
live() { mkdir -p "$1"; echo '{"a4w4check_header":{"live":true}}' > "$1/results.jsonl"; }
shard() {
  set +e
  A4W4CHECK=$CLI bash "$SRC/ci/nightly-shard.sh" --group 1/1 --out "$1" --set edge \
    --backends cpu-fallback -- --no-golden > "$1.out" 2>&1
  rc=$?
  set -e
}

live g1; hold g1/.nightly-shard.lock
shard g1
[ "$rc" = 2 ] || { cat g1.out; fail "a second nightly-shard.sh: exit $rc, expected 2"; }
grep -q "in use by another ci/nightly-shard.sh" g1.out || { cat g1.out; fail "no line says why"; }
grep -q '"live":true' g1/results.jsonl || fail "the live results.jsonl was removed"
echo "second nightly-shard.sh: $(cat g1.out)"

live g2; hold g2/.a4w4check.lock
shard g2
[ "$rc" = 2 ] || { cat g2.out; fail "nightly-shard.sh beside a running a4w4check: exit $rc, expected 2"; }
grep -q "in use by a running a4w4check" g2.out || { cat g2.out; fail "no line says why"; }
grep -q '"live":true' g2/results.jsonl || fail "the live results.jsonl was removed"
echo "beside a running a4w4check: $(cat g2.out)"

mkdir -p g3 && ln -s g3 out-link && ln -s out-real g3-link && mkdir -p out-real
for args in "out-link g3" "out-real g3-link"; do
  set +e
  # shellcheck disable=SC2086
  A4W4CHECK=$CLI bash "$SRC/ci/nightly-merge.sh" $args > merge.out 2>&1; rc=$?
  set -e
  [ "$rc" = 2 ] || { cat merge.out; fail "nightly-merge.sh $args: exit $rc, expected 2"; }
  grep -q "is the group directory" merge.out || { cat merge.out; fail "$args: no line says why"; }
done
echo "nightly_guards: the shard and merge scripts refuse to clobber what another uses"
