#!/usr/bin/env python3
"""check_tree.py SRC — the tree of docs/architecture.md ("## The tree", its first fenced block)
against the repository's files.

The tree's entry lines are `<indent>name/  description` (indent 0, 2 or 4 spaces: a top-level
directory and its subdirectories); the lines below an entry, indented to the description
column, continue its description. The rules:

  1. every entry is a directory of the repository, and every top-level directory holding
     source files has an entry;
  2. every path the tree names (a token with a file extension or ending in '/', or a pattern
     with '*' or '<name>') matches a file or directory: relative to the entry it is listed
     under, to the entry's parent, or to the repository root;
  3. every source file (.c .h .hip .py .sh) is listed: inside the deepest entry that holds it,
     it is named by its stem (the file name without its extension, also without an `a4w4_`
     prefix) or matched by a pattern of that entry; a file further down is covered when the
     entry names its first directory (`plain/`); an entry whose description holds '…' lists
     its directory as a whole. `__init__.py` needs no mention.

Prints one line per offence (the path or the tree line) and exits 1; 0 with a summary line.
"""
import fnmatch
import os
import re
import subprocess
import sys

SOURCE_EXT = (".c", ".h", ".hip", ".py", ".sh")
DESC_COLUMN = 20  # entry names sit left of this column, continuation lines at or right of it


def repo_files(src):
    """Every file of the tree, tracked or new (not ignored); a walk outside a checkout."""
    try:
        out = subprocess.run(["git", "-C", src, "ls-files", "--cached", "--others",
                              "--exclude-standard"], capture_output=True, text=True, check=True)
        files = [f for f in out.stdout.splitlines() if os.path.isfile(os.path.join(src, f))]
        if files:
            return files
    except (OSError, subprocess.CalledProcessError):
        pass
    files = []
    for root, dirs, names in os.walk(src):
        dirs[:] = [d for d in dirs if not d.startswith((".", "build")) and d != "__pycache__"]
        files += [os.path.relpath(os.path.join(root, n), src) for n in names]
    return files


def tree_block(doc):
    """The lines of the first fenced block after '## The tree'."""
    text = open(doc, encoding="utf-8").read()
    at = text.find("\n## The tree")
    if at < 0:
        sys.exit(f"{doc}: no '## The tree' section")
    m = re.search(r"\n```[^\n]*\n(.*?)\n```", text[at:], re.S)
    if not m:
        sys.exit(f"{doc}: no fenced block under '## The tree'")
    first = text[:at].count("\n") + text[at:at + m.start(1)].count("\n") + 1
    return first, m.group(1).split("\n")


def parse_entries(first, lines):
    """[(path, description, line number)] in order; path like 'harness/io'."""
    entries, stack = [], []
    for i, line in enumerate(lines):
        m = re.match(r"^( *)(\S+/)(?:\s{2,}(.*))?$", line)
        if m and len(m.group(1)) < DESC_COLUMN and not line.startswith(" " * DESC_COLUMN):
            depth = len(m.group(1)) // 2
            stack = stack[:depth] + [m.group(2).rstrip("/")]
            entries.append(["/".join(stack), m.group(3) or "", first + i])
        elif entries:
            entries[-1][1] += " " + line.strip()
        elif line.strip():
            entries.append(["", line.strip(), first + i])
    return entries


def pattern_of(token):
    """A tree token as an fnmatch pattern: '<name>' and '*' match anything."""
    return re.sub(r"<[^>]*>", "*", token)


def path_tokens(desc):
    """Paths and patterns a description names."""
    toks = re.findall(r"[A-Za-z0-9_.*<>/-]+", desc)
    out = []
    for t in toks:
        t = t.rstrip(".,;:)")
        if t.endswith("/") or re.search(r"\.(c|h|hip|py|sh|md|csv|json|yml|cmake|toml)$", t):
            out.append(t)
        elif "*" in t:
            out.append(t)
    return out


def exists(src, files, dirs, base, token):
    """Does token name a file or directory, relative to base, base's parent or the root?"""
    pat = pattern_of(token.rstrip("/"))
    parent = base.rsplit("/", 1)[0] if "/" in base else ""
    for b in (base, parent, ""):
        full = f"{b}/{pat}" if b else pat
        if token.endswith("/"):
            if any(fnmatch.fnmatchcase(d, full) for d in dirs):
                return True
        elif any(fnmatch.fnmatchcase(f, full) for f in files) or \
                any(fnmatch.fnmatchcase(d, full) for d in dirs):
            return True
        if b == "" and "/" not in pat:  # a bare name or stem somewhere below base
            inside = [f for f in files if f.startswith(base + "/")] if base else files
            for f in inside:
                name = os.path.basename(f)
                if any(fnmatch.fnmatchcase(n, p) for n in (name, name.removeprefix("a4w4_"))
                       for p in (pat, pat + ".*")):
                    return True
    return False


def listed(relpath, desc):
    """Is relpath (inside an entry) named by the entry's description?"""
    words = set(re.findall(r"[A-Za-z0-9_]+", desc))
    name = os.path.basename(relpath)
    if "/" in relpath:  # further down: its first directory must be named
        top = relpath.split("/", 1)[0]
        return re.search(r"(^|[\s(,])" + re.escape(top) + r"/", desc) is not None
    stem = name.rsplit(".", 1)[0]
    if name == "__init__.py" or stem in words or stem.removeprefix("a4w4_") in words:
        return True
    for tok in path_tokens(desc):
        pat = pattern_of(tok)
        for cand in (name, name.removeprefix("a4w4_"), relpath):
            if fnmatch.fnmatchcase(cand, pat) or fnmatch.fnmatchcase(cand, pat + ".*"):
                return True
    return False


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: check_tree.py SRC")
    src = sys.argv[1]
    doc = os.path.join(src, "docs/architecture.md")
    files = repo_files(src)
    dirs = sorted({os.path.dirname(f) for f in files} |
                  {"/".join(f.split("/")[:i]) for f in files for i in range(1, f.count("/"))})
    first, lines = tree_block(doc)
    entries = [e for e in parse_entries(first, lines) if e[0]]
    bad = []
    where = {e[0]: e for e in entries}
    for path, desc, line in entries:  # rule 1 and rule 2
        if path not in dirs:
            bad.append(f"docs/architecture.md:{line}: {path}/ is no directory of the repository")
        for tok in path_tokens(desc):
            if not exists(src, files, dirs, path, tok):
                bad.append(f"docs/architecture.md:{line}: {tok} (under {path}/) matches no file")
    sources = [f for f in files if f.endswith(SOURCE_EXT) and not f.startswith(".")]
    for top in sorted({f.split("/", 1)[0] for f in sources if "/" in f}):
        if top not in where:
            bad.append(f"docs/architecture.md: the tree has no entry for {top}/")
    for f in sources:  # rule 3
        owners = [p for p in where if f.startswith(p + "/")]
        if not owners:
            continue
        owner = max(owners, key=len)
        desc = where[owner][1]
        if "…" in desc or listed(f[len(owner) + 1:], desc):
            continue
        bad.append(f"{f}: not listed in docs/architecture.md's tree (entry {owner}/, "
                   f"line {where[owner][2]})")
    for b in bad:
        print(b)
    if bad:
        return 1
    print(f"docs tree: {len(entries)} entries, {len(sources)} source files listed, "
          "every named path exists")
    return 0


if __name__ == "__main__":
    sys.exit(main())
