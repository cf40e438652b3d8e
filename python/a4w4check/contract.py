"""a4w4check.contract: the accumulation contract a kernel declares (contracts §4.1, §4.2), as
text the C harness judges by: "exact", "ordered(S)", "bounded" or "bounded(S)", or a tree form
"tree(key=value,...)". resolve() takes that text or the path of a file holding it (what
`a4w4check discover --out FILE` writes) and returns the text; check() says whether text has
one of those forms (the C side parses it fully and refuses what it does not judge)."""
from __future__ import annotations

import os
import re

# The form only (the keys of contracts §4.2); the C harness parses the text strictly when it
# reads the bundle (key ranges, duplicates, split boundaries).
_TREE_KEY = (r"(leaf|order|fuse|reduce|prec|round|acc|split|combine|final|lround|lanes|chunk"
             r"|lanecomb|tile)=[0-9a-z/]+")
FORM = re.compile(r"(exact|ordered\([1-9][0-9]*\)|bounded(\([1-9][0-9]*\))?"
                  rf"|tree\(({_TREE_KEY}(,{_TREE_KEY})*)?\))\Z")


def check(text: str) -> bool:
    """True when text has the form of a contract (see the module docstring)."""
    return bool(FORM.match(text))


def resolve(value: str) -> str:
    """Contract text from value: the text itself, or the stripped contents of the file it
    names (a discovered contract). ValueError when neither holds a contract form."""
    text = value
    if not check(value) and os.path.isfile(value):
        try:
            with open(value, encoding="utf-8") as f:
                text = f.read().strip()
        except (OSError, UnicodeDecodeError) as e:
            raise ValueError(f"contract file {value}: cannot read it ({e})") from None
        if check(text) or "\n" in text:  # a multi-line file form: the C side parses it
            return text
    if not check(text):
        raise ValueError(f"contract {value!r} is not exact, ordered(S), bounded(S), a "
                         "tree(...) form or a file holding one")
    return text
