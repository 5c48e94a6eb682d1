"""A model folder laid out as the Hugging Face cache keeps it, for the tests that resolve repo ids offline."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

COMMIT = "c0ffee" * 6 + "c0ff"


def hub_snapshot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: Path, repo_id: str) -> Path:
    """``source`` cached as ``repo_id``: refs/main -> snapshots/<commit> -> blobs/<sha256>; returns the snapshot.

    ``$HF_HUB_CACHE`` points at the new cache, so nothing outside ``tmp_path`` is read.
    """
    from claimcheck.models._files import sha256_file

    org, name = repo_id.split("/")
    repo = tmp_path / "hub" / f"models--{org}--{name}"
    snapshot = repo / "snapshots" / COMMIT
    (repo / "blobs").mkdir(parents=True)
    snapshot.mkdir(parents=True)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(COMMIT)
    for file in ("config.json", "model.safetensors"):
        digest = sha256_file(source / file)
        shutil.copy(source / file, repo / "blobs" / digest)
        (snapshot / file).symlink_to(repo / "blobs" / digest)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    return snapshot
