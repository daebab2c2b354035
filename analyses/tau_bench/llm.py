"""§6.6 on τ-bench: LLM-mediated evidence selection through the existing scoring stage.

For every query of the unaugmented cache, the steps OSU-Mem and Flat Vector retrieved at
B = 256 (and nothing, the no-memory floor) go with the task instruction to a selector, whose
listed events are re-encoded and scored against the focal evidence texts (soft recall = mean
max cosine, hard recall = fraction with max cosine > .5), 3 seeds averaged per query before
testing (``analyses.evidence_selection``). Records: benchmark ``tau-bench-llm``.

Selectors: ``extractive`` -- ``ExtractiveSimilaritySelector`` (offline; **a stand-in, not an
LLM**: it lists the 3 retrieved steps most similar to the instruction) -- or ``chat`` --
``ChatCompletionsSelector`` against any OpenAI-compatible endpoint.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from .data import Group
from .run import GroupQueries

__all__ = ["LLM_BUDGET", "LLM_METHODS", "SEEDS", "make_selector", "run_llm_selection"]

LLM_BUDGET = 256
LLM_METHODS = ("OSU-Mem", "Flat Vector")
NO_MEMORY = "No LT Memory"
SEEDS = (0, 1, 2)


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
    raise ValueError(f"`selector` must be 'extractive' or 'chat'; got {kind!r}.")


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
    from osustat.analyses.evidence_selection.run import (
        SelectionQuery,
        run_evidence_selection,
        selection_records,
    )

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
    outcomes = run_evidence_selection(sq, contexts, selector, encoder, seeds=list(seeds))
    rec = selection_records(outcomes, budget=LLM_BUDGET, benchmark="tau-bench-llm")
    rec["task"] = rec["query_id"].map(tasks)
    return rec


def llm_tables(records: pd.DataFrame, *, n_resamples: int, seed: int) -> dict[str, Any]:
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
            benchmark="tau-bench-llm",
            n_resamples=n_resamples,
            rng=seed,
        )
        frame = cmp.to_frame()
        sub = records[(records["metric"] == metric) & (records["method"] == NO_MEMORY)]
        per_q = sub.groupby(["query_id", "cell"])["value"].mean().reset_index()
        floor = per_q.groupby("cell")["value"].mean().to_dict()
        floor["aggregate"] = float(per_q["value"].mean())
        out[metric] = {"frame": frame, "floor": floor}
    return out
