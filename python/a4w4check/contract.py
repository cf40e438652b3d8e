"""a4w4check.contract: the accumulation contract a kernel declares (contracts §4.1, §4.2), as
text the C harness judges by: "exact", "ordered(S)", "bounded" or "bounded(S)", "atomic(S)"
(S 1..6: bf16 split values added in any order, contracts §4.1), or a tree form
"tree(key=value,...)" (the general form's sum=(...) a key too: any fixed tree over the blocks). resolve() takes that text or the path of a file holding it (what
`a4w4check discover --out FILE` writes, its "#" comment lines left out: one contract, or rules
of the shape `when Mpad<=32: ordered(2)`, one per line, which the C side parses) and returns
the text; check() says whether text has
one of those forms (the C side parses it fully and refuses what it does not judge)."""
from __future__ import annotations

import math
import os
import re

# The form only (the keys of contracts §4.2); the C harness parses the text strictly when it
# reads the bundle (key ranges, duplicates, split boundaries).
_TREE_KEY = (r"((leaf|order|fuse|reduce|prec|round|acc|split|combine|final|lround|lanes|chunk"
             r"|lanecomb|tile|align)=[0-9a-z/]+|sum=\([0-9(),]+\))")
FORM = re.compile(r"(exact|ordered\([1-9][0-9]*\)|bounded(\([1-9][0-9]*\))?|atomic\([1-6]\)"
                  rf"|tree\(({_TREE_KEY}(,{_TREE_KEY})*)?\))\Z")


def check(text: str) -> bool:
    """True when text has the form of a contract (see the module docstring)."""
    return bool(FORM.match(text))


def rules(text: str) -> list[str]:
    """The rule lines of a contract file's text (contracts §4.2 "The file form"): every line
    stripped, blank lines and comment lines (starting with "#", as the "# discovered by" line
    `a4w4check discover --out FILE` writes first) left out."""
    lines = (line.strip() for line in text.splitlines())
    return [line for line in lines if line and not line.startswith("#")]


def resolve(value: str) -> str:
    """Contract text from value: the text itself, or the rules of the file it names (a
    discovered contract, its comment lines left out): its one contract line, or its `when`
    rules one per line (the C side parses those). ValueError when neither holds a contract
    form."""
    text = value
    if not check(value) and os.path.isfile(value):
        try:
            with open(value, encoding="utf-8") as f:
                found = rules(f.read())
        except (OSError, UnicodeDecodeError) as e:
            raise ValueError(f"contract file {value}: cannot read it ({e})") from None
        text = "\n".join(found)
        if len(found) > 1 or (found and found[0].startswith("when")):
            _refuse_unreachable(value)  # the C side parses the rest of the rules
            return text  # a file of `when` rules (Mpad, M, N, K)
    if not check(text):
        raise ValueError(f"contract {value!r} is not exact, ordered(S), bounded(S), atomic(S), "
                         "a tree(...) form or a file holding one")
    return text


def padded_m(M: int) -> int:
    """`Mpad` of a rule (contracts §4.2 "The file form"): AITER's getPaddedM(M, N, K, 0) of
    contracts §5.1, M up to 256 rounded up to a multiple of 16, up to 1024 to 32, up to 4096
    to 64, past it to 128."""
    step = 16 if M <= 256 else 32 if M <= 1024 else 64 if M <= 4096 else 128
    return -(-M // step) * step


_PRED = re.compile(r"(Mpad|M|N|K)\s*(?:(==|!=|<=|>=|<|>)\s*([0-9]+)"
                   r"|%\s*([0-9]+)\s*==\s*([0-9]+))\Z")
_OPS = {"==": int.__eq__, "!=": int.__ne__, "<=": int.__le__, ">=": int.__ge__,
        "<": int.__lt__, ">": int.__gt__}


def _holds(pred: str, dims: dict[str, int]) -> bool:
    m = _PRED.match(pred.strip())
    if not m:
        raise ValueError(f"rule predicate {pred.strip()!r} is not M, N, K or Mpad compared "
                         "with a decimal, or X%D==R")
    x = dims[m.group(1)]
    if m.group(2):
        return bool(_OPS[m.group(2)](x, int(m.group(3))))
    d = int(m.group(4))
    if d < 1:
        raise ValueError(f"rule predicate {pred.strip()!r}: D must be at least 1")
    return x % d == int(m.group(5))


def unreachable(pred: str) -> str | None:
    """Why no shape reaches rule predicate pred (contracts §4.2 "The file form": M and N are
    at least 1, K a positive multiple of 32, Mpad a padded-M bucket of §5.1), or None when
    some shape does (or pred is malformed: rule_at and the C side refuse that)."""
    m = _PRED.match(pred.strip())
    if not m:
        return None
    dim = m.group(1)
    if dim == "Mpad":
        # 88 buckets up to 4096, then 4224 + 128 j: one period of the tail decides X%D==R
        values = sorted({padded_m(x) for x in range(1, 4097)})
        if m.group(2):
            op, v = m.group(2), int(m.group(3))
            met = (v in values or (v > 4096 and padded_m(v) == v)) if op == "==" else \
                any(_OPS[op](x, v) for x in values + [max(v, 4096) + 128 * 2])
        else:
            d, r = int(m.group(4)), int(m.group(5))
            met = d >= 1 and (any(x % d == r for x in values) or
                              (r - 4224) % math.gcd(128, d) == 0)
        why = ("Mpad, getPaddedM(M, N, K, 0) of contracts §5.1, is 16, 32, .., 256, then a "
               "multiple of 32 up to 1024, of 64 up to 4096, of 128 past it")
    else:
        lo = 32 if dim == "K" else 1
        if m.group(2):
            op, v = m.group(2), int(m.group(3))
            met = (v >= lo and v % lo == 0) if op == "==" else \
                any(_OPS[op](x, v) for x in (lo, max(v, lo) + lo))
        else:
            d, r = int(m.group(4)), int(m.group(5))
            met = d >= 1 and r < d and (r - lo) % math.gcd(lo, d) == 0
        why = ("K is a positive multiple of 32 (one E8M0 scale per 32 elements, contracts §4)"
               if dim == "K" else f"{dim} is at least 1")
    return None if met else why


def _refuse_unreachable(path: str) -> None:
    """ValueError naming path, the line and the predicate when a rule of the contract file at
    path has a predicate no shape reaches (as the C side refuses it)."""
    with open(path, encoding="utf-8") as f:
        numbered = list(enumerate(f.read().splitlines(), 1))
    for n, line in numbered:
        line = line.split("#", 1)[0].strip()
        if not line.startswith("when") or ":" not in line:
            continue
        for pred in line[4:].partition(":")[0].split(","):
            why = unreachable(pred)
            if why:
                raise ValueError(f"contract file {path}: line {n}: predicate "
                                 f"{pred.strip()!r} holds for no shape: {why} (contracts §4.2, "
                                 "the file form)")


def rule_at(lines: list[str], M: int, N: int, K: int) -> str | None:
    """The contract a file's rule lines (rules()) give the shape M x N x K (contracts §4.2
    "The file form": the first rule whose predicates all hold; a line without `when` holds
    for every shape), or None when no rule holds. ValueError on a malformed rule."""
    dims = {"M": M, "N": N, "K": K, "Mpad": padded_m(M)}
    for line in lines:
        if not line.startswith("when"):
            return line
        head, sep, body = line[4:].partition(":")
        if not sep:
            raise ValueError(f"rule {line!r} has no ':'")
        if all(_holds(p, dims) for p in head.split(",")):
            return body.strip()
    return None
