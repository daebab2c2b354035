"""A million records through `osustat analyze`, stage by stage (issue 37, part 2).

Generates 10^6 long records -- 50 methods x 5,000 queries (500 episodes x 10) x 2 metrics
(``hit@2``, ``recall``) x 2 budgets (256, 512), each query in one of the four evidence cells
-- as Parquet and CSV in a temporary folder, then for each format:

- times the stages in this process (``read_records``, ``validate_records``, then
  ``osustat.analyze`` of one pair, all metrics and budgets, on the validated table), and
- times the whole command in a fresh process (imports count), ``osustat analyze FILE
  --treatment m01 --baseline m00 --out DIR``, with the child's peak RSS.

    .venv/bin/python benchmarks/million_records.py [--methods 50] [--queries 5000] \
        [--compare-ref c7635b4]

With ``--compare-ref REF`` the fresh-process command also runs on git REF's code (same
interpreter and dependencies, ``analyze_speed.checkout``), interleaved, and the two reports'
``results.json`` are compared.

The values are random (seed 0; no real system's output): hit@2 is 0/1, recall a multiple of
1/4, each method with its own per-cell rates. Goal (issue 37): <= 8 s wall from Parquet,
<= 15 s from CSV, <= 2 GB, on a quiet 2-core machine.
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

import numpy as np
import pandas as pd

CELLS = np.array(["T+E+", "T+E-", "T-E+", "T-E-"])


def records(methods: int, queries: int, seed: int = 0) -> pd.DataFrame:
    """The long records table: methods x queries x {hit@2, recall} x {256, 512}."""
    rng = np.random.default_rng(seed)
    per_episode = 10
    q = np.arange(queries)
    episode = np.char.add("e", (q // per_episode).astype(str))
    query = np.char.add("q", (q % per_episode).astype(str))
    cell_code = rng.integers(0, 4, size=queries)
    names = [f"m{m:02d}" for m in range(methods)]
    parts = []
    for budget, boost in ((256, 0.0), (512, 0.1)):
        for m, name in enumerate(names):
            rate = np.clip(0.3 + 0.1 * rng.random(4) + boost + 0.002 * m, 0, 1)[cell_code]
            hit = (rng.random(queries) < rate).astype(float)
            recall = rng.binomial(4, rate) / 4
            for metric, value in (("hit@2", hit), ("recall", recall)):
                parts.append(
                    pd.DataFrame(
                        {
                            "episode_id": episode,
                            "query_id": query,
                            "method": name,
                            "budget": budget,
                            "metric": metric,
                            "value": value,
                            "cell": CELLS[cell_code],
                        }
                    )
                )
    return pd.concat(parts, ignore_index=True)


def stages(path: Path, treatment: str, baseline: str) -> dict[str, tuple[float, float]]:
    """(wall s, CPU s of this process) of each stage, in this process."""
    from osustat import analyze
    from osustat.io.reading import read_records
    from osustat.schema import validate_records

    out: dict[str, tuple[float, float]] = {}
    clock = (time.perf_counter(), time.process_time())

    def lap(stage: str) -> None:
        nonlocal clock
        now = (time.perf_counter(), time.process_time())
        out[stage] = (now[0] - clock[0], now[1] - clock[1])
        clock = now

    df = read_records(path)
    lap("read")
    valid = validate_records(df)
    lap("validate")
    analyze(valid, treatment=treatment, baseline=baseline)
    lap("pair + analyze (4 comparisons)")
    return out


def fresh(
    path: Path, out: Path, treatment: str, baseline: str, env: dict[str, str] | None = None
) -> tuple[float, float, float]:
    """(wall s, CPU s, peak RSS GB) of the whole command in a fresh process."""
    exe = str(Path(sys.executable).with_name("osustat"))
    cmd = [exe, "analyze", str(path), "--treatment", treatment, "--baseline", baseline]
    cmd += ["--out", str(out), "--force"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tempfile.gettempdir())
    wall = time.perf_counter() - start
    if done.returncode:
        raise SystemExit(f"{' '.join(cmd)} failed: {done.stderr[-2000:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return wall, cpu, after.ru_maxrss / 2**20  # ru_maxrss in KiB on Linux


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--methods", type=int, default=50)
    parser.add_argument("--queries", type=int, default=5000)
    parser.add_argument("--formats", default="parquet,csv")
    parser.add_argument("--compare-ref", default=None, metavar="REF")
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()}")
    df = records(args.methods, args.queries)
    print(f"{len(df):,} records, {args.methods} methods, {args.queries:,} queries")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        print("| format | stage | wall s | CPU s |")
        print("|---|---|---|---|")
        codes: dict[str, dict[str, str] | None] = {"this": None}
        if args.compare_ref:
            from analyze_speed import checkout

            ref_path = str(checkout(args.compare_ref, folder))
            codes[args.compare_ref] = {**os.environ, "PYTHONPATH": ref_path}
        rows = []
        for fmt in args.formats.split(","):
            path = folder / f"records.{fmt}"
            if fmt == "csv":
                df.to_csv(path, index=False)
            else:
                df.to_parquet(path, index=False)
            for stage, (wall, cpu) in stages(path, "m01", "m00").items():
                print(f"| {fmt} | {stage} (in one process) | {wall:.2f} | {cpu:.2f} |")
            for code, env in codes.items():
                out = folder / f"out-{fmt}-{code}"
                rows.append((fmt, code, *fresh(path, out, "m01", "m00", env)))
            if args.compare_ref:
                same = [(folder / f"out-{fmt}-{c}" / "results.json").read_bytes() for c in codes]
                names = ", ".join(codes)
                print(f"| {fmt} | results.json identical ({names}) | {same[0] == same[-1]} | |")
        print()
        print("| format | code | `osustat analyze` wall s (fresh process) | CPU s | peak RSS GB |")
        print("|---|---|---|---|---|")
        for fmt, code, wall, cpu, rss in rows:
            print(f"| {fmt} | {code} | {wall:.2f} | {cpu:.2f} | {rss:.2f} |")
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
