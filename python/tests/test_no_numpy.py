"""The package's entry points on an interpreter without numpy: one line, the documented exit,
no traceback. numpy is hidden from a child interpreter by a `numpy` package placed first on
PYTHONPATH whose import raises ModuleNotFoundError, as a missing one does.

Reproducer (before the fix): PYTHONPATH=<that dir>:python python3 -m a4w4check.external --ops
o --out x --kernel torch-dequant printed a traceback ending "ModuleNotFoundError: No module
named 'numpy'" and exited 1; docs/bridge.md promises one line and exit 3."""
import os
import subprocess
import sys

from conftest import subprocess_env


def hidden_numpy(tmp_path):
    d = tmp_path / "no_numpy" / "numpy"
    d.mkdir(parents=True)
    (d / "__init__.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'numpy'\", name='numpy')\n")
    return str(d.parent)


def child(tmp_path, args, **env):
    e = subprocess_env(**env)
    e["PYTHONPATH"] = hidden_numpy(tmp_path) + os.pathsep + e["PYTHONPATH"]
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=120,
                          cwd=tmp_path, env=e)


def test_the_numpy_hider_hides_numpy(tmp_path):
    r = child(tmp_path, ["-c", "import numpy"])
    assert r.returncode == 1 and "No module named 'numpy'" in r.stderr


def test_external_without_numpy_is_one_line_and_exit_3(tmp_path):
    r = child(tmp_path, ["-m", "a4w4check.external", "--ops", "o", "--out", "x", "--kernel",
                         "torch-dequant"])
    assert r.returncode == 3, r.stderr
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.startswith("a4w4check.external: needs the Python package 'numpy'"), r.stderr
    assert r.stdout == ""


def test_an_environment_capture_without_numpy_never_raises_into_the_process(tmp_path):
    r = child(tmp_path, ["-c", "import a4w4check; print('model runs')"],
              A4W4CHECK_CAPTURE=str(tmp_path / "cap"))
    assert r.returncode == 0 and r.stdout == "model runs\n", r.stderr
    assert "Traceback" not in r.stderr
    assert "a4w4check.capture: not started: the Python package 'numpy' is not importable" in \
        r.stderr, r.stderr
