"""§6.6 with the local model on τ-bench: wall time of ``--selector local`` (on demand).

Usage: ``nice -n 10 .venv/bin/python benchmarks/local_llm_selection.py --cache DIR
[--queries N|all] [--threads 1] [--out results-local_llm_selection.md]``. Runs
``osustat.reproduce('tau-bench', selector='local')`` on the shared data (τ-bench and τ²-bench
airline files) with the real encoder, and writes the per-selector calls and seconds, the load
before and after, the failure-mode table and the OSU-Mem − Flat Vector rows, and, from the
measured seconds per query, the estimated wall time of all queries. ``--queries all`` is the
full check (hours at one thread here: opt-in). Needs ``make model`` (the llm-local extra and
the model file).
"""

from __future__ import annotations

import argparse
import datetime
import glob
import os
import sys
import tempfile
import time
from pathlib import Path

DATA = [
    "/work/shared/data/tau-bench/gpt-4o-airline.json",
    *sorted(glob.glob("/work/shared/data/tau2-bench/airline-*.json")),
]


def main() -> int:
    from osustat import reproduce
    from osustat.analyses.tau_bench.llm import LOCAL_QUERIES

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cache", required=True, help="embedding cache directory")
    ap.add_argument("--queries", default=str(LOCAL_QUERIES), help="subset size, or 'all'")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument(
        "--out", default=str(Path(__file__).with_name("results-local_llm_selection.md"))
    )
    args = ap.parse_args()
    n = None if args.queries == "all" else int(args.queries)
    load0 = os.getloadavg()
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        res = reproduce(
            "tau-bench", Path(tmp) / "out", data=DATA, cache=args.cache, selector="local",
            llm_queries=n, llm_threads=args.threads, budgets=(256,), no_variants=True,
            n_resamples=20_000,
        )  # fmt: skip
        report = (Path(tmp) / "out" / "report.md").read_text(encoding="utf-8")
    wall = time.perf_counter() - t0
    load1 = os.getloadavg()
    llm = res.run.state["llm"]
    sub = llm["subset"]
    lines = [
        "# §6.6 with the local model on τ-bench (`--selector local`)",
        "",
        f"Measured {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC by "
        f"`{' '.join([Path(sys.argv[0]).name, *sys.argv[1:]])}`; load average (1/5/15 min) "
        f"{load0[0]:.1f}/{load0[1]:.1f}/{load0[2]:.1f} before, "
        f"{load1[0]:.1f}/{load1[1]:.1f}/{load1[2]:.1f} after; {args.threads} thread(s); "
        f"2-core machine shared with other work.",
        "",
        f"Queries: {sub['queries']} of {sub['of']}. Whole run (data, encoding from the cache "
        f"`--cache`, retrieval, both selectors, tests): {wall:.0f} s.",
        "",
        "| selector | calls | seconds | s per call |",
        "| --- | --- | --- | --- |",
    ]
    per_query = 0.0
    for v in llm["variants"]:
        each = v["seconds"] / v["calls"]
        lines.append(f"| {v['label']} | {v['calls']} | {v['seconds']:.0f} | {each:.1f} |")
        per_query += v["seconds"] / sub["queries"]
    lines += [
        "",
        f"Both selectors: {per_query:.1f} s per query; all {sub['of']} queries would take about "
        f"{per_query * sub['of'] / 3600:.1f} h at this load (estimate from this run, "
        f"not measured), {900 / per_query:.0f} queries fit in 15 minutes.",
        "",
        "## The run's §6.6 section",
        "",
        report[report.index("## §6.6") : report.index("## Open choices")].strip(),
        "",
    ]
    Path(args.out).write_text("\n".join(lines), encoding="utf-8")
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
