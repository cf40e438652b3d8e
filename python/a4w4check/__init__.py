"""a4w4check: the Python bridge of the a4w4check MXFP4 GEMM correctness harness.

Modules: safetensors_codec (a strict safetensors reader and writer) and safetensors_library
(the `safetensors` library behind it, where installed), bundle (operand / output / capture
bundles), layouts (contracts §3 byte permutations), numerics (E2M1, E8M0, bf16 rounding),
kernels and external (run a GEMM on operand bundles: `a4w4check-py external`, or
`python -m a4w4check.external`), capture (record a model's MXFP4 calls), cli (the
`a4w4check-py` program). The judging stays in C (`a4w4check run --backend bundle:DIR`,
`a4w4check verify`).

Importing the package with A4W4CHECK_CAPTURE=DIR in the environment starts a capture
(a4w4check.capture).
"""
import os

# The one version of the project: pyproject.toml reads it, and so does the C build
# (harness/CMakeLists.txt defines A4W4_TOOL_VERSION from this line, which
# `a4w4check --version` prints): the bridge ships with the harness it feeds.
__version__ = "0.4.0"

if os.environ.get("A4W4CHECK_CAPTURE"):
    try:
        from . import capture  # noqa: F401  (starts the capture the environment asks for)
    except ImportError as _missing:  # numpy: a capture never raises into the model
        import logging
        logging.getLogger("a4w4check.capture").warning(
            "a4w4check.capture: not started: the Python package %r is not importable (%s)",
            _missing.name or "numpy", " ".join(str(_missing).split()))
