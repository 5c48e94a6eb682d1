"""Package layout that pyproject.toml cannot declare: the repository's ``probes/`` folder ships as
``claimcheck_probes`` (a name no user's own ``probes/`` can collide with) and ``schema/`` as
``claimcheck.schemas``; everything else is declared in pyproject.toml."""

from setuptools import find_packages, setup

setup(
    packages=[*find_packages(include=["claimcheck", "claimcheck.*"]), "claimcheck_probes", "claimcheck.schemas"],
    package_dir={"claimcheck_probes": "probes", "claimcheck.schemas": "schema"},
)
