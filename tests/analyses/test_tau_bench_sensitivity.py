"""τ-bench `--sensitivity`: the grid's points share work, yet each point's records are those of
a single `--choice` run at that point; the contamination run keeps the run's packing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from osustat.analyses import driver
from osustat.analyses.protocol import Backend, RunSpec
from osustat.analyses.tau_bench.benchmark import BENCHMARK, run_tau
from osustat.analyses.tau_bench.workspace import run_points
from osustat.retrieval import HashingBagOfWordsEncoder

from .test_tau_bench import files  # noqa: F401 (the fixture)

POINTS = (
    {},
    {"query-noise": "per-norm", "copy-noise": "per-coordinate"},
    {"matching": "in-order", "packing": "one-episode-per-task-per-group"},
    {"packing": "one-episode-per-task-per-group", "query-noise": "per-norm"},
    {"query-kind": "weak"},
    {"query-kind": "instruction", "copy-noise": "per-coordinate"},
    {"encoder-backend": "openvino"},  # its own built data in the shared workspace
)


def _spec(paths: list[str], seed: int, **choices: str) -> RunSpec:
    return RunSpec(
        data=tuple(Path(f) for f in paths),
        seed=seed,
        n_resamples=99,
        choices=BENCHMARK.choices.resolve(choices),
        backend=Backend(progress=False),
        options={"budgets": (64, 256)},
        encoder=HashingBagOfWordsEncoder(64),
    )


def test_grid_points_have_the_records_of_single_runs(files: list[str]) -> None:  # noqa: F811
    specs = [_spec(files, 0, **p) for p in POINTS] + [_spec(files, 1, **POINTS[1])]
    seen = set()
    for i, run in run_points(specs):
        alone = run_tau(specs[i]).records
        pd.testing.assert_frame_equal(run.records, alone)
        seen.add(i)
    assert seen == set(range(len(specs)))
    # the points differ where their choices do (the comparison is not vacuous)
    a, b = (run_tau(specs[k]).records for k in (0, 2))
    main = [r[r["benchmark"] == "tau-bench-augmented"]["value"].to_numpy() for r in (a, b)]
    assert main[0].shape != main[1].shape or (main[0] != main[1]).any()


def test_contamination_run_keeps_the_packing(files: list[str], tmp_path: Path) -> None:  # noqa: F811
    """Failed before the fix: the unprefixed groups were packed with `any` whatever the run's
    packing, so they did not line up with the run's queries (a crash on these files)."""
    spec = _spec(files, 0, packing="one-episode-per-task-per-group")
    run = run_tau(spec)
    cont = run.state["contamination"]["records"]
    main = run.records[run.records["benchmark"] == "tau-bench"]
    assert set(cont["query_id"]) == set(main["query_id"])
    keys = ["query_id", "method", "budget", "metric"]
    both = cont.merge(main, on=keys, suffixes=("_u", "_p"))
    assert len(both) == len(cont) and (both["cell_u"] == both["cell_p"]).all()


