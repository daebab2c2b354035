"""``osustat reproduce toolbench``: load, plant, run, analyze and write the ToolBench probe.

Writes into ``out``: ``records.parquet`` / ``records.csv`` (benchmarks ``toolbench``,
``toolbench-nev2``, ``toolbench-nev4``), ``episodes.csv`` (one row per episode: target,
evidence cell, evidence-OSU memberships), ``structure.json`` (data and design counts),
``report.md`` and the dose-response figures. Same inputs and seeds give identical files.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from osustat._validation import renamed

__all__ = ["TOOLBENCH_SEEDS", "ToolbenchResult", "audit_toolbench", "reproduce_toolbench"]

TOOLBENCH_SEEDS = (42, 123, 456)
CLAIMS = Path(__file__).resolve().parents[2] / "claims" / "paper.toml"


@dataclasses.dataclass(frozen=True)
class ToolbenchResult:
    out: Path
    n_records: int
    seconds: float


def audit_toolbench(
    records: pd.DataFrame,
    claims_path: Path | None = None,
    *,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> str:
    """Markdown audit of the paper's ToolBench claims on `records` (the one adapter to change
    if the audit API changes)."""
    from osustat.audit.claims import load_claims
    from osustat.audit.run import audit
    from osustat.reports.audit import render_markdown

    path = CLAIMS if claims_path is None else Path(claims_path)
    if not path.is_file():
        return f"Not run: claims file {path} not found."
    cf = load_claims(path)
    keep = tuple(c for c in cf.claims if (c.benchmark or "").startswith("toolbench"))
    if not keep:
        return "No ToolBench claims in the claims file."
    fams = {c.family for c in keep}
    cf = dataclasses.replace(
        cf, claims=keep, families={k: v for k, v in cf.families.items() if k in fams}
    )
    res = audit(cf, records, n_resamples=n_resamples, bootstrap_resamples=1000, rng=seed)
    return render_markdown(res, title="Audit of the paper's ToolBench claims")


def reproduce_toolbench(
    data: Path,
    out: Path,
    *,
    cache: Path | None = None,
    encoder: Any = None,
    seeds: tuple[int, ...] = TOOLBENCH_SEEDS,
    n_evs: tuple[int, ...] = (3, 2, 4),
    episodes: int = 200,
    background: int = 500,
    jobs: int = 1,
    n_resamples: int | None = None,
    progress: bool = True,
    retrievers: Sequence[Any] = (),
    scheduler: Any = None,
    checkpoint: Path | None = None,
    resamples: int | None = None,
    reachability: str = "all-steps",
    splits: str = "G1-G2",
) -> ToolbenchResult:
    """Run the ToolBench pipeline end to end (see the module docstring).

    `encoder` defaults to ``CachedEncoder(SentenceTransformerEncoder(), cache or
    default_cache_dir())``; tests pass a stand-in. `retrievers` (``MethodSpec`` of user
    retrievers) run beside the paper's methods and get a report section; `scheduler` (Dask)
    and `checkpoint` (resuming) go to the runner.
    `n_resamples` is the number of sign flips per test (old name `resamples`, kept as an
    alias). Declared choices (docs/toolbench.md): `reachability` of the greedy selectors
    (``'all-steps'`` | ``'members-only'``) and the loaded `splits` (``'G1-G2'`` |
    ``'G1-G2-G3'``).
    """
    resamples = renamed(n_resamples, resamples, "n_resamples", "resamples", 10_000)
    from osustat import validate_records
    from osustat.reports.toolbench import dose_response_figure, render_toolbench
    from osustat.retrieval.osumem import REACHABILITY
    from osustat.retrieval.registry import user_factories

    from .analysis import analyze_toolbench
    from .data import SPLITS, load_toolbench
    from .episodes import build_episodes, design_summary
    from .run import benchmark_name, method_names, run_episodes, step_table

    if reachability not in REACHABILITY or splits not in SPLITS:
        raise ValueError(
            f"`reachability` must be one of {list(REACHABILITY)} and `splits` one of "
            f"{list(SPLITS)}; got {reachability!r}, {splits!r}."
        )
    if not seeds or episodes < 1 or jobs < 1 or resamples < 1 or 3 not in n_evs:
        raise ValueError(
            "`seeds` must be non-empty, `episodes`, `jobs`, `resamples` >= 1, and the evidence "
            "sizes must include the primary 3."
        )
    user_factories(retrievers, taken=method_names())  # a name clash fails before any work
    start = time.perf_counter()
    seconds: dict[str, float] = {}
    loaded = load_toolbench(data, splits=splits)
    if encoder is None:
        from osustat.retrieval import CachedEncoder, SentenceTransformerEncoder, default_cache_dir

        encoder = CachedEncoder(
            SentenceTransformerEncoder(), default_cache_dir() if cache is None else cache
        )
    t = time.perf_counter()
    table = step_table(loaded.trajectories, encoder)
    seconds["embedding (cache hits are fast)"] = time.perf_counter() - t
    all_eps = []
    design: dict[str, Any] = {}
    for n_ev in n_evs:
        by_seed = {
            s: build_episodes(
                loaded.trajectories,
                table.query_embeddings,
                n_episodes=episodes,
                seed=s,
                n_ev=n_ev,
                background=background,
            )
            for s in seeds
        }
        design[benchmark_name(n_ev)] = design_summary(by_seed, loaded.trajectories)
        all_eps.extend(e for eps in by_seed.values() for e in eps)
    t = time.perf_counter()
    run = run_episodes(
        table,
        all_eps,
        jobs=jobs,
        progress=progress,
        retrievers=retrievers,
        scheduler=scheduler,
        checkpoint=checkpoint,
        reachability=reachability,
    )
    seconds["sweep (run_tasks)"] = time.perf_counter() - t
    records = validate_records(run.records)
    t = time.perf_counter()
    analysis = analyze_toolbench(records, run.episodes, n_resamples=resamples)
    audit_md = audit_toolbench(records, n_resamples=resamples)
    seconds["statistics and audit"] = time.perf_counter() - t

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    records.to_parquet(out / "records.parquet", index=False)
    records.to_csv(out / "records.csv", index=False)
    run.episodes.to_csv(out / "episodes.csv", index=False)
    structure = {
        "data": loaded.summary(),
        "design": design,
        "cells": {
            f"{r.benchmark}/{r.cell}": int(r.episodes) for r in analysis.structure.itertuples()
        },
        "membership": analysis.membership.to_dict(orient="records"),
    }
    (out / "structure.json").write_text(
        json.dumps(structure, indent=2, sort_keys=True) + "\n", encoding="utf-8"
    )
    figures = {"dose_recall": "dose_response_recall.png", "dose_hit2": "dose_response_hit2.png"}
    dose_response_figure(analysis.combined, out / figures["dose_recall"], "recall")
    dose_response_figure(analysis.combined, out / figures["dose_hit2"], "hit@2")
    command = (
        f"osustat reproduce toolbench --data {data} --out DIR --episodes {episodes} "
        f"--seeds {','.join(map(str, seeds))} --resamples {resamples}"
        f" --choice reachability={reachability} --choice splits={splits}"
        + "".join(f" --retriever {r.source or r.name}" for r in retrievers)
    )
    text = render_toolbench(
        analysis,
        choices={"reachability": reachability, "splits": splits},
        load=loaded.summary(),
        design=design,
        figures=figures,
        command=command,
        audit_markdown=audit_md,
        seconds={},  # timings vary run to run: printed by the CLI, kept out of report.md
    )
    if retrievers:
        from osustat.reports.user_methods import render_user_methods

        names = [r.name for r in retrievers]
        refs = ("Flat Vector", "coverage-overlap-beta0.12", "Disjoint Hierarchy")
        text += "\n\n" + render_user_methods(records, names, references=refs)
    (out / "report.md").write_text(text + "\n", encoding="utf-8")
    return ToolbenchResult(out, len(records), time.perf_counter() - start)
