"""same_judgement.py VERIFY_TXT RESULTS_JSON NAME=VERDICT... — `a4w4check verify`'s lines for
capture bundles and `run --captures`' entries for the same files must agree on every capture:
verdict, contract, checked outputs, judged counts (bit-exact, within bound, not judged),
note and where the call came from (verify's "[layer L at SITE]", run's layer and call_site);
each NAME must have the VERDICT given (PASS, FAIL, N/A). Prints one line per capture;
exit 1 with the differences."""
import json
import re
import sys

LINE = re.compile(r"(PASS|FAIL|N/A|SKIP|AMBIGUOUS) (\S+)\.safetensors(?: \[(.*?)\])?: (\S+), "
                  r"(\d+) checked.* \((\d+) "
                  r"judged bit for bit, (\d+) within bound, (\d+) not judged; \d+ of the judged match\)"
                  r"(?:; (.*))?$")
WORD = {"pass": "PASS", "fail": "FAIL", "n/a": "N/A", "skip": "SKIP", "ambiguous": "AMBIGUOUS"}


def where(e):
    """verify's bracket for run entry e: "layer L at SITE", "called at SITE", or ""."""
    layer, site = e.get("layer", ""), e.get("call_site", "")
    return ("layer " + layer if layer else "") + \
        ((" at " if layer else "called at ") + site if site else "")


def main(verify_txt, results_json, expected):
    want = dict(x.split("=", 1) for x in expected)
    doc = json.load(open(results_json))
    runs = {e["name"].split("/", 1)[1]: e for e in doc["cases"]
            if e["backend"].startswith("capture:")}
    bad, seen = [], set()
    for line in open(verify_txt).read().splitlines():
        if line.startswith("verify: "):
            continue
        m = LINE.match(line)
        if not m:
            bad.append("unreadable verify line: " + line)
            continue
        v, name, at, contract, checked, bx, ib, nj, note = m.groups()
        seen.add(name)
        e = runs.get(name)
        if not e:
            bad.append("run has no entry for " + name)
            continue
        got = (v, contract, int(checked), int(bx), int(ib), int(nj), note or "", at or "")
        ran = (WORD[e["verdict"]], e["contract"], e["checked_outputs"], e.get("judged_bit_exact"),
               e.get("judged_in_bound"), e.get("not_judged"), e.get("note", ""), where(e))
        if got != ran:
            bad.append(f"{name}: verify says {got}, run --captures says {ran}")
        if name in want and v != want[name]:
            bad.append(f"{name}: {v}, expected {want[name]}: {line}")
        print(f"{name}: {v}, {contract}; {bx} bit-exact, {ib} within bound, {nj} not judged "
              "(verify and run --captures)")
    for name in sorted(set(want) - seen):
        bad.append(f"verify printed no line for {name}")
    for b in bad:
        print("same_judgement: " + b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2], sys.argv[3:]))
