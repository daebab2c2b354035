"""Where a Dask worker's extra CPU goes: the same synthetic sweep under joblib and Dask settings.

Usage: ``nice .venv/bin/python benchmarks/dask_cpu.py [--episodes 100] [--rounds 2]
[--configs loky,dask,...]`` prints one markdown row per sweep: wall seconds, the CPU of the two
worker processes (and of their task threads on Dask), their system CPU and minor page faults,
and the CPU of this process (joblib's parent, or Dask's client, scheduler and nannies). The
configurations run alternately in this process, each on a fresh 2-worker cluster (``loky``:
joblib's reusable executor), after a 4-episode warm-up that imports osustat in every worker.

``--thread`` instead runs the same episodes in this process in its main thread and in a
``ThreadPoolExecutor`` thread (how Dask runs a task), with and without Dask's
``MALLOC_TRIM_THRESHOLD_=65536``, each in a fresh interpreter: process CPU and page faults.

Configurations: ``dask`` (Dask's defaults), ``notrim`` (no ``MALLOC_TRIM_THRESHOLD_``),
``noprof`` (no profiler), ``tick`` (event-loop tick 1 s), ``quiet`` (profiler off, tick 1 s,
memory monitor 1 s, system monitor 5 s; with ``notrim``), ``osustat``
(``runner.DASK_WORKER_CONFIG``). Results: ``docs/performance.md``, "Dask, session 5".
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import contextlib
import hashlib
import subprocess
import sys
import time
from typing import Any

from osustat.analyses.protocol import Backend
from osustat.analyses.runner import DASK_WORKER_CONFIG
from osustat.analyses.synthetic.run import run_synthetic

NOTRIM = {"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None}
CONFIGS: dict[str, dict[str, Any]] = {
    "dask": {},
    "notrim": NOTRIM,
    "noprof": {**NOTRIM, "distributed.worker.profile.enabled": False},
    "tick": {**NOTRIM, "distributed.admin.tick.interval": "1s"},
    "quiet": {
        **NOTRIM,
        "distributed.worker.profile.enabled": False,
        "distributed.admin.tick.interval": "1s",
        "distributed.worker.memory.monitor-interval": "1s",
        "distributed.admin.system-monitor.interval": "5s",
    },
    "osustat": DASK_WORKER_CONFIG,
}


def _cpu(pids: list[int]) -> dict[int, tuple[float, float, int]]:
    """(user + system CPU s, system CPU s, minor faults) of each process, from /proc."""
    tick = os.sysconf("SC_CLK_TCK")
    out = {}
    for pid in pids:
        with open(f"/proc/{pid}/stat") as fh:
            f = fh.read().rsplit(")", 1)[1].split()
        out[pid] = ((int(f[11]) + int(f[12])) / tick, int(f[12]) / tick, int(f[7]))
    return out


def _task_thread_cpu() -> float:
    """CPU seconds of this Dask worker's task threads (run on the worker)."""
    import threading

    import psutil

    task = {t.native_id for t in threading.enumerate() if "Dask-Default-Threads" in t.name}
    return sum(t.user_time + t.system_time for t in psutil.Process().threads() if t.id in task)


