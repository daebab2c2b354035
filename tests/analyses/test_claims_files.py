"""The driver's embedded audit reads every claims file a benchmark declares (ClaimSelection.files),
as one file; an id or family defined twice is an error naming both files."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import osustat.analyses.claims_audit as ca
from osustat.analyses.protocol import ClaimSelection
from osustat.reports.audit import render_markdown


def _claims(family: str, ids: list[str], benchmark: str = "fake") -> str:
    out = f'title = "{family} claims"\n[family.{family}]\ncorrection = "none"\n'
    for k, i in enumerate(ids):  # each its own threshold: a family's claims are distinct tests
        out += (
            f'[[claim]]\nid = "{i}"\nfamily = "{family}"\nbenchmark = "{benchmark}"\n'
            'treatment = "A"\nbaseline = "B"\nmetric = "hit@2"\nbudget = 8\n'
            f'direction = "greater"\ncell = "aggregate"\nthreshold = {k / 100}\n'
        )
    return out


def _records() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    rows = []
    for q in range(30):
        a = float(rng.integers(0, 2))
        for m, v in (("A", a), ("B", 0.0)):
            rows.append(
                {
                    "benchmark": "fake",
                    "episode_id": f"e{q % 5}",
                    "query_id": f"q{q}",
                    "method": m,
                    "budget": 8,
                    "seed": 0,
                    "metric": "hit@2",
                    "value": v,
                }
            )
    return pd.DataFrame(rows)


@pytest.fixture
def shipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "one.toml").write_text(_claims("f1", ["X1", "X2"]), encoding="utf-8")
    (tmp_path / "two.toml").write_text(_claims("f2", ["Y1"]), encoding="utf-8")
    (tmp_path / "dup.toml").write_text(_claims("f3", ["X1"]), encoding="utf-8")
    monkeypatch.setattr(ca, "CLAIMS_DIR", tmp_path)
    monkeypatch.setattr(ca, "SHARED_CLAIMS", ("one", "two", "dup"))
    return tmp_path


def test_every_declared_file_is_audited(shipped: Path) -> None:
    sel = ClaimSelection("Audit of both", benchmark_prefixes=("fake",), files=("one", "two"))
    result = ca.claims_audit(_records(), sel, n_resamples=200, seed=0)
    assert [c.claim.id for c in result.checks] == ["X1", "X2", "Y1"]
    assert set(result.families) == {"f1", "f2"}
    assert render_markdown(result, title=sel.title).startswith("# Audit of both")
    # one file only: the others' claims are not judged
    one = ca.claims_audit(
        _records(), ClaimSelection("t", ("fake",), files=("two",)), n_resamples=200, seed=0
    )
    assert [c.claim.id for c in one.checks] == ["Y1"]


def test_an_explicit_claims_path_replaces_the_declared_files(shipped: Path) -> None:
    sel = ClaimSelection("t", benchmark_prefixes=("fake",), files=("one", "two"))
    result = ca.claims_audit(
        _records(), sel, n_resamples=200, seed=0, claims_path=shipped / "two.toml"
    )
    assert [c.claim.id for c in result.checks] == ["Y1"]


def test_an_id_in_two_declared_files_names_both(shipped: Path) -> None:
    sel = ClaimSelection("t", benchmark_prefixes=("fake",), files=("one", "dup"))
    with pytest.raises(ValueError, match=r"'X1'.*one\.toml.*dup\.toml"):
        ca.claims_audit(_records(), sel, n_resamples=200, seed=0)


def test_locomo_declares_its_transfer_claims() -> None:
    from osustat.analyses.locomo.benchmark import BENCHMARK

    own = Path(ca.__file__).resolve().parent / "locomo" / "claims.toml"
    assert BENCHMARK.claims is not None and BENCHMARK.claims.files == (own,)
    assert ca.claims_file("locomo") == own  # `osustat audit locomo`: a benchmark's own file


def test_a_declared_path_is_audited_beside_a_shared_name(shipped: Path, tmp_path: Path) -> None:
    """A benchmark's own claims file (a path, e.g. in a package of its own) and a shared one
    (a name) are audited together."""
    own = tmp_path / "own" / "claims.toml"
    own.parent.mkdir()
    own.write_text(_claims("f9", ["Z1"]), encoding="utf-8")
    sel = ClaimSelection("t", benchmark_prefixes=("fake",), files=("two", own))
    assert [c.id for c in ca.load_selected_claims(sel).claims] == ["Y1", "Z1"]
    with pytest.raises(FileNotFoundError, match="claims file not found"):
        ca.load_selected_claims(ClaimSelection("t", ("fake",), files=(tmp_path / "none.toml",)))
