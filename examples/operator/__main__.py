"""``python -m examples.operator``: see :mod:`examples.operator`."""

import sys

from .command import main

sys.exit(main())
