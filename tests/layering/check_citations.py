#!/usr/bin/env python3
"""check_citations.py SRC — fails when a citation in the tree points nowhere (docs/testing.md).

One pass over the tree (Python 3 standard library) with these rules, each finding printed as
"FILE:LINE: what":
  - a "contracts §N" or "contracts.md §N" in harness/ ref/ reports/ gpu/ tests/ ci/ cases/
    python/ examples/ docs/ or README.md whose N is not a section heading of docs/contracts.md
    ("## N. ..." or "### N.M ...");
  - a cited heading that is not one: README "Exit codes" or docs/findings.md, "Findings" (a
    heading of that file), and a docs/PAGE.md named anywhere that does not exist;
  - in docs/ and README.md (outside fenced code blocks): a relative link to a file that does
    not exist (links are checked inside fences too), and a name in backticks that the tree does
    not have: a path (one with a '/', or a file name ending in .c .h .hip .py .sh .cmake;
    `<name>` and '*' match anything; a component in capitals such as DIR is a placeholder, not
    checked) that no file or folder matches from the root, harness/, python/ or docs/; a C or
    Python identifier (one with an '_', or starting a4w4/A4W4) that no source, test, script or
    case file contains; a backend or mutant name (cpu-*, hip-*, mut-*, ref-*) no source under
    harness/ or tests/ contains after a '"'. KNOWN_NAMES below lists what the docs name on
    purpose without the tree having it;
  - any citation of the team's fact sheet instead: SPEC followed by a section sign, the word
    "section" or a section number;
  - a source comment citing an issue number: the word issue (either case), a space, an
    optional '#', digits; external references such as ROCm/aiter#2900 or "PR #383" are fine.
Exits 1 after the findings; exits 0 with one summary line when every citation resolves; exits 2
on bad usage. Files holding a NUL byte are binary and not read for citations; text is read
byte for byte (undecodable bytes kept), lines split at '\\n' only.
"""
import fnmatch
import glob
import os
import re
import sys

import source_tree

DIRS = ("harness", "ref", "reports", "gpu", "tests", "ci", "cases", "python", "examples",
        "docs", "README.md")
WORD_DIRS = ("harness", "ref", "reports", "gpu", "tests", "ci", "cases", "python", "examples",
             ".github", "CMakeLists.txt")
CONTRACTS = "docs/contracts.md"
# Named on purpose without the tree having them: the worked examples of docs/architecture.md
# (their files are written by tests/docs at build time), and facts of the sources
# docs/contracts.md states (AITER's, SGLang's, torch's and Triton's own names).
KNOWN_NAMES = set("""harness/backends/mygemm.c harness/cli/cmd_hello.c tests/cli/hello.cmake
  docs/cli/hello.md cmd_hello a4w4_backend_mygemm cli_hello csv.h reports/gpu-nightly/nightly.log
  OPENBLAS_CORETYPE DYNAMIC_ARCH""".split())

A = re.ASCII
HEADING = re.compile(r"#{2,3}\s+([0-9]+(?:\.[0-9]+)?)\.?(?:\s.*)?$", A | re.S)
CITE = re.compile(r"contracts(?:\.md)? §([0-9]+(?:\.[0-9]+)?)", A)
SPEC = re.compile(r"SPEC(?:\.md)?\s*(?:§\s*[0-9]+(?:\.[0-9]+)?|[Ss]ections?\s+[0-9]"
                  r"|[0-9]+(?:\.[0-9]+)?\b)", A)
ISSUE = re.compile(r"[Ii]ssue #?[0-9]+", A)
CITED_HEADING = re.compile(r'(?:README(?:\.md)?|docs/[a-z/_-]+\.md),? "[^"]+"', A)
PAGE = re.compile(r"docs/[a-z/_-]+\.md", A)
WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*", A)
TICKED = re.compile(r"`[^`]+`")
LINK = re.compile(r"\]\([^) ]+\)")
FENCE = re.compile(r"\s*```", A)
PATHLIKE = re.compile(r"[A-Za-z0-9_.*<>/\\-]+", A)
SRC_EXT = re.compile(r".*\.(?:c|h|hip|py|sh|cmake)$", A | re.S)
DATA_EXT = re.compile(r".*\.(?:csv|json|md|yml|toml|txt|safetensors|contract)$", A | re.S)
PLACEHOLDER = re.compile(r"(?:^|/)[A-Z][A-Z0-9_]*(?:/|\.|$)", A)
IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*", A)
BACKEND = re.compile(r"(?:cpu|hip|mut|ref)-[a-z0-9x-]+", A)


