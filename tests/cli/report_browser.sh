#!/usr/bin/env bash
# The HTML report in a real browser: headless Chromium (Debian's package, installed here when
# missing) loads report.html of a failing run and of a comparison from file:// with the
# network features off, dumps the DOM (title, verdict, hazard map, fence must be there after
# the page's script ran) and takes a screenshot that must not be blank. One browser serves
# the three pages (tests/cli/browser_session.py: its start-up was most of each page's cost).
# Exit 77 (CTest SKIP_RETURN_CODE) when no Chromium is present and none can be installed.
set -euo pipefail
CLI=$1 SRC=$2 WORK=$3 TOOLS=$4
rm -rf "$WORK"; mkdir -p "$WORK"
cd "$SRC"
PLUGIN="$TOOLS/../plugins/liba4w4_bad_plugin.so"

browser() { # the browser's path, or nothing (exit 0 either way)
  local b
  for b in chromium chromium-browser; do command -v "$b" && return 0; done
  return 0
}
B=$(browser)
if [ -z "$B" ]; then
  if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
    echo "SKIP: chromium is not installed and this user cannot install it"; exit 77
  fi
  echo "installing Debian's chromium (apt-get install -y chromium)"
  export DEBIAN_FRONTEND=noninteractive
  if ! apt-get install -y -qq chromium > "$WORK/apt.log" 2>&1; then
    apt-get update -qq >> "$WORK/apt.log" 2>&1 ||   # no network: the install below says so
      echo "apt-get update: exit $?" >> "$WORK/apt.log"
    apt-get install -y -qq chromium >> "$WORK/apt.log" 2>&1 ||
      { tail -n 5 "$WORK/apt.log"; echo "SKIP: chromium could not be installed"; exit 77; }
  fi
  B=$(browser)
  [ -n "$B" ] || { echo "SKIP: chromium installed but not on PATH"; exit 77; }
fi
echo "browser: $B ($("$B" --version 2>/dev/null || echo '?'))"

command -v python3 >/dev/null || { echo "no python3: the browser session needs it"; exit 1; }

# a run with failures (the bad plugin is one ULP off in row 0) and its report
set +e
"$CLI" run --e8m0-code0 2^-127 --set edge --no-golden --backend "cpu-asm,plugin:$PLUGIN" --out "$WORK/run" --quiet
rc=$?
set -e
[ "$rc" -eq 1 ] || { echo "run: exit $rc, expected 1"; exit 1; }
"$CLI" report "$WORK/run/results.json" --format html --out "$WORK/run" --quiet
HTML="$WORK/run/report.html"
! grep -Eiq '(src|href)="(https?:)?//' "$HTML" || { echo "report.html loads something from the network"; exit 1; }

# the comparison page too (base: the reference plugin; candidate: the bad one)
"$CLI" run --e8m0-code0 2^-127 --set edge --no-golden --backend "cpu-asm,plugin:$TOOLS/../plugins/liba4w4_ref_plugin.so" \
  --out "$WORK/base" --quiet
set +e
"$CLI" compare "$WORK/base" "$WORK/run" --out "$WORK/cmp" --format html --quiet \
  --pair "plugin:$TOOLS/../plugins/liba4w4_ref_plugin.so=plugin:$PLUGIN"
rc=$?
set -e
[ "$rc" -eq 1 ] || { echo "compare: exit $rc, expected 1"; exit 1; }

# one headless browser, its own profile, no network features: the report's DOM and a
# 1400x2000 screenshot, the comparison's DOM
prof=$(mktemp -d "$WORK/profile.XXXXXX")
timeout 240 python3 "$SRC/tests/cli/browser_session.py" "$B" "$prof" \
  dom "file://$HTML" "$WORK/dom.html" shot "file://$HTML" "$WORK/report.png" \
  dom "file://$WORK/cmp/compare.html" "$WORK/cmp-dom.html" ||
  { echo "the browser session failed"; tail -n 20 "$prof/chrome.err"; exit 1; }
