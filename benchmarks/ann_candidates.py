"""The k-NN libraries weighed for the OSU similarity view above 4,096 steps (issue 25).

For each candidate (documented default or guideline parameters, one thread, fixed seed): the
5-NN recall of its graph against the exact one on the synthetic long trajectory of
``growth.py --long`` at ``--recall-steps`` (16,000) steps and on real all-MiniLM-L6-v2 step
vectors (``--real-embeddings``: ``.npy`` arrays or embedding-cache ``.npz`` shards), and the
CPU seconds of the k-NN step alone at ``--steps`` (50,000). Candidates whose library is not
installed are listed as such (hnswlib and faiss-cpu are not in any extra; install them by
hand to compare). pynndescent's kernels are compiled before its timings (its one-time JIT is
printed apart). The acceptance criterion is in docs/performance.md.

    nice -n 10 .venv/bin/python benchmarks/ann_candidates.py \\
        --real-embeddings /work/meas/taucache/*/*.npz /work/meas/locache/*/*.npz

``--only TEXT`` runs the candidates whose label contains TEXT (e.g. ``pynndescent``).
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import sys
import time
from collections.abc import Callable

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from growth import blockwise_knn, graph_recall, load, long_trajectory, real_vectors

from osustat.retrieval.osu import NND_NEIGHBORS, NND_SEED, _approximate_knn


def _f32(emb: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(emb, dtype=np.float32)


def hnswlib_graph(emb: np.ndarray) -> np.ndarray:
    import hnswlib

    index = hnswlib.Index(space="ip", dim=emb.shape[1])
    index.init_index(max_elements=len(emb), ef_construction=200, M=16, random_seed=100)
    index.add_items(_f32(emb), np.arange(len(emb)), num_threads=1)
    index.set_ef(50)
    return index.knn_query(_f32(emb), k=6, num_threads=1)[0]


def faiss_hnsw_graph(emb: np.ndarray) -> np.ndarray:
    import faiss

    faiss.omp_set_num_threads(1)
    index = faiss.IndexHNSWFlat(emb.shape[1], 32, faiss.METRIC_INNER_PRODUCT)
    index.add(_f32(emb))
    return index.search(_f32(emb), 6)[1]


def faiss_nndescent_graph(emb: np.ndarray) -> np.ndarray:
    import faiss

    faiss.omp_set_num_threads(1)
    index = faiss.IndexNNDescentFlat(emb.shape[1], 64, faiss.METRIC_INNER_PRODUCT)
    index.add(_f32(emb))
    return faiss.vector_to_array(index.nndescent.final_graph).reshape(len(emb), -1)


def faiss_ivf_graph(emb: np.ndarray, lists_per_sqrt: float, nprobe: int) -> np.ndarray:
    import faiss

    faiss.omp_set_num_threads(1)
    d, nlist = emb.shape[1], max(1, round(lists_per_sqrt * np.sqrt(len(emb))))
    index = faiss.IndexIVFFlat(faiss.IndexFlatIP(d), d, nlist, faiss.METRIC_INNER_PRODUCT)
    index.cp.seed = 100
    index.train(_f32(emb))
    index.add(_f32(emb))
    index.nprobe = nprobe
    return index.search(_f32(emb), 6)[1]


def pynndescent_high_memory_graph(emb: np.ndarray) -> np.ndarray:
    """The chosen graph with pynndescent's documented faster, larger mode (``low_memory=False``)."""
    from pynndescent import NNDescent

    index = NNDescent(
        _f32(emb),
        metric="cosine",
        n_neighbors=NND_NEIGHBORS,
        random_state=NND_SEED,
        n_jobs=1,
        low_memory=False,
    )
    return index.neighbor_graph[0]


CANDIDATES: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "hnswlib, M 16, ef_construction 200, ef 50": hnswlib_graph,
    "faiss IndexHNSWFlat, M 32, defaults": faiss_hnsw_graph,
    "faiss IndexNNDescentFlat, K 64, defaults": faiss_nndescent_graph,
    "faiss IndexIVFFlat, nlist sqrt(t), nprobe 8": lambda e: faiss_ivf_graph(e, 1, 8),
    "faiss IndexIVFFlat, nlist 4 sqrt(t), nprobe 1": lambda e: faiss_ivf_graph(e, 4, 1),
    "faiss IndexIVFFlat, nlist 4 sqrt(t), nprobe 16": lambda e: faiss_ivf_graph(e, 4, 16),
    "pynndescent NNDescent, defaults (chosen)": lambda e: _approximate_knn(e, 5),
    "pynndescent NNDescent, defaults but low_memory=False": pynndescent_high_memory_graph,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--recall-steps", type=int, default=16_000)
    parser.add_argument("--steps", type=int, default=50_000)
    parser.add_argument("--real-embeddings", nargs="+", default=None, metavar="FILE")
    parser.add_argument(
        "--only", metavar="TEXT", help="only the candidates whose label contains TEXT"
    )
    args = parser.parse_args()
    c0 = time.process_time()
    _approximate_knn(long_trajectory(np.random.default_rng(1), 500).embeddings, 5)
    print(f"pynndescent kernels compiled: {time.process_time() - c0:.1f} CPU s (once per process)")
    print(f"load before: {load()}\n")
    sets = {
        f"synthetic {args.recall_steps:,}": long_trajectory(
            np.random.default_rng(args.recall_steps), args.recall_steps
        ).embeddings
    }
    if args.real_embeddings:
        real = real_vectors(args.real_embeddings)
        sets[f"real {len(real):,}"] = real
    exact = {name: blockwise_knn(emb, 5) for name, emb in sets.items()}
    big = long_trajectory(np.random.default_rng(args.steps), args.steps).embeddings
    print(
        f"| library, parameters | {' | '.join(f'recall, {n}' for n in sets)} "
        f"| k-NN CPU s at {args.steps:,} | load |"
    )
    print("|---|" + "---|" * (len(sets) + 2))
    for label, graph in CANDIDATES.items():
        if args.only and args.only not in label:
            continue
        try:
            cells = [f"{graph_recall(graph(emb), exact[name]):.4f}" for name, emb in sets.items()]
        except ImportError as exc:
            print(f"| {label} | not installed ({exc.name}) |")
            continue
        c0 = time.process_time()
        graph(big)
        secs = time.process_time() - c0
        print(
            f"| {label} | {' | '.join(cells)} | {secs:.2f} | {os.getloadavg()[0]:.1f} |", flush=True
        )
    print(f"\nload after: {load()}")


if __name__ == "__main__":
    main()
