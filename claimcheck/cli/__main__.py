"""``python -m claimcheck.cli``."""

import sys

from claimcheck.cli import main

sys.exit(main())
