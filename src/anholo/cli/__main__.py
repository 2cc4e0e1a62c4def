"""``python -m anholo.cli``: the command line (same as ``python -m anholo``)."""

import sys

from . import main

sys.exit(main())
