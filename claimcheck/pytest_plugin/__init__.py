"""The pytest face of claimcheck: collection, items, run-level hooks and what pytest shows of findings."""
