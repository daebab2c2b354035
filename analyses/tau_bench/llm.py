"""§6.6 on τ-bench: LLM-mediated evidence selection through the existing scoring stage.

For every query of the unaugmented cache, the steps OSU-Mem and Flat Vector retrieved at
B = 256 (and nothing, the no-memory floor) go with the task instruction to a selector, whose
listed events are re-encoded and scored against the focal evidence texts (soft recall = mean
max cosine, hard recall = fraction with max cosine > .5), 3 seeds averaged per query before
testing (``analyses.evidence_selection``). Records: benchmark ``tau-bench-llm``.

Selectors: ``extractive`` -- ``ExtractiveSimilaritySelector`` (offline; **a stand-in, not an
LLM**: it lists the 3 retrieved steps most similar to the instruction) -- or ``chat`` --
``ChatCompletionsSelector`` against any OpenAI-compatible endpoint -- or ``local`` -- the small
model of ``osustat llm fetch`` (SmolLM2-135M, **not the paper's GPT-4o-mini**) served on
127.0.0.1 for the run (:func:`run_local_selection`): two selectors side by side on the same
contexts, the paper's free-text prompt (benchmark ``tau-bench-llm``) and the constrained id list
(``tau-bench-llm-ids``), on a declared subset of the queries, one seed (temperature 0: seeds
would be exact duplicates), with every reply's failure modes counted.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from .data import Group
from .run import GroupQueries

__all__ = [
    "LLM_BUDGET",
    "LLM_METHODS",
    "LOCAL_QUERIES",
    "LOCAL_VARIANTS",
    "SEEDS",
    "local_subset",
    "make_selector",
    "run_llm_selection",
    "run_local_selection",
]

LLM_BUDGET = 256
LLM_METHODS = ("OSU-Mem", "Flat Vector")
NO_MEMORY = "No LT Memory"
SEEDS = (0, 1, 2)
SELECTORS = ("extractive", "chat", "local")
#: ``--selector local``: queries in the declared subset (docs/evidence_selection.md, "With a
#: real local model": about 15 minutes here at one thread).
LOCAL_QUERIES = 24
#: ``--selector local``: one seed; at temperature 0 with prompt caching off the seeds of a
#: greedy decoder are exact duplicates (``osustat llm check`` shows the repeat).
LOCAL_SEEDS = (0,)
#: ``--selector local``: the two selectors, as (output, records' benchmark, label).
LOCAL_VARIANTS = (
    ("text", "tau-bench-llm", "free text (the paper's prompt)"),
    ("ids", "tau-bench-llm-ids", "constrained id list (JSON schema, enum of step ids)"),
)
#: ``--selector local``: the free-text reply's length cap (3 short events fit in 128 tokens).
LOCAL_MAX_TOKENS = 128
CELL_ORDER = ("T+E+", "T+E-", "T-E+", "T-E-")


def make_selector(
    kind: str, encoder: Any, *, endpoint: str | None = None, model: str | None = None
) -> Any:
    """``'extractive'`` (offline stand-in) or ``'chat'`` (needs `endpoint` and `model`)."""
    from osustat.analyses.evidence_selection.selectors import (
        ChatCompletionsSelector,
        ExtractiveSimilaritySelector,
    )

    if kind == "extractive":
        return ExtractiveSimilaritySelector(encoder, k=3)
    if kind == "chat":
        if not endpoint or not model:
            raise ValueError("`--selector chat` needs `--endpoint URL` and `--model NAME`.")
        return ChatCompletionsSelector(base_url=endpoint, model=model, api_key_env=None)
    raise ValueError(f"`selector` must be 'extractive' or 'chat' here; got {kind!r}.")


def _inputs(
    groups: Sequence[Group],
    queries: Sequence[GroupQueries],
    retrieved: Mapping[tuple[str, str], tuple[int, ...]],
    cells: Mapping[str, str],
) -> tuple[list[Any], dict[str, dict[tuple[str, str], list[str]]], dict[str, str]]:
    """The selection queries, the contexts per method (no memory: empty) and the tasks."""
    from osustat.analyses.evidence_selection.run import SelectionQuery

    sq, tasks = [], {}
    contexts: dict[str, dict[tuple[str, str], list[str]]] = {
        m: {} for m in (*LLM_METHODS, NO_MEMORY)
    }
    for group, q in zip(groups, queries, strict=True):
        for pos, task, ev in zip(q.positions, q.tasks, q.evidence, strict=True):
            qid = f"{group.group_id}/src{pos}"
            src = group.sources[pos - 1]
            instruction = src.episode.instruction or "(no instruction)"
            sq.append(
                SelectionQuery(
                    group.group_id,
                    qid,
                    instruction,
                    tuple(group.texts[int(i)] for i in ev),
                    cells[qid],
                )
            )
            tasks[qid] = task
            for m in LLM_METHODS:
                contexts[m][(group.group_id, qid)] = [group.texts[i] for i in retrieved[(m, qid)]]
            contexts[NO_MEMORY][(group.group_id, qid)] = []
    return sq, contexts, tasks


def run_llm_selection(
    groups: Sequence[Group],
    queries: Sequence[GroupQueries],
    retrieved: Mapping[tuple[str, str], tuple[int, ...]],
    cells: Mapping[str, str],
    selector: Any,
    encoder: Any,
    *,
    seeds: Sequence[int] = SEEDS,
) -> pd.DataFrame:
    """Records (benchmark ``tau-bench-llm``, with ``task``) of soft and hard recall."""
    from osustat.analyses.evidence_selection.run import run_evidence_selection, selection_records

    sq, contexts, tasks = _inputs(groups, queries, retrieved, cells)
    outcomes = run_evidence_selection(sq, contexts, selector, encoder, seeds=list(seeds))
    rec = selection_records(outcomes, budget=LLM_BUDGET, benchmark="tau-bench-llm")
    rec["task"] = rec["query_id"].map(tasks)
    return rec


def local_subset(cells: Sequence[str | None], n: int | None) -> list[int]:
    """Indices of the declared subset: round-robin over the cells (T+E+, T+E-, T-E+, T-E-), each
    cell's queries in data order, until `n` (None: all, in data order).

    >>> local_subset(["T+E+", "T+E+", "T-E-", "T+E+", "T-E-"], 3)
    [0, 2, 1]
    """
    if n is None or n >= len(cells):
        return list(range(len(cells)))
    by_cell = [[i for i, c in enumerate(cells) if c == cell] for cell in CELL_ORDER]
    by_cell.append([i for i, c in enumerate(cells) if c not in CELL_ORDER])
    picked: list[int] = []
    for rank in range(max(map(len, by_cell))):
        picked += [ids[rank] for ids in by_cell if rank < len(ids)]
    return picked[:n]


def run_local_selection(
    groups: Sequence[Group],
    queries: Sequence[GroupQueries],
    retrieved: Mapping[tuple[str, str], tuple[int, ...]],
    cells: Mapping[str, str],
    encoder: Any,
    *,
    n_queries: int | None = LOCAL_QUERIES,
    threads: int = 1,
    progress: bool = False,
) -> dict[str, Any]:
    """§6.6 with the local model: both selectors of :data:`LOCAL_VARIANTS` on the same contexts.

    Starts the local chat server (stopped on return and on error), runs the free-text and the
    id-list selector over the declared subset (:func:`local_subset`) with :data:`LOCAL_SEEDS`,
    and returns the ``llm`` state: ``records`` (both benchmarks, with ``task``), ``variants``
    (per variant: benchmark, label, selector name, :func:`failure_modes`,
    :func:`position_counts`, seconds), ``subset`` (queries run, of all), ``seeds``.
    """
    from osustat.analyses.evidence_selection.failures import failure_modes, position_counts
    from osustat.analyses.evidence_selection.local_server import REQUEST_OPTIONS, LocalChatServer
    from osustat.analyses.evidence_selection.run import run_evidence_selection, selection_records
    from osustat.analyses.evidence_selection.selectors import ChatCompletionsSelector

    sq, contexts, tasks = _inputs(groups, queries, retrieved, cells)
    n_all = len(sq)
    keep = local_subset([q.cell for q in sq], n_queries)
    sq = [sq[i] for i in keep]
    contexts = {m: {q.key: per_q[q.key] for q in sq} for m, per_q in contexts.items()}
    parts, variants = [], []
    with LocalChatServer(threads=threads) as server:
        for output, benchmark, label in LOCAL_VARIANTS:
            sel = ChatCompletionsSelector(
                base_url=server.base_url,
                model=server.model_name,
                api_key_env=None,
                timeout=600.0,
                max_tokens=LOCAL_MAX_TOKENS if output == "text" else None,
                output=output,
                extra_body=REQUEST_OPTIONS,
            )
            t0 = time.perf_counter()
            outcomes = run_evidence_selection(
                sq, contexts, sel, encoder, seeds=list(LOCAL_SEEDS), progress=progress
            )
            seconds = time.perf_counter() - t0
            if progress:
                print(
                    f"§6.6 local, {label}: {len(outcomes)} calls in {seconds:.0f} s",
                    file=sys.stderr,
                )
            rec = selection_records(outcomes, budget=LLM_BUDGET, benchmark=benchmark)
            rec["task"] = rec["query_id"].map(tasks)
            parts.append(rec)
            variants.append(
                {
                    "benchmark": benchmark,
                    "label": label,
                    # no port: the report stays byte-identical across runs
                    "name": f"{server.model_name}, T=0, output={output}",
                    "failures": failure_modes(outcomes),
                    "positions": position_counts(outcomes),
                    "seconds": seconds,
                    "calls": len(outcomes),
                }
            )
    return {
        "selector": "local",
        "name": f"{server.model_name} (local, {threads} thread(s), T=0)",
        "records": pd.concat(parts, ignore_index=True),
        "variants": variants,
        "subset": {"queries": len(sq), "of": n_all},
        "seeds": LOCAL_SEEDS,
    }


def llm_tables(
    records: pd.DataFrame, *, n_resamples: int, seed: int, benchmark: str = "tau-bench-llm"
) -> dict[str, Any]:
    """Table 7 layout: per metric, OSU-Mem vs Flat Vector per cell (seed-averaged tests)."""
    from osustat.analyses.evidence_selection.stats import compare_selection

    out: dict[str, Any] = {}
    for metric in ("soft_recall", "hard_recall@0.5"):
        cmp = compare_selection(
            records,
            "OSU-Mem",
            "Flat Vector",
            metric=metric,
            budget=LLM_BUDGET,
            benchmark=benchmark,
            n_resamples=n_resamples,
            rng=seed,
        )
        frame = cmp.to_frame()
        sub = records[
            (records["metric"] == metric)
            & (records["method"] == NO_MEMORY)
            & (records["benchmark"] == benchmark)
        ]
        per_q = sub.groupby(["query_id", "cell"])["value"].mean().reset_index()
        floor = per_q.groupby("cell")["value"].mean().to_dict()
        floor["aggregate"] = float(per_q["value"].mean())
        out[metric] = {"frame": frame, "floor": floor}
    return out
