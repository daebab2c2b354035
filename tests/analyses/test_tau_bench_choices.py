"""τ-bench open choices: ground-truth matching, packing, Stage-D placement and noise readings,
and the Stage-B cell labels against an independent implementation of the paper's definitions."""

from __future__ import annotations

import json
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from osustat.analyses.tau_bench.data import (
    MIN_GAP,
    augment_group,
    concatenate,
    focal_evidence,
    noise_sd,
    twins,
)
from osustat.analyses.tau_bench.formats import _match, load_files
from osustat.analyses.tau_bench.run import cell_of
from osustat.data.store import dataset_dir
from tests.data.conftest import missing_reason

# The real files where the CLI finds them ($OSUSTAT_DATA_DIR, else `osustat data fetch`'s folder).
FIVE = [
    dataset_dir("tau-bench") / "gpt-4o-airline.json",
    *(
        dataset_dir("tau2-bench") / f"airline-{n}.json"
        for n in ("claude-opus-4-6", "claude-sonnet-4-5", "gpt-5.4", "gpt-oss-120b")
    ),
]


def test_order_free_matching_takes_calls_in_any_order() -> None:
    calls = [("b", {"x": 2}), ("", {}), ("a", {"x": 1}), ("a", {"x": 1})]
    actions = [("a", {"x": 1}), ("b", {"x": 2}), ("a", {"x": 1}), ("a", {"x": 1})]
    assert _match(calls, actions, "order-free") == [0, 2, 3]  # each call used once
    assert _match(calls, actions, "in-order") == [2, 3]  # "b" comes before "a"


def test_matching_choice_is_checked(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="`matching` must be one of"):
        load_files([tmp_path / "x.json"], matching="sorted")


def _episode(task: int, n: int, trial: int = 0) -> Any:
    from osustat.analyses.tau_bench.formats import Episode, Step

    steps = tuple(
        Step(f"t{task} step {i}", "assistant", f"tool{i % 2}", frozenset({f"e{task}"}), 0, 10.0)
        for i in range(n)
    )
    return Episode("f.json", task * 10 + trial, f"airline/{task}", trial, "", steps, (1, 3), 5)


def test_one_episode_per_task_packing_removes_same_task_groups() -> None:
    eps = [_episode(t, 40, trial) for t in range(6) for trial in range(3)]
    any_groups, _ = concatenate(eps, packing="any")
    one_groups, drops = concatenate(eps, packing="one-episode-per-task-per-group")

    def same_task(groups: list[Any]) -> int:
        return sum(len(g.sources) - len({s.episode.task for s in g.sources}) for g in groups)

    assert same_task(any_groups) > 0  # the seed-42 shuffle puts repeats together
    assert same_task(one_groups) == 0
    placed = sum(len(g.sources) for g in one_groups)
    assert placed + sum("trailing" in d["reason"] or "left" in d["reason"] for d in drops) == 18
    assert not any(same for g in one_groups for _, _, same in twins(g))
    with pytest.raises(ValueError, match="`packing` must be one of"):
        concatenate(eps, packing="none")


def test_stage_d_meets_the_gap_where_the_segment_allows() -> None:
    eps = [_episode(0, 60), _episode(1, 20), _episode(2, 80)]
    groups, _ = concatenate(eps)
    g = groups[0]
    emb = np.random.default_rng(0).normal(size=(g.n_steps, 384))
    emb /= np.linalg.norm(emb, axis=1, keepdims=True)
    aug = augment_group(g, emb, np.random.default_rng(1))
    for p in aug.placements:
        if p.segment >= 2 * MIN_GAP + 1:
            assert p.gap_met and p.planned_gap >= MIN_GAP and p.realized_gap >= MIN_GAP
        else:
            assert not p.gap_met and p.planned_gap == (p.segment - 1) // 2
    assert aug.gap_relaxed == 2  # the 20-step source's two evidence steps
    # copy noise readings: per norm -> near-duplicates, per coordinate -> far from the anchor
    for reading, lo, hi in (("per-norm", 0.99, 1.0), ("per-coordinate", 0.35, 0.55)):
        a = augment_group(g, emb, np.random.default_rng(1), copy_noise=reading)
        cos = [
            float(a.embeddings[i] @ emb[a.order[i]]) for i in range(len(a.order)) if a.is_copy[i]
        ]
        assert lo < float(np.mean(cos)) < hi
    assert noise_sd(0.25, 384, "per-coordinate") == 0.25
    assert noise_sd(0.25, 384, "per-norm") == pytest.approx(0.25 / np.sqrt(384))


# ---------------------------------------------------------------- independent Stage B


