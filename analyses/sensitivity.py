"""``--sensitivity`` for every benchmark: its claims at every point of a grid of open choices.

A grid (TOML; default: the benchmark's defaults plus each other value of each declared choice,
one choice at a time) lists points, each an assignment of the benchmark's declared choices
(:mod:`analyses.protocol`), and the seeds to run at each point::

    seeds = [0, 1, 2]
    [cross]                 # optional: every combination of these values ...
    focal = ["all", "one"]
    [[point]]               # ... on top of every point (default: one point, the defaults)
    name = "unprefixed"
    namespace-prefix = "unprefixed"

At every point and seed the benchmark runs in full (through the one runner; a benchmark with a
``run_many(specs)`` runs all points at once, sharing work that leaves records unchanged, and
yields (index, run) in any order) and the claims it
selects from ``analyses/claims/paper.toml`` are audited on the records
(:func:`analyses.claims_audit.claims_audit`): per claim × point × seed the effect, its CI, p and the
verdict (strict standard, the audit's
calibrated tests). A claim is **robust** when it is reproduced at every point (every seed),
**choice-dependent** when at some, **not reproduced** when at none. A claim the paper printed
as non-significant, which the audit's rules can never call reproduced, is counted apart:
**null: consistent** when n.s. here at every point, **null: significant here at some point**
otherwise (``reproduced_at`` then counts the points where it was significant). Beside a null
claim, its power: the strict test's MDE (two-sided, power .8, the family's alpha; median over
points and seeds) against the paper's printed effect, and at how many points the test could see
that effect (MDE <= |paper's effect|): a "consistent" null from a test that could not see the
paper's effect says little (issue 35 item 12).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pandas as pd

from osustat._validation import read_toml

from .protocol import Backend, Benchmark, ChoiceError, RunSpec

__all__ = ["ChoiceGrid", "ChoiceSensitivity", "load_choice_grid", "run_choice_sensitivity"]


@dataclass(frozen=True)
class ChoiceGrid:
    """Points (name, choice assignment) and seeds."""

    points: tuple[tuple[str, dict[str, str]], ...]
    seeds: tuple[int, ...] | None
    source: str


@dataclass(frozen=True)
class ChoiceSensitivity:
    """Per claim × point × seed (``effects``) and per claim (``summary``); ``claims`` names
    the claims files audited (as :func:`analyses.claims_audit.shown_path` shows them)."""

    effects: pd.DataFrame
    summary: pd.DataFrame
    grid: ChoiceGrid
    claims: tuple[str, ...] = ()


def _default_points(bench: Benchmark) -> list[tuple[str, dict[str, str]]]:
    defaults = bench.choices.defaults()
    points = [("default", dict(defaults))]
    for c in bench.choices.choices:
        for v in c.values:
            if v != c.default:
                points.append((f"{c.name}={v}", {**defaults, c.name: v}))
    return points


def load_choice_grid(bench: Benchmark, path: Path | None = None) -> ChoiceGrid:
    """Read a choice grid for `bench` (module docstring); None -> the benchmark's own grid file
    (its ``grid_file``), else one choice at a time."""
    if path is None:
        path = bench.grid_file
    if path is None:
        return ChoiceGrid(tuple(_default_points(bench)), None, "one choice at a time (default)")
    data = read_toml(path, "grid file", ("seeds", "cross", "point"))
    seeds = data.get("seeds")
    if seeds is not None and (
        not isinstance(seeds, list)
        or not seeds
        or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in seeds)
    ):
        raise ValueError(f"{path}: `seeds` must be a non-empty list of integers >= 0.")
    cross = data.get("cross", {})
    if not isinstance(cross, dict) or not all(isinstance(v, list) and v for v in cross.values()):
        raise ValueError(f"{path}: [cross] must map choice names to non-empty lists.")
    raw_points = data.get("point", [{"name": "default"}])
    points: list[tuple[str, dict[str, str]]] = []
    seen: set[tuple[tuple[str, str], ...]] = set()
    axes = sorted(cross)
    for k, raw in enumerate(raw_points):
        if not isinstance(raw, dict):
            raise ValueError(f"{path}: [[point]] {k} is not a table.")
        name = str(raw.get("name", f"point {k}"))
        base = {key: str(v) for key, v in raw.items() if key != "name"}
        for combo in itertools.product(*(cross[a] for a in axes)):
            over = {**base, **{a: str(v) for a, v in zip(axes, combo, strict=True)}}
            label = name + "".join(f" | {a}={v}" for a, v in zip(axes, combo, strict=True))
            try:
                values = bench.choices.resolve(over)
            except ChoiceError as exc:
                raise ValueError(f"{path}: [[point]] {k} ({label}): {exc}") from None
            key = tuple(sorted(values.items()))
            if key not in seen:
                seen.add(key)
                points.append((label, values))
    return ChoiceGrid(tuple(points), tuple(seeds) if seeds else None, str(path))


def run_choice_sensitivity(
    bench: Benchmark,
    grid: ChoiceGrid,
    spec: RunSpec,
    folder: Path,
    *,
    claims_path: Path | None = None,
) -> ChoiceSensitivity:
    """Run `bench` at every point and seed of `grid`, audit its claims, write the tables."""
    from .runner import run_tasks

    seeds = grid.seeds or (spec.seed,)
    labels = [(index, name, values, seed) for index, (name, values) in enumerate(grid.points)
              for seed in seeds]  # fmt: skip
    specs = [
        replace(spec, choices=values, seed=seed, retrievers=()) for _, _, values, seed in labels
    ]
    # a benchmark may run many points at once, sharing work (``run_many``: yields (index, run))
    runs = bench.run_many(specs)
    by_run: dict[int, list[dict[str, object]]] = {}
    pending: list[tuple[int, Any]] = []
    jobs = spec.backend.jobs
    for item in itertools.chain(runs, [None]):
        if item is not None:
            pending.append(item)
        if pending and (item is None or len(pending) >= jobs):
            # the audits of `jobs` points at once (one process each; results do not depend on it)
            tasks = [
                (
                    run.records,
                    bench.claims,
                    spec.n_resamples,
                    labels[i][3],
                    claims_path,
                    run.state.get("audit_unavailable"),
                )
                for i, run in pending
            ]
            backend = Backend(jobs=min(jobs, len(tasks)), progress=False)
            audited = run_tasks(_audit_rows, tasks, backend=backend)
            for (i, _), checks in zip(pending, audited, strict=True):
                index, name, values, seed = labels[i]
                by_run[i] = [
                    {
                        "claim": c["claim"], "point": index, "point_name": name, "seed": seed,
                        **{f"choice:{k}": v for k, v in sorted(values.items())},
                        **{k: v for k, v in c.items() if k != "claim"},
                    }
                    for c in checks
                ]  # fmt: skip
            pending = []
    rows = [r for i in sorted(by_run) for r in by_run[i]]
    effects = pd.DataFrame(rows)
    summary = _summarize(effects)
    folder.mkdir(parents=True, exist_ok=True)
    effects.to_csv(folder / "effects.csv", index=False)
    summary.to_csv(folder / "summary.csv", index=False)
    from .claims_audit import claims_paths, shown_path

    used = () if bench.claims is None else claims_paths(bench.claims, claims_path)
    return ChoiceSensitivity(effects, summary, grid, tuple(shown_path(p) for p in used))


def _audit_rows(
    records: pd.DataFrame,
    selection: Any,
    n_resamples: int,
    seed: int,
    claims_path: Path | None,
    unavailable: dict[str, str] | None = None,
) -> list[dict[str, Any]]:
    """The claims audit of one point's records, per claim (a task of ``run_tasks``);
    `unavailable` as the run's state says (benchmark -> why its claims are not checkable)."""
    from .claims_audit import claims_audit

    result = claims_audit(
        records,
        selection,
        n_resamples=n_resamples,
        seed=seed,
        claims_path=claims_path,
        unavailable=unavailable,
    )
    from osustat.audit.verdicts import claimed_magnitude, paper_not_significant

    return [
        {
            "claim": check.claim.id,
            # a claim the paper printed as non-significant can never be "reproduced": it is
            # summarised on its own outcome (issue 35 item 12)
            "paper_ns": paper_not_significant(
                check.claim, result.families[check.claim.family].alpha
            ),
            "n": check.n,
            "effect": check.effect,
            "ci_low": None if check.ci is None else check.ci.low,
            "ci_high": None if check.ci is None else check.ci.high,
            "p": None if check.test is None else check.test.pvalue,
            "verdict": check.verdict,
            "verdict_as_tested": None if check.as_tested is None else check.as_tested.verdict,
            # power beside the verdict: the strict test's MDE (inf: underpowered at any effect;
            # None: no MDE, e.g. interactions, or a range: not estimable as one number)
            "mde": _mde_value(check.mde),
            "paper_magnitude": (
                claimed_magnitude(check.claim) if check.claim.kind == "difference" else None
            ),
        }
        for check in (() if result is None else result.checks)
    ]


