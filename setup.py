"""Package layout that pyproject.toml cannot declare: the repository's ``probes/`` folder ships as
``claimcheck_probes`` (a name no user's own ``probes/`` can collide with), ``schema/`` as
``claimcheck.schemas`` and ``docs/`` (the Markdown a message or ``--help`` points to) as ``claimcheck.docs``;
everything else is declared in pyproject.toml."""

from setuptools import find_packages, setup

setup(
    packages=[*find_packages(include=["claimcheck", "claimcheck.*"]), "claimcheck_probes", "claimcheck.schemas",
              "claimcheck.docs"],
    package_dir={"claimcheck_probes": "probes", "claimcheck.schemas": "schema", "claimcheck.docs": "docs"},
)
