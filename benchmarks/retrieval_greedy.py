"""OSU-Mem's greedy expansion against its reference at main (issue 25: retrieve <= 2 ms).

The expansion (``OSUMem._expand``, Algorithm 1's fine stage) was rewritten for speed with
records byte-identical. This script loads the expansion as it was at main 953cdf2 (or at
``--against REV``) from git (:func:`expand_reference`) and compares it with the package's on
the long synthetic trajectories of ``retrieval_long_coarse.py`` (one pool per size, the paper's
``OSUMem()``, answered by the coarse stages ``paper``, ``capped``, ``capped-ann`` and by
``OSUMemGF`` with ``capped``):

- ``--check``: over ``--queries`` queries (half the normalized mean of 3 random steps, as in
  ``retrieval_long_coarse.py``, half the same plus noise) x B in ``--budgets`` x the four
  retrievers, the retrieved step lists (order included) and the tokens used of the package
  against the reference; prints the counts of equal answers and a SHA-256 over the package's
  answers (run it at two revisions to compare them across revisions, too);
- ``--time``: CPU milliseconds per retrieve (``time.process_time``) of ``capped-ann`` at each
  budget, reference and package alternating query by query (after one warm-up pass), the
  medians over ``--rounds`` passes over 30 queries, their ratio and the median of the
  per-query ratios; the load (``uptime``) before and after.

    nice -n 10 .venv/bin/python benchmarks/retrieval_greedy.py --sizes 16000 50000 --check --time

``--pickle-dir DIR`` keeps each size's built pool (``retrieval_long_coarse.py``'s cache).
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import copy
import hashlib
import sys
import time
import types
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from git_reference import module_at
from growth import load
from retrieval_long_coarse import built, on_same_pool

from osustat.retrieval import OSUMem, OSUMemGF

BUDGETS = (64, 128, 256, 512)


def expand_reference(rev: str) -> Any:
    """``OSUMem._expand`` as it is at git revision `rev` (default: main before the rewrite).

    Read from git (:func:`git_reference.module_at`; its relative imports resolve to today's
    ``base``, ``osu`` and ``trajectory``, which the rewrite did not change), so the reference
    is the old code itself, not a copy kept in the tree.
    """
    return module_at(rev, "retrieval/osumem.py").OSUMem._expand


def with_reference(r: OSUMem, expand: Any) -> OSUMem:
    """A copy of the built retriever `r` that expands with `expand` (the reference's)."""
    ref = copy.copy(r)
    ref._expand = types.MethodType(expand, ref)  # type: ignore[method-assign]
    return ref


def retrievers(paper: OSUMem) -> dict[str, OSUMem]:
    """The four retrievers sharing `paper`'s pool (``OSUMemGF`` as a copy with its class)."""
    stages, _, _, _ = on_same_pool(paper)
    gf = copy.copy(stages["capped"])
    gf.__class__ = OSUMemGF
    return {**stages, "GF capped": gf}


def make_queries(traj: Any, n_queries: int) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Queries (normalized; every other one with noise) and their 3 evidence steps."""
    rng = np.random.default_rng(2)
    n, d = traj.n_steps, traj.dim
    evidence = [np.sort(rng.choice(n, 3, replace=False)) for _ in range(n_queries)]
    queries = []
    for i, e in enumerate(evidence):
        q = traj.embeddings[e].mean(axis=0)
        if i % 2:
            q = q + rng.normal(scale=0.5 / np.sqrt(d), size=d)
        queries.append(q / np.linalg.norm(q))
    return queries, evidence


def check(n: int, rs: dict[str, OSUMem], n_queries: int, budgets: list[int], expand: Any) -> None:
    """Step lists and tokens of the package's expansion against the reference's."""
    queries, evidence = make_queries(rs["paper"].trajectory_, n_queries)
    digest = hashlib.sha256()
    print(
        "\n| retriever | B | answers | equal steps (order) | equal tokens |\n|---|---|---|---|---|"
    )
    for name, r in rs.items():
        ref = with_reference(r, expand)
        for b in budgets:
            same_steps = same_used = 0
            for q, e in zip(queries, evidence, strict=True):
                kw = {"evidence": e} if r.oracle else {}
                new, old = r.retrieve(q, b, **kw), ref.retrieve(q, b, **kw)
                same_steps += bool(np.array_equal(new.steps, old.steps))
                same_used += new.tokens == old.tokens
                digest.update(new.steps.tobytes())
                digest.update(repr(new.tokens).encode())
            print(f"| {name} | {b} | {n_queries} | {same_steps} | {same_used} |", flush=True)
    print(f"\n{n:,} steps: SHA-256 of the package's answers {digest.hexdigest()}")


def time_alternating(rs: dict[str, OSUMem], budgets: list[int], rounds: int, expand: Any) -> None:
    """CPU ms of ``capped-ann``'s retrieve, reference and package alternating per query."""
    ann = rs["capped-ann"]
    ref = with_reference(ann, expand)
    queries, _ = make_queries(ann.trajectory_, 30)
    print(f"\nload before: {load()}")
    print(
        "\n| B | reference CPU ms | package CPU ms | ratio of medians | median per-query ratio |"
        "\n|---|---|---|---|---|"
    )
    for b in budgets:
        for q in queries:  # warm-up
            ref.retrieve(q, b)
            ann.retrieve(q, b)
        t_ref, t_new = [], []
        for k in range(rounds):
            for i, q in enumerate(queries):
                pair = [(ref, t_ref), (ann, t_new)]
                for r, times in pair if (i + k) % 2 else pair[::-1]:
                    c0 = time.process_time()
                    r.retrieve(q, b)
                    times.append(time.process_time() - c0)
        m_ref, m_new = 1e3 * np.median(t_ref), 1e3 * np.median(t_new)
        per = np.median(np.array(t_new) / np.array(t_ref))
        print(f"| {b} | {m_ref:.2f} | {m_new:.2f} | {m_new / m_ref:.2f} | {per:.2f} |", flush=True)
    print(f"\nload after: {load()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[16000, 50000])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--budgets", type=int, nargs="+", default=list(BUDGETS))
    parser.add_argument("--check", action="store_true", help="compare answers (default)")
    parser.add_argument("--time", action="store_true", help="time, alternating")
    parser.add_argument("--rounds", type=int, default=3, help="timing passes over 30 queries")
    parser.add_argument("--pickle-dir", default=None, metavar="DIR")
    parser.add_argument(
        "--against",
        default="953cdf2",
        metavar="REV",
        help="git revision whose OSUMem._expand is the reference (default: main before the "
        "rewrite)",
    )
    args = parser.parse_args()
    expand = expand_reference(args.against)
    for n in args.sizes:
        print(f"\n## {n:,} steps\n\nload: {load()}", flush=True)
        _, paper, _ = built(n, args.pickle_dir)
        print(f"{paper.pool_.n_osus:,} OSUs", flush=True)
        rs = retrievers(paper)
        if args.check or not args.time:
            check(n, rs, args.queries, args.budgets, expand)
        if args.time:
            time_alternating(rs, args.budgets, args.rounds, expand)


if __name__ == "__main__":
    main()
