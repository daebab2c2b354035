"""Cold and warm wall time of the LoCoMo pipeline on the shared data (on demand).

Usage: ``nice .venv/bin/python benchmarks/locomo_speed.py --cache DIR [--jobs 2]
[--sensitivity] [--warm-only]``. The first run with an empty ``DIR`` is the cold run (every
turn and question encoded by all-MiniLM-L6-v2); the second reuses the cache (warm). Goals
(issue 22): cold <= 8 min, warm <= 90 s with ``--jobs 2`` on a 2-core machine; reruns
byte-identical (every output file compared). Other lanes share the machine: the load average
is printed beside each time. Results: ``benchmarks/results-locomo_speed.md``.

Runs ``osustat reproduce locomo`` (the CLI, through the one driver) in a fresh interpreter, so
model loading and imports count.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DATA = "/work/shared/data/locomo/locomo10.json"


def _run(cache: str, jobs: int, out: str, sensitivity: bool) -> float:
    cmd = [
        sys.executable, "-m", "osustat", "reproduce", "locomo", "--data", DATA, "--out", out,
        "--cache", cache, "--jobs", str(jobs), "--no-progress",
    ]  # fmt: skip
    if sensitivity:
        cmd.append("--sensitivity")
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    start = time.perf_counter()
    subprocess.run(cmd, check=True, env=env)
    return time.perf_counter() - start


def _same(a: Path, b: Path) -> list[str]:
    """Names of the files that differ between two output folders (empty: identical)."""
    names = sorted({p.name for p in a.iterdir()} | {p.name for p in b.iterdir()})
    return [
        n
        for n in names
        if not (a / n).is_file()
        or not (b / n).is_file()
        or (a / n).read_bytes() != (b / n).read_bytes()
    ]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cache", required=True, help="embedding cache (empty for a cold run)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--sensitivity", action="store_true")
    parser.add_argument("--warm-only", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        first = Path(tmp) / "first"
        if not args.warm_only:
            cold = _run(args.cache, args.jobs, str(first), args.sensitivity)
            print(f"cold run: {cold:.1f} s (load average {os.getloadavg()[0]:.1f})")
        else:
            _run(args.cache, args.jobs, str(first), args.sensitivity)
        warm = _run(args.cache, args.jobs, str(Path(tmp) / "warm"), args.sensitivity)
        print(f"warm run: {warm:.1f} s (load average {os.getloadavg()[0]:.1f})")
        diff = _same(first, Path(tmp) / "warm")
        print(f"rerun byte-identical: {not diff}" + (f" (differ: {diff})" if diff else ""))


if __name__ == "__main__":
    main()