def _ents(args: dict[str, Any]) -> set[str]:
    out: set[str] = set()

    def one(v: Any) -> None:
        if isinstance(v, bool) or v is None:
            return
        if isinstance(v, str) and 2 <= len(v) <= 80:
            out.add(v)
        elif isinstance(v, (int, float)) and not isinstance(v, str):
            out.add(str(v))

    for v in args.values():
        inner = v.values() if isinstance(v, dict) else v if isinstance(v, list) else [v]
        for x in inner:
            if isinstance(x, dict):
                for y in x.values():
                    one(y)
            else:
                one(x)
    return out


def _independent(path: Path) -> list[tuple[int, int, str | None]]:
    """Per episode: (steps, matched, cell or None) straight from the JSON, the paper's words."""
    data = json.loads(path.read_text())
    out = []
    if isinstance(data, list):
        runs = [
            (r["traj"], [(a["name"], a["kwargs"]) for a in r["info"]["task"]["actions"]], 1)
            for r in data
        ]
    else:
        gt = {
            str(t["id"]): [
                (a["name"], a["arguments"])
                for a in ((t.get("evaluation_criteria") or {}).get("actions") or [])
            ]
            for t in data["tasks"]
        }
        runs = [(s["messages"], gt[str(s["task_id"])], 2) for s in data["simulations"]]
    for msgs, actions, fmt in runs:
        steps: list[tuple[str, dict[str, Any]] | None] = []
        for m in msgs:
            if m["role"] == "system":
                continue
            tcs = m.get("tool_calls") or []
            if not tcs:
                steps.append(None)
            for tc in tcs:
                if fmt == 1:
                    raw = tc["function"]["arguments"]
                    args = json.loads(raw) if isinstance(raw, str) and raw.strip() else raw or {}
                    steps.append((tc["function"]["name"], args))
                else:
                    steps.append((tc["name"], tc["arguments"]))
        used: set[int] = set()
        for name, args in actions:  # greedy name + argument equality, each call once
            hit = next(
                (i for i, s in enumerate(steps) if i not in used and s == (name, args)), None
            )
            if hit is not None:
                used.add(hit)
        ev = [steps[i] for i in sorted(used)]
        cell = None
        if len(ev) >= 2:
            t = any(a[0] == b[0] for a, b in combinations(ev, 2))  # type: ignore[index]
            e = any(_ents(a[1]) & _ents(b[1]) for a, b in combinations(ev, 2))  # type: ignore[index]
            cell = f"T{'+' if t else '-'}E{'+' if e else '-'}"
        out.append((len(steps), len(used), cell))
    return out


@pytest.mark.skipif(
    not all(p.is_file() for p in FIVE),
    reason=missing_reason("tau-bench") + "; and dataset 'tau2-bench' likewise",
)
def test_cells_match_an_independent_stage_b_on_the_five_shared_files() -> None:
    loaded = load_files(FIVE)
    mine = {}
    for ep in loaded.episodes:
        cell = None
        if len(ep.matched) >= 2:
            from osustat import label_cell

            ev = [ep.steps[i] for i in ep.matched]
            cell = label_cell([s.tool for s in ev], [s.entities for s in ev]).value
        mine[(Path(ep.source_file).name, ep.index)] = (len(ep.steps), len(ep.matched), cell)
    ref = {(p.name, i): v for p in FIVE for i, v in enumerate(_independent(p))}
    assert mine == ref  # every episode: steps, matched actions, cell
    # after Stage C, every focal source keeps its Stage-B cell (prefixes are per source)
    groups, _ = concatenate(loaded.episodes)
    n = 0
    for g in groups:
        for s in g.sources:
            if s.focal:
                n += 1
                key = (Path(s.episode.source_file).name, s.episode.index)
                assert cell_of(g, focal_evidence(s)) == ref[key][2]
    assert n == 152
    in_order = load_files(FIVE, matching="in-order")
    g2, _ = concatenate(in_order.episodes)
    assert sum(s.focal for g in g2 for s in g.sources) == 149


def test_declared_choices_and_the_sensitivity_grid() -> None:
    from osustat.analyses.tau_bench.benchmark import BENCHMARK

    d = BENCHMARK.choices.defaults()
    assert (d["query-noise"], d["copy-noise"], d["matching"], d["packing"], d["query-kind"]) == (
        "per-coordinate",
        "per-norm",
        "order-free",
        "any",
        "noisy-mean",
    )
    from osustat.analyses.sensitivity import load_choice_grid

    grid = load_choice_grid(BENCHMARK, None)
    assert grid.seeds == (0, 1, 2)
    points = [p for _, p in grid.points]
    four = ("query-noise", "copy-noise", "matching", "packing")
    at_default_kind = {
        tuple(p[k] for k in four) for p in points if p["query-kind"] == d["query-kind"]
    }
    assert len(at_default_kind) == 16  # every combination of the first four choices
    kinds = [p for p in points if p["query-kind"] != d["query-kind"]]
    assert {p["query-kind"] for p in kinds} == {"weak", "instruction"}
    assert all(all(p[k] == d[k] for k in four) for p in kinds)
