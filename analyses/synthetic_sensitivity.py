"""How the synthetic benchmark's claims depend on the generator choices the paper leaves open.

A *grid* (a TOML file, default ``analyses/synthetic_grid.toml``) declares generator
configurations (:class:`~osustat.analyses.synthetic.GeneratorConfig`). Every point runs the
same methods over ``len(seeds) x episodes`` episodes through the one sweep runner
(``analyses.runner.run_tasks``, one progress bar for the whole grid), and every synthetic claim
of the paper (Table 2 as in ``claims/paper.toml``, and Sections 6.1 / 6.4) is tested at every
point on episode-level paired differences (episodes of all seeds pooled: they are independent
draws of the same generator):

- effect = mean episode-level difference treatment - baseline, a BCa bootstrap 95% CI, and a
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

import itertools
import tomllib
from dataclasses import dataclass, fields
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from osustat import adjust_pvalues, bootstrap_ci, signflip_tests

from .runner import child_seeds, run_tasks
from .synthetic import GeneratorConfig
from .synthetic_analysis import RETRIEVAL_BASELINES
from .synthetic_run import _episode_task, method_factories

__all__ = [
    "GRID_METHODS",
    "ClaimSpec",
    "Grid",
    "GridPoint",
    "SensitivityResult",
    "claim_specs",
    "default_grid_path",
    "load_grid",
    "run_sensitivity",
]

#: The methods the grid's claims need (Table 2's rows, sim-only, no novelty, M_max 4 and 6);
#: not GF, not No LT Memory, not M_max 2 and 3.
GRID_METHODS = (
    "Budget-Truncated Replay",
    "Sliding Window",
    "Periodic Summary",
    "Flat Vector",
    "Flat + MMR",
    "Coverage-Aware",
    "Disjoint Hierarchy",
    "Tree Abstraction",
    "OSU-Mem",
    "OSU-Mem (disjoint)",
    "OSU-Mem (sim only)",
    "OSU-Mem (no novelty)",
    "OSU-Mem (M_max=4)",
    "OSU-Mem (M_max=6)",
)
TABLE_2_BASELINES = (
    "Budget-Truncated Replay",
    "Sliding Window",
    "Periodic Summary",
    "Flat Vector",
    "Flat + MMR",
    "Coverage-Aware",
    "Disjoint Hierarchy",
    "Tree Abstraction",
    "OSU-Mem (disjoint)",
)
_SLUG = {
    "Budget-Truncated Replay": "budget-truncated-replay",
    "Sliding Window": "sliding-window",
    "Periodic Summary": "periodic-summary",
    "Flat Vector": "flat-vector",
    "Flat + MMR": "flat-mmr",
    "Coverage-Aware": "coverage-aware",
    "Disjoint Hierarchy": "disjoint-hierarchy",
    "Tree Abstraction": "tree-abstraction",
    "OSU-Mem (disjoint)": "osu-mem-disjoint",
}
_CONFIG_KEYS = {f.name for f in fields(GeneratorConfig)}
_TOP_KEYS = {"episodes", "seeds", "resamples", "budgets", "cross", "point"}


@dataclass(frozen=True)
class GridPoint:
    """One generator configuration of the grid."""

    index: int
    name: str
    config: GeneratorConfig


@dataclass(frozen=True)
class Grid:
    """A declared grid: its points and how much to run at each."""

    points: tuple[GridPoint, ...]
    episodes: int
    seeds: tuple[int, ...]
    resamples: int
    budgets: tuple[int, ...]
    source: str

    @property
    def default_index(self) -> int | None:
        """The point whose configuration is the generator's default (None if absent)."""
        for p in self.points:
            if p.config == GeneratorConfig():
                return p.index
        return None


@dataclass(frozen=True)
class ClaimSpec:
    """One synthetic claim of the paper, as a paired comparison at one budget.

    ``treatment - baseline`` per episode for every baseline; with several baselines the claim
    is about all of them (intersection-union). ``reverse`` flips each difference (the claim is
    that the *treatment* is lower). ``null`` marks a claim of no significant difference.
    """

    id: str
    text: str
    source: str
    treatment: str
    baselines: tuple[str, ...]
    metric: str
    budget: int
    reverse: bool = False
    null: bool = False


