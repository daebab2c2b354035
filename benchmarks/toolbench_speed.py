"""Wall time of the full ToolBench sweep (3 seeds x 5 beta x 4 budgets x 3 evidence sizes).

Runs ``osustat reproduce toolbench`` in a fresh process (loading, embedding through the shared
cache, episode construction, the sweep through ``run_tasks``, the statistics, the audit and the
report), so imports and worker start-up count. Run with ``nice``:

    nice .venv/bin/python benchmarks/toolbench_speed.py --data ../shared/data/toolbench \\
        [--jobs 2] [--episodes 200] [--out DIR]

Goal (issue 10): the full sweep in at most 10 minutes with cached embeddings.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--episodes", type=int, default=200)
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--out", default=None, help="keep the outputs here (default: temp dir)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        out = args.out or tmp
        start = time.perf_counter()
        subprocess.run(
            [
                sys.executable, "-m", "osustat", "reproduce", "toolbench",
                "--data", args.data, "--out", out, "--episodes", str(args.episodes),
                "--jobs", str(args.jobs), "--resamples", str(args.resamples), "--no-progress",
            ],
            check=True,
        )  # fmt: skip
        wall = time.perf_counter() - start
    print("| episodes/seed | jobs | resamples | wall s |\n|---|---|---|---|")
    print(f"| {args.episodes} | {args.jobs} | {args.resamples} | {wall:.1f} |")


if __name__ == "__main__":
    main()
