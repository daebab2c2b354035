"""The pipelines' embedded audits find the repository's claims file (a move once lost it)."""

from osustat.analyses.tau_bench.audit import DEFAULT_CLAIMS
from osustat.analyses.toolbench.reproduce import CLAIMS


def test_the_pipelines_find_claims_paper_toml():
    assert DEFAULT_CLAIMS.is_file() and DEFAULT_CLAIMS.name == "paper.toml"
    assert CLAIMS == DEFAULT_CLAIMS
