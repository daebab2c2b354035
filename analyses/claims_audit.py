"""The embedded claims audit every benchmark run gets: claims of ``analyses/claims/paper.toml``
selected per benchmark (:class:`analyses.protocol.ClaimSelection`), audited on the run's records.

The claims files the pipelines audit (``paper.toml``, ``locomo.toml``, ``paper_checks.toml``) are
package data of ``osustat.analyses`` (folder ``analyses/claims/``): they are the paper's claims
about its benchmarks, read by the reproduction layer, so they live with it — not in the core
(:mod:`osustat.audit` reads any claims file and knows no benchmark) and not in ``reports/``.
:func:`claims_file` finds one from the package, in the repository and in an installed wheel
alike; a missing file is an error naming its path, never a silently skipped audit.

Its own room so that the driver and ``--sensitivity`` (:mod:`analyses.sensitivity`) both call it
without importing each other.
"""

from __future__ import annotations

import errno
from dataclasses import replace
from pathlib import Path
from typing import Any

import pandas as pd

from .protocol import ClaimSelection

__all__ = ["CLAIMS_DIR", "SHIPPED_CLAIMS", "check_claims_file", "claims_audit", "claims_file"]

#: Where the shipped claims files are: package data of ``osustat.analyses``.
CLAIMS_DIR = Path(__file__).resolve().parent / "claims"

#: The shipped claims files by name: the paper's claims (audited by every run, selected per
#: benchmark), LoCoMo's transfer claims, and the checks of the paper's own printed numbers.
SHIPPED_CLAIMS = ("paper", "locomo", "paper_checks")


def check_claims_file(path: str | Path) -> Path:
    """`path` as a Path if it is a file; ``FileNotFoundError`` naming it otherwise."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(errno.ENOENT, "claims file not found", str(path))
    return path


def claims_file(name: str) -> Path:
    """The shipped claims file `name` (one of :data:`SHIPPED_CLAIMS`), checked to exist.

    >>> claims_file("paper").name
    'paper.toml'
    """
    if name not in SHIPPED_CLAIMS:
        raise ValueError(f"no shipped claims file {name!r}; choose from {list(SHIPPED_CLAIMS)}")
    return check_claims_file(CLAIMS_DIR / f"{name}.toml")


def claims_audit(
    records: pd.DataFrame,
    selection: ClaimSelection | None,
    *,
    n_resamples: int,
    seed: int,
    claims_path: Path | None = None,
) -> tuple[Any, str | None]:
    """Audit the claims `selection` picks from the claims file on `records`.

    `claims_path` defaults to the shipped ``paper.toml``; a missing file is a
    ``FileNotFoundError`` naming it. Returns ``(AuditResult or None, markdown or None)``; both
    None when the benchmark selects no claims or none of the file's claims is selected. A cell
    too small for a claim's test makes that claim "not checkable" (the audit says why), never
    an error.
    """
    from osustat.audit.claims import load_claims
    from osustat.audit.run import audit
    from osustat.reports.audit import render_markdown

    if selection is None:
        return None, None
    path = claims_file("paper") if claims_path is None else check_claims_file(claims_path)
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
