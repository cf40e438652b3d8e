"""The layering checks' shared start: one argument, the source tree, made the working folder."""
import os
import sys


def enter(argv, prog):
    """chdir to argv[1] (the source tree); returns None, or the exit code 2 after one line on
    standard error (usage, or the folder that cannot be entered)."""
    if len(argv) != 2:
        print(f"usage: {prog}.py SRC", file=sys.stderr)
        return 2
    try:
        os.chdir(argv[1])
    except OSError as e:
        print(f"{prog}: {argv[1]}: {e.strerror}", file=sys.stderr)
        return 2
    return None
