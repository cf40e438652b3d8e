# ci/steps.sh — sourced by the GPU-host scripts (gpu-discover.sh, gpu-invariance.sh): their
# log line and their budgeted step. The caller sets out (the output folder), src (the
# repository), budget (seconds for the whole script) and start (its $SECONDS at the start),
# and empties "$out/steps.tsv" and "$out/steps.log".

log() { printf '%s %s\n' "$(date -u +%H:%M:%S)" "$*" | tee -a "$out/steps.log"; }
# step NAME CAP CMD...: run CMD (log OUT/NAME.log) for at most min(CAP, what the budget has
# left) seconds; records "NAME<TAB>exit<TAB>seconds" (exit "skipped" when no time was left,
# 124 on timeout). Always returns 0.
step() {
  local name=$1 cap=$2; shift 2
  local left=$((budget - (SECONDS - start)))
  if [ "$left" -le 5 ]; then
    log "$name: skipped (the ${budget} s budget is spent)"
    printf '%s\tskipped\t0\n' "$name" >> "$out/steps.tsv"
    return 0
  fi
  [ "$cap" -gt "$left" ] && cap=$left
  local t0=$SECONDS
  (cd "$src" && timeout -k 5 "$cap" "$@") > "$out/$name.log" 2>&1
  local rc=$?
  log "$name: exit $rc ($((SECONDS - t0)) s of at most $cap)"
  printf '%s\t%s\t%s\n' "$name" "$rc" "$((SECONDS - t0))" >> "$out/steps.tsv"
  return 0
}
