"""How OSU construction and retrieval grow with steps per episode, and sweeps with episodes.

Two studies (issue 12), each printed as a markdown table with the fitted log-log exponent:

1. steps per episode (150 → 2,400; 384-d, B = 256): median time of ``build_osus`` (OSU-Mem's
   build) and of one ``OSUMem.retrieve``; Flat Vector retrieve beside it;
2. episodes (50 → 1,600 by default up to ``--max-episodes``): wall time and peak RSS of the
   synthetic sweep through the runner (``run_synthetic``, ``--jobs``).

3. long trajectories (``--long``: 1,000 → 50,000 steps, 384-d): CPU time of OSU-Mem's build
   (``build_osus``, exact k-NN graph up to ``knn_exact_max_steps = 4,096`` steps, NN-descent
   (pynndescent) above, plus the retrieval index) and retrieve (B = 256), the peak RSS of the
   build in a fresh process per size, and the 5-NN recall of the approximate graph against
   the exact one (computed blockwise; up to ``--recall-max`` steps). pynndescent's numba
   kernels compile on the first approximate build of a process (not cached on disk): that
   one-time cost is timed separately ("JIT"), on a 500-step warm-up before the timed build,
   and the exponents are printed with it and without it. Trajectories: the annotations
   of ``make_trajectory`` with topic-structured embeddings (one random unit centre per 10
   steps on average, step = centre + N(0, 0.6² / d) per coordinate, normalized: within-topic
   cosines ≈ 0.7, across ≈ 0); with ``--real-embeddings FILE ...`` (``.npy`` arrays or
   embedding-cache ``.npz`` shards with a ``vectors`` array) also the recall on real
   all-MiniLM-L6-v2 step embeddings. ``--exact-max N [N ...]`` sets ``knn_exact_max_steps``
   (1: NN-descent at every size); with two values each size runs both back to back and the
   builds are compared size by size.

Run (numbers go to docs/performance.md):

    .venv/bin/python benchmarks/growth.py [--jobs 2] [--max-episodes 800] [--dask]

``--dask`` also runs the largest sweep on a 2-worker ``LocalCluster`` and prints its time
against ``--jobs 2`` (the overhead ratio). ``--dask-compare N`` times only the N-episode sweep:
``--jobs 2``, then Dask with its default settings, then Dask with ``runner.DASK_WORKER_CONFIG``,
each in a fresh process, per round.
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

from osustat.retrieval import FlatVector, OSUConfig, OSUMem, Trajectory, build_osus

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
import hashlib, resource, sys, time
import osustat.analyses.runner as runner
from osustat.analyses.protocol import Backend
from osustat.analyses.synthetic.run import run_synthetic
n, jobs, backend = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
if backend == "dask-per-episode":  # the runner before batching: one Dask task per episode
    runner.DASK_GUIDED_SPLIT = 10**9
if backend == "dask-equal":  # the session-2 runner: 4 equal batches per worker thread
    def equal(todo, threads):
        size = max(1, -(-len(todo) // (4 * max(1, threads))))
        return [todo[j : j + size] for j in range(0, len(todo), size)]
    runner.dask_batches = equal
idle = float("nan")
if backend == "dask-config":  # osustat's worker settings (runner.DASK_WORKER_CONFIG)
    import dask
    dask.config.set(runner.DASK_WORKER_CONFIG)
if backend.startswith("dask"):
    from distributed import Client, LocalCluster, get_task_stream
    with LocalCluster(n_workers=2, threads_per_worker=1, host="127.0.0.1",
                      dashboard_address=None) as cluster, Client(cluster) as client:
        with get_task_stream(client) as stream:
            t0 = time.perf_counter()  # cluster start-up excluded; the sweep itself is timed
            w0 = time.time()
            out = run_synthetic(n, 0, backend=Backend(scheduler=client, progress=False))
            secs = time.perf_counter() - t0
            w1 = time.time()
        last = {}  # when each worker finished its last batch
        for task in stream.data:
            for s in task["startstops"]:
                if s["action"] == "compute":
                    last[task["worker"]] = max(last.get(task["worker"], w0), s["stop"])
        idle = max(w1 - t for t in last.values()) if len(last) > 1 else float("nan")
else:
    t0 = time.perf_counter()
    out = run_synthetic(n, 0, backend=Backend(jobs=jobs, progress=False))
    secs = time.perf_counter() - t0
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
digest = hashlib.sha256(out.records.to_csv(index=False).encode()).hexdigest()[:16]
print(secs, rss, len(out.records), digest, idle)
"""


