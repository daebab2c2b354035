"""Wall time of the default synthetic run (``make demo``) and of the sensitivity grid.

Both run as fresh processes through the CLI with 2 jobs, so imports and worker start-up count:

1. ``osustat reproduce synthetic --out DIR --jobs 2`` (= ``make demo``; goal <= 60 s);
2. ``osustat reproduce synthetic --out DIR --jobs 2 --sensitivity`` (the shipped grid, 24 points
   x 3 seeds x 120 episodes, then the default run; the grid's time is the difference; goal
   <= 20 min).

    nice .venv/bin/python benchmarks/synthetic_sensitivity_speed.py [--out DIR] [--jobs 2]

With ``--out`` the outputs are kept (``DIR/demo`` and ``DIR/sensitivity-run``).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def timed(args: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "osustat", *args], check=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=None)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--skip-grid", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(args.out) if args.out else Path(tmp)
        common = ["reproduce", "synthetic", "--jobs", str(args.jobs), "--no-progress"]
        demo = timed([*common, "--out", str(base / "demo")])
        print(f"| default run (make demo) | {demo:.1f} s |", flush=True)
        if not args.skip_grid:
            total = timed([*common, "--out", str(base / "sensitivity-run"), "--sensitivity"])
            print(f"| --sensitivity (grid + default run) | {total:.1f} s |")
            print(f"| grid alone (difference) | {total - demo:.1f} s |")


if __name__ == "__main__":
    main()
