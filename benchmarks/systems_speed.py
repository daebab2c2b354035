"""Wall and CPU time of importing mem0's and Zep's LoCoMo outputs and of the full analysis.

Usage: ``nice -n 10 .venv/bin/python benchmarks/systems_speed.py [--data-dir DIR] [--repeat N]``
(default ``$OSUSTAT_DATA_DIR``). Each step is one ``osustat`` process, as a user runs it:

1. ``osustat import zep=... mem0=... --out records.parquet`` (goal: <= 5 s);
2. the full analysis (goal: <= 60 s): ``osustat analyze --unit episode`` on judge overall, per
   category and per cell (conversation unit), ``osustat analyze`` on ``judge.cells`` (query
   level, per cell, interaction) and ``osustat audit analyses/locomo/systems_claims.toml``.

Prints wall seconds, the children's CPU seconds (user + system) and the load average before
each run; results go into ``benchmarks/results-systems_speed.md`` by hand with the load.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STRATA = (
    "judge,judge.cat1,judge.cat2,judge.cat3,judge.cat4,judge.t+e+,judge.t+e-,judge.t-e+,judge.t-e-"
)


def _run(args: list[str]) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "osustat", *args], check=True, capture_output=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data-dir", default=os.environ.get("OSUSTAT_DATA_DIR"))
    parser.add_argument("--repeat", type=int, default=1)
    a = parser.parse_args()
    if not a.data_dir:
        raise SystemExit("give --data-dir or set OSUSTAT_DATA_DIR (the shared data folder).")
    data = Path(a.data_dir)
    with tempfile.TemporaryDirectory() as tmp:
        rec = str(Path(tmp) / "records.parquet")

        def pair(out: str) -> list[str]:
            folder = str(Path(tmp) / out)
            return [
                "analyze",
                rec,
                "--treatment",
                "zep",
                "--baseline",
                "mem0",
                "--out",
                folder,
                "--force",
            ]

        steps = {
            "import": [
                "import",
                f"zep={data / 'locomo-systems/zep/zep_locomo_grades.json'}",
                f"mem0={data / 'locomo-systems/mem0/results.json'}",
                "--data",
                str(data / "locomo/locomo10.json"),
                "--out",
                rec,
                "--force",
            ],
            "analyze conversation unit": [*pair("conv"), "--unit", "episode", "--metric", STRATA],
            "analyze query level, cells": [*pair("query"), "--metric", "judge.cells"],
            "audit": [
                "audit",
                str(ROOT / "analyses/locomo/systems_claims.toml"),
                "--records",
                rec,
                "--out",
                str(Path(tmp) / "audit"),
                "--force",
            ],
        }
        for _ in range(a.repeat):
            total_wall = total_cpu = 0.0
            for name, args in steps.items():
                load = os.getloadavg()[0]
                wall, cpu = _run(args)
                if name != "import":
                    total_wall += wall
                    total_cpu += cpu
                print(f"{name}: {wall:.2f} s wall, {cpu:.2f} s CPU (load {load:.2f})")
            print(f"full analysis: {total_wall:.2f} s wall, {total_cpu:.2f} s CPU")


if __name__ == "__main__":
    main()
