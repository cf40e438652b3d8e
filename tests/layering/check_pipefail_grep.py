#!/usr/bin/env python3
"""check_pipefail_grep.py SRC — fails when a script under tests/, ci/ or .ci/ pipes a program
that writes its output in many writes (ldd, ldconfig, find, nm, objdump, readelf, strings)
straight into `grep -q`. Under `set -o pipefail` such a pipeline fails at random: grep exits at
the first match, the writer's next write gets SIGPIPE and the pipeline's status is 141. Read the
output whole first (`libs=$(ldd X)`, then `grep -q PAT <<< "$libs"`).
The scripts: git's tracked tests/*.sh, tests/*.inc, ci/*, .ci/* (every depth), or without git
the same found on disk (and files named run). Comments (whole-line, or after a blank) are
dropped before the match. Prints FILE:LINE:the line for each offender and exits 1; exits 0
with one summary line; exits 2 on bad usage.
"""
import os
import re
import subprocess
import sys

import source_tree

A = re.ASCII
WHOLE_COMMENT = re.compile(r"^([0-9]+:)\s*#.*$", A | re.S)
TAIL_COMMENT = re.compile(r"\s#.*$", A | re.S)
PIPED = re.compile(r"(?:^|[^A-Za-z0-9_])(?:ldd|ldconfig|find|nm|objdump|readelf|strings)\s[^|]*"
                   r"\|\s*grep\s+(?:-[A-Za-z0-9]*q|--quiet)", A)


def scripts():
    """The scripts to read, as git tracks them (or as found on disk without git)."""
    try:
        r = subprocess.run(["git", "ls-files", "--", "tests/*.sh", "tests/*.inc", "ci/*", ".ci/*"],
                           capture_output=True, text=True, check=True)
        return r.stdout.splitlines()
    except (OSError, subprocess.CalledProcessError):
        found = []
        for top in ("tests", "ci", ".ci"):
            for d, _, names in os.walk(top):
                found += [os.path.join(d, n) for n in names
                          if n.endswith((".sh", ".inc")) or n == "run"]
        return found


def offenders(path):
    """["N:line"] of PATH's lines that pipe a many-write program into grep -q."""
    with open(path, "rb") as f:
        text = f.read().decode("utf-8", "surrogateescape")
    if text.endswith("\n"):
        text = text[:-1]
    hits = []
    for n, line in enumerate(text.split("\n"), 1):
        s = WHOLE_COMMENT.sub(r"\1", f"{n}:{line}", count=1)
        s = TAIL_COMMENT.sub("", s, count=1)
        if PIPED.search(s):
            hits.append(s)
    return hits


def main(argv):
    rc = source_tree.enter(argv, "check_pipefail_grep")
    if rc is not None:
        return rc
    paths = scripts()
    bad = [f"{p}:{hit}" for p in paths if os.path.isfile(p) for hit in offenders(p)]
    for line in bad:
        print(line)
    if bad:
        print("check_pipefail_grep: read the writer's output whole before grep -q (see this "
              "file's head)")
        return 1
    print(f"check_pipefail_grep: {len(paths)} scripts, no multi-write program piped into grep -q")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
