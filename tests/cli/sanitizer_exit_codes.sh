#!/usr/bin/env bash
# CI's sanitizer stage (ci/test.sh) cannot let undefined behaviour pass as an expected exit
# code: under the options it exports, UBSan exits 86 and ASan / LeakSanitizer 87 (never 1,
# "mismatch", which many CLI tests expect), shown here on three tiny programs built with the
# project's sanitizer flags; and no CLI test hides an exit code behind `|| true`.
# The same codes outside CI: a sanitizer build carries them as built-in defaults
# (harness/cli/sanitizer_options.c), checked here with no *SAN_OPTIONS in the environment on
# the tiny programs linked with that file and, in a sanitizer build, on a4w4check itself with
# a plugin that frees twice. Reproducer (before the fix): a sanitizer build of a4w4check run
# outside ci/test.sh's environment exited 1 after a UBSan or ASan report.
set -euo pipefail
CLI=$1 SRC=$2 WORK=$3
rm -rf "$WORK"; mkdir -p "$WORK"
cd "$SRC"
: "$CLI"
fail() { echo "sanitizer_exit_codes: $*"; exit 1; }

# 1. no `|| true` in the CLI tests: each states the exit code it expects
if grep -n -E '\|\|[[:space:]]*true\b' tests/cli/*.sh | grep -v '^tests/cli/sanitizer_exit_codes.sh:' \
     > "$WORK/ortrue"; then
  cat "$WORK/ortrue"; fail "'|| true' in tests/cli: expect the exact exit code instead"
fi

# 2. the options ci/test.sh exports for its sanitizer stage
opt() { sed -n "s/^export $1=\\(.*\\)\$/\\1/p" ci/test.sh; }
ubsan=$(opt UBSAN_OPTIONS) asan=$(opt ASAN_OPTIONS)
[[ ":$ubsan:" == *:exitcode=86:* && ":$ubsan:" == *:halt_on_error=1:* ]] ||
  fail "ci/test.sh must export UBSAN_OPTIONS with halt_on_error=1:exitcode=86 (found '$ubsan')"
[[ ":$asan:" == *:exitcode=87:* ]] || fail "ci/test.sh must export ASAN_OPTIONS with exitcode=87 (found '$asan')"
[[ ":$asan:" != *:abort_on_error=1:* ]] || fail "abort_on_error=1 makes ASan exit 134, not 87"

# 3. what those options do with this toolchain, on the CMake sanitizer flags
cc=${CC:-cc}
cat > "$WORK/san.c" <<'EOF'
#include <limits.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char **argv)
{
    if (!strcmp(argv[1], "ub")) { int x = INT_MAX; x += argc - 1; return x & 1; }
    if (!strcmp(argv[1], "heap")) { volatile char *p = malloc(4); p[argc + 2] = 1; free((void *)p); }
    if (!strcmp(argv[1], "leak")) { volatile char *p = malloc(40); p[0] = 1; p = NULL; }
    return 0;
}
EOF
if ! "$cc" -g -O0 -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined \
     "$WORK/san.c" -o "$WORK/san" 2> "$WORK/cc.err"; then
  cat "$WORK/cc.err"; echo "SKIP: $cc cannot build with -fsanitize=address,undefined here"; exit 77
fi
for want in ub:86 heap:87 leak:87 none:0; do
  set +e; UBSAN_OPTIONS=$ubsan ASAN_OPTIONS=$asan "$WORK/san" "${want%:*}" 2> "$WORK/san.err"; rc=$?; set -e
  [ "$rc" -eq "${want#*:}" ] || { tail -n 5 "$WORK/san.err"; fail "${want%:*}: exit $rc, expected ${want#*:}"; }
done

# 4. the built-in defaults alone (no UBSAN_OPTIONS / ASAN_OPTIONS): the same exit codes
"$cc" -g -O0 -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined \
  -DA4W4_SANITIZER_DEFAULTS "$WORK/san.c" harness/cli/sanitizer_options.c -o "$WORK/san-defaults" ||
  fail "cannot build the tiny programs with harness/cli/sanitizer_options.c"
for want in ub:86 heap:87 leak:87 none:0; do
  set +e; env -u UBSAN_OPTIONS -u ASAN_OPTIONS "$WORK/san-defaults" "${want%:*}" 2> "$WORK/san.err"; rc=$?; set -e
  [ "$rc" -eq "${want#*:}" ] || { tail -n 5 "$WORK/san.err"; fail "built-in defaults, ${want%:*}: exit $rc, expected ${want#*:}"; }
done

# 5. a sanitizer build of a4w4check, outside CI's environment: ASan's report of a plugin's
#    double free (in-process) exits 87, not 1
libs=$(ldd "$CLI" 2>&1) || fail "ldd $CLI: exit $?"
case $libs in
  *libasan*)
    printf 'name,M,N,K,regime,seed,tags\nd,4,32,64,normal,1,\n' > "$WORK/c.csv"
    set +e
    env -u UBSAN_OPTIONS -u ASAN_OPTIONS "$CLI" run --cases "$WORK/c.csv" --no-golden --quiet \
      --no-isolate --out "$WORK/df" --backend "plugin:$(dirname "$CLI")/plugins/liba4w4_dfree_plugin.so" \
      2> "$WORK/df.err"
    rc=$?
    set -e
    [ "$rc" -eq 87 ] || { tail -n 5 "$WORK/df.err"; fail "a4w4check with a double-freeing plugin: exit $rc, expected 87"; }
    grep -q "double-free" "$WORK/df.err" || fail "no ASan report of the double free"
    echo "sanitizer build of a4w4check: a report exits 87 without ASAN_OPTIONS" ;;
  *) echo "not a sanitizer build: a4w4check itself not run under a sanitizer here" ;;
esac
echo "sanitizer exit codes: UBSan 86, ASan 87, LeakSanitizer 87 (CI's options and built in); no '|| true' in tests/cli"