_LONG = """
import resource, sys, time
import numpy as np
sys.path.insert(0, sys.argv[3])
from growth import long_trajectory
from osustat.retrieval import OSUConfig, OSUMem
from osustat.retrieval.osu import _approximate_knn
n, reps, exact_max = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[4])
config = OSUConfig(knn_exact_max_steps=exact_max)
jit = 0.0
if n > exact_max:  # the approximate path: compile its kernels first
    c0 = time.process_time()
    _approximate_knn(long_trajectory(np.random.default_rng(1), 500).embeddings, 5)
    jit = time.process_time() - c0
rng = np.random.default_rng(n)
traj = long_trajectory(rng, n)
try:  # Linux: this process's own peak (ru_maxrss also counts the parent's RSS at the fork)
    peak_of = lambda: next(int(l.split()[1]) / 1024 for l in open("/proc/self/status")
                           if l.startswith("VmHWM:"))
    before = peak_of()
    # reset the peak resident size, so the peak below is the build's, not the generator's
    open("/proc/self/clear_refs", "w").write("5")
except OSError:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    peak_of = lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
build, wall, retr = [], [], []
for _ in range(reps):  # OSU-Mem's build: build_osus and the retrieval index on top
    w0, c0 = time.perf_counter(), time.process_time()
    r = OSUMem(osu_config=config).build(traj)
    build.append(time.process_time() - c0)
    wall.append(time.perf_counter() - w0)
pool = r.pool_
for i in range(25):
    q = traj.embeddings[rng.choice(n, 3)].mean(axis=0)
    c0 = time.process_time()
    r.retrieve(q, 256)
    if i >= 5:  # the first calls warm caches
        retr.append(time.process_time() - c0)
print(min(build), min(wall), np.median(retr), before, peak_of(), pool.n_osus, jit)
"""


