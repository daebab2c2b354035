"""Cold and warm wall time of ``osustat reproduce tau-bench`` on the shared data (on demand).

Usage: ``nice .venv/bin/python benchmarks/tau_bench_speed.py --cache DIR [--jobs N]``.
The first run with an empty ``DIR`` is the cold run (every step text encoded by
all-MiniLM-L6-v2); the second run reuses the cache (warm). Goals: cold <= 6 min,
warm <= 45 s for the five shared files.
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


def _run(cache: str, jobs: int, out: str) -> float:
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
    ]
    start = time.perf_counter()
    subprocess.run(cmd, check=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cache", required=True, help="embedding cache (empty for a cold run)")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--warm-only", action="store_true")
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


if __name__ == "__main__":
    main()
