"""``python -m claimcheck.gate``."""

from claimcheck.gate import main

raise SystemExit(main())
