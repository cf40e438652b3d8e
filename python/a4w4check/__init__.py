"""a4w4check: the Python bridge of the a4w4check MXFP4 GEMM correctness harness.

Modules: safetensors_codec (a strict safetensors reader and writer) and safetensors_library
(the `safetensors` library behind it, where installed), bundle (operand / output / capture
bundles), layouts (contracts §3 byte permutations), numerics (E2M1, E8M0, bf16 rounding),
kernels and external (run a GEMM on operand bundles: `a4w4check-py external`, or
`python -m a4w4check.external`), capture (record a model's MXFP4 calls), cli (the
`a4w4check-py` program). The judging stays in C: `a4w4check run --backend bundle:DIR` and
`a4w4check verify` through files, or in this process through the C library (inproc:
`a4w4check.judge`, `a4w4check.assert_bitexact`; casesets: `a4w4check.cases`, the pytest
parametrisation over the case sets). Those names load on first use (numpy, the library).

Importing the package with A4W4CHECK_CAPTURE=DIR in the environment starts a capture
(a4w4check.capture).
"""
import os

# The one version of the project: pyproject.toml reads it, and so does the C build
# (harness/CMakeLists.txt defines A4W4_TOOL_VERSION from this line, which
# `a4w4check --version` prints): the bridge ships with the harness it feeds.
__version__ = "0.4.0"

_LAZY = {"judge": "inproc", "judge_case": "inproc", "assert_bitexact": "inproc",
         "Case": "inproc", "Verdict": "inproc", "LibraryNotFound": "inproc",
         "JudgeError": "inproc", "cases": "casesets"}


def __getattr__(name: str) -> object:
    """The in-process judge's names, imported on first use (PEP 562): importing the package
    needs neither numpy nor the C library."""
    if name in _LAZY:
        import importlib
        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


if os.environ.get("A4W4CHECK_CAPTURE"):
    try:
        from . import capture  # noqa: F401  (starts the capture the environment asks for)
    except ImportError as _missing:  # numpy: a capture never raises into the model
        import logging
        logging.getLogger("a4w4check.capture").warning(
            "a4w4check.capture: not started: the Python package %r is not importable (%s)",
            _missing.name or "numpy", " ".join(str(_missing).split()))
