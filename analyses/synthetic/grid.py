"""What the generator sensitivity analysis runs: the grid and the claims it tests.

:func:`load_grid` reads a grid file (TOML, default ``analyses/synthetic/grid.toml``) into the
generator configurations to run (:class:`Grid`); :func:`claim_specs` reads the paper's
synthetic claims, by id, from ``analyses/claims/paper.toml`` as paired comparisons
(:class:`ClaimSpec`). Running and summarizing them is
:mod:`osustat.analyses.synthetic.sensitivity`.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, fields
from importlib import resources
from pathlib import Path
from typing import Any

from osustat._validation import read_toml
from osustat.retrieval.registry import PAPER_METHODS

from .generator import GeneratorConfig

__all__ = [
    "GRID_CLAIM_IDS",
    "GRID_GROUPS",
    "GRID_LATE_IDS",
    "GRID_METHODS",
    "ClaimSpec",
    "Grid",
    "GridPoint",
    "claim_specs",
    "default_grid_path",
    "load_grid",
]

#: The methods the grid's claims need (Table 2's rows, sim-only, no novelty, M_max 4 and 6);
#: not GF, not No LT Memory, not M_max 2 and 3.
GRID_METHODS = (
    *(m for m in PAPER_METHODS["synthetic"] if m not in ("No LT Memory", "OSU-Mem + GF")),
    "OSU-Mem (M_max=4)",
    "OSU-Mem (M_max=6)",
)
#: The five retrieval baselines of "every retrieval baseline" (Section 6.1; Table 10 less the
#: OSU-Mem ablations), as their ids spell them.
_RETRIEVAL_SLUGS = (
    "flat-vector",
    "flat-mmr",
    "tree-abstraction",
    "coverage-aware",
    "disjoint-hierarchy",
)
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


def _table2_ids(budget: int, metric: str) -> tuple[str, ...]:
    """Table 2's claims at `budget` in its row order: means claims, except where Table 10
    tests the same comparison (B = 256, the six retrieval baselines), whose test is the claim."""
    rows = ("budget-truncated-replay", "sliding-window", "periodic-summary")
    tested = (
        "flat-vector",
        "flat-mmr",
        "coverage-aware",
        "disjoint-hierarchy",
        "tree-abstraction",
        "osu-mem-disjoint",
    )
    if budget == 256:
        return (
            *(f"T2-{r}-{metric}-B256" for r in rows),
            *(f"T10-{r}-{metric}" for r in tested),
        )
    return tuple(f"T2-{r}-{metric}-B{budget}" for r in (*rows, *tested))


#: The claims the grid tests, by id in ``analyses/claims/paper.toml`` (nothing retyped: the
#: methods, metric, budget and direction are the claims file's). Table 2 at B = 128 and 256,
#: then the claims below and the groups of :data:`GRID_GROUPS` in this order.
GRID_CLAIM_IDS = (*(i for b in (128, 256) for m in ("hit2", "recall") for i in _table2_ids(b, m)),)
#: Claims about *every* retrieval baseline: (grid id, statement, where the paper says it,
#: the member claims' ids). Such a claim holds when all its members do (intersection-union,
#: tested on the weakest member).
GRID_GROUPS: tuple[tuple[str, str, str, tuple[str, ...]], ...] = (
    tuple(
        (
            f"S6.1-beats-every-retrieval-baseline-{metric}-B256",
            f"OSU-Mem > every retrieval baseline ({metric}, B=256)",
            "Section 6.1 (+39.9% Recall, +61.5% Hit@2 over the strongest; p <= .002 vs all)",
            tuple(f"T10-{b}-{slug}" for b in _RETRIEVAL_SLUGS),
        )
        for metric, slug in (("recall", "recall"), ("hit@2", "hit2"))
    )
    + tuple(
        (
            f"F2-highest-{region}-recall-B256",
            f"OSU-Mem has the highest {region} recall among retrieval baselines (B=256)",
            "Figure 2 / Section 6.1",
            tuple(f"F2-{region}-recall-{b}" for b in _RETRIEVAL_SLUGS),
        )
        for region in ("near", "far")
    )
    + (
        (
            "S6.4-sim-only-below-every-retrieval-baseline-recall-B256",
            "OSU-Mem (sim only) < every retrieval baseline (recall, B=256)",
            "Section 6.4",
            tuple(f"S64-sim-only-below-{b}-recall" for b in _RETRIEVAL_SLUGS),
        ),
    )
)
#: Single claims after the groups (Section 6.4's ablations).
GRID_LATE_IDS = (
    "T10-osu-mem-no-novelty-recall",
    "T10-osu-mem-no-novelty-hit2",
    "S6.4-mmax-5-beats-4-recall-B256",
    "S6.4-mmax-6-no-gain-over-5-recall-B256",
)


def _spec(claim: Any) -> ClaimSpec:
    """A claim of the claims file as the grid tests it: an equivalence claim is read as "no
    significant difference" (the paper's words), a ``less`` claim as the reversed difference."""
    null = claim.kind == "equivalence"
    if null:
        text = f"{claim.treatment} vs {claim.baseline}: no significant difference"
    else:
        sign = "<" if claim.direction == "less" else ">"
        text = f"{claim.treatment} {sign} {claim.baseline}"
    return ClaimSpec(
        claim.id,
        f"{text} ({claim.metric}, B={claim.budget})",
        claim.source,
        claim.treatment,
        (claim.baseline,),
        claim.metric,
        claim.budget,
        reverse=claim.direction == "less",
        null=null,
    )


