"""The driver's embedded audit finds the repository's claims file (a move once lost it)."""

from osustat.analyses.claims_audit import CLAIMS_FILE


def test_the_driver_finds_claims_paper_toml():
    assert CLAIMS_FILE.is_file() and CLAIMS_FILE.name == "paper.toml"
