#!/usr/bin/env bash
# A kernel that recognises discover's probes (an operand all 1.0 at scale 2^0) and answers
# them with per-run noise gets no contract (contracts §4.4, nondeterminism): bounded(S) is
# accepted only for nondeterminism seen on the random validation cases, and every contract is
# validated on them. Reproducer: the kernel right on real data (ordered(1)) and noisy on probes
# got bounded(16) at 8x16x512, exit 0 (the one returning +0 on real data got bounded(2048) at
# 8x64x65536, whose bound admits 0 everywhere: too slow for a test at that K).
. "$(dirname "$0")/common.sh.inc"
for k in probe_liar_true probe_liar; do
  code "$CLI" discover --backend "plugin:$P/liba4w4_disc_${k}_plugin.so" --shapes 8x16x512 \
    --repeats 2 --out "$k.txt" --quiet --no-evidence
  [ "$rc" = 1 ] || fail "$k: exit $rc, expected 1: $(cat out.txt err.txt)"
  [ ! -e "$k.txt" ] || fail "$k: a contract was written: $(cat "$k.txt")"
  grep -q "^discover: .* at 8x16x512: no tree in the model family fits" out.txt || fail "$k: $(cat out.txt)"
done
grep -q "the random validation cases' never did: bounded(S) is accepted only for nondeterminism seen on random cases" \
  probe_liar_true.txt.evidence.md || fail "the evidence does not say why bounded(S) was refused"
echo "discover_probe_liar: both probe-detecting kernels get no contract"
