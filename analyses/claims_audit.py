"""The embedded claims audit every benchmark run gets: claims of ``claims/paper.toml`` selected
per benchmark (:class:`analyses.protocol.ClaimSelection`), audited on the run's records.

Its own room so that the driver and ``--sensitivity`` (:mod:`analyses.sensitivity`) both call it
without importing each other.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pandas as pd

from .protocol import ClaimSelection

__all__ = ["CLAIMS_FILE", "claims_audit"]

#: The paper's claims, audited by every run (selected per benchmark).
CLAIMS_FILE = Path(__file__).resolve().parents[1] / "claims" / "paper.toml"


def claims_audit(
    records: pd.DataFrame,
    selection: ClaimSelection | None,
    *,
    n_resamples: int,
    seed: int,
    claims_path: Path | None = None,
) -> tuple[Any, str | None]:
    """Audit the claims `selection` picks from the claims file on `records`.

    Returns ``(AuditResult or None, markdown or None)``; both None when no claims file was
    found or none of its claims is selected. A cell too small for a claim's test makes that
    claim "not checkable" (the audit says why), never an error.
    """
    from osustat.audit.claims import load_claims
    from osustat.audit.run import audit
    from osustat.reports.audit import render_markdown

    path = claims_path if claims_path is not None else CLAIMS_FILE
    if selection is None or not path.is_file():
        return None, None
    claims = load_claims(path)
    kept = tuple(
        c
        for c in claims.claims
        if c.id in selection.ids
        or any((c.benchmark or "").startswith(p) for p in selection.benchmark_prefixes)
    )
    if not kept:
        return None, None
    used = {c.family for c in kept}
    sub = replace(
        claims, claims=kept, families={k: v for k, v in claims.families.items() if k in used}
    )
    cols = [c for c in records.columns if c not in selection.drop_columns]
    result = audit(
        sub,
        records[cols],
        n_resamples=n_resamples,
        bootstrap_resamples=selection.bootstrap_resamples,
        rng=seed,
    )
    return result, render_markdown(result, title=selection.title)
