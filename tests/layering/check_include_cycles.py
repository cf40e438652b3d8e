#!/usr/bin/env python3
"""check_include_cycles.py — no include loop among the project's C units.

A unit is a source and its header (harness/gen/gen.c and gen.h are the unit gen), with its
private headers (X_internal.h, X_kernels.h, X_impl.h belong to unit X where X exists); unit A
depends on unit B when a file of A includes B's header by name ("b.h"). Two units that
depend on each other, directly or around a longer loop, are one thing split in two files:
this lists every such loop (a strongly connected set of units, and one cycle through it) and
fails on one. Usage: check_include_cycles.py REPO_ROOT
"""
import os
import re
import sys

ROOTS = ("ref", "harness", "reports", "gpu", "python")
PRIVATE = ("_internal", "_kernels", "_impl")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def units(root):
    """{unit path without extension: [files]}, and {header base name: [unit]}."""
    files, headers = {}, {}
    for top in ROOTS:
        for d, _, names in os.walk(os.path.join(root, top)):
            for n in sorted(names):
                if not n.endswith((".c", ".h", ".hip", ".cu")):
                    continue
                p = os.path.join(d, n)
                u = os.path.relpath(os.path.splitext(p)[0], root)
                files.setdefault(u, []).append(p)
                if n.endswith(".h"):
                    headers.setdefault(n, []).append(u)
    for u in list(files):
        for suffix in PRIVATE:
            base = u[: -len(suffix)]
            if u.endswith(suffix) and base in files:
                files[base] += files.pop(u)
                for n, us in headers.items():
                    headers[n] = [base if x == u else x for x in us]
    return files, headers


def graph(files, headers):
    g = {u: set() for u in files}
    for u, ps in files.items():
        for p in ps:
            with open(p, encoding="utf-8", errors="replace") as f:
                text = f.read()
            for inc in INCLUDE.findall(text):
                for v in headers.get(os.path.basename(inc), []):
                    if v != u:
                        g[u].add(v)
    return g


def sccs(g):
    """Tarjan's strongly connected components (iterative)."""
    index, low, on, stack, out, n = {}, {}, set(), [], [], [0]
    for s in sorted(g):
        if s in index:
            continue
        work = [(s, iter(sorted(g[s])))]
        index[s] = low[s] = n[0]
        n[0] += 1
        stack.append(s)
        on.add(s)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = n[0]
                    n[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(g[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def cycle_in(g, comp):
    """One cycle through comp's first unit, by breadth-first search inside comp."""
    start, inside = comp[0], set(comp)
    prev, queue = {start: None}, [start]
    while queue:
        v = queue.pop(0)
        for w in sorted(g[v]):
            if w == start:
                path = [v]
                while prev[path[-1]] is not None:
                    path.append(prev[path[-1]])
                return list(reversed(path)) + [start]
            if w in inside and w not in prev:
                prev[w] = v
                queue.append(w)
    return comp


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    files, headers = units(root)
    g = graph(files, headers)
    loops = sccs(g)
    for comp in loops:
        print("include loop: %s (units %s)" % (" -> ".join(cycle_in(g, comp)), ", ".join(comp)))
    if loops:
        print("%d include loop%s among %d units: a unit that needs another's declarations "
              "and is needed by it; merge them or move the shared part into a header of its "
              "own" % (len(loops), "" if len(loops) == 1 else "s", len(files)))
        return 1
    print("no include loop among %d units" % len(files))
    return 0


if __name__ == "__main__":
    sys.exit(main())
