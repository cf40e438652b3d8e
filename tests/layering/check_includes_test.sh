#!/bin/sh
# check_includes_test.sh CHECKER — the room ranks of the include check: in a small tree,
# gen/ including an engine header (up), layer/ including a discover/ header (a sibling of its
# rank) and engine/ including a layer/ header (up) each fail with their line; gen/ including
# io/, layer/ including the engine and gen/, and backends/ including layer/ pass. Then its
# other rules: a header name in two rooms, an engine source naming a registered backend
# ("cpu-x", "plugin:...") and the library (api/) including runner.h each fail with their line.
set -u
checker=${1:?usage: check_includes_test.sh CHECKER}
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
mkdir -p "$t/ref" "$t/gpu" "$t/reports"
for r in io gen engine discover layer backends; do
    mkdir -p "$t/harness/$r"
    : >"$t/harness/$r/${r}_api.h"
done
printf '#include "io_api.h"\n#include "engine_api.h"\n' >"$t/harness/gen/g.c"
printf '#include "engine_api.h"\n#include "gen_api.h"\n#include "discover_api.h"\n' \
    >"$t/harness/layer/l.c"
printf '#include "layer_api.h"\n' >"$t/harness/engine/e.c"
printf '#include "layer_api.h"\n#include "gen_api.h"\n' >"$t/harness/backends/b.c"
out=$(python3 "$checker" "$t")
rc=$?
want='harness/engine/e.c: includes layer_api.h (layer) from engine
harness/gen/g.c: includes engine_api.h (engine) from gen
harness/layer/l.c: includes discover_api.h (discover) from layer'
if [ "$rc" != 1 ] || [ "$out" != "$want" ]; then
    echo "FAIL: three includes against the ranks: exit $rc (want 1), output:"
    printf '%s\n' "$out"
    exit 1
fi
printf '#include "io_api.h"\n' >"$t/harness/gen/g.c"
printf '#include "engine_api.h"\n#include "gen_api.h"\n' >"$t/harness/layer/l.c"
: >"$t/harness/engine/e.c"
out=$(python3 "$checker" "$t")
rc=$?
if [ "$rc" != 0 ]; then
    echo "FAIL: every include downward: exit $rc (want 0), output:"
    printf '%s\n' "$out"
    exit 1
fi
mkdir -p "$t/harness/api"
: >"$t/harness/io/gen_api.h"
printf 'static const struct b %s = { .name = "%s" };\n' b cpu-x p plugin >"$t/harness/backends/b.c"
printf 'const char *ok = "cpu-xy";\nconst char *s = "cpu-x";\nconst char *t = "plugin:a";\n' \
    >"$t/harness/engine/e.c"
printf '#include "judge.h"\n  #  include "engine/runner.h"\n' >"$t/harness/api/api.c"
out=$(python3 "$checker" "$t")
rc=$?
named='(the engine never names one: ask the backend type)'
judge='the library includes runner.h (it judges through judge.h: a4w4_judge_outputs)'
want="harness/io/gen_api.h: header name also used in room gen
harness/engine/e.c:2:const char *s = \"cpu-x\";: names backend cpu-x $named
harness/engine/e.c:3:const char *t = \"plugin:a\";: names backend plugin $named
harness/api/api.c:2:  #  include \"engine/runner.h\": $judge"
if [ "$rc" != 1 ] || [ "$out" != "$want" ]; then
    echo "FAIL: a header name in two rooms, a backend named by the engine, runner.h in" \
        "the library: exit $rc (want 1), output:"
    printf '%s\n' "$out"
    exit 1
fi
echo "ok: gen/ below the engine, layer/ beside discover/ above it, each include checked;" \
    "one header name per room, no backend named by the engine, no runner.h in the library"
