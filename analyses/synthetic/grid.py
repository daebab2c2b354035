"""What the generator sensitivity analysis runs: the grid and the claims it tests.

:func:`load_grid` reads a grid file (TOML, default ``analyses/synthetic/grid.toml``) into the
generator configurations to run (:class:`Grid`); :func:`claim_specs` lists the paper's
synthetic claims as paired comparisons (:class:`ClaimSpec`). Running and summarizing them is
:mod:`osustat.analyses.synthetic.sensitivity`.
"""

from __future__ import annotations

import itertools
import tomllib
from dataclasses import dataclass, fields
from importlib import resources
from pathlib import Path
from typing import Any

from osustat.retrieval.registry import PAPER_METHODS

from .analysis import RETRIEVAL_BASELINES
from .generator import GeneratorConfig

__all__ = [
    "GRID_METHODS",
    "TABLE_2_BASELINES",
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
#: Table 2's baselines: Table 9's rows but no memory, OSU-Mem itself and its ablations.
TABLE_2_BASELINES = tuple(
    m
    for m in PAPER_METHODS["synthetic"]
    if m
    not in ("No LT Memory", "OSU-Mem", "OSU-Mem + GF", "OSU-Mem (sim only)", "OSU-Mem (no novelty)")
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
    ``analyses/claims/paper.toml``)."""
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