for want in '<title>a4w4check report: edge - FAIL</title>' 'Verdict: FAIL' '<svg' \
            'hazard map of plugin:' 'Triton (N' 'e_n128' 'bf16 ULP distance</th>' \
            '<td class="mono">0x'; do
  grep -qF "$want" "$WORK/dom.html" || { echo "rendered DOM lacks '$want'"; exit 1; }
done

[ -s "$WORK/report.png" ] || { echo "no screenshot written"; cat "$prof/chrome.err"; exit 1; }
size=$(stat -c %s "$WORK/report.png")
[ "$(head -c 8 "$WORK/report.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] ||
  { echo "report.png is not a PNG"; exit 1; }
[ "$size" -gt 20000 ] || { echo "report.png is only $size bytes: blank page?"; exit 1; }
# decode and count colours: a blank page has one or two
python3 - "$WORK/report.png" <<'EOF'
import struct, sys, zlib
data = open(sys.argv[1], 'rb').read()
pos, idat, w, h, ct = 8, b'', 0, 0, 0
while pos < len(data):
    n, t = struct.unpack('>I4s', data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if t == b'IHDR':
        w, h, depth, ct = struct.unpack('>IIBB', body[:10])
    elif t == b'IDAT':
        idat += body
    pos += 12 + n
bpp = {2: 3, 6: 4}.get(ct)
if bpp is None:
    sys.exit(f"unexpected PNG colour type {ct}")
raw, stride, prev, colours = zlib.decompress(idat), w * bpp, bytearray(w * bpp), set()
LOW, HIGH = int.from_bytes(b'\x7f' * stride, 'little'), int.from_bytes(b'\x80' * stride, 'little')
def add(x, y):  # the rows as integers, added byte by byte mod 256 (no carry between bytes)
    return ((x & LOW) + (y & LOW)) ^ ((x ^ y) & HIGH)
for y in range(h):
    f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    if f in (1, 2):  # Sub: a prefix sum bpp bytes apart (by doubling); Up: the row above added
        x, full = int.from_bytes(line, 'little'), (1 << 8 * stride) - 1
        if f == 2:
            x = add(x, int.from_bytes(prev, 'little'))
        k = bpp
        while f == 1 and k < stride:
            x, k = add(x, (x << 8 * k) & full), 2 * k
        line = bytearray(x.to_bytes(stride, 'little'))
    for i in range(stride if f in (3, 4) else 0):
        a = line[i - bpp] if i >= bpp else 0
        b, c = prev[i], prev[i - bpp] if i >= bpp else 0
        if f == 1: line[i] = (line[i] + a) & 255
        elif f == 2: line[i] = (line[i] + b) & 255
        elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c; pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    if y % 4 == 0:
        for x in range(0, stride, bpp * 3):
            colours.add(bytes(line[x:x + 3]))
    prev = line
print(f"screenshot {w}x{h}, {len(colours)} distinct colours sampled")
if len(colours) < 16:
    sys.exit("the screenshot is (nearly) one colour: the page did not render")
want = {(0xD5, 0x5E, 0x00): 'vermillion (fail)', (0x00, 0x9E, 0x73): 'bluish green (pass)'}
for rgb, what in want.items():
    if not any(max(abs(c[k] - rgb[k]) for k in range(3)) <= 6 for c in colours):
        sys.exit(f"the screenshot shows no {what} cell")
EOF
echo "report.png: $size bytes"

# the comparison page rendered too
grep -qF 'REGRESSION' "$WORK/cmp-dom.html" || { echo "compare DOM lacks REGRESSION"; exit 1; }
nfail=$(grep -o '"verdict":[^,]*"fail"' "$WORK/run/results.json" | wc -l)
grep -qF "New failures ($nfail)" "$WORK/cmp-dom.html" ||
  { echo "compare DOM lacks 'New failures ($nfail)'"; exit 1; }
echo "browser render ok"
