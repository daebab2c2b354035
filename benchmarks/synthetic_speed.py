"""Wall time and peak memory of the full synthetic run, and how they grow with the episodes.

Each size runs in a fresh process (`osustat reproduce synthetic`, all 14 Table 9 methods plus
the M_max sweep, 4 budgets, the tests and the report), so imports and worker start-up count.

    .venv/bin/python benchmarks/synthetic_speed.py [--sizes 50 100 200 400] [--jobs 2]

Goal (issue): the default run (200 episodes) in at most 90 s on this 2-core machine.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[50, 100, 200, 400])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(f"jobs = {args.jobs}, seed = {args.seed}")
    print("| episodes | wall s | s per episode | peak RSS MB (largest process) |")
    print("|---|---|---|---|")
    for n in args.sizes:
        with tempfile.TemporaryDirectory() as out:
            before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
            start = time.perf_counter()
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "osustat",
                    "reproduce",
                    "synthetic",
                    "--out",
                    out,
                    "--episodes",
                    str(n),
                    "--seed",
                    str(args.seed),
                    "--jobs",
                    str(args.jobs),
                    "--no-progress",
                ],
                check=True,
                stdout=subprocess.DEVNULL,
            )
            wall = time.perf_counter() - start
            peak = max(before, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) / 1024
        print(f"| {n} | {wall:.1f} | {wall / n:.3f} | {peak:.0f} |", flush=True)


if __name__ == "__main__":
    main()