def test_sensitivity_through_the_driver(files: list[str], tmp_path: Path) -> None:  # noqa: F811
    grid = tmp_path / "grid.toml"
    grid.write_text(
        'seeds = [0, 1]\n[[point]]\nname = "default"\n'
        '[[point]]\nname = "per-norm"\nquery-noise = "per-norm"\n'
    )
    kw: dict[str, Any] = {"encoder": HashingBagOfWordsEncoder(64), "progress": False}
    res = driver.reproduce(
        driver.Request(
            "tau-bench", tmp_path / "s", data=tuple(files), n_resamples=99, sensitivity=True,
            jobs=2, grid=str(grid), options={"budgets": (64, 256)}, **kw,
        )
    )  # fmt: skip
    effects = pd.read_csv(res.out / "sensitivity" / "effects.csv")
    assert set(effects["point_name"]) == {"default", "per-norm"}
    assert set(effects["seed"]) == {0, 1}
    # a point's effects are those of the claims audit of a single run at that point
    from osustat.analyses.claims_audit import claims_audit

    alone = run_tau(_spec(files, 1, **{"query-noise": "per-norm"}))
    result = claims_audit(
        alone.records, BENCHMARK.claims, n_resamples=99, seed=1,
        unavailable=alone.state["audit_unavailable"],
    )  # fmt: skip
    assert result is not None
    mine = effects[(effects["point_name"] == "per-norm") & (effects["seed"] == 1)]
    assert list(mine["claim"]) == [c.claim.id for c in result.checks]
    assert list(mine["verdict"]) == [c.verdict for c in result.checks]
    llm = [c for c in result.checks if c.claim.benchmark == "tau-bench-llm"]
    assert llm and all(c.verdict == "not checkable" for c in llm)  # no LLM ran (stand-in)
    got = mine["effect"].to_numpy(dtype=float)
    want = pd.Series([c.effect for c in result.checks], dtype=float).to_numpy()
    assert ((got == want) | (pd.isna(got) & pd.isna(want))).all()
    assert "## Sensitivity to the open choices" in (res.out / "report.md").read_text()


def test_cells_with_fewer_than_two_queries_are_marked_not_testable(
    files: list[str],  # noqa: F811
) -> None:
    """A single source can leave a cell with one query: Tables 4 and 5 say "not testable"
    with its n (the row used to vanish from Table 4 and read "—" in Table 5)."""
    from dataclasses import replace

    from osustat.analyses.tau_bench.benchmark import analyze_tau
    from osustat.analyses.tau_bench.report_render import render_tau_bench

    spec = _spec(files, 0)
    run = run_tau(spec)
    a = analyze_tau(run, spec)["analysis"]
    ct = a.crosstab["tau-bench"]
    cell = ct["osu_flat_hit"]["rows"][0]["cell"]
    assert ct["cell_n"][cell] == ct["osu_flat_hit"]["rows"][0]["n"]
    # as if `cell` had one query: no test row, its n counted
    small = {
        **ct,
        "cell_n": {**ct["cell_n"], cell: 1},
        **{
            k: {**ct[k], "rows": [r for r in ct[k]["rows"] if r["cell"] != cell]}
            for k in ("osu_flat_hit", "osu_flat_recall", "overlap_disjoint_hit")
        },
    }
    other = {
        **a.crosstab["tau-bench-query-per-norm"],
        **{
            k: {**ct[k], "rows": [r for r in ct[k]["rows"] if r["cell"] != cell]}
            for k in ("osu_flat_hit", "overlap_disjoint_hit")
        },
    }
    a = replace(
        a,
        crosstab={**a.crosstab, "tau-bench": small, "tau-bench-query-per-norm": other},
        table5=a.table5[a.table5["cell"] != cell],
    )
    text = render_tau_bench(a, run.state["structure"], command="x")
    untestable = "not testable (< 2 queries)"
    assert f"| {cell} | 1 | {untestable} |" in text  # Table 4
    assert f"| {cell} (n=1) | {untestable} |" in text  # Table 5
    assert f"| {cell} | 1 |" + f" {untestable} |" * 6 in text  # Table 4, both readings
    assert f"| {cell} | {untestable} / {untestable} |" in text  # Table 5, both readings


def test_the_shipped_grid_varies_the_encoder_backend() -> None:
    """Issue 38 item 4: `--sensitivity` covers the encoder backend (every other choice at its
    default), as every declared choice."""
    from osustat.analyses.sensitivity import load_choice_grid

    grid = load_choice_grid(BENCHMARK)
    backends = {v["encoder-backend"]: (name, v) for name, v in grid.points}
    assert set(backends) == {"torch", "onnx", "openvino"}
    defaults = BENCHMARK.choices.defaults()
    for b in ("onnx", "openvino"):
        name, values = backends[b]
        assert name == f"encoder-backend={b}" and values == {**defaults, "encoder-backend": b}
