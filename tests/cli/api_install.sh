#!/usr/bin/env bash
# liba4w4check installs and links as a user links it (docs/api.md): `cmake --install` into a
# fresh prefix puts the header, the shared and static libraries and a4w4check.pc there; a
# small program built with `pkg-config --cflags --libs a4w4check` (and once against the static
# library, `pkg-config --static`) generates a case, judges all-zero outputs (a failure with
# its first mismatch) and the API version; both builds print the same verdict line. The Python
# package, copied away from any build tree, judges through the installed library too: found
# by the loader (LD_LIBRARY_PATH=the prefix's lib) and at A4W4CHECK_LIB, the same verdict.
set -euo pipefail
CLI=$1 WORK=$3
B=$(dirname "$CLI")
rm -rf "$WORK"; mkdir -p "$WORK"; cd "$WORK"
fail() { echo "api_install: $*"; exit 1; }
command -v pkg-config > /dev/null || fail "pkg-config is not installed (ci/setup.sh installs it)"
cmake --install "$B" --prefix "$WORK/prefix" > install.log || { cat install.log; fail "install"; }
[ -f prefix/include/a4w4check/a4w4check_api.h ] || fail "no header installed"
pc=$(find prefix -name a4w4check.pc)
[ -n "$pc" ] || fail "no a4w4check.pc installed"
libdir=$(dirname "$(dirname "$pc")")
[ -e "$libdir/liba4w4check.so" ] && [ -f "$libdir/liba4w4check.a" ] || fail "libraries missing in $libdir"
export PKG_CONFIG_PATH=$(dirname "$pc")
[ "$(pkg-config --modversion a4w4check)" = "$("$CLI" --version | grep -oE '[0-9]+\.[0-9]+\.[0-9]+' | head -1)" ] ||
  fail "pkg-config version is not the tool's"
cat > tiny.c <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <a4w4check_api.h>
int main(void)
{
    if (a4w4check_api_version() != A4W4CHECK_API_VERSION) return 3;
    char err[512];
    a4w4check_case c = {"tiny", 2, 32, 64, "exact", 5};
    a4w4check_operands *o;
    if (a4w4check_generate(&c, &o, err, sizeof err)) { fprintf(stderr, "%s\n", err); return 2; }
    uint16_t *y = calloc(c.M * c.N, sizeof *y);
    a4w4check_judge_opts opts = {"ordered(1)", A4W4CHECK_CODE0_BOTH, "zeros"};
    a4w4check_verdict v;
    if (a4w4check_judge(o, y, c.M * c.N, &opts, &v, err, sizeof err)) return 2;
    printf("%s|%zu\n", v.verdict_name, v.checked);
    a4w4check_operands_free(o);
    free(y);
    return 0;
}
C
# an instrumented build's library (gcov, ASan/UBSan) needs its runtime in the program too
# (tests/CMakeLists.txt sets A4W4_INSTRUMENT_FLAGS; empty in the optimized build)
read -r -a instr <<< "${A4W4_INSTRUMENT_FLAGS:-}"
cc -std=c11 -Wall -Wextra -Werror "${instr[@]}" tiny.c $(pkg-config --cflags --libs a4w4check) -o tiny_shared
cc -std=c11 -Wall -Wextra -Werror "${instr[@]}" tiny.c $(pkg-config --cflags a4w4check) \
  "$libdir/liba4w4check.a" $(pkg-config --static --libs-only-l a4w4check | sed 's/-la4w4check//') \
  -o tiny_static
out_shared=$(LD_LIBRARY_PATH=$libdir ./tiny_shared) || fail "shared build exit $?"
out_static=$(./tiny_static) || fail "static build exit $?"
[ "$out_shared" = "fail|64" ] || fail "shared build printed '$out_shared', expected 'fail|64'"
[ "$out_static" = "$out_shared" ] || fail "static build printed '$out_static'"
static_libs=$(ldd tiny_static) || fail "ldd tiny_static: exit $?" # read whole: `ldd | grep -q` races under pipefail
grep -q a4w4check <<< "$static_libs" && fail "the static build loads a shared liba4w4check"

# the Python bridge on the installed library (in a sanitizer build python loads it only with the
# runtime preloaded: A4W4_PY_SANITIZER_ENV, set by tests/CMakeLists.txt)
SRC=$2
py_env=()
lib_deps=$(ldd "$libdir/liba4w4check.so") || fail "ldd liba4w4check.so: exit $?"
if grep -q 'libasan\|libubsan' <<< "$lib_deps"; then
  read -r -a py_env <<< "${A4W4_PY_SANITIZER_ENV:-}"
fi
if grep -q 'libasan\|libubsan' <<< "$lib_deps" && ((${#py_env[@]} == 0)); then
  echo "api_install: the Python part is not run: the library is built with sanitizers and no" \
    "runtime to preload was given (A4W4_PY_SANITIZER_ENV)"
else
  mkdir py && cp -r "$SRC/python/a4w4check" py/
  judge='import numpy as np, a4w4check
v = a4w4check.judge(lambda **o: np.zeros((2, 32), np.uint16), 2, 32, 64, regime="exact",
                    seed=5, name="tiny", contract="ordered(1)")
lib = [l.split()[-1] for l in open("/proc/self/maps") if "liba4w4check" in l]
print(f"{v.verdict}|{v.checked}|{lib[0]}")'
  for how in loader lib; do
    vars=(PYTHONPATH=py PYTHONDONTWRITEBYTECODE=1)
    if [ $how = loader ]; then vars+=(LD_LIBRARY_PATH=$libdir)
    else vars+=(A4W4CHECK_LIB=$libdir/liba4w4check.so); fi
    out_py=$(env ${py_env[@]+"${py_env[@]}"} "${vars[@]}" /usr/bin/python3 -c "$judge") ||
      fail "python ($how): exit $?"
    [ "${out_py%%|/*}" = "$out_shared" ] ||
      fail "python ($how) printed '$out_py', expected '$out_shared|...'"
    [[ "$out_py" == *"|$(cd "$libdir" && pwd -P)/liba4w4check.so"* ]] ||
      fail "python ($how) loaded another library: '$out_py'"
  done
fi
echo "api_install: header, liba4w4check.so/.a and a4w4check.pc installed; both link and judge;" \
  "the Python package judges through the installed library"
