"""Shared fixtures: the package from this checkout, the fake aiter, scratch operand dirs."""
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
PYROOT = os.path.dirname(HERE)
FAKE_AITER = os.path.join(HERE, "fake_aiter")
for p in (PYROOT, HERE):
    if p not in sys.path:
        sys.path.insert(0, p)


def _drop_aiter():
    for k in [k for k in sys.modules if k == "aiter" or k.startswith("aiter.")]:
        del sys.modules[k]


@pytest.fixture
def fake_aiter(monkeypatch):
    """The fake aiter package (tests/fake_aiter), imported fresh, BUG off."""
    _drop_aiter()
    monkeypatch.syspath_prepend(FAKE_AITER)
    import aiter
    aiter.BUG = ""
    yield aiter
    _drop_aiter()


def subprocess_env(extra_paths=(), **env):
    """Environment for a child python: this checkout's package (and extra paths) first."""
    e = dict(os.environ)
    e["PYTHONPATH"] = os.pathsep.join([PYROOT, *extra_paths])
    e.update(env)
    return e