def _mde_value(mde: Any) -> float | None:
    """The MDE as a number (inf when underpowered at any effect, also where a range is
    infinite at both ends: rule Z), None when absent or a range (not estimable as one
    number: too few differences, or not normal-shaped)."""
    if mde is None:
        return None
    ends = getattr(mde, "mde_range", None)
    if ends is not None:
        return math.inf if math.isinf(ends[0]) else None
    return float(mde)


def _null_power(checkable: pd.DataFrame) -> dict[str, Any]:
    """A null claim's power beside its outcome: the median MDE over points and seeds, the
    paper's |effect|, and the points where every seed's MDE <= that effect."""
    if "mde" not in checkable or "paper_magnitude" not in checkable:
        return {"mde": None, "paper_magnitude": None, "powered_at": None}
    mde = pd.to_numeric(checkable["mde"], errors="coerce")
    magnitude = pd.to_numeric(checkable["paper_magnitude"], errors="coerce").dropna()
    target = float(magnitude.iloc[0]) if not magnitude.empty else None
    powered = None
    if target is not None and mde.notna().any():
        ok = (mde <= target).groupby(checkable["point"]).all()
        powered = int(ok.sum())
    return {
        "mde": float(mde.median()) if mde.notna().any() else None,
        "paper_magnitude": target,
        "powered_at": powered,
    }


