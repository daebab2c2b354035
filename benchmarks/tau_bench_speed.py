"""Cold and warm wall time of ``osustat reproduce tau-bench`` on the shared data (on demand).

Usage: ``nice .venv/bin/python benchmarks/tau_bench_speed.py --cache DIR [--jobs N]
[--identity]``. The first run with an empty ``DIR`` is the cold run (every step text encoded by
all-MiniLM-L6-v2); the second run reuses the cache (warm). Goals (issue 20, the seven shared
files, default choices): cold <= 6 min, warm <= 60 s. ``--identity`` also runs ``--jobs 1``,
``--jobs 2`` and a local Dask cluster (warm) and compares their outputs byte for byte.
"""

from __future__ import annotations

import argparse
import glob
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DATA = [
    "/work/shared/data/tau-bench/gpt-4o-airline.json",
    *sorted(glob.glob("/work/shared/data/tau2-bench/airline-*.json")),
]


OUTPUTS = ("records.csv", "records.parquet", "report.md", "structure.json")


def _run(cache: str, jobs: int, out: str, scheduler: str | None = None) -> float:
    cmd = [
        sys.executable,
        "-m",
        "osustat",
        "reproduce",
        "tau-bench",
        "--data",
        *DATA,
        "--out",
        out,
        "--cache",
        cache,
        "--jobs",
        str(jobs),
        "--no-progress",
        *(["--scheduler", scheduler] if scheduler else []),
    ]
    start = time.perf_counter()
    subprocess.run(cmd, check=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cache", required=True, help="embedding cache (empty for a cold run)")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--warm-only", action="store_true")
    parser.add_argument("--identity", action="store_true", help="jobs 1 / 2 / Dask identical?")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        if not args.warm_only:
            cold = _run(args.cache, args.jobs, str(Path(tmp) / "cold"))
            print(f"cold run: {cold:.1f} s (cache {args.cache})")
        warm = _run(args.cache, args.jobs, str(Path(tmp) / "warm"))
        print(f"warm run: {warm:.1f} s")
        if not args.warm_only:
            same = (Path(tmp) / "cold" / "report.md").read_bytes() == (
                Path(tmp) / "warm" / "report.md"
            ).read_bytes()
            print(f"cold and warm report.md byte-identical: {same}")
        if args.identity:
            _identity(args.cache, Path(tmp), Path(tmp) / "warm", args.jobs)


def _identity(cache: str, tmp: Path, ref: Path, jobs: int) -> None:
    from distributed import LocalCluster

    runs = {f"jobs {j}": tmp / f"jobs{j}" for j in (1, 2) if j != jobs}
    for j in (1, 2):
        if j != jobs:
            print(f"--jobs {j}: {_run(cache, j, str(tmp / f'jobs{j}')):.1f} s")
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True) as cluster:
        t = _run(cache, 1, str(tmp / "dask"), scheduler=cluster.scheduler_address)
        print(f"local Dask cluster (2 workers): {t:.1f} s")
    runs["dask"] = tmp / "dask"
    for label, d in runs.items():
        same = {f: (d / f).read_bytes() == (ref / f).read_bytes() for f in OUTPUTS}
        print(f"{label} vs --jobs {jobs}: " + ", ".join(f"{f} {v}" for f, v in same.items()))


if __name__ == "__main__":
    main()