def walk(top):
    """Files under TOP (itself when a file), as grep -r reads them: no symlink below TOP."""
    if os.path.isfile(top):
        yield top
        return
    for d, subdirs, names in os.walk(top):
        subdirs[:] = sorted(s for s in subdirs if not os.path.islink(os.path.join(d, s)))
        for n in sorted(names):
            p = os.path.join(d, n)
            if not os.path.islink(p):
                yield p


def read(path):
    """The file's bytes, or None when unreadable."""
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return None


def text_lines(path):
    """[(line number, text)] of a text file; [] for a binary (NUL) or unreadable one."""
    data = read(path)
    if data is None or b"\0" in data:
        return []
    text = data.decode("utf-8", "surrogateescape")
    return list(enumerate(text.split("\n"), 1))


def headings(contracts):
    """The section numbers that are headings of docs/contracts.md ("5", "5.1", ...)."""
    return {m.group(1) for _, line in text_lines(contracts) if (m := HEADING.match(line))}


def has_heading(path, text):
    """Is TEXT (a prefix of) a Markdown heading of PATH?"""
    if not os.path.isfile(path):
        return False
    pat = re.compile(r"#+ +\$?" + re.escape(text), A)
    return any(pat.match(line) for _, line in text_lines(path))


def check_line(where, line, heads, out):
    """Rules 1-4 over one line; returns how many contracts § citations it holds."""
    ncite = 0
    if "contracts" in line:
        for m in CITE.finditer(line):
            ncite += 1
            if m.group(1) not in heads:
                out.append(f"{where}: cites contracts §{m.group(1)}, which is not a heading "
                           f"of {CONTRACTS}")
    if "SPEC" in line:
        for m in SPEC.finditer(line):
            out.append(f"{where}: cites SPEC ('{m.group(0)}'); cite contracts §N instead")
    if "ssue" in line:
        for m in ISSUE.finditer(line):
            out.append(f"{where}: cites an issue number ('{m.group(0)}'); say what the code "
                       "does instead")
    if '"' in line and not re.match(r"docs/testing.md", where):
        for m in CITED_HEADING.finditer(line):
            t = m.group(0)
            file = t[: t.index(".md")] + ".md" if t.startswith("docs/") else "README.md"
            head = re.sub(r'^[^"]*"([^"]*)".*', r"\1", t, flags=re.S)
            if not has_heading(file, head):
                out.append(f'{where}: cites "{head}" of {file}, which is no heading there')
    if "docs/" in line:
        for m in PAGE.finditer(line):
            page = m.group(0)
            if not os.path.isfile(page) and page != "docs/cli/hello.md":
                out.append(f"{where}: names {page}, which does not exist")
    return ncite


def check_text(paths, heads, out):
    """Rules 1-4 over every line of the tree's text files; returns the contracts § count."""
    ncite = 0
    for path in paths:
        for n, line in text_lines(path):
            if any(k in line for k in ("contracts", "SPEC", "ssue", '"', "docs/")):
                ncite += check_line(f"{path}:{n}", line, heads, out)
    return ncite


def doc_pages():
    """docs/**/*.md and README.md, in the order the checks read them."""
    pages = sorted(p for p in walk("docs") if fnmatch.fnmatchcase(os.path.basename(p), "*.md"))
    return pages + (["README.md"] if os.path.exists("README.md") else [])


def ticked_names(pages):
    """[(FILE:LINE, name)] of every `name` outside fenced code blocks of PAGES."""
    found = []
    for page in pages:
        fence = False
        for n, line in text_lines(page):
            if FENCE.match(line):
                fence = not fence
                continue
            if not fence:
                found += [(f"{page}:{n}", m.group(0)[1:-1].strip("\t"))
                          for m in TICKED.finditer(line)]
    return found


def tree_words():
    """Every identifier of the sources, tests, scripts and case files, and the CTest names
    of the CLI tests (sh_NAME for tests/cli/NAME.sh, cli_NAME for tests/cli/NAME.cmake)."""
    words = set()
    for top in WORD_DIRS:
        if os.path.exists(top):
            for path in walk(top):
                data = read(path)
                if data is not None and b"\0" not in data:
                    words.update(WORD.findall(data.decode("utf-8", "surrogateescape")))
    for t in glob.glob("tests/cli/*.sh") + glob.glob("tests/cli/*.cmake"):
        n = os.path.basename(t)
        words.add("sh_" + n[:-3] if t.endswith(".sh") else "cli_" + n[: -len(".cmake")])
    return words


