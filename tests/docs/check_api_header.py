#!/usr/bin/env python3
"""check_api_header.py SRC LIB — the public header of liba4w4check (harness/api/a4w4check_api.h,
docs/api.md) against its documentation, its tests and the built library:

  1. every function the header declares has its own comment right above the declaration
     (#define lines may stand between), and the comment says how the call fails (an
     A4W4CHECK_ status, a NULL return, or "never fails") and cites the contracts section it
     follows ("contracts §N") or docs/api.md;
  2. tests/harness/api/test_api.c calls every one of them;
  3. LIB (liba4w4check.so) exports exactly the functions the header declares (nm -D).

Prints one line per offence and exits 1; 0 with a summary line.
"""
import re
import subprocess
import sys

DECL = re.compile(r"^[A-Za-z_][\w \*]*?\b(a4w4check_\w+)\(", re.M)


def declarations(text):
    """[(name, the comment above it or '')] in header order."""
    out = []
    lines = text.splitlines()
    for m in DECL.finditer(text):
        i = text.count("\n", 0, m.start()) - 1
        while i >= 0 and lines[i].startswith("#define"):
            i -= 1
        comment = []
        if i >= 0 and lines[i].rstrip().endswith("*/"):
            while i >= 0:
                comment.insert(0, lines[i])
                if lines[i].lstrip().startswith("/*"):
                    break
                i -= 1
        out.append((m.group(1), "\n".join(comment)))
    return out


def exported(lib):
    r = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True,
                       check=True)
    return {f[2] for f in (line.split() for line in r.stdout.splitlines())
            if len(f) == 3 and f[1] == "T" and f[2].startswith("a4w4check_")}


def main(src, lib):
    header = open(f"{src}/harness/api/a4w4check_api.h").read()
    tests = open(f"{src}/tests/harness/api/test_api.c").read()
    decls = declarations(header)
    bad = []
    for name, comment in decls:
        where = f"harness/api/a4w4check_api.h: {name}"
        if not comment:
            bad.append(f"{where}: no comment above the declaration")
            continue
        flat = " ".join(comment.split())
        if not re.search(r"A4W4CHECK_E[A-Z]+|A4W4CHECK_OK|NULL|never fails", flat):
            bad.append(f"{where}: the comment does not say how the call fails")
        if "contracts §" not in flat and "docs/api.md" not in flat:
            bad.append(f"{where}: the comment cites no contracts section (or docs/api.md)")
        if not re.search(rf"\b{name}\(", tests):
            bad.append(f"tests/harness/api/test_api.c: {name} is never called")
    names = {n for n, _ in decls}
    exp = exported(lib)
    bad += [f"{lib}: {n} is declared and not exported" for n in sorted(names - exp)]
    bad += [f"{lib}: {n} is exported and not declared" for n in sorted(exp - names)]
    for line in bad:
        print(line)
    if not decls:
        print("harness/api/a4w4check_api.h: no function declaration found")
        return 1
    if bad:
        return 1
    print(f"check_api_header: {len(decls)} functions, each documented, tested and exported")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