def claim_specs(
    methods: tuple[str, ...] = GRID_METHODS, budgets: tuple[int, ...] = (128, 256)
) -> list[ClaimSpec]:
    """The paper's synthetic claims that `methods` at `budgets` can test (Table 2's ids as in
    ``claims/paper.toml``)."""
    specs = []
    for b in (128, 256):
        for metric, mslug in (("hit@2", "hit2"), ("recall", "recall")):
            for base in TABLE_2_BASELINES:
                specs.append(
                    ClaimSpec(
                        f"T2-{_SLUG[base]}-{mslug}-B{b}",
                        f"OSU-Mem > {base} ({metric}, B={b})",
                        f"Table 2, OSU-Mem vs {base}, B={b}, {metric}",
                        "OSU-Mem",
                        (base,),
                        metric,
                        b,
                    )
                )
    for metric in ("recall", "hit@2"):
        specs.append(
            ClaimSpec(
                f"S6.1-beats-every-retrieval-baseline-{metric}-B256",
                f"OSU-Mem > every retrieval baseline ({metric}, B=256)",
                "Section 6.1 (+39.9% Recall, +61.5% Hit@2 over the strongest; p <= .002 vs all)",
                "OSU-Mem",
                RETRIEVAL_BASELINES,
                metric,
                256,
            )
        )
    for metric, label in (("recall_near", "near"), ("recall_far", "far")):
        specs.append(
            ClaimSpec(
                f"F2-highest-{label}-recall-B256",
                f"OSU-Mem has the highest {label} recall among retrieval baselines (B=256)",
                "Figure 2 / Section 6.1",
                "OSU-Mem",
                RETRIEVAL_BASELINES,
                metric,
                256,
            )
        )
    specs.append(
        ClaimSpec(
            "S6.4-sim-only-below-every-retrieval-baseline-recall-B256",
            "OSU-Mem (sim only) < every retrieval baseline (recall, B=256)",
            "Section 6.4",
            "OSU-Mem (sim only)",
            RETRIEVAL_BASELINES,
            "recall",
            256,
            reverse=True,
        )
    )
    for metric in ("recall", "hit@2"):
        specs.append(
            ClaimSpec(
                f"S6.4-novelty-not-significant-{metric}-B256",
                f"OSU-Mem vs OSU-Mem (no novelty): no significant difference ({metric}, B=256)",
                "Section 6.4 (p = .307 Recall, .876 Hit@2)",
                "OSU-Mem",
                ("OSU-Mem (no novelty)",),
                metric,
                256,
                null=True,
            )
        )
    specs.append(
        ClaimSpec(
            "S6.4-mmax-5-beats-4-recall-B256",
            "M_max = 5 > M_max = 4 (recall, B=256): the sweep still gains at 5",
            "Section 6.4 / Table 8 (saturates at M_max = 5)",
            "OSU-Mem",
            ("OSU-Mem (M_max=4)",),
            "recall",
            256,
        )
    )
    specs.append(
        ClaimSpec(
            "S6.4-mmax-6-no-gain-over-5-recall-B256",
            "M_max = 6 vs 5: no significant difference (recall, B=256): saturated at 5",
            "Section 6.4 / Table 8 (saturates at M_max = 5)",
            "OSU-Mem (M_max=6)",
            ("OSU-Mem",),
            "recall",
            256,
            null=True,
        )
    )
    return [
        s
        for s in specs
        if s.treatment in methods and set(s.baselines) <= set(methods) and s.budget in budgets
    ]


def default_grid_path() -> Path:
    """The grid file shipped with the package (``analyses/synthetic_grid.toml``)."""
    return Path(str(resources.files("osustat.analyses").joinpath("synthetic_grid.toml")))


def _config_from(where: str, overrides: dict[str, Any]) -> GeneratorConfig:
    unknown = sorted(set(overrides) - _CONFIG_KEYS)
    if unknown:
        raise ValueError(
            f"{where}: unknown generator key(s) {unknown}; known: {sorted(_CONFIG_KEYS)}."
        )
    kwargs = {k: tuple(v) if isinstance(v, list) else v for k, v in overrides.items()}
    try:
        return GeneratorConfig(**kwargs)
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None


