"""How the synthetic benchmark's claims depend on the generator choices the paper leaves open.

A *grid* (a TOML file, default ``analyses/synthetic/grid.toml``, read by
:mod:`osustat.analyses.synthetic.grid`) declares generator configurations
(:class:`~osustat.analyses.synthetic.generator.GeneratorConfig`). Every point runs the same
methods over ``len(seeds) x episodes`` episodes through the one sweep runner
(``analyses.runner.run_tasks``, one progress bar for the whole grid), and every synthetic claim
of the paper (Table 2 as in ``analyses/claims/paper.toml``, and Sections 6.1 / 6.4) is tested
at every point on episode-level paired differences (episodes of all seeds pooled: they are
independent draws of the same generator):

- effect = mean episode-level difference treatment - baseline, a BCa bootstrap 95% CI (expanded
  for small n, `osustat.bootstrap_ci`), and a
  two-sided paired sign-flip p-value (one shared set of sign vectors per point);
- claims against *every* baseline of a set ("beats every retrieval baseline", "highest near
  recall", "sim-only below every baseline") are intersection-union tests: the effect is the
  smallest of the per-baseline effects (its CI is that comparison's) and p is the largest
  per-baseline p, which is a valid level-alpha test of the intersection without correction;
- a claim *holds at a point* when its effect is in the claimed direction and ``p <= .05``; it
  *holds robustly* only if it also holds at every point after a Holm correction over the grid's
  points (a family per claim); it is *generator-dependent* when it holds after Holm at some
  points but not all, and *not reproduced* when it holds after Holm at none;
- the claim that the novelty term has no significant effect (Section 6.4) is a null claim:
  it holds at a point when ``p > .05`` (uncorrected, which is the conservative side for a
  claim of no effect), robustly when it holds at every point.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from osustat import adjust_pvalues, bootstrap_ci, paired_signflip_test
from osustat.analyses.protocol import Backend
from osustat.analyses.runner import child_seeds, run_tasks
from osustat.streams import stream_rng

from .generator import GeneratorConfig
from .grid import (
    GRID_METHODS,
    ClaimSpec,
    Grid,
    claim_specs,
)
from .run import _episode_task, method_factories

__all__ = ["SensitivityResult", "run_sensitivity"]

#: Prefix of every test's stream name (:func:`osustat.streams.stream_rng`).
STREAM = "synthetic sensitivity"


def _grid_task(
    point: int,
    seed: int,
    index: int,
    seed_seq: np.random.SeedSequence,
    budgets: tuple[int, ...],
    config: GeneratorConfig,
    methods: tuple[str, ...],
) -> tuple[int, int, str, list[tuple[str, int, str, float]], dict[str, float]]:
    recs, structure, _ = _episode_task(index, seed_seq, seed, budgets, config, methods, False)
    means: list[tuple[str, int, str, float]] = []
    if recs:
        frame = pd.DataFrame(recs)
        agg = frame.groupby(["method", "budget", "metric"], sort=True)["value"].mean()
        means = [(m, int(b), k, float(v)) for (m, b, k), v in agg.items()]
    return point, seed, f"s{seed}/ep{index:03d}", means, structure


@dataclass(frozen=True)
class SensitivityResult:
    """Everything the sensitivity report shows.

    ``points``: one row per grid point (its parameters and structural statistics);
    ``effects``: one row per point x claim (effect, CI, p, Holm over points, holds);
    ``summary``: one row per claim (in how many points it holds, verdict);
    ``episode_means``: the per-episode metric means the tests use.
    """

    grid: Grid
    methods: tuple[str, ...]
    claims: tuple[ClaimSpec, ...]
    points: pd.DataFrame
    effects: pd.DataFrame
    summary: pd.DataFrame
    episode_means: pd.DataFrame


def _test_point(
    means: pd.DataFrame,
    specs: list[ClaimSpec],
    resamples: int,
    seed: int,
    point: int,
) -> list[dict[str, Any]]:
    """Per claim at one grid point: effect, CI and p; every test and interval draws from its
    own stream (:func:`osustat.streams.stream_rng` of `seed`, the point and the test's name)."""
    wide = means.pivot_table(
        index="unit", columns=["method", "budget", "metric"], values="value", aggfunc="first"
    )
    cols: list[np.ndarray] = []
    owner: list[tuple[int, str]] = []
    for k, s in enumerate(specs):
        for base in s.baselines:
            key_t, key_b = (s.treatment, s.budget, s.metric), (base, s.budget, s.metric)
            if key_t not in wide or key_b not in wide:
                d = np.array([])
            else:
                d = (wide[key_t] - wide[key_b]).to_numpy(dtype=float)
                d = d[np.isfinite(d)]
            cols.append(-d if s.reverse else d)
            owner.append((k, base))
    tests = [
        paired_signflip_test(
            c if len(c) >= 2 else np.zeros(2),
            np.zeros(max(len(c), 2)),
            n_resamples=resamples,
            rng=stream_rng(seed, STREAM, point, specs[k].id, base),
        )
        for c, (k, base) in zip(cols, owner, strict=True)
    ]
    rows = []
    for k, s in enumerate(specs):
        idx = [j for j, (kk, _) in enumerate(owner) if kk == k]
        per = [
            (float(np.mean(cols[j])) if len(cols[j]) else np.nan, tests[j].pvalue, j) for j in idx
        ]
        if any(len(cols[j]) < 2 for j in idx):
            rows.append(
                {
                    "claim": s.id,
                    "effect": np.nan,
                    "ci_low": np.nan,
                    "ci_high": np.nan,
                    "p": np.nan,
                    "n": 0,
                    "weakest": "",
                }
            )
            continue
        eff, _, jmin = min(per)
        p = max(pv for _, pv, _ in per)
        ci = bootstrap_ci(
            cols[jmin], n_resamples=resamples, rng=stream_rng(seed, STREAM, point, s.id, "ci")
        )
        rows.append(
            {
                "claim": s.id,
                "effect": eff,
                "ci_low": float(ci.low),
                "ci_high": float(ci.high),
                "p": float(p),
                "n": int(min(len(cols[j]) for j in idx)),
                "weakest": owner[jmin][1],
            }
        )
    return rows


def run_sensitivity(
    grid: Grid,
    *,
    methods: tuple[str, ...] = GRID_METHODS,
    seed: int = 0,
    backend: Backend = Backend(),
) -> SensitivityResult:
    """Run every grid point and test every claim at every point (see the module docstring).

    Parameters
    ----------
    grid : Grid
        From :func:`load_grid`.
    methods : tuple of str
        Methods to run; claims needing others are skipped.
    seed : int
        Seed of the tests' resampling (one child per point).
    backend : Backend
        How the one sweep over all point x seed x episode tasks runs (``run_tasks``: worker
        processes, a Dask cluster, a resume folder, one progress bar); the result does not
        depend on it.
    """
    known = method_factories()
    unknown = [m for m in methods if m not in known]
    if unknown:
        raise ValueError(f"unknown `methods` {unknown}; choose from {list(known)}.")
    specs = claim_specs(methods, grid.budgets)
    if not specs:
        raise ValueError("`methods` can test none of the paper's synthetic claims.")
    tasks = []
    for pt in grid.points:
        for s in grid.seeds:
            for i, c in enumerate(child_seeds(s, grid.episodes)):
                tasks.append((pt.index, s, i, c, grid.budgets, pt.config, tuple(methods)))
    results = run_tasks(_grid_task, tasks, backend=backend, desc="sensitivity grid", unit="ep")
    mean_rows = [
        (pt, s, unit, m, b, k, v) for pt, s, unit, means, _ in results for m, b, k, v in means
    ]
    episode_means = pd.DataFrame(
        mean_rows, columns=["point", "seed", "unit", "method", "budget", "metric", "value"]
    )
    from .run import _merge_structure

    point_rows = []
    for pt in grid.points:
        parts = [st for p, _, _, _, st in results if p == pt.index]
        point_rows.append(
            {
                "point": pt.index,
                "name": pt.name,
                "default": pt.index == grid.default_index,
                **pt.config.as_dict(),
                **_merge_structure(parts),
            }
        )
    points = pd.DataFrame(point_rows)
    for col in ("spacing", "gap"):
        points[col] = points[col].map(lambda v: f"{v[0]}-{v[1]}")

    effect_rows = []
    for pt in grid.points:
        sub = episode_means[episode_means["point"] == pt.index]
        for row in _test_point(sub, specs, grid.resamples, seed, pt.index):
            effect_rows.append({"point": pt.index, **row})
    effects = pd.DataFrame(effect_rows)
    by_id = {s.id: s for s in specs}
    effects["p_holm"] = np.nan
    for cid, idx in effects.groupby("claim", sort=False).groups.items():
        ps = effects.loc[idx, "p"]
        ok = ps.notna()
        if ok.any():
            adj = adjust_pvalues(ps[ok].to_numpy(), method="holm")
            effects.loc[ps[ok].index, "p_holm"] = adj.pvalues_adjusted
        null = by_id[str(cid)].null
        eff = effects.loc[idx, "effect"]
        if null:
            effects.loc[idx, "holds"] = ps > 0.05
            effects.loc[idx, "holds_holm"] = ps > 0.05
        else:
            effects.loc[idx, "holds"] = (eff > 0) & (ps <= 0.05)
            effects.loc[idx, "holds_holm"] = (eff > 0) & (effects.loc[idx, "p_holm"] <= 0.05)
    effects["holds"] = effects["holds"].astype(bool)
    effects["holds_holm"] = effects["holds_holm"].astype(bool)
    summary = _summarize(effects, specs, grid.default_index, len(grid.points))
    return SensitivityResult(
        grid, tuple(methods), tuple(specs), points, effects, summary, episode_means
    )


def _summarize(
    effects: pd.DataFrame, specs: list[ClaimSpec], default: int | None, n_points: int
) -> pd.DataFrame:
    rows = []
    for s in specs:
        e = effects[effects["claim"] == s.id]
        k_raw, k_holm = int(e["holds"].sum()), int(e["holds_holm"].sum())
        if s.null:
            verdict = (
                "robust"
                if k_raw == n_points
                else ("generator-dependent" if k_raw else "not reproduced")
            )
        else:
            verdict = (
                "robust"
                if k_holm == n_points
                else ("generator-dependent" if k_holm else "not reproduced")
            )
        reversed_ = int(((e["effect"] < 0) & (e["p_holm"] <= 0.05)).sum()) if not s.null else 0
        d = e[e["point"] == default] if default is not None else e.iloc[:0]
        rows.append(
            {
                "claim": s.id,
                "text": s.text,
                "source": s.source,
                "null_claim": s.null,
                "points": n_points,
                "holds_raw": k_raw,
                "holds_holm": k_holm,
                "reversed_holm": reversed_,
                "verdict": verdict,
                "effect_min": float(e["effect"].min()),
                "effect_max": float(e["effect"].max()),
                "default_effect": float(d["effect"].iloc[0]) if len(d) else np.nan,
                "default_ci_low": float(d["ci_low"].iloc[0]) if len(d) else np.nan,
                "default_ci_high": float(d["ci_high"].iloc[0]) if len(d) else np.nan,
                "default_p": float(d["p"].iloc[0]) if len(d) else np.nan,
                "default_holds": bool(d["holds"].iloc[0]) if len(d) else False,
            }
        )
    return pd.DataFrame(rows)
