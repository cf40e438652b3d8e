"""One version, one program: a4w4check.__version__ is the only place the version is written
(pyproject.toml reads it), it equals the C CLI's, and the a4w4check-py console script (also
`python -m a4w4check`) runs the bridge's commands."""
import json
import os
import re
import subprocess
import sys
import tomllib

import pytest

import a4w4check
from a4w4check import cli
from conftest import PYROOT, subprocess_env

CLI = os.environ.get("A4W4CHECK_CLI")


def pyproject():
    with open(os.path.join(PYROOT, "pyproject.toml"), "rb") as f:
        return tomllib.load(f)


def test_pyproject_reads_the_version_from_the_package():
    p = pyproject()
    assert "version" not in p["project"] and p["project"]["dynamic"] == ["version"]
    assert p["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "a4w4check.__version__"}
    assert re.fullmatch(r"[0-9]+\.[0-9]+\.[0-9]+", a4w4check.__version__)


def test_the_console_script_names_the_cli_main():
    module, _, fn = pyproject()["project"]["scripts"]["a4w4check-py"].partition(":")
    assert (module, fn) == ("a4w4check.cli", "main") and getattr(cli, fn) is cli.main


@pytest.mark.skipif(not CLI, reason="A4W4CHECK_CLI (path of the a4w4check binary) is not set")
def test_the_version_is_the_c_clis(tmp_path):
    # the C CLI stamps its version into every operand manifest it exports
    (tmp_path / "c.csv").write_text("name,M,N,K,regime,seed,tags\nt,1,16,64,exact,1,t\n")
    r = subprocess.run([CLI, "export", "--cases", str(tmp_path / "c.csv"), "--no-golden",
                        "--out", str(tmp_path / "ops"), "--quiet"], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    manifest = json.loads((tmp_path / "ops" / "manifest.json").read_text())
    assert manifest["tool_version"] == a4w4check.__version__
    r = subprocess.run([CLI, "--version"], capture_output=True, text=True, timeout=60)
    if r.returncode == 0:  # where the C CLI prints its version, it is the same one
        assert r.stdout.split()[-1] == a4w4check.__version__, r.stdout


def program(*args):
    return subprocess.run([sys.executable, "-m", "a4w4check", *args], capture_output=True,
                          text=True, timeout=120, env=subprocess_env())


def test_the_program_prints_its_version_and_lists_its_commands():
    r = program("--version")
    assert (r.returncode, r.stdout) == (0, f"a4w4check-py {a4w4check.__version__}\n")
    r = program("--help")
    assert r.returncode == 0 and "  external " in r.stdout
    r = program("external", "--help")
    assert r.returncode == 0 and r.stdout.startswith("usage: a4w4check-py external ")


@pytest.mark.parametrize("args,rc,line", [
    ((), 2, "usage: a4w4check-py <command>"),
    (("bogus",), 2, "a4w4check-py: unknown command 'bogus' (see 'a4w4check-py --help')"),
    (("external", "--ops", "/nonexistent", "--out", "/nonexistent/o", "--kernel",
      "torch-dequant"), 2, "a4w4check.external: /nonexistent/manifest.json: manifest: "),
])
def test_the_program_refuses_bad_usage_with_exit_2(args, rc, line):
    r = program(*args)
    assert r.returncode == rc and r.stderr.startswith(line), r.stderr