def _positive_int(path: str, key: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{path}: `{key}` must be a positive integer; got {value!r}.")
    return value


def load_grid(path: str | Path | None = None) -> Grid:
    """Read a grid file (see ``analyses/synthetic_grid.toml`` for the format).

    Raises
    ------
    FileNotFoundError
        No such file.
    ValueError
        Invalid TOML, an unknown key, or an invalid value (the message names the file and the
        point).
    """
    p = default_grid_path() if path is None else Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"grid file {str(p)!r} does not exist.")
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{p}: not valid TOML ({exc}).") from None
    unknown = sorted(set(data) - _TOP_KEYS)
    if unknown:
        raise ValueError(f"{p}: unknown top-level key(s) {unknown}; known: {sorted(_TOP_KEYS)}.")
    episodes = _positive_int(str(p), "episodes", data.get("episodes", 120))
    resamples = _positive_int(str(p), "resamples", data.get("resamples", 5000))
    seeds = data.get("seeds", [0, 1, 2])
    budgets = data.get("budgets", [128, 256])
    for key, vals in (("seeds", seeds), ("budgets", budgets)):
        if (
            not isinstance(vals, list)
            or not vals
            or not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in vals)
            or len(set(vals)) != len(vals)
        ):
            raise ValueError(f"{p}: `{key}` must be a non-empty list of distinct integers >= 0.")
    if 256 not in budgets:
        raise ValueError(f"{p}: `budgets` must include 256 (the paper's primary budget).")
    cross = data.get("cross", {})
    if not isinstance(cross, dict) or not all(isinstance(v, list) and v for v in cross.values()):
        raise ValueError(f"{p}: [cross] must map generator keys to non-empty lists.")
    raw_points = data.get("point", [{"name": "default"}])
    if not isinstance(raw_points, list) or not raw_points:
        raise ValueError(f"{p}: at least one [[point]] is needed.")
    points: list[GridPoint] = []
    seen: set[GeneratorConfig] = set()
    axes = sorted(cross)
    for k, raw in enumerate(raw_points):
        if not isinstance(raw, dict):
            raise ValueError(f"{p}: [[point]] {k} is not a table.")
        base = {key: v for key, v in raw.items() if key != "name"}
        name = str(raw.get("name", f"point {k}"))
        for combo in itertools.product(*(cross[a] for a in axes)):
            over = {**base, **dict(zip(axes, combo, strict=True))}
            label = name + "".join(f" | {a}={v}" for a, v in zip(axes, combo, strict=True))
            cfg = _config_from(f"{p}: [[point]] {k} ({label})", over)
            if cfg in seen:
                continue  # the same configuration twice is run once
            seen.add(cfg)
            points.append(GridPoint(len(points), label, cfg))
    return Grid(tuple(points), episodes, tuple(seeds), resamples, tuple(budgets), str(p))


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
    rng: np.random.Generator,
) -> list[dict[str, Any]]:
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
    usable = [c if len(c) >= 2 else np.zeros(2) for c in cols]
    tests = signflip_tests(usable, n_resamples=resamples, rng=rng)
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
        ci = bootstrap_ci(cols[jmin], n_resamples=resamples, rng=rng)
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
    jobs: int = 1,
    progress: bool = True,
    methods: tuple[str, ...] = GRID_METHODS,
    seed: int = 0,
    scheduler: Any = None,
    checkpoint: Any = None,
) -> SensitivityResult:
    """Run every grid point and test every claim at every point (see the module docstring).

    Parameters
    ----------
    grid : Grid
        From :func:`load_grid`.
    jobs : int
        Worker processes for the one sweep (the result does not depend on it).
    progress : bool
        One progress bar over all point x seed x episode tasks.
    methods : tuple of str
        Methods to run; claims needing others are skipped.
    seed : int
        Seed of the tests' resampling (one child per point).
    scheduler, checkpoint
        A Dask cluster and a resume folder, passed to ``run_tasks``.
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
    results = run_tasks(
        _grid_task,
        tasks,
        jobs=jobs,
        scheduler=scheduler,
        checkpoint=checkpoint,
        progress=progress,
        desc="sensitivity grid",
        unit="ep",
    )
    mean_rows = [
        (pt, s, unit, m, b, k, v) for pt, s, unit, means, _ in results for m, b, k, v in means
    ]
    episode_means = pd.DataFrame(
        mean_rows, columns=["point", "seed", "unit", "method", "budget", "metric", "value"]
    )
    from .synthetic_run import _merge_structure

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

    rngs = [np.random.default_rng(c) for c in child_seeds(seed, len(grid.points))]
    effect_rows = []
    for pt in grid.points:
        sub = episode_means[episode_means["point"] == pt.index]
        for row in _test_point(sub, specs, grid.resamples, rngs[pt.index]):
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
