"""A cell too small for the interaction test makes the claim "not testable", never a crash."""

import pandas as pd

from osustat.audit.claims import parse_claims
from osustat.audit.run import audit

CLAIMS = """
[family.f]
correction = "none"
[[claim]]
id = "I1"
family = "f"
kind = "interaction"
benchmark = "b"
treatment = "A"
baseline = "B"
metric = "hit@2"
budget = 256
reported_p = 0.01
"""


def test_a_one_query_cell_is_not_testable():
    cells = ["T+E+"] * 5 + ["T-E-"] * 5 + ["T+E-"]
    rows = [
        {
            "benchmark": "b",
            "episode_id": f"e{i}",
            "query_id": f"q{i}",
            "method": m,
            "budget": 256,
            "metric": "hit@2",
            "value": v,
            "cell": c,
        }
        for i, c in enumerate(cells)
        for m, v in (("A", float(i % 2)), ("B", 0.0))
    ]
    check = audit(parse_claims(CLAIMS), pd.DataFrame(rows), n_resamples=99, rng=0).checks[0]
    for standard in (check.as_tested, check.strict):
        assert standard.verdict == "not checkable"
        assert "not testable: too few units in T+E- (n = 1)" in standard.detail
