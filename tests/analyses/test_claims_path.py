"""The claims files the pipelines audit ship inside the package (``osustat.analyses`` package
data, folder ``analyses/claims/``), are found from the package, and a missing one is an error
naming its path — never an audit skipped without a word (a wheel once had no claims at all)."""

import errno
from pathlib import Path

import pytest

import osustat.analyses.claims_audit as claims_audit
from osustat.analyses.claims_audit import claims_audit as audit
from osustat.analyses.claims_audit import claims_file, shipped_claims
from osustat.analyses.protocol import ClaimSelection


@pytest.mark.parametrize("name", shipped_claims())
def test_every_shipped_claims_file_is_found_from_the_package(name):
    path = claims_file(name)
    analyses = Path(claims_audit.__file__).resolve().parent
    own = {
        "locomo": analyses / "locomo" / "claims.toml",
        "locomo-systems": analyses / "locomo" / "systems_claims.toml",
    }
    assert path.is_file() and path == own.get(name, analyses / "claims" / f"{name}.toml")


def test_the_shipped_names_are_the_shared_files_and_each_benchmarks_own():
    assert shipped_claims() == ("paper", "paper_checks", "locomo", "locomo-systems")


def test_an_unknown_name_is_refused_with_the_choices():
    with pytest.raises(ValueError, match=r"no shipped claims file 'papers'.*'paper'"):
        claims_file("papers")


def test_a_missing_shipped_file_is_an_error_naming_its_path(monkeypatch, tmp_path):
    monkeypatch.setattr(claims_audit, "CLAIMS_DIR", tmp_path)
    with pytest.raises(FileNotFoundError, match="claims file not found") as info:
        claims_file("paper")
    assert info.value.filename == str(tmp_path / "paper.toml")
    assert info.value.errno == errno.ENOENT


def test_the_embedded_audit_never_skips_a_missing_file_silently(tmp_path):
    selection = ClaimSelection("Audit", benchmark_prefixes=("synthetic",))
    with pytest.raises(FileNotFoundError, match="claims file not found"):
        audit(None, selection, n_resamples=9, seed=0, claims_path=tmp_path / "none.toml")  # type: ignore[arg-type]
