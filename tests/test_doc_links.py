"""The docs a message or `--help` points to ship in the wheel (package ``claimcheck.docs``) and resolve here."""

from __future__ import annotations

import tomllib
from pathlib import Path

from claimcheck.doc_links import doc_link, doc_path

ROOT = Path(__file__).resolve().parents[1]


def test_the_wheel_packages_the_docs() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert config["tool"]["setuptools"]["package-data"]["claimcheck.docs"] == ["*.md"]
    setup = (ROOT / "setup.py").read_text()
    assert '"claimcheck.docs": "docs"' in setup and '"claimcheck.docs"]' in setup


def test_doc_links_resolve_to_files() -> None:
    for name in ("statistics.md", "writing-claims.md", "probes.md"):
        assert doc_path(name).is_file()
        assert Path(doc_link(name)).is_file()
