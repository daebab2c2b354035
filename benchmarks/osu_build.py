"""OSU construction against a git revision's: equal pools, and CPU time in the same run.

``build_osus`` of the package is compared with ``build_osus`` of ``retrieval/osu.py`` at git
revision ``--against`` (read from git by ``git_reference.module_at``: the old code itself, not
a copy kept in the tree). Pools are compared field by
field (members, views, keys, the centroids' bytes, every step's OSUs) on:

- random annotated trajectories (``retrieval_speed.make_trajectory``) at 30-1,500 steps and
  32/64/384 dimensions, every one also under eight non-default configurations (disjoint,
  ``f_min`` 1 and 3, ``s_max`` 3, ``delta_gap`` 2, single views, reordered views);
- generated synthetic episodes and prefixes of them (what a synthetic run builds);
- hand-made edge cases: no steps, one step, no annotations, zero embeddings, duplicated and
  unsorted entity ids in a directly constructed ``Trajectory``;
- with ``--long``, a 6,000-step trajectory (the approximate k-NN path).

Then the CPU time of both, alternating per trajectory, on synthetic episodes (and on random
trajectories of ``--sizes`` steps), is printed with the machine's load::

    .venv/bin/python benchmarks/osu_build.py --against 98ba1c3 [--long] [--sizes 250 1000 4000]

``--outside-graph STEPS`` times only the part of a long build outside its k-NN graph (the
NN-descent graph computed once and handed to both).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import time
from typing import Any

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np
from git_reference import module_at
from growth import load, long_trajectory
from retrieval_speed import make_trajectory

from osustat.analyses.synthetic.generator import generate_episode
from osustat.retrieval import OSUConfig, Trajectory, build_osus

CONFIGS = {
    "paper": OSUConfig(),
    "disjoint": OSUConfig(m_max=1),
    "f_min 1": OSUConfig(f_min=1),
    "f_min 3": OSUConfig(f_min=3),
    "s_max 3": OSUConfig(s_max=3),
    "delta_gap 2": OSUConfig(delta_gap=2),
    "similarity only": OSUConfig(views=("similarity",)),
    "entity only": OSUConfig(views=("entity",)),
    "reordered views": OSUConfig(views=("subgoal", "similarity", "tool", "entity")),
}


def reference_module(rev: str) -> Any:
    """``retrieval/osu.py`` as it is at git revision `rev` (read from git: the old code itself)."""
    return module_at(rev, "retrieval/osu.py")


def fingerprint(pool: Any) -> bytes:
    """Every field of an OSU pool as bytes (equal pools, equal bytes)."""
    h = hashlib.sha256()
    h.update(repr((pool.views, pool.keys)).encode())
    for m in pool.members:
        h.update(np.asarray(m, dtype=np.int64).tobytes() + b"|")
    h.update(str(pool.centroids.shape).encode() + pool.centroids.tobytes())
    for k in pool.step_osus:
        h.update(np.asarray(k, dtype=np.int64).tobytes() + b"|")
    return h.digest()


def edge_cases() -> list[Trajectory]:
    """Trajectories at the edges of the construction."""
    rng = np.random.default_rng(7)
    out = [
        Trajectory.from_steps(np.zeros((0, 8)), []),
        Trajectory.from_steps(np.ones((1, 8)), [3.0], tools=["a"], entities=[{"x"}]),
        Trajectory.from_steps(rng.normal(size=(40, 16)), np.full(40, 5.0)),
        Trajectory.from_steps(np.zeros((30, 8)), np.full(30, 5.0), tools=["a", "b"] * 15),
    ]
    base = make_trajectory(rng, 120, 32)
    # entity ids given directly: unsorted and repeated within a step (a set each)
    ptr = np.arange(0, 3 * 121, 3, dtype=np.int64)
    ids = rng.integers(0, 6, size=3 * 120).astype(np.int64)
    out.append(
        Trajectory(
            embeddings=base.embeddings,
            costs=base.costs,
            tool_ids=base.tool_ids,
            entity_ptr=ptr,
            entity_ids=ids,
            subgoal_ids=base.subgoal_ids,
            tool_vocab=base.tool_vocab,
            entity_vocab=tuple(f"e{k}" for k in range(6)),
        )
    )
    return out


def cases(long: bool) -> list[tuple[str, Trajectory]]:
    rng = np.random.default_rng(11)
    out = [(f"edge {i}", t) for i, t in enumerate(edge_cases())]
    for n, d in [(30, 32), (120, 64), (250, 384), (600, 32), (1500, 64)] * 3:
        out.append((f"random {n}x{d}", make_trajectory(rng, n, d)))
    for i in range(12):
        traj = generate_episode(f"e{i}", np.random.default_rng(i)).trajectory
        out.append((f"episode {i}", traj))
        out.append((f"episode {i} prefix", traj.prefix(int(rng.integers(2, traj.n_steps)))))
    if long:
        out.append(("long 6000", long_trajectory(np.random.default_rng(6000), 6000)))
    return out


def check(reference: Any, long: bool) -> None:
    n = equal = 0
    unequal = []
    for name, traj in cases(long):
        configs = CONFIGS if traj.n_steps <= 1500 else {"paper": CONFIGS["paper"]}
        for label, cfg in configs.items():
            n += 1
            if fingerprint(build_osus(traj, cfg)) == fingerprint(reference(traj, cfg)):
                equal += 1
            else:
                unequal.append(f"{name} / {label}")
    print(f"pools equal: {equal} of {n}" + (f"; unequal: {unequal}" if unequal else ""))


def timing(reference: Any, sizes: list[int], reps: int) -> None:
    print(f"\nload before: {load()}\n")
    print(
        "| trajectories | builds | reference CPU ms per build | package CPU ms per build | ratio |"
    )
    print("|---|---|---|---|---|")
    episodes = [generate_episode(f"t{i}", np.random.default_rng(100 + i)) for i in range(40)]
    groups = {"synthetic episodes (169-288 steps)": [e.trajectory for e in episodes]}
    rng = np.random.default_rng(5)
    for n in sizes:
        groups[f"random {n:,} x 384"] = [make_trajectory(rng, n, 384) for _ in range(3)]
    for label, trajs in groups.items():
        spent = {"reference": 0.0, "package": 0.0}
        for _ in range(reps):
            for traj in trajs:  # alternating, so drift of the machine hits both alike
                for key, fn in (("reference", reference), ("package", build_osus)):
                    c0 = time.process_time()
                    fn(traj)
                    spent[key] += time.process_time() - c0
        builds = reps * len(trajs)
        ref, new = (1e3 * spent[k] / builds for k in ("reference", "package"))
        print(f"| {label} | {builds} | {ref:.2f} | {new:.2f} | {new / ref:.2f} |", flush=True)
    print(f"\nload after: {load()}")


def outside_graph(reference_osu: Any, n: int, reps: int) -> None:
    """CPU s of a long build outside the k-NN graph: the graph computed once, given to both."""
    import osustat.retrieval.osu as osu

    traj = long_trajectory(np.random.default_rng(n), n)
    cfg = OSUConfig(knn_exact_max_steps=1)
    graph = osu._approximate_knn(traj.embeddings, cfg.knn_k)
    for module in (osu, reference_osu):
        module._approximate_knn = lambda emb, k: graph
    print(f"\nload before: {load()}")
    spent: dict[str, list[float]] = {"reference": [], "package": []}
    for _ in range(reps):
        for key, fn in (("reference", reference_osu.build_osus), ("package", build_osus)):
            c0 = time.process_time()
            fn(traj, cfg)
            spent[key].append(time.process_time() - c0)
    print(
        f"{n:,} steps, the NN-descent graph given: CPU s outside it, reference "
        f"{' / '.join(f'{x:.2f}' for x in spent['reference'])}, package "
        f"{' / '.join(f'{x:.2f}' for x in spent['package'])}"
    )
    print(f"load after: {load()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", default="98ba1c3", help="git revision of the reference")
    parser.add_argument("--long", action="store_true", help="also a 6,000-step trajectory")
    parser.add_argument("--sizes", type=int, nargs="*", default=[1000, 4000])
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--no-time", action="store_true", help="only compare the pools")
    parser.add_argument(
        "--outside-graph",
        type=int,
        metavar="STEPS",
        help="only time a STEPS-step build outside its k-NN graph (the graph given to both)",
    )
    args = parser.parse_args()
    reference_osu = reference_module(args.against)
    if args.outside_graph:
        outside_graph(reference_osu, args.outside_graph, args.reps)
        return
    check(reference_osu.build_osus, args.long)
    if not args.no_time:
        timing(reference_osu.build_osus, args.sizes, args.reps)


if __name__ == "__main__":
    main()
