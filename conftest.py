"""Repository-level pytest configuration.

The claimcheck plugin itself arrives through its ``pytest11`` entry point (it
works in any repository that installs claimcheck); this file only adds what
this repository's own test suite needs.
"""

pytest_plugins = ("pytester",)