def _group(gid: str, text: str, source: str, members: list[ClaimSpec]) -> ClaimSpec:
    first = members[0]
    for m in members:
        if (m.treatment, m.metric, m.budget, m.reverse, m.null) != (
            first.treatment,
            first.metric,
            first.budget,
            first.reverse,
            first.null,
        ):
            raise ValueError(
                f"group {gid}: claim {m.id} differs from {first.id} beyond its baseline."
            )
    baselines = tuple(m.baselines[0] for m in members)
    return ClaimSpec(
        gid, text, source, first.treatment, baselines, first.metric, first.budget, first.reverse
    )


def claim_specs(
    methods: tuple[str, ...] = GRID_METHODS,
    budgets: tuple[int, ...] = (128, 256),
    claims_path: str | Path | None = None,
) -> list[ClaimSpec]:
    """The paper's synthetic claims that `methods` at `budgets` can test, read by id from the
    claims file (default: the shipped ``analyses/claims/paper.toml``; an id it lacks is an
    error naming the file). The grid tests every claim on episode-level paired differences,
    whatever unit the claim states."""
    from osustat.audit.claims import load_claims

    from ..claims_audit import check_claims_file, claims_file

    path = claims_file("paper") if claims_path is None else check_claims_file(claims_path)
    by_id = {c.id: c for c in load_claims(path).claims}
    wanted = [*GRID_CLAIM_IDS, *(i for g in GRID_GROUPS for i in g[3]), *GRID_LATE_IDS]
    missing = [i for i in wanted if i not in by_id]
    if missing:
        raise ValueError(f"{path}: the synthetic grid's claims {missing} are not in the file.")
    specs = [_spec(by_id[i]) for i in GRID_CLAIM_IDS]
    specs += [_group(g, t, src, [_spec(by_id[i]) for i in ids]) for g, t, src, ids in GRID_GROUPS]
    specs += [_spec(by_id[i]) for i in GRID_LATE_IDS]
    return [
        s
        for s in specs
        if s.treatment in methods and set(s.baselines) <= set(methods) and s.budget in budgets
    ]


def default_grid_path() -> Path:
    """The grid file shipped with the package (``analyses/synthetic/grid.toml``)."""
    return Path(str(resources.files("osustat.analyses.synthetic").joinpath("grid.toml")))


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
    """Read a grid file (see ``analyses/synthetic/grid.toml`` for the format).

    Raises
    ------
    FileNotFoundError
        No such file.
    ValueError
        Invalid TOML, an unknown key, or an invalid value (the message names the file and the
        point).
    """
    p = default_grid_path() if path is None else Path(path)
    data = read_toml(p, "grid file", _TOP_KEYS)
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
