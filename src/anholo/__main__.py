"""``python -m anholo``: the command line (:mod:`anholo.cli`)."""

import sys

from .cli import main

sys.exit(main())
