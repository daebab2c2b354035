"""The embedded claims audit every benchmark run gets: the claims of the claims files a benchmark
declares (``analyses/claims/paper.toml`` unless it names others), selected per benchmark
(:class:`analyses.protocol.ClaimSelection`), audited on the run's records.

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

#: Where the shipped claims files several benchmarks share are (``osustat.analyses`` data).
CLAIMS_DIR = Path(__file__).resolve().parent / "claims"

#: A benchmark's own claims file, in its folder.
_OWN = {"locomo": Path(__file__).resolve().parent / "locomo" / "claims.toml"}

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
    return check_claims_file(_OWN.get(name, CLAIMS_DIR / f"{name}.toml"))


def claims_audit(
    records: pd.DataFrame,
    selection: ClaimSelection | None,
    *,
    n_resamples: int,
    seed: int,
    claims_path: Path | None = None,
) -> Any:
    """Audit the claims `selection` picks from its claims files on `records`.

    The files are the shipped ones `selection.files` names (default ``paper.toml``), audited
    together as one claims file; `claims_path` audits that file in their place. A missing
    file is a ``FileNotFoundError`` naming it. Returns the ``AuditResult`` (the driver renders
    it), or None when the benchmark selects no claims or none of the files' claims is
    selected. A cell too small for a claim's test makes that claim "not checkable" (the audit
    says why), never an error.
    """
    from osustat.audit.claims import load_claims
    from osustat.audit.run import audit

    if selection is None:
        return None
    paths = (
        [claims_file(name) for name in selection.files]
        if claims_path is None
        else [check_claims_file(claims_path)]
    )
    claims = _together([load_claims(p) for p in paths])
    kept = tuple(
        c
        for c in claims.claims
        if c.id in selection.ids
        or any((c.benchmark or "").startswith(p) for p in selection.benchmark_prefixes)
    )
    if not kept:
        return None
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
    return result


def _together(files: list[Any]) -> Any:
    """Several parsed claims files as one (claims in file order); a claim id or a family name
    defined in two of them is a ``ValueError`` naming both files."""
    if len(files) == 1:
        return files[0]
    ids: dict[str, str] = {}
    families: dict[str, Any] = {}
    where: dict[str, str] = {}
    for f in files:
        for c in f.claims:
            if c.id in ids:
                raise ValueError(f"claim id {c.id!r} is in both {ids[c.id]} and {f.source}.")
            ids[c.id] = f.source
        for name, fam in f.families.items():
            if name in families:
                raise ValueError(f"family {name!r} is in both {where[name]} and {f.source}.")
            families[name], where[name] = fam, f.source
    return replace(
        files[0],
        claims=tuple(c for f in files for c in f.claims),
        families=families,
        title="; ".join(f.title for f in files),
        source=", ".join(f.source for f in files),
    )
