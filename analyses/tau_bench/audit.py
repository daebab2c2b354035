"""The embedded audit of the paper's τ-bench claims: ONE adapter function.

The audit API is being reworked in parallel; everything the τ-bench pipeline needs from it goes
through :func:`audit_tau_claims`, so only this function has to follow the rework.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pandas as pd

__all__ = ["DEFAULT_CLAIMS", "audit_tau_claims"]

DEFAULT_CLAIMS = Path(__file__).resolve().parents[2] / "claims" / "paper.toml"


def audit_tau_claims(
    records: pd.DataFrame,
    claims_path: str | Path | None = None,
    *,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> str | None:
    """Audit the claims about benchmarks ``tau-bench*`` against `records`; markdown or None.

    Returns None when the claims file is not found (e.g. an installed package without the
    repository's ``claims/`` folder). Claims about other benchmarks are left out (not
    reported as "not checkable"). The records' ``task`` column is ignored by the audit: its
    tests are per query (or per episode), as the paper's are; the report's task-level
    columns say how far that differs.
    """
    from osustat import audit_claims, load_claims
    from osustat.reports.audit import render_markdown

    path = Path(claims_path) if claims_path is not None else DEFAULT_CLAIMS
    if not path.is_file():
        return None
    claims = load_claims(path)
    kept = tuple(c for c in claims.claims if (c.benchmark or "").startswith("tau-bench"))
    if not kept:
        return None
    used = {c.family for c in kept}
    sub = replace(
        claims,
        claims=kept,
        families={k: v for k, v in claims.families.items() if k in used},
    )
    cols = [c for c in records.columns if c != "task"]
    result = audit_claims(sub, records[cols], n_resamples=n_resamples, rng=seed)
    return render_markdown(result, title="Audit of the paper's τ-bench claims")
