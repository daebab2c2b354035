"""OSU-Mem's long-horizon coarse stage against the paper's (issue 25: retrieve <= 2 ms).

On the long synthetic trajectories of ``growth.py --long`` (topic-structured 384-d
embeddings), one OSU pool per size is built once (``OSUMem()``, the paper's rule) and the
three coarse stages answer from that same pool: ``paper`` (Section 3.6), ``capped`` (K's
|U|/10 term capped at ``COARSE_K_MAX`` = 77, member similarities only) and ``capped-ann``
(the same K found through an HNSW index over the centroids). Printed per size:

- the centroid index's extra build: CPU seconds, resident memory added (MB; reads 0 when the
  allocator reuses memory freed earlier) and its pickled size (MB: hnswlib pickles its data
  and link buffers, i.e. what it holds in memory);
- CPU milliseconds per retrieve (``time.process_time``) at B = 128 (no novelty term) and
  B = 256 (novelty on), median over 20 distinct queries after one warm-up pass over them;
- over ``--queries`` queries (default 200; each the normalized mean of 3 random steps, those
  3 steps its evidence, as in ``retrieval_long.py``/``growth.py``) at B = 128 and 256: the
  recall of the index's top-K against the exact top-K of the same K, the fraction of queries
  whose retrieved step set equals the paper rule's, their mean Jaccard overlap, the fraction
  equal to ``capped``'s (the index's own effect), and mean Recall / Hit@2 of each stage
  against the 3 evidence steps.

The load (``uptime``) is printed before and after each size. Run:

    nice -n 10 .venv/bin/python benchmarks/retrieval_long_coarse.py \
        [--sizes 1000 4000 16000 50000] [--queries 200] [--pickle-dir DIR]

``--pickle-dir`` keeps each size's (trajectory, built paper retriever) to skip the rebuild.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import copy
import pickle
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from growth import load, long_trajectory
from retrieval_long import vm

from osustat.retrieval import OSUMem
from osustat.retrieval.metrics import hit_at_k, recall
from osustat.retrieval.osumem import _centroid_index, top_k_stable

BUDGETS = (128, 256)
STAGES = ("paper", "capped", "capped-ann")


def built(n: int, pickle_dir: str | None) -> tuple[Any, OSUMem, float]:
    """The trajectory of `n` steps and OSU-Mem (paper rule) built on it, and its build CPU s."""
    path = Path(pickle_dir) / f"coarse_{n}.pkl" if pickle_dir else None
    if path is not None and path.is_file():
        with open(path, "rb") as fh:
            traj, r, cpu = pickle.load(fh)
        return traj, r, cpu
    traj = long_trajectory(np.random.default_rng(n), n)
    c0 = time.process_time()
    r = OSUMem().build(traj)
    cpu = time.process_time() - c0
    if path is not None:
        with open(path, "wb") as fh:
            pickle.dump((traj, r, cpu), fh)
    return traj, r, cpu


def on_same_pool(paper: OSUMem) -> tuple[dict[str, OSUMem], float, float, float]:
    """The three stages sharing `paper`'s built pool; the centroid index's CPU s, MB, pickled MB.

    A copy of the built retriever with another `coarse` setting answers as one built with it
    (the pool does not depend on the setting; ``capped-ann`` adds the index, built here as
    ``OSUMem._build`` builds it).
    """
    capped = copy.copy(paper)
    capped.coarse = "capped"
    ann = copy.copy(paper)
    ann.coarse = "capped-ann"
    rss0 = vm("VmRSS")
    c0 = time.process_time()
    ann._centroid_index = _centroid_index(paper.pool_.centroids)
    cpu = time.process_time() - c0
    mb = vm("VmRSS") - rss0
    pickled = len(pickle.dumps(ann._centroid_index)) / 2**20
    return {"paper": paper, "capped": capped, "capped-ann": ann}, cpu, mb, pickled


def cpu_ms(r: OSUMem, queries: list[np.ndarray], budget: float) -> float:
    """Median CPU ms of one retrieve over `queries`, after one warm-up pass over them."""
    for q in queries:
        r.retrieve(q, budget)
    times = []
    for q in queries:
        c0 = time.process_time()
        r.retrieve(q, budget)
        times.append(time.process_time() - c0)
    return 1e3 * float(np.median(times))


def index_recall(ann: OSUMem, q: np.ndarray, budget: float) -> float:
    """Share of the exact top-K centroids (same K) that the index's top-K holds."""
    cen = ann.pool_.centroids
    qn = q / np.linalg.norm(q)
    k = ann._k(cen.shape[0], budget)
    exact = top_k_stable(cen @ qn, k)
    got, _ = ann._coarse_ann(qn, np.ones(cen.shape[0], dtype=bool), budget)
    return len(set(exact.tolist()) & set(got.tolist())) / k


