#!/usr/bin/env python3
"""check_cli_docs.py CLI SRC — every command's --help against the docs.

The commands are those `CLI --help` lists; a command's options are the `--name` tokens of its
`CLI CMD --help` (the usage lines and the option lines the options table generates), plus
--help itself. The rules:

  1. every command has a page docs/cli/CMD.md, README.md links it, and docs/cli/ holds no page
     of a command that does not exist (docs/cli/README.md, the index and the shared option
     vocabulary, is no command's page);
  2. every option of a command's --help appears on its page;
  3. every `--option` any page of docs/ (or README.md) names for a command exists in that
     command's --help. Which command a `--option` belongs to: the nearest `a4w4check CMD`
     before it in the same piece of code (a code span, or one line of a code block, `\\`
     continuations joined; quoted strings inside dropped); else the piece's first word when it
     is a command name (`run --resume`); else, on docs/cli/CMD.md, CMD when the piece starts
     with an option or is prose. Pieces that start with another program (`python3 -m ...`,
     `ci/nightly-shard.sh ...`, `VAR=value ...`) belong to none. Console blocks: only the `$ `
     lines are commands.

Prints one line per offence (FILE:LINE: ...) and exits 1; 0 with a summary line.
"""
import glob
import os
import re
import subprocess
import sys

OPT = re.compile(r"(?<![\w-])--([a-z0-9][a-z0-9-]*)")


def help_text(cli, *args):
    r = subprocess.run([cli, *args], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"'{' '.join(['a4w4check', *args])}' exited {r.returncode}: {r.stderr.strip()}")
    return r.stdout


def commands(cli):
    text = help_text(cli, "--help")
    block = text.split("commands:", 1)[1] if "commands:" in text else ""
    return [m.group(1) for m in re.finditer(r"^  ([a-z][a-z0-9-]*)\s", block, re.M)]


def options_of(text):
    """The options a --help text defines: its usage block and its option lines."""
    usage = text.split("\n\n", 1)[0]
    opts = set(OPT.findall(usage))
    opts |= {m.group(1) for m in re.finditer(r"^  --([a-z0-9][a-z0-9-]*)", text, re.M)}
    return opts | {"help"}


def pieces(text):
    """(line number, text, is_code) pieces of a Markdown page: each line of a fenced block
    (continuations joined; console blocks: the $ lines), each code span (which may wrap across
    lines of a paragraph), the prose between."""
    out, lines, i = [], text.split("\n"), 0
    while i < len(lines):
        fence = re.match(r"^\s*```(\w*)", lines[i])
        if fence:
            kind, i = fence.group(1), i + 1
            while i < len(lines) and not re.match(r"^\s*```", lines[i]):
                start, cur = i, lines[i]
                while cur.endswith("\\") and i + 1 < len(lines):
                    i += 1
                    cur = cur[:-1] + " " + lines[i]
                if kind == "console":
                    if cur.startswith("$ "):
                        out.append((start + 1, cur[2:], True))
                elif kind not in ("c", "json"):
                    out.append((start + 1, cur, True))
                i += 1
            i += 1
            continue
        start = i  # a paragraph: up to a blank line or a fence
        while i < len(lines) and lines[i].strip() and not re.match(r"^\s*```", lines[i]):
            i += 1
        para = "\n".join(lines[start:i])
        pos = 0
        for m in re.finditer(r"`([^`]+)`", para):
            line = start + 1 + para.count("\n", 0, m.start())
            out.append((line, para[pos:m.start()], False))
            out.append((line, m.group(1).replace("\n", " "), True))
            pos = m.end()
        out.append((start + 1 + para.count("\n", 0, pos), para[pos:], False))
        if i == start:
            i += 1
    return out


def attribute(piece, is_code, cmds, page_cmd):
    """[(command or None, option)] for the options of one piece."""
    if is_code:
        piece = re.sub(r"'[^']*'|\"[^\"]*\"", "''", piece)
    piece = piece.replace("\\|", "|")
    marks = [(m.end(), m.group(1)) for m in re.finditer(r"(?<![\w.-])a4w4check\s+([a-z][a-z0-9-]*)",
                                                        piece) if m.group(1) in cmds]
    words = piece.strip().lstrip("$ ").split()
    first = words[0] if words else ""
    if not is_code:
        head = page_cmd
    elif first in cmds:
        head = first
    elif first.startswith(("-", "[")) or not first:
        head = page_cmd
    else:  # another program, an environment assignment, a path
        head = None
    out = []
    for m in OPT.finditer(piece):
        owner = head
        for end, cmd in marks:
            if end <= m.start():
                owner = cmd
        out.append((owner, m.group(1)))
    return out


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: check_cli_docs.py CLI SRC")
    cli, src = sys.argv[1], sys.argv[2]
    cmds = commands(cli)
    if not cmds:
        sys.exit("a4w4check --help lists no commands")
    opts = {c: options_of(help_text(cli, c, "--help")) for c in cmds}
    bad = []
    readme = open(os.path.join(src, "README.md"), encoding="utf-8").read()
    for c in cmds:  # rule 1 and rule 2
        page = os.path.join(src, "docs", "cli", c + ".md")
        if not os.path.isfile(page):
            bad.append(f"docs/cli/{c}.md: missing (command '{c}' has no page)")
            continue
        if f"](docs/cli/{c}.md)" not in readme:
            bad.append(f"README.md: no link to docs/cli/{c}.md")
        text = open(page, encoding="utf-8").read()
        named = set(OPT.findall(text))
        for o in sorted(opts[c] - named - {"help"}):
            bad.append(f"docs/cli/{c}.md: does not describe --{o} (in 'a4w4check {c} --help')")
    for page in sorted(glob.glob(os.path.join(src, "docs", "cli", "*.md"))):
        c = os.path.basename(page)[:-3]
        if c not in cmds and c != "README":
            bad.append(f"docs/cli/{c}.md: a page for '{c}', which is no command of a4w4check")
    pages = sorted(glob.glob(os.path.join(src, "docs", "**", "*.md"), recursive=True))
    pages.append(os.path.join(src, "README.md"))
    checked = 0
    for page in pages:  # rule 3
        rel = os.path.relpath(page, src)
        page_cmd = os.path.basename(page)[:-3] if rel.startswith("docs/cli/") else None
        text = open(page, encoding="utf-8").read()
        for line, piece, is_code in pieces(text):
            for owner, o in attribute(piece, is_code, cmds, page_cmd):
                if owner is None:
                    continue
                checked += 1
                if owner in opts and o not in opts[owner]:
                    bad.append(f"{rel}:{line}: --{o} is no option of 'a4w4check {owner}' "
                               f"(not in its --help)")
    for b in bad:
        print(b)
    if bad:
        return 1
    print(f"docs cli: {len(cmds)} commands, each option of each --help on its page; "
          f"{checked} options named in docs/ and README.md exist")
    return 0


if __name__ == "__main__":
    sys.exit(main())
