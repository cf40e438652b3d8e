#!/usr/bin/env python3
"""check_includes.py SRC — fails when an #include "..." goes against the dependency direction
(docs/architecture.md), in one pass over the tree (Python 3 standard library):
  ref/ and gpu/ include only their own headers; reports/ includes only its own;
  harness rooms: io <- gen <- engine <- discover, commands, layer <- backends <- api <- cli (a
  room includes its own and lower rooms, never a sibling of its rank; backends/hip/ counts
  as backends), plus ref/, gpu/ and reports/ headers.
Prints one line per violation: FILE: includes HEADER (ROOM) from ROOM. Also fails when a header
name is used in two rooms, when a source of the engine's rooms (io gen engine discover commands
layer) names a registered backend in a string literal, and when harness/api includes runner.h.
Exits 1 after the findings, 0 with one summary line, 2 on bad usage.
"""
import glob
import os
import re
import sys

import source_tree

ROOMS = (("ref/", "ref"), ("gpu/", "gpu"), ("reports/", "reports"), ("harness/io/", "io"),
         ("harness/gen/", "gen"), ("harness/engine/", "engine"),
         ("harness/discover/", "discover"), ("harness/commands/", "commands"),
         ("harness/layer/", "layer"), ("harness/backends/", "backends"), ("harness/api/", "api"),
         ("harness/cli/", "cli"))
RANK = {"io": 1, "gen": 2, "engine": 3, "discover": 4, "commands": 4, "layer": 4,
        "backends": 5, "api": 6, "cli": 7}
A = re.ASCII
INCLUDE = re.compile(r'\s*#\s*include\s*"([^"]*)"', A)
BACKEND_NAME = re.compile(r'\.name = "([^"]+)"', A)
RUNNER_H = re.compile(r'^\s*#\s*include\s*"(?:[^"]*/)?runner(?:_internal)?\.h"', A)
ENGINE_ROOMS = ("io", "gen", "engine", "discover", "commands", "layer")


def room_of(path):
    """The room of a path relative to SRC ("other" outside the rooms)."""
    return next((room for prefix, room in ROOMS if path.startswith(prefix)), "other")


def allowed(frm, to):
    """May a file of room FRM include a header of room TO?"""
    if frm == to:
        return True
    if frm in ("ref", "gpu", "reports"):
        return False
    if frm in RANK:
        return to in ("ref", "gpu", "reports") or RANK.get(to, 0) < RANK[frm]
    return True


def files(tops, suffixes):
    """Paths under TOPS whose names end in SUFFIXES (as find lists them: no symlinked folder
    followed), sorted."""
    found = []
    for top in tops:
        for d, _, names in os.walk(top):
            found += [os.path.join(d, n) for n in names if n.endswith(suffixes)]
    return sorted(found)


def lines(path):
    """The file's lines (split at '\\n' only), undecodable bytes kept."""
    with open(path, "rb") as f:
        return f.read().decode("utf-8", "surrogateescape").split("\n")


def header_rooms(out):
    """{header base name: room}; a name used in two rooms is a finding."""
    where = {}
    for h in files(("ref", "gpu", "reports", "harness"), (".h",)):
        b, room = os.path.basename(h), room_of(h)
        if b in where and where[b] != room:
            out.append(f"{h}: header name also used in room {where[b]}")
        where[b] = room
    return where


def check_includes(where, out):
    """Every #include "..." of ref/ gpu/ reports/ harness/ follows the room ranks."""
    for f in files(("ref", "gpu", "reports", "harness"), (".c", ".h", ".hip")):
        frm = room_of(f)
        for line in lines(f):
            m = INCLUDE.match(line)
            if not m:
                continue
            inc = m.group(1).rsplit("/", 1)[-1]
            to = where.get(inc)
            if to and not allowed(frm, to):  # None: generated or system header
                out.append(f"{f}: includes {inc} ({to}) from {frm}")


def grep(paths, pattern):
    """grep -n over PATHS: ["FILE:LINE:text"] of the lines PATTERN matches somewhere."""
    return [f"{p}:{n}:{line}" for p in paths for n, line in enumerate(lines(p), 1)
            if pattern.search(line)]


def check_names(out):
    """The engine's rooms never name a backend: no string literal there starts with a
    registered type's name and ':' ("plugin:...") or is a system under test's name."""
    names = set()
    for p in files(("harness/backends",), ("",)):
        for line in lines(p):
            names.update(BACKEND_NAME.findall(line))
    sources = [p for r in ENGINE_ROOMS for p in sorted(glob.glob(f"harness/{r}/*.c"))]
    for n in sorted(names):
        q = re.escape(n)
        pat = f'"{q}:' + (f'|"{q}"' if "-" in n else "")
        out += [f"{hit}: names backend {n} (the engine never names one: ask the backend type)"
                for hit in grep(sources, re.compile(pat, A))]


def main(argv):
    rc = source_tree.enter(argv, "check_includes")
    if rc is not None:
        return rc
    out = []
    check_includes(header_rooms(out), out)
    check_names(out)
    # The C library (harness/api) judges through engine/judge.h, never the runner's header.
    api = sorted(glob.glob("harness/api/*.c")) + sorted(glob.glob("harness/api/*.h"))
    out += [f"{hit}: the library includes runner.h (it judges through judge.h: "
            "a4w4_judge_outputs)" for hit in grep(api, RUNNER_H)]
    for line in out:
        print(line)
    if out:
        return 1
    print("layering: every include follows io <- gen <- engine <- discover, commands, layer <- "
          "backends <- api <- cli; ref/, gpu/, reports/ stand alone")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