def _summarize(effects: pd.DataFrame) -> pd.DataFrame:
    """Per claim: at how many points it is reproduced (every seed) -> robust / choice-dependent
    / not reproduced; claims never checkable are said so."""
    if effects.empty:
        return pd.DataFrame(columns=["claim", "points", "reproduced_at", "verdict"])
    out = []
    for claim, frame in effects.groupby("claim", sort=False):
        checkable = frame[frame["verdict"] != "not checkable"]
        per_point = checkable.groupby("point")["verdict"].agg(
            lambda v: bool((v == "reproduced").all())
        )
        n_points = int(frame["point"].nunique())
        held = sum(bool(x) for x in per_point)
        null = "paper_ns" in frame and bool(frame["paper_ns"].fillna(False).astype(bool).any())
        if null and not checkable.empty:
            # the paper's "n.s.": significant here at some point and seed, or n.s. throughout,
            # with the power the test had to see the paper's effect
            significant = checkable["verdict"].isin(["significant (paper: n.s.)", "reproduced"])
            held = int(checkable[significant]["point"].nunique())
            verdict = (
                "null: significant here at some point (paper: n.s.)"
                if held
                else "null: consistent (n.s. here too at every point)"
            )
            out.append(
                {
                    "claim": claim, "points": n_points, "reproduced_at": held,
                    "verdict": verdict, **_null_power(checkable),
                }
            )  # fmt: skip
            continue
        if checkable.empty:
            verdict = "not checkable"
        elif held == n_points:
            verdict = "robust"
        elif held > 0:
            verdict = "choice-dependent"
        else:
            verdict = "not reproduced"
        out.append({"claim": claim, "points": n_points, "reproduced_at": held, "verdict": verdict})
    return pd.DataFrame(out)
