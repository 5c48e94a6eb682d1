"""Package layout that pyproject.toml cannot declare: the repository's ``probes/`` folder ships as
``claimcheck_probes`` (a name no user's own ``probes/`` can collide with), with its family subpackages
(``probes/ops/`` as ``claimcheck_probes.ops``, ...), ``schema/`` as ``claimcheck.schemas`` and ``docs/`` (the
Markdown a message or ``--help`` points to) as ``claimcheck.docs``; everything else is declared in pyproject.toml."""

from setuptools import find_packages, setup

# find_packages cannot see through the package_dir mapping: the probe families are found in probes/ and renamed.
PROBE_FAMILIES = [f"claimcheck_probes.{name}" for name in sorted(find_packages("probes"))]

setup(
    packages=[*find_packages(include=["claimcheck", "claimcheck.*"]), "claimcheck_probes", *PROBE_FAMILIES,
              "claimcheck.schemas", "claimcheck.docs"],
    package_dir={"claimcheck_probes": "probes", "claimcheck.schemas": "schema", "claimcheck.docs": "docs"},
)
