"""``python -m examples.demo``: see :mod:`examples.demo`."""

import sys

from .command import main

sys.exit(main())
