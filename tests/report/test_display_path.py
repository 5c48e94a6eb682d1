"""Claim file paths in reports read the same wherever the run was made."""

from pathlib import Path

from claimcheck.report.claim_paths import display_path


def test_a_path_from_another_checkout_is_shown_from_its_claims_folder() -> None:
    assert display_path("/tmp/ci-clone/claims/curves/routing.yaml") == "claims/curves/routing.yaml"
    assert display_path("/x/claims/a/claims/b.yaml") == "claims/b.yaml"  # the innermost claims folder


def test_a_path_inside_the_working_directory_is_relative_and_others_stay_whole(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert display_path(str(tmp_path / "claims" / "x.yaml")) == str(Path("claims") / "x.yaml")
    assert display_path("/elsewhere/docs/x.yaml") == "/elsewhere/docs/x.yaml"
