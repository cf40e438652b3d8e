"""python -m a4w4check: the a4w4check-py program (a4w4check.cli)."""
import sys

from .cli import main

sys.exit(main())
