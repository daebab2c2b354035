"""analyses/locomo/claims.toml parses and names only what the LoCoMo pipeline writes."""

from __future__ import annotations

from osustat import load_claims
from osustat.analyses.claims_audit import claims_file
from osustat.analyses.locomo.run import BENCHMARK, MAIN_METHODS, PRIMARY_BUDGET

CLAIMS = claims_file("locomo")


def test_transfer_claims_match_the_pipeline() -> None:
    claims = load_claims(CLAIMS)
    assert len(claims.claims) == 8
    for c in claims.claims:
        assert c.benchmark == BENCHMARK
        assert c.budget == PRIMARY_BUDGET
        assert c.treatment in MAIN_METHODS and c.baseline in MAIN_METHODS
        assert c.reported_effect is None  # predictions: nothing printed for LoCoMo
    kinds = sorted(c.kind for c in claims.claims)
    assert kinds == ["difference"] * 6 + ["interaction"] * 2
