"""a4w4check: the Python bridge of the a4w4check MXFP4 GEMM correctness harness.

Modules: st (safetensors codec), bundle (operand / output / capture bundles), layouts (contracts
§3 byte permutations), numerics (E2M1, E8M0, bf16 rounding), kernels and external (run a GEMM
on operand bundles: `python -m a4w4check.external`), capture (record a model's MXFP4 calls).
The judging stays in C (`a4w4check run --backend bundle:DIR`, `a4w4check verify`).

Importing the package with A4W4CHECK_CAPTURE=DIR in the environment starts a capture
(a4w4check.capture).
"""
import os

__version__ = "0.1.0"

if os.environ.get("A4W4CHECK_CAPTURE"):
    try:
        from . import capture  # noqa: F401  (starts the capture the environment asks for)
    except ImportError as _missing:  # numpy: a capture never raises into the model
        import logging
        logging.getLogger("a4w4check.capture").warning(
            "a4w4check.capture: not started: the Python package %r is not importable (%s)",
            _missing.name or "numpy", " ".join(str(_missing).split()))