def one(name: str, n: int) -> None:
    import dask
    import psutil
    from distributed import Client, LocalCluster

    me, env, task = os.getpid(), dict(os.environ), float("nan")
    with contextlib.ExitStack() as stack:
        if name == "loky":
            backend = Backend(jobs=2, progress=False)
            run_synthetic(4, 1, backend=backend)
            workers = [
                c.pid
                for c in psutil.Process().children()
                if "resource_tracker" not in " ".join(c.cmdline())
            ]
        else:
            stack.enter_context(dask.config.set(CONFIGS[name]))
            cluster = stack.enter_context(
                LocalCluster(
                    n_workers=2, threads_per_worker=1, host="127.0.0.1", dashboard_address=None
                )
            )
            client = stack.enter_context(Client(cluster))
            backend = Backend(scheduler=client, progress=False)
            run_synthetic(4, 1, backend=backend)
            workers = list(client.run(os.getpid).values())
            th0 = sum(client.run(_task_thread_cpu).values())
        c0 = _cpu([me, *workers])
        t0 = time.perf_counter()
        out = run_synthetic(n, 0, backend=backend)
        wall = time.perf_counter() - t0
        c1 = _cpu([me, *workers])
        if name != "loky":
            task = sum(client.run(_task_thread_cpu).values()) - th0
    os.environ.clear()  # a nanny writes Dask's pre-spawn environment into this process's
    os.environ.update(env)
    d = {p: [a - b for a, b in zip(c1[p], c0[p], strict=True)] for p in c1}
    w = [sum(d[p][k] for p in workers) for k in range(3)]
    digest = hashlib.sha256(out.records.to_csv(index=False).encode()).hexdigest()[:12]
    print(
        f"| {name} | {wall:.1f} | {w[0]:.1f} | {task:.1f} | {w[1]:.2f} | {w[2]:,.0f} | "
        f"{d[me][0]:.2f} | {os.getloadavg()[0]:.1f} | {digest} |",
        flush=True,
    )


_THREAD = """
import resource, sys
from concurrent.futures import ThreadPoolExecutor
from osustat.analyses.runner import child_seeds
from osustat.analyses.synthetic.generator import GeneratorConfig
from osustat.analyses.synthetic.run import BUDGETS, _episode_task
mode, n = sys.argv[1], int(sys.argv[2])
seeds, cfg = child_seeds(0, n), GeneratorConfig()
def batch():
    for i in range(n):
        _episode_task(i, seeds[i], 0, tuple(BUDGETS), cfg, None, True, ())
_episode_task(0, child_seeds(1, 1)[0], 0, tuple(BUDGETS), cfg, None, True, ())  # imports
r0 = resource.getrusage(resource.RUSAGE_SELF)
if mode == "main":
    batch()
else:
    with ThreadPoolExecutor(1) as ex:
        ex.submit(batch).result()
r1 = resource.getrusage(resource.RUSAGE_SELF)
print(r1.ru_utime - r0.ru_utime, r1.ru_stime - r0.ru_stime, r1.ru_minflt - r0.ru_minflt)
"""


def thread_study(n: int, rounds: int) -> None:
    print(f"\n### {n} episodes in one process: main thread vs a pool thread, Dask's trim\n")
    print("| round | where | MALLOC_TRIM_THRESHOLD_ | user CPU s | system CPU s | minor faults |")
    print("|---|---|---|---|---|---|")
    for r in range(rounds):
        for mode in ("main", "thread"):
            for trim in (None, "65536"):
                env = {k: v for k, v in os.environ.items() if k != "MALLOC_TRIM_THRESHOLD_"}
                env.update({"MALLOC_TRIM_THRESHOLD_": trim} if trim else {})
                proc = subprocess.run(
                    [sys.executable, "-c", _THREAD, mode, str(n)],
                    capture_output=True, text=True, check=True, env=env,
                )  # fmt: skip
                user, system, faults = proc.stdout.split()
                print(
                    f"| {r + 1} | {mode} | {trim or 'unset'} | {float(user):.2f} | "
                    f"{float(system):.2f} | {int(faults):,} |",
                    flush=True,
                )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--configs", default="loky,dask,notrim,noprof,tick,quiet,osustat")
    parser.add_argument("--thread", action="store_true", help="only the thread study")
    args = parser.parse_args()
    load = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    print(f"load before: {load}")
    if args.thread:
        thread_study(args.episodes, args.rounds)
    else:
        names = args.configs.split(",")
        unknown = [c for c in names if c != "loky" and c not in CONFIGS]
        if unknown:
            parser.error(f"unknown --configs {unknown}; choose from loky, {', '.join(CONFIGS)}")
        print(f"\n### {args.episodes} episodes, 2 workers, configurations alternating\n")
        print(
            "| config | wall s | workers CPU s | task threads CPU s | workers system s | "
            "workers minor faults | parent CPU s | load | records |"
        )
        print("|---|---|---|---|---|---|---|---|---|")
        for _ in range(args.rounds):
            for name in names:
                one(name, args.episodes)
    load = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    print(f"\nload after: {load}")


if __name__ == "__main__":
    main()