def tree_basenames():
    """The names of the tree's regular files (no .git, no build* folder at the root)."""
    names = set()
    for d, subdirs, files in os.walk("."):
        if d == ".":
            subdirs[:] = [s for s in subdirs if s != ".git" and not s.startswith("build")]
            files = [f for f in files if f != ".git" and not f.startswith("build")]
        names.update(f for f in files
                     if os.path.isfile(os.path.join(d, f))
                     and not os.path.islink(os.path.join(d, f)))
    return names


def path_exists(name, base):
    """Does a file or folder match NAME from the root, harness/, python/ or docs/? `<x>` and
    '*' match anything; a bare file name may be any file of the tree."""
    p = name[:-1] if name.endswith("/") else name
    p = re.sub(r"<[^>]*>", "*", p)
    for b in ("", "harness/", "python/", "docs/"):
        hits = glob.glob(b + p) if "*" in p else [b + p]
        if any(os.path.exists(f) for f in hits):
            return True
    if "/" not in p and "*" not in p and p in base:
        return True
    if "/" not in p:
        return any(fnmatch.fnmatchcase(f, p) for f in base)
    return False


def is_path(name):
    """A file name with an extension of the tree, or a path from one of its folders?"""
    if not PATHLIKE.fullmatch(name):
        return False
    if SRC_EXT.match(name):
        return True
    if "/" not in name:
        return False
    if DATA_EXT.match(name):
        return True
    top = name.split("/", 1)[0]
    return any(os.path.isdir(b + top) for b in ("", "harness/", "python/", "docs/")) if top \
        else os.path.isdir("harness/")


def quoted_in_sources(name, cache):
    """Does any file under harness/ or tests/ hold '"NAME' (bytes, binary files too)?"""
    if not cache:
        cache.extend(d for top in ("harness", "tests") if os.path.exists(top)
                     for p in walk(top) if (d := read(p)) is not None)
    needle = ('"' + name).encode("utf-8", "surrogateescape")
    return any(needle in d for d in cache)


def check_names(pages, out):
    """Rule 5: the names in backticks of PAGES exist; returns how many were checked."""
    words, base, blobs, nname = tree_words(), tree_basenames(), [], 0
    for where, name in ticked_names(pages):
        name = name[:-2] if name.endswith("()") else name
        if name in KNOWN_NAMES:
            continue
        if is_path(name):
            if PLACEHOLDER.search(name) or name.startswith(("/", "build")):
                continue
            nname += 1
            if not path_exists(name, base):
                out.append(f"{where}: names `{name}`, which matches no file or folder")
        elif IDENT.fullmatch(name) and ("_" in name or name.startswith(("a4w4", "A4W4"))):
            nname += 1
            if name not in words:
                out.append(f"{where}: names `{name}`, which no source, test, script or case "
                           "file contains")
        elif BACKEND.fullmatch(name):
            nname += 1
            if not quoted_in_sources(name, blobs):
                out.append(f"{where}: names backend `{name}`, which no source defines")
    return nname


def check_links(pages, out):
    """Rule 5: every relative link of PAGES (fenced blocks included) names a file."""
    for page in pages:
        for n, line in text_lines(page):
            for m in LINK.finditer(line):
                target = m.group(0)[2:-1].strip("\t")
                t = target.split("#", 1)[0]
                if not t or re.match(r"[a-z]+:", t, A):
                    continue
                if not os.path.exists((os.path.dirname(page) or ".") + "/" + t):
                    out.append(f"{page}:{n}: links to {target}, which does not exist")


def main(argv):
    rc = source_tree.enter(argv, "check_citations")
    if rc is not None:
        return rc
    out = []
    if not os.path.isfile(CONTRACTS):
        out.append(f"{CONTRACTS}: missing (every contracts §N citation needs it)")
        print(out[-1])
    present = [d for d in DIRS if os.path.exists(d)]
    if not present:
        print(f"check_citations: none of {' '.join(DIRS)} under {argv[1]}")
        return 2
    found = []
    ncite = check_text((p for top in present for p in walk(top)), headings(CONTRACTS), found)
    nname = 0
    if os.path.isdir("docs"):
        pages = doc_pages()
        nname = check_names(pages, found)
        check_links(pages, found)
    for line in found:
        print(line)
    if out or found:
        return 1
    print(f"citations: {ncite} contracts § citations name headings of {CONTRACTS}; no SPEC "
          f"sections, no issue numbers; {nname} names in docs/ exist")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
