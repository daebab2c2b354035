"""The interaction test at the resampling cap: peak memory, and its p-values against a ref.

Issue 35 item 7 put one cap, 2^25 resamples, on every resampling path; an outside re-check
(stop 57) measured `analyze` at the cap on one metric x budget of the example at 7.3 GB, the
interaction test holding its null's 2^25 x 4 cell sums and their temporaries at once. Since
16009fd the null's statistics are computed block by block of the sign stream. This script
runs, each in a fresh process (peak RSS from `resource.getrusage`):

- `interaction_test` on the example's hit@2 differences at B = 256 (328 queries, 4 cells) at
  n_resamples = 2^25, and `osustat.analyze` on that metric and budget at the cap;
- the p-values and statistics of both sign-flip methods on every (metric, budget) of the
  example (3 seeds; 999, 9,999 and 200,000 resamples) and on 20 random designs, compared
  between this code and `--compare-ref` (each value exactly).

    .venv/bin/python benchmarks/interaction_memory.py --compare-ref 16009fd~1
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from analyze_speed import checkout

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "records.csv"

_COMMON = f"""
import json, resource, sys, time
import numpy as np, pandas as pd
import osustat
from osustat.interaction import interaction_test
rec = pd.read_csv({str(EXAMPLE)!r})

def pair(metric, budget):
    r = rec[(rec.metric == metric) & (rec.budget == budget)]
    a = r[r.method == "osu-mem"].sort_values("query_id")
    b = r[r.method == "flat-vector"].sort_values("query_id")
    return a.value.to_numpy() - b.value.to_numpy(), a.cell.to_numpy()
"""

_MEMORY = (
    _COMMON
    + """
d, cells = pair("hit@2", 256)
start = time.time()
if sys.argv[1] == "interaction":
    interaction_test(d, cells, n_resamples=2**25, rng=0)
else:
    osustat.analyze(rec, treatment="osu-mem", baseline="flat-vector", metrics=["hit@2"],
                    budgets=[256], n_resamples=2**25)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
print(json.dumps([time.time() - start, peak]))
"""
)

_PVALUES = (
    _COMMON
    + """
out = []
for metric in ("hit@2", "recall"):
    for budget in (128, 256):
        d, cells = pair(metric, budget)
        for method in ("centered-signflip", "studentized-signflip"):
            for seed in range(3):
                for n in (999, 9999, 200_000):
                    r = interaction_test(d, cells, n_resamples=n, rng=seed, method=method)
                    out.append([metric, budget, method, seed, n, r.pvalue, r.statistic])
g = np.random.default_rng(1)
for k in range(20):
    n = int(g.integers(8, 400))
    d = g.standard_t(3, n) * 10.0 ** g.integers(-3, 3)
    cells = np.array(["T+E+", "T+E-", "T-E+", "T-E-"])[g.integers(0, 4, n)]
    if len(set(cells)) < 2 or min((cells == c).sum() for c in set(cells)) < 2:
        continue
    for method in ("centered-signflip", "studentized-signflip"):
        b = int(g.integers(99, 300_000))
        r = interaction_test(d, cells, n_resamples=b, rng=k, method=method)
        out.append(["random", k, method, n, b, r.pvalue, r.statistic])
print(json.dumps(out))
"""
)


def run(code: str, args: list[str], env: dict[str, str] | None) -> Any:
    # from the temporary folder: `-c` puts the working folder first on sys.path, and the
    # clone's own osustat/ would shadow the reference's
    done = subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        cwd=tempfile.gettempdir(),
    )
    if done.returncode:
        raise SystemExit(f"failed: {done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--compare-ref", default=None, metavar="REF")
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory() as tmp:
        codes: dict[str, dict[str, str] | None] = {"this": None}
        if args.compare_ref:
            ref = str(checkout(args.compare_ref, Path(tmp)))
            codes[args.compare_ref] = dict(os.environ, PYTHONPATH=ref)
        print("| code | call at 2^25 resamples | wall s | peak RSS GiB |")
        print("|---|---|---|---|")
        pvalues = {}
        for name, env in codes.items():
            for what in ("interaction", "analyze"):
                seconds, peak = run(_MEMORY, [what], env)
                call = "`interaction_test`" if what == "interaction" else "`analyze` (hit@2, 256)"
                print(f"| {name} | {call} | {seconds:.1f} | {peak:.2f} |", flush=True)
            pvalues[name] = run(_PVALUES, [], env)
    if args.compare_ref:
        a, b = pvalues["this"], pvalues[args.compare_ref]
        same = sum(x == y for x, y in zip(a, b, strict=True))
        print(f"\np-values and statistics identical in {same} of {len(a)} cases")
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
