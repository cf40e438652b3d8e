#!/usr/bin/env bash
# docs/forensics.md's walk stays true: every command of its console blocks that names one case
# (--case), a saved bundle or a shape is run again as written (from a directory whose build/
# holds this a4w4check and its plugins), and every output line the page quotes must be a line
# of what it prints now; the summary.md line the page quotes must be the case's line. Step 1
# (the whole pre-merge set) runs for its one case only, with --case added: its saved bundle is
# the one step 4 verifies. The full-set commands (steps 1 and 7) are not rerun whole here.
set -euo pipefail
CLI=$1 SRC=$2 WORK=$3
rm -rf "$WORK"; mkdir -p "$WORK/build"
ln -s "$CLI" "$WORK/build/a4w4check"
ln -s "$(dirname "$CLI")/plugins" "$WORK/build/plugins"
cd "$WORK"
python3 - "$SRC/docs/forensics.md" <<'PY'
import re, shlex, subprocess, sys

doc = open(sys.argv[1]).read()
walk = doc.split("## The walk", 1)[1].split("\n## ", 1)[0]
blocks = re.findall(r"```(console|text)\n(.*?)```", walk, re.S)
case = "s_m200_n192_k800"


def run(cmd):
    r = subprocess.run(shlex.split(cmd), capture_output=True, text=True, timeout=600)
    return r.stdout + r.stderr


checked = 0
for kind, body in blocks:
    if kind == "text":  # the summary.md line of the case
        want = body.strip()
        got = [l for l in open("build/walk/summary.md").read().split("\n") if l.startswith(f"- `{case}`")]
        assert got == [want], f"summary.md line differs:\n got  {got}\n want {want}"
        checked += 1
        continue
    cmds = re.split(r"^\$ ", body, flags=re.M)[1:]
    for chunk in cmds:
        cmd, _, out = chunk.partition("\n")
        if not cmd.startswith("build/a4w4check"):
            continue
        full_set = "--set premerge" in cmd and "--case" not in cmd
        if full_set and "--save-failing" in cmd:  # step 1, for the walk's case only: its
            run(cmd + f" --case {case}")         # artifacts, not its whole-set tail line
            continue
        if full_set:
            continue  # step 7: the whole set, not rerun here
        got = run(cmd).split("\n")
        for line in out.split("\n"):
            if not line.strip() or line.strip() == "...":
                continue
            assert line in got, f"{cmd}\n  quoted line not printed: {line}\n  printed:\n" + "\n".join(got)
            checked += 1
print(f"forensics walk: {checked} quoted lines checked")
assert checked >= 15, checked
PY
echo "forensics walk ok"
