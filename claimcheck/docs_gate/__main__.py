"""``python -m claimcheck.docs_gate``."""

from claimcheck.docs_gate import main

raise SystemExit(main())
