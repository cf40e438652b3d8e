"""results_entries.py: a run's results.json entries keyed by (case, backend), without what
differs from run to run, for the CPU stand-in scripts that compare two runs entry by entry
(cpu_prefetch.sh, cpu_devgen.sh; they run from the source root and put tests/gpu on the path).
Left out: the times, and of a bounded(S) or atomic(S) entry the values of its outputs, which
atomics reorder from run to run (contracts section 4.1): their hash, largest distance and
where they fall in the bound. Everything else is compared."""
import json

TIMES = {"time_ms", "run_ms", "cost_ms", "prep_generate_ms", "prep_oracles_ms", "date"}
VALUES = {"y_hash", "max_ulp", "bound_use", "bound_ulp_median", "bound_ulp_max"}


def entries(run_dir):
    """(the results document, {(case, backend): the entry less TIMES and VALUES})"""
    with open("%s/results.json" % run_dir) as f:
        d = json.load(f)
    out = {}
    for e in d["cases"]:
        drop = TIMES | (VALUES if e["contract"].startswith(("bounded", "atomic")) else set())
        out[(e["name"], e["backend"])] = {k: v for k, v in e.items() if k not in drop}
    return d, out