def long_trajectory(rng: np.random.Generator, n: int, dim: int = 384) -> Trajectory:
    """``make_trajectory``'s annotations with topic-structured embeddings (module docstring)."""
    base = make_trajectory(rng, n, 8)
    centres = rng.normal(size=(max(1, n // 10), dim))
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    topic = np.sort(rng.integers(len(centres), size=n))  # topics in runs of ~10 steps
    emb = centres[topic] + rng.normal(scale=0.6 / np.sqrt(dim), size=(n, dim))
    return Trajectory.from_steps(
        emb,
        base.costs,
        tools=[base.tool_vocab[k] if k >= 0 else None for k in base.tool_ids],
        entities=[{base.entity_vocab[e] for e in base.entities_of(i)} for i in range(n)],
        subgoals=base.subgoal_ids.tolist(),
    )


def blockwise_knn(emb: np.ndarray, k: int, block: int = 2048) -> np.ndarray:
    """Exact k nearest other rows (inner product), a block of rows at a time."""
    out = np.empty((len(emb), k), dtype=np.int64)
    for a in range(0, len(emb), block):
        s = emb[a : a + block] @ emb.T
        s[np.arange(len(s)), np.arange(a, a + len(s))] = -np.inf
        out[a : a + block] = np.argpartition(-s, k - 1, axis=1)[:, :k]
    return out


def graph_recall(graph: np.ndarray, exact: np.ndarray, k: int = 5) -> float:
    """Share of each step's k exact neighbours among the first k of its list that are not it."""
    hits = [
        len(set([j for j in row if j != i][:k]) & set(e)) / k
        for i, (row, e) in enumerate(zip(graph.tolist(), exact.tolist(), strict=True))
    ]
    return float(np.mean(hits))


def recall(emb: np.ndarray, k: int = 5) -> float:
    """k-NN recall of the similarity view's approximate graph against the exact one."""
    from osustat.retrieval.osu import _approximate_knn

    return graph_recall(_approximate_knn(emb, k), blockwise_knn(emb, k), k)


def real_vectors(paths: list[str]) -> np.ndarray:
    """Unit rows of the given ``.npy`` arrays and ``.npz`` cache shards (``vectors``)."""
    parts = []
    for path in paths:
        arr = np.load(path)
        parts.append(arr["vectors"] if path.endswith(".npz") else arr)
    emb = np.concatenate(parts).astype(np.float64)
    return emb / np.linalg.norm(emb, axis=1, keepdims=True)


def _long_row(n: int, reps: int, exact_max: int) -> tuple[float, ...]:
    """Build CPU s, wall s, retrieve CPU s, RSS before, peak RSS, OSUs, JIT CPU s at `n` steps."""
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            _LONG,
            str(n),
            str(reps),
            os.path.dirname(os.path.abspath(__file__)),
            str(exact_max),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    return tuple(float(x) for x in proc.stdout.split())


def long_study(
    sizes: list[int], reps: int, recall_max: int, real: list[str] | None, exact_maxes: list[int]
) -> None:
    """Build and retrieve at each size in a fresh process (CPU seconds: the machine is shared).

    `exact_maxes`: the ``knn_exact_max_steps`` of the builds (the default's; 1 times the
    approximate path alone at every size). With several, each size runs them back to back
    (the same minutes of the machine) and the builds are compared size by size.
    """
    print(
        f"\n### Long trajectories (384-d, B = 256; exact k-NN up to "
        f"{' / '.join(f'{e:,}' for e in exact_maxes)} steps, NN-descent above)\n"
    )
    print(f"load before: {load()}\n")
    print(
        "| steps | k-NN graph | OSU-Mem build CPU s | JIT CPU s (once per process) "
        "| build wall s | retrieve CPU ms (B = 256) "
        "| peak RSS MB of the build (fresh process) | peak RSS before MB | OSUs "
        "| 5-NN recall vs exact | load |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    rows: dict[int, list[tuple[int, float, float, float]]] = {e: [] for e in exact_maxes}
    for n in sizes:
        rec = "—"
        if min(exact_maxes) < n <= recall_max:
            rec = f"{recall(long_trajectory(np.random.default_rng(n), n).embeddings):.4f}"
        for exact_max in exact_maxes:
            b, w, r, before, peak, n_osus, jit = _long_row(n, reps, exact_max)
            rows[exact_max].append((n, b, r, jit))
            kind = "exact" if n <= exact_max else "NN-descent"
            print(
                f"| {n:,} | {kind} | {b:.2f} | {jit:.1f} | {w:.2f} | {1e3 * r:.2f} | {peak:.0f} "
                f"| {before:.0f} | {n_osus:.0f} | {rec if n > exact_max else '—'} "
                f"| {os.getloadavg()[0]:.1f} |",
                flush=True,
            )
    for exact_max, got in rows.items():
        ns = [x[0] for x in got]
        print(
            f"\nexact up to {exact_max:,} steps: fitted exponents (CPU time ∝ steps^b) over "
            f"{ns[0]:,}-{ns[-1]:,} steps: build b = {slope(ns, [x[1] for x in got]):.2f} "
            f"(kernels compiled), {slope(ns, [x[1] + x[3] for x in got]):.2f} (first build of "
            f"a fresh process, JIT included); OSU-Mem retrieve b = "
            f"{slope(ns, [x[2] for x in got]):.2f}"
        )
        ann = [x for x in got if x[0] > exact_max]
        if 2 <= len(ann) < len(got):
            print(
                f"NN-descent sizes only ({ann[0][0]:,}-{ann[-1][0]:,}): build b = "
                f"{slope([x[0] for x in ann], [x[1] for x in ann]):.2f}"
            )
    if len(exact_maxes) == 2:
        first, second = (rows[e] for e in exact_maxes)
        ratios = [x[1] / y[1] for x, y in zip(first, second, strict=True)]
        print(
            f"\nbuild CPU, exact up to {exact_maxes[0]:,} / exact up to {exact_maxes[1]:,}, "
            "size by size: "
            + ", ".join(f"{n:,}: {q:.2f}" for n, q in zip(sizes, ratios, strict=True))
        )
    if real:
        emb = real_vectors(real)
        print(
            f"\n5-NN recall of the NN-descent graph on {len(emb):,} real all-MiniLM-L6-v2 step "
            f"embeddings ({len(real)} file(s)): {recall(emb):.4f}"
        )
    print(f"\nload after: {load()}")


def sweep(n: int, jobs: int, backend: str) -> tuple[float, float, int, str]:
    secs, rss, rows, digest, _ = sweep_idle(n, jobs, backend)
    return secs, rss, rows, digest


def sweep_idle(n: int, jobs: int, backend: str) -> tuple[float, float, int, str, float]:
    """One sweep in a fresh process; the last field is, on Dask, how long the first worker to
    run out of batches sat idle before the sweep ended (seconds; NaN for joblib)."""
    proc = subprocess.run(
        [sys.executable, "-c", _SWEEP, str(n), str(jobs), backend],
        capture_output=True,
        text=True,
        check=True,
    )
    secs, rss, rows, digest, idle = proc.stdout.split()
    return float(secs), float(rss), int(rows), digest, float(idle)


def load() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def dask_study(n: int, rounds: int, per_episode: bool, equal: bool) -> None:
    """``--jobs 2`` against Dask batched (guided batches) with Dask's default settings and with
    ``runner.DASK_WORKER_CONFIG`` (optionally also the session-2 equal batches and one task per
    episode), interleaved per round in fresh processes; wall seconds of the sweep, the idle
    tail of the first worker to finish, the load beside each round."""
    print(f"\n### Dask LocalCluster (2 workers x 1 thread) against --jobs 2, {n} episodes\n")
    print(f"load before: {load()}\n")
    others = [("dask-config", "Dask DASK_WORKER_CONFIG")]
    others += [("dask-equal", "Dask equal batches")] if equal else []
    others += [("dask-per-episode", "Dask per-episode")] if per_episode else []
    head = "".join(f" {label} s | idle s | ratio |" for _, label in others)
    print(f"| round | --jobs 2 s | Dask default s | idle s | ratio |{head} records | load after |")
    print("|---|---|---|---|---|" + "---|---|---|" * len(others) + "---|---|")
    for r in range(rounds):
        j, _, rows, d0 = sweep(n, 2, "joblib")
        b, _, _, d1, idle = sweep_idle(n, 1, "dask")
        cells, digests = "", {d0, d1}
        for backend, _ in others:
            e, _, _, d2, idle2 = sweep_idle(n, 1, backend)
            cells, digests = cells + f" {e:.1f} | {idle2:.1f} | {e / j:.2f} |", digests | {d2}
        same = "identical" if len(digests) == 1 else f"DIFFER {sorted(digests)}"
        print(
            f"| {r + 1} | {j:.1f} | {b:.1f} | {idle:.1f} | {b / j:.2f} |{cells} {rows:,} {same} | "
            f"{os.getloadavg()[0]:.1f} |",
            flush=True,
        )
    print(f"\nload after: {load()}")


def episodes_study(sizes: list[int], jobs: int, dask: bool) -> None:
    print(f"\n### Episodes (synthetic sweep, all methods, --jobs {jobs}, fresh process each)\n")
    print("| episodes | wall s | peak RSS MB (parent) | records |")
    print("|---|---|---|---|")
    secs = []
    for n in sizes:
        s, rss, rows, _ = sweep(n, jobs, "joblib")
        secs.append(s)
        print(f"| {n} | {s:.1f} | {rss:.0f} | {rows:,} |")
    print(f"\nFitted exponent (wall ∝ episodes^b): b = {slope(sizes, secs):.2f}.")
    if dask:
        n = sizes[-1]
        s_dask, _, rows_dask, _ = sweep(n, 1, "dask")
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
    parser.add_argument("--skip-steps", action="store_true")
    parser.add_argument(
        "--dask-compare",
        type=int,
        default=0,
        metavar="N",
        help="only time --jobs 2 vs Dask (guided batches) on N episodes",
    )
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument(
        "--per-episode", action="store_true", help="--dask-compare: also the unbatched runner"
    )
    parser.add_argument(
        "--equal-batches",
        action="store_true",
        help="--dask-compare: also the session-2 runner (4 equal batches per thread)",
    )
    parser.add_argument("--long", action="store_true", help="only the long-trajectory study")
    parser.add_argument("--long-max", type=int, default=50_000)
    parser.add_argument("--recall-max", type=int, default=20_000)
    parser.add_argument(
        "--exact-max",
        type=int,
        nargs="+",
        default=[OSUConfig().knn_exact_max_steps],
        help="--long: knn_exact_max_steps of the builds (1: the approximate graph at every "
        "size); several: each size runs each, back to back, compared size by size",
    )
    parser.add_argument(
        "--real-embeddings",
        nargs="+",
        default=None,
        metavar="FILE",
        help=".npy arrays or embedding-cache .npz shards of real step vectors (for the recall)",
    )
    args = parser.parse_args()
    if args.long:
        sizes = [n for n in (1000, 2000, 4000, 8000, 16000, 32000, 50000) if n <= args.long_max]
        long_study(
            sizes, max(1, min(args.reps, 3)), args.recall_max, args.real_embeddings, args.exact_max
        )
        return
    if args.dask_compare:
        dask_study(args.dask_compare, args.rounds, args.per_episode, args.equal_batches)
        return
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