def study(n: int, n_queries: int, pickle_dir: str | None) -> None:
    print(f"\n## {n:,} steps\n\nload before: {load()}", flush=True)
    traj, paper, build_cpu = built(n, pickle_dir)
    stages, idx_cpu, idx_mb, idx_pickled = on_same_pool(paper)
    n_osus = paper.pool_.n_osus
    print(
        f"{n_osus:,} OSUs; paper build {build_cpu:.1f} CPU s; centroid index (capped-ann): "
        f"+{idx_cpu:.2f} CPU s, +{idx_mb:.1f} MB resident, {idx_pickled:.1f} MB pickled"
    )
    print(
        "K at B = 128 / 256: paper "
        + " / ".join(str(paper._k(n_osus, b)) for b in BUDGETS)
        + ", capped "
        + " / ".join(str(stages["capped"]._k(n_osus, b)) for b in BUDGETS)
    )
    rng = np.random.default_rng(1)
    evidence = [rng.choice(n, 3, replace=False) for _ in range(n_queries)]
    queries = [traj.embeddings[e].mean(axis=0) for e in evidence]
    queries = [q / np.linalg.norm(q) for q in queries]
    print("\n| stage | CPU ms B = 128 | CPU ms B = 256 |\n|---|---|---|")
    for name, r in stages.items():
        ms = [cpu_ms(r, queries[:20], b) for b in BUDGETS]
        print(f"| {name} | {ms[0]:.2f} | {ms[1]:.2f} |", flush=True)
    print(
        f"\n{n_queries} queries (index recall: of the exact top-K; = paper / = capped: same "
        "step set; Jaccard: mean overlap with paper's)\n"
        "\n| B | index recall | stage | = paper | Jaccard paper | = capped | Recall | Hit@2 |"
        "\n|---|---|---|---|---|---|---|---|"
    )
    for b in BUDGETS:
        rec = np.mean([index_recall(stages["capped-ann"], q, b) for q in queries])
        res = {name: [r.retrieve(q, b).steps for q in queries] for name, r in stages.items()}
        for name in STAGES:
            pairs = list(zip(res[name], res["paper"], res["capped"], strict=True))
            same = np.mean([set(a.tolist()) == set(p.tolist()) for a, p, _ in pairs])
            same_c = np.mean([set(a.tolist()) == set(c.tolist()) for a, _, c in pairs])
            jac = np.mean(
                [len(set(a) & set(p)) / max(1, len(set(a) | set(p))) for a, p, _ in pairs]
            )
            rc = np.mean([recall(s, e) for s, e in zip(res[name], evidence, strict=True)])
            h2 = np.mean([hit_at_k(s, e, 2) for s, e in zip(res[name], evidence, strict=True)])
            print(
                f"| {b} | {rec:.4f} | {name} | {same:.3f} | {jac:.3f} | {same_c:.3f} | "
                f"{rc:.3f} | {h2:.3f} |",
                flush=True,
            )
    print(f"\nload after: {load()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 4000, 16000, 50000])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--pickle-dir", default=None, metavar="DIR")
    args = parser.parse_args()
    for n in args.sizes:
        study(n, args.queries, args.pickle_dir)


if __name__ == "__main__":
    main()
