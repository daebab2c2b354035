"""A million records through `osustat analyze`, stage by stage (issue 37, part 2).

Generates 10^6 long records -- 50 methods x 5,000 queries (500 episodes x 10) x 2 metrics
(``hit@2``, ``recall``) x 2 budgets (256, 512), each query in one of the four evidence cells
-- as Parquet and CSV in a temporary folder, then for each format:

- times the stages in this process (``read_records``, ``validate_records``, then
  ``osustat.analyze`` of one pair, all metrics and budgets, on the validated table), and
- times the whole command in a fresh process (imports count), ``osustat analyze FILE
  --treatment m01 --baseline m00 --out DIR``, with the child's peak RSS.

    .venv/bin/python benchmarks/million_records.py [--methods 50] [--queries 5000] \
        [--compare-ref c7635b4]

With ``--compare-ref REF`` the fresh-process command also runs on git REF's code (same
interpreter and dependencies, ``analyze_speed.checkout``), interleaved, and the two reports'
``results.json`` are compared. ``--jobs 2`` also times the command with ``--jobs 2``.

``--all-pairs K`` instead times ``osustat.analyze(all_pairs=True)`` on the first K methods
(K (K - 1) / 2 pairs, all metrics and budgets) of the records, in this process and with a
2-worker Dask ``LocalCluster`` as ``workers`` (same result, checked), the comparisons
(distributed) apart from the rest (corrections, family-level MDEs: this process), and
extrapolates both to all 50 methods (1,225 pairs) in proportion to the pairs::

    .venv/bin/python benchmarks/million_records.py --queries 1000 --all-pairs 6

The values are random (seed 0; no real system's output): hit@2 is 0/1, recall a multiple of
1/4, each method with its own per-cell rates. Goal (issue 37): <= 8 s wall from Parquet,
<= 15 s from CSV, <= 2 GB, on a quiet 2-core machine.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

CELLS = np.array(["T+E+", "T+E-", "T-E+", "T-E-"])


def records(methods: int, queries: int, seed: int = 0) -> pd.DataFrame:
    """The long records table: methods x queries x {hit@2, recall} x {256, 512}."""
    rng = np.random.default_rng(seed)
    per_episode = 10
    q = np.arange(queries)
    episode = np.char.add("e", (q // per_episode).astype(str))
    query = np.char.add("q", (q % per_episode).astype(str))
    cell_code = rng.integers(0, 4, size=queries)
    names = [f"m{m:02d}" for m in range(methods)]
    parts = []
    for budget, boost in ((256, 0.0), (512, 0.1)):
        for m, name in enumerate(names):
            rate = np.clip(0.3 + 0.1 * rng.random(4) + boost + 0.002 * m, 0, 1)[cell_code]
            hit = (rng.random(queries) < rate).astype(float)
            recall = rng.binomial(4, rate) / 4
            for metric, value in (("hit@2", hit), ("recall", recall)):
                parts.append(
                    pd.DataFrame(
                        {
                            "episode_id": episode,
                            "query_id": query,
                            "method": name,
                            "budget": budget,
                            "metric": metric,
                            "value": value,
                            "cell": CELLS[cell_code],
                        }
                    )
                )
    return pd.concat(parts, ignore_index=True)


def stages(path: Path, treatment: str, baseline: str) -> dict[str, tuple[float, float]]:
    """(wall s, CPU s of this process) of each stage, in this process."""
    from osustat import analyze
    from osustat.io.reading import read_records
    from osustat.provenance import Provenance
    from osustat.schema import validate_records

    out: dict[str, tuple[float, float]] = {}
    clock = (time.perf_counter(), time.process_time())

    def lap(stage: str) -> None:
        nonlocal clock
        now = (time.perf_counter(), time.process_time())
        out[stage] = (now[0] - clock[0], now[1] - clock[1])
        clock = now

    df = read_records(path)
    lap("read")
    valid = validate_records(df)
    lap("validate")
    # the input file hashed as the command does (without it analyze hashes the table's CSV)
    prov = Provenance.for_files([("records", path)], command="benchmark")
    analyze(valid, treatment=treatment, baseline=baseline, provenance=prov)
    lap("pair + analyze (4 comparisons)")
    return out


def cpu_now() -> float:
    """CPU s of this process and its finished children (user + sys)."""
    own, kids = (resource.getrusage(w) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def analyze_all_pairs(valid: pd.DataFrame, prov: object, *, dask: bool) -> object:
    """``analyze(all_pairs=True)`` in this process, or with a 2-worker Dask
    ``LocalCluster`` (one thread each) as ``workers`` (the map ``osustat analyze
    --scheduler`` uses: :func:`osustat.dask_cluster.cluster_map`)."""
    from osustat import analyze

    if not dask:
        return analyze(valid, all_pairs=True, provenance=prov)
    from distributed import Client, LocalCluster

    from osustat.dask_cluster import cluster_map

    with LocalCluster(n_workers=2, threads_per_worker=1) as cluster, Client(cluster) as c:
        return analyze(valid, all_pairs=True, provenance=prov, workers=cluster_map(c))


def all_pairs(df: pd.DataFrame, k: int, total_methods: int = 50) -> None:
    """Time analyze(all_pairs=True) on the first `k` methods, in this process and on a
    2-worker Dask LocalCluster, and extrapolate to `total_methods` methods."""
    import osustat.analysis as analysis
    from osustat.provenance import Provenance
    from osustat.schema import validate_records

    names = sorted(df["method"].unique())[:k]
    valid = validate_records(df[df["method"].isin(names)])
    prov = Provenance(command="benchmark", inputs=(("records", "<benchmark>", "-"),))
    run = analysis._run
    split: dict[str, float] = {}

    def timed_run(*args: object, **kwargs: object) -> object:
        start = time.perf_counter()
        out = run(*args, **kwargs)  # type: ignore[arg-type]
        split["comparisons"] = time.perf_counter() - start
        return out

    analysis._run = timed_run  # type: ignore[assignment]
    pairs = k * (k - 1) // 2
    scale = total_methods * (total_methods - 1) / 2 / pairs
    print(f"load average before: {os.getloadavg()}")
    print(f"{len(valid):,} records, {k} methods, {pairs} pairs")
    print("| backend | wall s | CPU s (this process + finished children) | comparisons wall s | "
          "rest wall s | extrapolated to 1,225 pairs: wall h |")  # fmt: skip
    print("|---|---|---|---|---|---|")
    outputs = []
    for backend in ("this process", "Dask LocalCluster (2 workers x 1 thread)"):
        start, cpu = time.perf_counter(), cpu_now()
        res = analyze_all_pairs(valid, prov, dask=backend != "this process")
        wall, used = time.perf_counter() - start, cpu_now() - cpu
        rest = wall - split["comparisons"]
        # the comparisons and the family-level MDEs both grow with the pairs
        hours = (split["comparisons"] + rest) * scale / 3600
        print(
            f"| {backend} | {wall:.1f} | {used:.1f} | {split['comparisons']:.1f} | {rest:.1f} | "
            f"{hours:.1f} |"
        )
        outputs.append(res.to_json())
    print(f"same result both ways: {outputs[0] == outputs[1]}")
    print(f"load average after: {os.getloadavg()}")


def fresh(
    path: Path,
    out: Path,
    treatment: str,
    baseline: str,
    env: dict[str, str] | None = None,
    extra: tuple[str, ...] = (),
) -> tuple[float, float, float]:
    """(wall s, CPU s, peak RSS GB) of the whole command in a fresh process (its worker
    processes' CPU included; the peak RSS is the largest process's)."""
    # `python -m osustat`, not the console script: a reference before 6b7ef5c has no
    # `osustat.cli:run`, the script's entry point since then
    cmd = [sys.executable, "-m", "osustat", "analyze", str(path), "--treatment", treatment]
    cmd += ["--baseline", baseline]
    cmd += ["--out", str(out), "--force", *extra]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tempfile.gettempdir())
    wall = time.perf_counter() - start
    if done.returncode:
        raise SystemExit(f"{' '.join(cmd)} failed: {done.stderr[-2000:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return wall, cpu, after.ru_maxrss / 2**20  # ru_maxrss in KiB on Linux


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--methods", type=int, default=50)
    parser.add_argument("--queries", type=int, default=5000)
    parser.add_argument("--formats", default="parquet,csv")
    parser.add_argument("--compare-ref", default=None, metavar="REF")
    parser.add_argument("--jobs", type=int, default=1, help="also time the command with --jobs")
    parser.add_argument("--all-pairs", type=int, default=0, metavar="K")
    args = parser.parse_args()
    df = records(args.methods, args.queries)
    if args.all_pairs:
        all_pairs(df, args.all_pairs, args.methods)
        return
    print(f"load average before: {os.getloadavg()}")
    print(f"{len(df):,} records, {args.methods} methods, {args.queries:,} queries")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        print("| format | stage | wall s | CPU s |")
        print("|---|---|---|---|")
        codes: dict[str, dict[str, str] | None] = {"this": None}
        if args.compare_ref:
            from analyze_speed import checkout

            ref_path = str(checkout(args.compare_ref, folder))
            codes[args.compare_ref] = {**os.environ, "PYTHONPATH": ref_path}
        rows = []
        for fmt in args.formats.split(","):
            path = folder / f"records.{fmt}"
            if fmt == "csv":
                df.to_csv(path, index=False)
            else:
                df.to_parquet(path, index=False)
            for stage, (wall, cpu) in stages(path, "m01", "m00").items():
                print(f"| {fmt} | {stage} (in one process) | {wall:.2f} | {cpu:.2f} |")
            for code, env in codes.items():
                out = folder / f"out-{fmt}-{code}"
                rows.append((fmt, code, *fresh(path, out, "m01", "m00", env)))
            if args.jobs > 1:
                out = folder / f"out-{fmt}-jobs"
                jobs = ("--jobs", str(args.jobs))
                rows.append(
                    (fmt, f"this, --jobs {args.jobs}", *fresh(path, out, "m01", "m00", None, jobs))
                )
            if args.compare_ref:
                same = [(folder / f"out-{fmt}-{c}" / "results.json").read_bytes() for c in codes]
                names = ", ".join(codes)
                print(f"| {fmt} | results.json identical ({names}) | {same[0] == same[-1]} | |")
        print()
        print("| format | code | `osustat analyze` wall s (fresh process) | CPU s | peak RSS GB |")
        print("|---|---|---|---|---|")
        for fmt, code, wall, cpu, rss in rows:
            print(f"| {fmt} | {code} | {wall:.2f} | {cpu:.2f} | {rss:.2f} |")
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
