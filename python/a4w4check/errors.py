"""Errors the package raises for bad files and bad bundles."""
from __future__ import annotations

import os
import sys


def missing_package(e: ImportError) -> str:
    """The one line for a package this interpreter cannot import (numpy, for every bundle): it
    names the interpreter, since another python3 earlier on PATH (pyenv, a venv) may lack a
    package the system's has."""
    pkg = e.name or "numpy"
    return (f"needs the Python package {pkg!r} (not importable by {sys.executable}: "
            f"{' '.join(str(e).split())}); install it for that interpreter "
            f"({sys.executable} -m pip install {pkg}) or run another that has it")


class BundleError(Exception):
    """A file or bundle breaks a rule. ``path`` names the file, ``rule`` the rule broken (a short
    kebab-case name such as ``truncated`` or ``offsets-overlap``), ``detail`` says how.
    ``str(e)`` is one line: ``<path>: <rule>: <detail>``."""

    def __init__(self, path: str | os.PathLike[str], rule: str, detail: str) -> None:
        self.path = str(path)
        self.rule = rule
        self.detail = detail
        super().__init__(f"{self.path}: {rule}: {detail}")
