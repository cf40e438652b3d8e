"""Errors the package raises for bad files and bad bundles."""
from __future__ import annotations

import os


class BundleError(Exception):
    """A file or bundle breaks a rule. ``path`` names the file, ``rule`` the rule broken (a short
    kebab-case name such as ``truncated`` or ``offsets-overlap``), ``detail`` says how.
    ``str(e)`` is one line: ``<path>: <rule>: <detail>``."""

    def __init__(self, path: str | os.PathLike[str], rule: str, detail: str) -> None:
        self.path = str(path)
        self.rule = rule
        self.detail = detail
        super().__init__(f"{self.path}: {rule}: {detail}")
