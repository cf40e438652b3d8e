"""a4w4check-py: the Python bridge's program (the console script pip installs; also
`python -m a4w4check`).

    a4w4check-py external --ops DIR --out DIR --kernel NAME [...]   run a kernel on operand
                                                                    bundles (a4w4check.external)
    a4w4check-py --version                                          print the version

Exit codes are those of the command run (external: 0 written, 1 a case failed, 2 bad input,
3 a Python package missing); 2 and one line on stderr for an unknown command.
"""
from __future__ import annotations

import sys
from typing import Callable, Sequence

from . import __version__

PROG = "a4w4check-py"


def _external(argv: Sequence[str]) -> int:
    try:
        from . import external
    except ImportError as e:  # numpy: every bundle is numpy arrays
        from .errors import missing_package
        print(f"{PROG}: external {missing_package(e)}", file=sys.stderr)
        return 3
    return external.main(list(argv), prog=f"{PROG} external")


COMMANDS: dict[str, tuple[Callable[[Sequence[str]], int], str]] = {
    "external": (_external, "run a GEMM kernel on every case of an operand-bundle directory"),
}


def _usage() -> str:
    lines = [f"usage: {PROG} <command> [options]  |  {PROG} --version", "", "commands:"]
    lines += [f"  {name:<10} {summary}" for name, (_, summary) in COMMANDS.items()]
    lines += ["", f"'{PROG} <command> --help' describes one command."]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """The program: argv (sys.argv[1:] when None) is a command and its arguments, --version or
    --help. Returns the exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args:
        print(_usage(), file=sys.stderr)
        return 2
    if args[0] in ("-h", "--help", "help"):
        print(_usage())
        return 0
    if args[0] == "--version":
        print(f"{PROG} {__version__}")
        return 0
    command = COMMANDS.get(args[0])
    if command is None:
        print(f"{PROG}: unknown command {args[0]!r} (see '{PROG} --help')", file=sys.stderr)
        return 2
    return command[0](args[1:])
