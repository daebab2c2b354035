"""What `--all-pairs` costs as the methods grow: K = 3, 6, 10 measured, K = 50 fitted (issue 37).

``osustat.analyze(all_pairs=True)`` on the first K methods of the million-record generator's
table (``million_records.records``: random values, seed 0, each query in one of the four
cells; hit@2 and recall at B = 256, 512, so 4 comparisons per pair), in this process and
with a 2-worker Dask ``LocalCluster`` as ``workers`` (same result, checked). Each run is
split into

- **comparisons**: the per-pair work (pairing, sign-flip tests, bootstrap intervals,
  interaction test, break-even) that ``workers`` distributes (``osustat.analysis._run``);
- **corrections**: the family's p-value correction (``_adjust``; Holm by default);
- **MDEs**: the rows' minimum detectable effects at α/m, searched in the calling process
  (``cellwise.minimum_detectable_effect``), one per reported row;
- **rest**: everything else (planning, results, provenance).

Then fits each part against the pairs P = K (K - 1) / 2 over the measured K as a line
``t = a + b P`` (a: fixed costs such as the cluster's start; b: the cost per pair), prints
the growth exponent between the two largest K (1: linear), and states the cost at K = 50
(1,225 pairs) from the line. The MDE search's cost per row may change with the level α/m it
is searched at (m grows with the pairs), so the script also times the searches of one pair's
rows at K = 50's α/m, measured rather than extrapolated, and states the MDEs' cost at
K = 50 from that per-row time as well. CPU is this process plus its finished children (the
Dask workers count once the cluster has closed)::

    .venv/bin/python benchmarks/all_pairs_cost.py [--queries 1000] [--ks 3,6,10]
"""

from __future__ import annotations

import argparse
import math
import os
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from million_records import analyze_all_pairs, cpu_now, records

PARTS = ("comparisons", "corrections", "MDEs")


def timed_parts() -> tuple[dict[str, float], dict[str, int], Callable[[], None]]:
    """Wrap the three parts' functions to add up their wall seconds and calls; returns the
    totals and a function that undoes the wrapping."""
    import osustat.analysis as analysis
    import osustat.cellwise as cellwise

    spent = dict.fromkeys(PARTS, 0.0)
    calls = dict.fromkeys(PARTS, 0)
    targets = [
        (analysis, "_run", "comparisons"),
        (analysis, "_adjust", "corrections"),
        (cellwise, "minimum_detectable_effect", "MDEs"),
    ]
    originals = [(mod, name, getattr(mod, name)) for mod, name, _ in targets]

    def wrap(func: Callable[..., Any], part: str) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return func(*args, **kwargs)
            finally:
                spent[part] += time.perf_counter() - start
                calls[part] += 1

        return timed

    for (mod, name, part), (_, _, func) in zip(targets, originals, strict=True):
        setattr(mod, name, wrap(func, part))

    def undo() -> None:
        for mod, name, func in originals:
            setattr(mod, name, func)

    return spent, calls, undo


def one_run(valid: Any, backend: str) -> tuple[dict[str, float], dict[str, int], Any]:
    """Wall and CPU seconds of the run and of its parts, the calls, and the result."""
    from osustat.provenance import Provenance

    prov = Provenance(command="benchmark", inputs=(("records", "<benchmark>", "-"),))
    spent, calls, undo = timed_parts()
    start, cpu = time.perf_counter(), cpu_now()
    try:
        res: Any = analyze_all_pairs(valid, prov, dask=backend == "Dask")
    finally:
        undo()
    out = dict(spent, wall=time.perf_counter() - start, cpu=cpu_now() - cpu)
    out["rest"] = out["wall"] - sum(spent.values())
    return out, calls, res


