"""ci/gpu_discover_report.py OUT KERNELS SETS SHAPES BUDGET [UNPROBED] — the Markdown report of
ci/gpu-discover.sh, from what its steps left in OUT: the discover logs and evidence, the
contracts, and the results.json of every `run` (docs/contracts.md §4.4). Renders only: every
number comes from a file a step wrote; a step that did not finish is shown as such."""
import json
import os
import re
import sys


def tag(name):
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)


def read(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return None


def steps(out):
    """step name -> (exit text, seconds)."""
    s = {}
    for line in (read(os.path.join(out, "steps.tsv")) or "").splitlines():
        parts = line.split("\t")
        if len(parts) == 3:
            s[parts[0]] = (parts[1], parts[2])
    return s


def step_note(st, name):
    """'' when the step exited 0 or 1 (results written), else why it has no result."""
    if name not in st:
        return "not run"
    rc, sec = st[name]
    if rc == "skipped":
        return "skipped: the time budget was spent"
    if rc == "124":
        return f"timed out after {sec} s"
    if rc in ("0", "1"):
        return ""
    return f"exit {rc}"


LINE = re.compile(r"^discover: (\S+) at (\d+x\d+x\d+): (.*)$")
VALIDATED = re.compile(r"^discover: \S+ at (\d+x\d+x\d+) \(validated only, not probed\): (.*)$")
BISECTED = re.compile(r"^discover: \S+ at (\d+x\d+x\d+) \(a K of the split-count bisection\): "
                      r"(.*)$")
COUNTS = re.compile(r"\((\d+) probes, (\d+) calls")
DEFECTS = re.compile(r"^  defects: (\d+) \(first: (.*)\)$")


def discoveries(out, kernel):
    """shape -> (contract or finding, probes, defects, first defect), and the total seconds,
    from discover's log (a shape's `  defects:` line follows its own)."""
    log = read(os.path.join(out, f"discover-{tag(kernel)}.log")) or ""
    rows, total, last = {}, None, None
    for line in log.splitlines():
        m = LINE.match(line)
        if m:
            rest = m.group(3)
            c = COUNTS.search(rest)
            last = m.group(2)
            rows[last] = (rest[:c.start()].strip() if c else rest, c.group(1) if c else "", "0",
                          "")
        d = DEFECTS.match(line)
        if d and last in rows:
            rows[last] = rows[last][:2] + (d.group(1), d.group(2))
        t = re.match(r"^discover: ([0-9.]+) s;", line)
        if t:
            total = t.group(1)
    return rows, total, log


def judged(run_dir):
    """(bit-exact share text, verdict text) of the bundle backend's entries of a run."""
    doc_text = read(os.path.join(run_dir, "results.json"))
    if doc_text is None:
        return None, None
    doc = json.loads(doc_text)
    bit = total = 0
    fails = 0
    for e in doc.get("cases", []):
        if not str(e.get("backend", "")).startswith("bundle:"):
            continue
        b, i, n = (e.get(k, 0) or 0 for k in ("judged_bit_exact", "judged_in_bound", "not_judged"))
        bit += b
        total += b + i + n
        fails += e.get("verdict") == "fail"
    share = f"{100.0 * bit / total:.1f} % ({bit:,} of {total:,})" if total else "no outputs"
    return share, f"{doc.get('verdict', '?')} ({fails} failing entries)"


def findings(out, kernel, log, rows):
    """Lines saying a kernel is nondeterministic, outside the family or has defects (outputs
    no order can give), with evidence."""
    ev = read(os.path.join(out, f"{tag(kernel)}.contract.evidence.md")) or ""
    lines = []
    for shape, (_, _, n, first) in rows.items():
        if n != "0":
            lines.append(f"{n} defects at {shape} (outputs no order can give; first: {first})")
    if "nondeterministic" in log or "nondeterministic:" in ev:
        lines.append("nondeterministic: repeated runs of the same operands differed")
    if "no tree in the model family fits" in log:
        lines.append("outside the model family at some shape")
    keep = [ln for ln in ev.splitlines()
            if ln.startswith("- ") and re.search(r"nondeterministic|no single rounding|rejected|"
                                                 r"disagree|no ordered tree|position", ln)]
    return lines, keep[:8]


def rules_of_shape(out, kernels):
    """Each kernel's contract file as discover wrote it: its rules of the shape (a rule of K
    per family, ranges of Mpad, or one rule per probed shape) and the comment lines naming the
    shapes probed and those only validated (contracts §4.4)."""
    print("\n## Rules of the shape\n")
    print("The contract as a function of the shape (`<kernel>.contract`, contracts §4.4): a rule "
          "of K holds at every K of its family and was validated at shapes not probed; a "
          "`when M==..,N==..,K==..` rule holds at that shape only.\n")
    for k in kernels:
        path = os.path.join(out, f"{tag(k)}.contract")
        text = read(path)
        if text is None and read(path + ".closest") is not None:
            text, k = read(path + ".closest"), f"{k} (closest, not accepted)"
        print(f"**{k}**:\n")
        print("```\n" + (text.rstrip("\n") if text else "(no contract written)") + "\n```\n")


def rule_of_k(out, kernels, unprobed):
    """Per kernel: its rule of K as discover wrote it (a split count changing with K: the
    `# split count by K` line and the `when K<=..` pieces), the K the bisection read, and the
    shapes the rule was validated at without being probed (contracts §4.4)."""
    print("\n## Rule of K and its validation at shapes not probed\n")
    print("A rule of K holds at every K of its family: one contract, or a split count that "
          "changes with K (read at the probed K, bisected in steps of 32 between two K of "
          "different counts, one `when K<=..` rule per count; assumed never to fall as K "
          "grows). discover validates it at shapes it did not probe (a larger K, another M of "
          "the bucket); set `unprobed` judges the kernels at more such shapes "
          f"({', '.join(unprobed) if unprobed else 'none'}).\n")
    for k in kernels:
        text = read(os.path.join(out, f"{tag(k)}.contract")) or ""
        log = read(os.path.join(out, f"discover-{tag(k)}.log")) or ""
        counts = [ln[2:] for ln in text.splitlines() if ln.startswith("# split count by K")]
        rules = [ln for ln in text.splitlines() if ln and not ln.startswith("#")]
        if not text:
            what = "no contract written"
        elif counts:
            what = "a split count that changes with K"
        elif rules and all(r.startswith("when M==") for r in rules):
            what = "per-shape rules only (no rule of K)"
        else:
            what = "a rule of K"
        bis = [m.groups() for m in map(BISECTED.match, log.splitlines()) if m]
        print(f"- **{k}**: {what}; {len(bis)} K read by the bisection"
              + (f" ({', '.join(s for s, _ in bis)})" if bis else ""))
        for c in counts:
            print(f"  - {c}")
        for r in rules if counts else []:
            print(f"  - `{r}`")
        for m in map(VALIDATED.match, log.splitlines()):
            if m:
                print(f"  - validated at {m.group(1)} (not probed): {m.group(2)}")


def main():
    out, kernels, sets, shapes, budget = sys.argv[1:6]
    unprobed = sys.argv[6].split(",") if len(sys.argv) > 6 and sys.argv[6] else []
    kernels, sets, shapes = kernels.split(), sets.split(), shapes.split(",")
    st = steps(out)
    print("# Discovered accumulation orders\n")
    print(f"`ci/gpu-discover.sh`: kernels {', '.join(kernels)}; shapes {', '.join(shapes)}; "
          f"sets {', '.join(sets)}; budget {budget} s. Contracts and evidence: "
          "`<kernel>.contract`, `<kernel>.contract.evidence.md`.\n")
    print("## Discovery\n")
    print("| kernel | shape | discovered contract | defects | probes | seconds |")
    print("|---|---|---|---|---|---|")
    notes = {}
    for k in kernels:
        rows, total, log = discoveries(out, k)
        why = step_note(st, f"discover-{tag(k)}")
        for s in shapes:
            c, probes, nd, _ = rows.get(s, (f"no result ({why or 'see the log'})", "", "-", ""))
            sec = f"{total} ({len(shapes)} shape{'s' if len(shapes) > 1 else ''}, one discovery)" if total else why or "-"
            print(f"| {k} | {s} | `{c}` | {nd} | {probes} | {sec} |")
        notes[k] = findings(out, k, log, rows)
    rules_of_shape(out, kernels)
    rule_of_k(out, kernels, unprobed)
    print("\n## Judged by the discovered contract\n")
    print("Share of the outputs judged bit for bit (of the outputs checked: a case whose full "
          "check is estimated above the judging budget is sampled): declared `exact`, only the "
          "exact regime is judged; with the discovered contract, every output of a shape it has "
          "a rule for (set `discovered`: cases at exactly the probed shapes). Defects fail "
          "under every contract.\n")
    print("Set `unprobed`: shapes discover did not probe, judged only where the contract is a "
          "rule of the shape (a per-shape rule leaves them not judged, the run INCOMPLETE).\n")
    print("| kernel | set | judged bit for bit, declared exact | judged bit for bit, discovered "
          "| verdict, exact | verdict, discovered |")
    print("|---|---|---|---|---|---|")
    for k in kernels:
        for s in sets:
            stag = tag(os.path.basename(s).removesuffix(".csv"))
            cells = []
            closest = not os.path.exists(os.path.join(out, f"{tag(k)}.contract"))
            for kind in ("exact", "discovered"):
                name = f"run-{stag}-{tag(k)}-{kind}"
                share, verdict = judged(os.path.join(out, name))
                why = step_note(st, name) or step_note(st, f"external-{stag}-{tag(k)}")
                if share and kind == "discovered" and closest:
                    share += " (the closest candidate: not accepted)"
                cells.append((share or why or "no results.json", verdict or why or "-"))
            print(f"| {k} | {stag} | {cells[0][0]} | {cells[1][0]} | {cells[0][1]} | "
                  f"{cells[1][1]} |")
    print("\n## Findings\n")
    for k in kernels:
        lines, ev = notes[k]
        print(f"- **{k}**: " + ("; ".join(lines) if lines else "deterministic; a tree of the "
                                 "family fits where a contract is shown"))
        for e in ev:
            print(f"  {e}")
    print("\n## Steps\n")
    print("| step | exit | seconds |")
    print("|---|---|---|")
    for name, (rc, sec) in st.items():
        print(f"| {name} | {rc} | {sec} |")


if __name__ == "__main__":
    main()
