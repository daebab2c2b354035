"""How OSU construction and retrieval grow with steps per episode, and sweeps with episodes.

Two studies (issue 12), each printed as a markdown table with the fitted log-log exponent:

1. steps per episode (150 → 2,400; 384-d, B = 256): median time of ``build_osus`` (OSU-Mem's
   build) and of one ``OSUMem.retrieve``; Flat Vector retrieve beside it;
2. episodes (50 → 1,600 by default up to ``--max-episodes``): wall time and peak RSS of the
   synthetic sweep through the runner (``run_synthetic``, ``--jobs``).

Run (numbers go to docs/performance.md):

    .venv/bin/python benchmarks/growth.py [--jobs 2] [--max-episodes 800] [--dask]

``--dask`` also runs the largest sweep on a 2-worker ``LocalCluster`` and prints its time
against ``--jobs 2`` (the overhead ratio).
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import resource
import subprocess
import sys
import time

import numpy as np

from osustat.retrieval import FlatVector, OSUMem, build_osus

sys.path.insert(0, os.path.dirname(__file__))
from retrieval_speed import make_trajectory


def slope(x: list[float], y: list[float]) -> float:
    """Least-squares exponent b of y = a x^b."""
    return float(np.polyfit(np.log(x), np.log(y), 1)[0])


def steps_study(sizes: list[int], reps: int, dim: int, budget: int) -> None:
    print(f"\n### Steps per episode ({dim}-d, B = {budget}, median of {reps})\n")
    print("| steps | build_osus ms | OSU-Mem retrieve ms | Flat Vector retrieve ms | OSUs |")
    print("|---|---|---|---|---|")
    rows = []
    for n in sizes:
        rng = np.random.default_rng(n)
        build, retr, flat, n_osus = [], [], [], []
        for _ in range(reps):
            traj = make_trajectory(rng, n, dim)
            q = traj.embeddings[rng.choice(n, 3)].mean(axis=0)
            t0 = time.perf_counter()
            pool = build_osus(traj)
            build.append(time.perf_counter() - t0)
            n_osus.append(pool.n_osus)
            r = OSUMem().build(traj)
            t0 = time.perf_counter()
            r.retrieve(q, budget)
            retr.append(time.perf_counter() - t0)
            f = FlatVector().build(traj)
            t0 = time.perf_counter()
            f.retrieve(q, budget)
            flat.append(time.perf_counter() - t0)
        row = (n, 1e3 * np.median(build), 1e3 * np.median(retr), 1e3 * np.median(flat))
        rows.append(row)
        print(f"| {n} | {row[1]:.2f} | {row[2]:.3f} | {row[3]:.3f} | {np.median(n_osus):.0f} |")
    ns = [r[0] for r in rows]
    print(
        f"\nFitted exponents (time ∝ steps^b): build_osus b = {slope(ns, [r[1] for r in rows]):.2f}"
        f", OSU-Mem retrieve b = {slope(ns, [r[2] for r in rows]):.2f}, Flat Vector retrieve "
        f"b = {slope(ns, [r[3] for r in rows]):.2f}."
    )


_SWEEP = """
import resource, sys, time
from osustat.analyses.synthetic.run import run_synthetic
n, jobs, backend = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
if backend == "dask":
    from distributed import Client, LocalCluster
    with LocalCluster(n_workers=2, threads_per_worker=1, host="127.0.0.1",
                      dashboard_address=None) as cluster, Client(cluster) as client:
        t0 = time.perf_counter()  # cluster start-up excluded; the sweep itself is timed
        out = run_synthetic(n, 0, progress=False, scheduler=client)
        secs = time.perf_counter() - t0
else:
    t0 = time.perf_counter()
    out = run_synthetic(n, 0, jobs=jobs, progress=False)
    secs = time.perf_counter() - t0
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(secs, rss, len(out.records))
"""


def sweep(n: int, jobs: int, backend: str) -> tuple[float, float, int]:
    proc = subprocess.run(
        [sys.executable, "-c", _SWEEP, str(n), str(jobs), backend],
        capture_output=True,
        text=True,
        check=True,
    )
    secs, rss, rows = proc.stdout.split()
    return float(secs), float(rss), int(rows)


def episodes_study(sizes: list[int], jobs: int, dask: bool) -> None:
    print(f"\n### Episodes (synthetic sweep, all methods, --jobs {jobs}, fresh process each)\n")
    print("| episodes | wall s | peak RSS MB (parent) | records |")
    print("|---|---|---|---|")
    secs = []
    for n in sizes:
        s, rss, rows = sweep(n, jobs, "joblib")
        secs.append(s)
        print(f"| {n} | {s:.1f} | {rss:.0f} | {rows:,} |")
    print(f"\nFitted exponent (wall ∝ episodes^b): b = {slope(sizes, secs):.2f}.")
    if dask:
        n = sizes[-1]
        s_dask, _, rows_dask = sweep(n, 1, "dask")
        print(
            f"\nDask LocalCluster (2 workers) on {n} episodes: {s_dask:.1f} s vs --jobs 2 "
            f"{secs[-1]:.1f} s → overhead ratio {s_dask / secs[-1]:.2f} ({rows_dask:,} records)."
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--max-episodes", type=int, default=1600)
    parser.add_argument("--max-steps", type=int, default=2400)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--dask", action="store_true")
    parser.add_argument("--skip-episodes", action="store_true")
    args = parser.parse_args()
    print(f"machine: {os.cpu_count()} cores; python {sys.version.split()[0]}")
    steps = [s for s in (150, 300, 600, 1200, 2400, 4800) if s <= args.max_steps]
    steps_study(steps, args.reps, 384, 256)
    if not args.skip_episodes:
        eps = [e for e in (50, 100, 200, 400, 800, 1600) if e <= args.max_episodes]
        episodes_study(eps, args.jobs, args.dask)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"\nbenchmark process peak RSS {peak:.0f} MB")


if __name__ == "__main__":
    main()