def fit(pairs: list[int], seconds: list[float]) -> tuple[float, float, float]:
    """(a, b) of the least-squares line ``seconds = a + b * pairs``, and the growth exponent
    between the two largest pair counts."""
    b, a = np.polyfit(pairs, seconds, 1)
    growth = math.log(max(seconds[-1], 1e-9) / max(seconds[-2], 1e-9)) / math.log(
        pairs[-1] / pairs[-2]
    )
    return float(a), float(b), growth


def mde_at_target(res: Any, target_pairs: int) -> tuple[float, int, float]:
    """(α/m at `target_pairs`, the rows, wall s per row) of the MDE searches of the first
    pair's rows at the level K = 50's family would search them at."""
    first = res.results[0]
    rows = [r for comp in first.comparisons for r in comp.rows]
    tested = [r for r in rows if r.family_size > 1]
    per_pair = max(r.family_size for r in tested) / len(res.results)
    alpha = first.alpha / (per_pair * target_pairs)
    start = time.perf_counter()
    for r in rows:
        r.effect.mde_at(alpha)
    return alpha, len(rows), (time.perf_counter() - start) / len(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--ks", default="3,6,10")
    parser.add_argument("--target", type=int, default=50, help="methods to extrapolate to")
    args = parser.parse_args()
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    from osustat.schema import validate_records

    ks = [int(k) for k in args.ks.split(",")]
    df = records(max(ks), args.queries)
    print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    print(f"{args.queries:,} queries per method; 4 comparisons (2 metrics x 2 budgets) a pair")
    print("| K | pairs | backend | wall s | CPU s | comparisons s | per pair s | corrections s "
          "| MDEs s (calls) | rest s | load |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    measured: dict[str, list[tuple[int, dict[str, float]]]] = {}
    for k in ks:
        names = sorted(df["method"].unique())[:k]
        valid = validate_records(df[df["method"].isin(names)])
        pairs = k * (k - 1) // 2
        results = []
        for backend in ("in-process", "Dask"):
            t, calls, res = one_run(valid, backend)
            results.append(res.to_json())
            measured.setdefault(backend, []).append((pairs, t))
            print(
                f"| {k} | {pairs} | {backend} | {t['wall']:.1f} | {t['cpu']:.1f} | "
                f"{t['comparisons']:.1f} | {t['comparisons'] / pairs:.2f} | "
                f"{t['corrections']:.2f} | {t['MDEs']:.1f} ({calls['MDEs']}) | {t['rest']:.1f} "
                f"| {os.getloadavg()[0]:.1f} |"
            )
        print(f"<!-- K = {k}: same result both ways: {results[0] == results[1]} -->")
    target = args.target * (args.target - 1) // 2
    print()
    print(f"Line t = a + b P over P = {[p for p, _ in measured['in-process']]} pairs, "
          f"at K = {args.target} (P = {target:,}):")  # fmt: skip
    print()
    print("| backend | part | a s | b s per pair | growth exponent (two largest K) | at K = "
          f"{args.target}: s | h |")  # fmt: skip
    print("|---|---|---|---|---|---|---|")
    for backend, points in measured.items():
        total = 0.0
        for part in (*PARTS, "rest"):
            a, b, growth = fit([p for p, _ in points], [t[part] for _, t in points])
            at = a + b * target
            total += at
            print(f"| {backend} | {part} | {a:.2f} | {b:.3f} | {growth:.2f} | {at:,.0f} | "
                  f"{at / 3600:.2f} |")  # fmt: skip
        print(f"| {backend} | **sum of the parts** | | | | {total:,.0f} | {total / 3600:.2f} |")
    alpha, n_rows, per_row = mde_at_target(res, target)
    rows_at_target = n_rows * target
    print()
    print(f"MDE searches at K = {args.target}'s level α/m = {alpha:.3g} ({n_rows} rows of one "
          f"pair): {per_row:.3f} s per row, so {rows_at_target:,} rows = "
          f"{per_row * rows_at_target:,.0f} s ({per_row * rows_at_target / 3600:.2f} h) in the "
          "calling process")  # fmt: skip
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
