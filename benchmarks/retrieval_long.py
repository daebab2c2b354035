"""Where OSU-Mem's retrieve spends its time at 50,000 steps (issue 25: the ≤ 2 ms goal).

Builds OSU-Mem on the long synthetic trajectory of ``growth.py --long`` (topic-structured
384-d embeddings; NN-descent k-NN graph above 4,096 steps), or loads it from ``--pickle``
(written there on first use; a build prints its CPU seconds, after pynndescent's one-time
kernel compilation, which is timed apart, and its peak resident memory, the peak reset
after the trajectory is made, and where its time goes). Then CPU milliseconds
(``time.process_time``, median of 20 calls) of the whole retrieve at B = 128 (no novelty
term) and B = 256 (with it), and of its parts: the scans every query makes (steps and OSU
centroids, float64 as computed, float32 for comparison), the coarse top-K, the gather of
the top-K OSUs' step embeddings, and one novelty update. The load is printed beside.

    .venv/bin/python benchmarks/retrieval_long.py [--steps 50000] [--pickle FILE]
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import cProfile
import pickle
import pstats
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from growth import load, long_trajectory

from osustat.retrieval import OSUMem
from osustat.retrieval.expansion import csr_take
from osustat.retrieval.osu import _approximate_knn
from osustat.retrieval.osumem import adaptive_k, top_k_stable


def vm(field: str) -> float:
    """A memory figure of this process from /proc/self/status, in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    raise KeyError(field)


def cpu_ms(fn: Callable[[], Any], n: int = 20) -> float:
    fn()
    times = []
    for _ in range(n):
        c0 = time.process_time()
        fn()
        times.append(time.process_time() - c0)
    return 1e3 * float(np.median(times))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=50_000)
    parser.add_argument("--pickle", default=None, metavar="FILE")
    args = parser.parse_args()
    n = args.steps
    if args.pickle and Path(args.pickle).is_file():
        with open(args.pickle, "rb") as fh:
            traj, r = pickle.load(fh)
    else:
        c0 = time.process_time()
        _approximate_knn(long_trajectory(np.random.default_rng(1), 500).embeddings, 5)
        jit = time.process_time() - c0
        print(f"pynndescent's kernels compiled (once per process): {jit:.1f} CPU s")
        traj = long_trajectory(np.random.default_rng(n), n)
        rss0 = vm("VmRSS")
        Path("/proc/self/clear_refs").write_text("5")  # resets the peak (VmHWM) to now
        c0 = time.process_time()
        with cProfile.Profile(time.process_time) as prof:
            r = OSUMem().build(traj)
        print(
            f"OSU-Mem build: {time.process_time() - c0:.1f} CPU s; resident before "
            f"{rss0:.0f} MB, peak during the build {vm('VmHWM'):.0f} MB, after "
            f"{vm('VmRSS'):.0f} MB"
        )
        stats = pstats.Stats(prof)
        total = stats.total_tt  # type: ignore[attr-defined]
        print("build profile (CPU time; share of the build, own time of the 12 largest):")
        for (file, line, func), row in sorted(stats.stats.items(), key=lambda kv: -kv[1][2])[:12]:  # type: ignore[attr-defined]
            print(f"  {Path(file).name}:{line} {func}: {row[2] / total:.1%}")
        if args.pickle:
            with open(args.pickle, "wb") as fh:
                pickle.dump((traj, r), fh)
    rng = np.random.default_rng(1)
    q = traj.embeddings[rng.choice(n, 3)].mean(axis=0)
    q /= np.linalg.norm(q)
    emb, cen = traj.embeddings, r.pool_.centroids
    emb32, cen32, q32 = r._emb32, cen.astype(np.float32), q.astype(np.float32)
    scores = cen @ q
    k = adaptive_k(cen.shape[0], 256)
    top = top_k_stable(scores, k)
    at, _ = csr_take(r._member_ptr, top)
    union = np.unique(r._member_step[at])
    emb_u = emb32[union]
    print(f"load before: {load()}")
    print(
        f"\n{n:,} steps, {cen.shape[0]:,} OSUs; K = {k:,} OSUs at B = 256 hold {at.size:,} "
        f"member slots ({union.size:,} distinct steps)\n"
    )
    print("| part | CPU ms |")
    print("|---|---|")
    rows = [
        ("retrieve, B = 128 (no novelty)", lambda: r.retrieve(q, 128)),
        ("retrieve, B = 256 (novelty on)", lambda: r.retrieve(q, 256)),
        ("step scores, every step, float64 (as computed)", lambda: emb @ q),
        ("step scores, every step, float32 (comparison)", lambda: emb32 @ q32),
        ("centroid scores, every OSU, float64 (as computed)", lambda: cen @ q),
        ("centroid scores, every OSU, float32 (comparison)", lambda: cen32 @ q32),
        ("coarse top-K (top_k_stable)", lambda: top_k_stable(scores, k)),
        ("gather the top-K OSUs' step embeddings (float32)", lambda: emb32[union]),
        ("one novelty update, 5 steps added", lambda: (emb_u @ emb32[union[:5]].T).max(axis=1)),
    ]
    for label, fn in rows:
        print(f"| {label} | {cpu_ms(fn):.2f} |", flush=True)
    print(f"\nload after: {load()}")


if __name__ == "__main__":
    main()
