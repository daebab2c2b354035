"""The embedded claims audit every benchmark run gets: the claims of the claims files a benchmark
declares (``analyses/claims/paper.toml`` unless it names others), selected per benchmark
(:class:`analyses.protocol.ClaimSelection`), audited on the run's records.

The claims files several benchmarks share (``paper.toml``, the paper's claims;
``paper_checks.toml``, checks of its printed numbers) are package data of ``osustat.analyses``
(folder ``analyses/claims/``), named by name; a benchmark's own claims file (LoCoMo's transfer
claims, ``analyses/locomo/claims.toml``) lives in its folder and is declared by path. They are
read by the reproduction layer, so they live with it — not in the core (:mod:`osustat.audit`
reads any claims file and knows no benchmark) and not in ``reports/``. :func:`claims_file`
finds one from the package, in the repository and in an installed wheel alike; a missing file
is an error naming its path, never a silently skipped audit.

Its own room so that the driver and ``--sensitivity`` (:mod:`analyses.sensitivity`) both call it
without importing each other.
"""

from __future__ import annotations

import errno
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import pandas as pd

from .protocol import ClaimSelection

__all__ = [
    "CLAIMS_DIR",
    "SHARED_CLAIMS",
    "check_claims_file",
    "claims_audit",
    "claims_file",
    "claims_paths",
    "load_selected_claims",
    "shipped_claims",
    "shown_path",
]

#: Where the claims files several benchmarks share are (``osustat.analyses`` package data).
CLAIMS_DIR = Path(__file__).resolve().parent / "claims"

#: The shared claims files by name: the paper's claims (audited by every run, selected per
#: benchmark) and the checks of the paper's own printed numbers. A benchmark's own claims
#: file lives in its folder and is declared by path (:class:`ClaimSelection`).
SHARED_CLAIMS = ("paper", "paper_checks")


def check_claims_file(path: str | Path) -> Path:
    """`path` as a Path if it is a file; ``FileNotFoundError`` naming it otherwise."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(errno.ENOENT, "claims file not found", str(path))
    return path


def _own_claims(benchmark: str) -> Path | None:
    """The one claims file benchmark `benchmark` declares by path (None: none, or no such
    registered benchmark)."""
    from .registry import benchmark_names, get_benchmark

    if benchmark not in benchmark_names():
        return None
    claims = get_benchmark(benchmark).claims
    own = [f for f in (claims.files if claims else ()) if isinstance(f, Path)]
    return own[0] if len(own) == 1 else None


def _audit_files() -> dict[str, Path]:
    """The claims files registered benchmarks ship for ``osustat audit NAME`` beyond their
    runs' own (:attr:`~analyses.protocol.Benchmark.audit_files`), by name."""
    from .registry import benchmark_names, get_benchmark

    return {k: Path(v) for n in benchmark_names() for k, v in get_benchmark(n).audit_files.items()}


def shipped_claims() -> tuple[str, ...]:
    """The names :func:`claims_file` takes: the shared files, then every registered benchmark
    that declares one claims file of its own, then the benchmarks' further audit files (this
    imports the benchmarks)."""
    from .registry import benchmark_names

    own = tuple(n for n in benchmark_names() if _own_claims(n) is not None)
    return SHARED_CLAIMS + own + tuple(_audit_files())


def claims_file(name: str) -> Path:
    """The shipped claims file `name`, checked to exist: a shared one (:data:`SHARED_CLAIMS`),
    or a benchmark's name for the claims file it declares in its folder.

    >>> claims_file("paper").name
    'paper.toml'
    """
    path = (
        CLAIMS_DIR / f"{name}.toml"
        if name in SHARED_CLAIMS
        else _own_claims(name) or _audit_files().get(name)
    )
    if path is None:
        raise ValueError(f"no shipped claims file {name!r}; choose from {list(shipped_claims())}")
    return check_claims_file(path)


def shown_path(path: Path) -> str:
    """A claims file as reports name it: ``analyses/...`` for one shipped with osustat, else
    the path as given (a file of the user's or of another package)."""
    path = Path(path)
    try:
        return "analyses/" + path.resolve().relative_to(CLAIMS_DIR.parent).as_posix()
    except ValueError:
        return str(path)


def claims_paths(selection: ClaimSelection, claims_path: Path | None = None) -> list[Path]:
    """The claims files `selection` audits (shared ones by name, a benchmark's own by path), or
    `claims_path` in their place; each checked to exist (``FileNotFoundError`` naming it)."""
    if claims_path is not None:
        return [check_claims_file(claims_path)]
    return [claims_file(f) if isinstance(f, str) else check_claims_file(f) for f in selection.files]


def load_selected_claims(selection: ClaimSelection, claims_path: Path | None = None) -> Any:
    """The claims `selection` picks, parsed and validated (a ``ClaimsFile``, or None when none of
    the files' claims is selected). Errors name the file: a missing one, a parse error, a claim
    id or family defined in two files. The driver calls it before any work."""
    from osustat.audit.claims import load_claims

    claims = _together([load_claims(p) for p in claims_paths(selection, claims_path)])
    kept = tuple(
        c
        for c in claims.claims
        if c.id in selection.ids
        or any((c.benchmark or "").startswith(p) for p in selection.benchmark_prefixes)
    )
    if not kept:
        return None
    used = {c.family for c in kept}
    return replace(
        claims, claims=kept, families={k: v for k, v in claims.families.items() if k in used}
    )


def claims_audit(
    records: pd.DataFrame,
    selection: ClaimSelection | None,
    *,
    n_resamples: int,
    seed: int,
    claims_path: Path | None = None,
    unavailable: Mapping[str, str] | None = None,
    progress: bool = False,
) -> Any:
    """Audit the claims `selection` picks from its claims files on `records`.

    The files are the ones `selection.files` declares (default the shared ``paper.toml``),
    audited together as one claims file; `claims_path` audits that file in their place. A missing
    file is a ``FileNotFoundError`` naming it. Returns the ``AuditResult`` (the driver renders
    it), or None when the benchmark selects no claims or none of the files' claims is
    selected. A cell too small for a claim's test makes that claim "not checkable" (the audit
    says why), never an error; so do the claims of a benchmark in `unavailable` (benchmark ->
    reason, from the run's state: e.g. no LLM ran where the claim is about one). `progress`
    shows a bar over the claims.
    """
    from osustat.audit.run import audit

    if selection is None:
        return None
    sub = load_selected_claims(selection, claims_path)
    if sub is None:
        return None
    from .registry import episode_unit_benchmarks

    cols = [c for c in records.columns if c not in selection.drop_columns]
    result = audit(
        sub,
        records[cols],
        n_resamples=n_resamples,
        bootstrap_resamples=selection.bootstrap_resamples,
        rng=seed,
        unavailable=unavailable,
        progress=progress,
        # as `osustat audit` flags them: query-unit claims on a benchmark declaring episodes
        episode_benchmarks=episode_unit_benchmarks(records),
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
