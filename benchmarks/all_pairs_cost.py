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
  (``cellwise.minimum_detectable_effect``), one per reported row; with Dask, from 0b06621 on,
  the workers search them (``cellwise.search_mde``), so their CPU is in the comparisons';
- **rest**: everything else (planning, results, provenance).

Then fits each part against the pairs P = K (K - 1) / 2 over the measured K as a line
``t = a + b P`` (a: fixed costs such as the cluster's start; b: the cost per pair), prints
the growth exponent between the two largest K (1: linear), and states the cost at K = 50
(1,225 pairs) from the line. The MDE search's cost per row may change with the level α/m it
is searched at (m grows with the pairs), so the script also times the searches of one pair's
rows at K = 50's α/m, measured rather than extrapolated, and states the MDEs' cost at
K = 50 from that per-row time as well. CPU is this process plus its finished children (the
Dask workers count once the cluster has closed)::

    .venv/bin/python benchmarks/all_pairs_cost.py [--queries 1000] [--ks 3,6,10] [--backends Dask]
"""

from __future__ import annotations

import argparse
import math
import os
import resource
import time
from collections.abc import Callable
from typing import Any

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy: the CPU is one core's

import numpy as np
from million_records import analyze_all_pairs, cpu_now, records

PARTS = ("comparisons", "corrections", "MDEs")


def timed_parts() -> tuple[dict[str, float], dict[str, int], Callable[[], None]]:
    """Wrap the three parts' functions to add up their wall and CPU seconds (this process:
    ``part`` and ``part CPU``) and calls; returns the totals and a function that undoes the
    wrapping."""
    import osustat.analysis as analysis
    import osustat.cellwise as cellwise

    spent = {f"{part}{kind}": 0.0 for part in PARTS for kind in ("", " CPU")}
    calls = dict.fromkeys(PARTS, 0)
    targets = [
        (analysis, "_run", "comparisons"),
        (analysis, "_adjust", "corrections"),
        (cellwise, "minimum_detectable_effect", "MDEs"),
    ]
    originals = [(mod, name, getattr(mod, name)) for mod, name, _ in targets]

    def wrap(func: Callable[..., Any], part: str) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            start, cpu = time.perf_counter(), time.process_time()
            try:
                return func(*args, **kwargs)
            finally:
                spent[part] += time.perf_counter() - start
                spent[f"{part} CPU"] += time.process_time() - cpu
                calls[part] += 1

        return timed

    for (mod, name, part), (_, _, func) in zip(targets, originals, strict=True):
        setattr(mod, name, wrap(func, part))

    def undo() -> None:
        for mod, name, func in originals:
            setattr(mod, name, func)

    return spent, calls, undo


def one_run(valid: Any, backend: str) -> tuple[dict[str, float], dict[str, int], Any]:
    """Wall and CPU seconds of the run and of its parts, the calls, and the result.

    ``comparisons CPU`` is the run's CPU (this process and the Dask workers) minus the
    corrections' and MDEs' (this process): the distributed work with the cluster's start
    and the rest of the run."""
    from osustat.provenance import Provenance

    prov = Provenance(command="benchmark", inputs=(("records", "<benchmark>", "-"),))
    spent, calls, undo = timed_parts()
    start, cpu = time.perf_counter(), cpu_now()
    try:
        res: Any = analyze_all_pairs(valid, prov, dask=backend == "Dask")
    finally:
        undo()
    out = dict(spent, wall=time.perf_counter() - start, cpu=cpu_now() - cpu)
    out["rest"] = out["wall"] - sum(spent[part] for part in PARTS)
    out["comparisons CPU"] = out["cpu"] - spent["corrections CPU"] - spent["MDEs CPU"]
    return out, calls, res


def peak_rss_gb() -> str:
    """Peak resident memory so far (the run's, when it is the process's largest): this
    process's and its largest finished child's (a Dask worker once the cluster closed)."""
    own, kids = (resource.getrusage(w) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    return f"{own.ru_maxrss / 2**20:.2f} / {kids.ru_maxrss / 2**20:.2f}"  # KiB on Linux


def fit(pairs: list[int], seconds: list[float]) -> tuple[float, float, float]:
    """(a, b) of the least-squares line ``seconds = a + b * pairs``, and the growth exponent
    between the two largest pair counts."""
    b, a = np.polyfit(pairs, seconds, 1)
    growth = math.log(max(seconds[-1], 1e-9) / max(seconds[-2], 1e-9)) / math.log(
        pairs[-1] / pairs[-2]
    )
    return float(a), float(b), growth


def mde_at_target(res: Any, target_pairs: int) -> tuple[float, int, float]:
    """(α/m at `target_pairs`, the rows, CPU s per row) of the MDE searches of the first
    pair's rows at the level K = 50's family would search them at."""
    first = res.results[0]
    rows = [r for comp in first.comparisons for r in comp.rows]
    tested = [r for r in rows if r.family_size > 1]
    per_pair = max(r.family_size for r in tested) / len(res.results)
    alpha = first.alpha / (per_pair * target_pairs)
    start = time.process_time()
    for r in rows:
        r.effect.mde_at(alpha)
    return alpha, len(rows), (time.process_time() - start) / len(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--ks", default="3,6,10")
    parser.add_argument("--target", type=int, default=50, help="methods to extrapolate to")
    parser.add_argument(
        "--backends",
        default="in-process,Dask",
        help="which runs to make (comma-separated); the fit needs both and two K or more",
    )
    args = parser.parse_args()
    backends = args.backends.split(",")
    unknown = sorted(set(backends) - {"in-process", "Dask"})
    if unknown:
        parser.error(f"--backends: unknown {', '.join(unknown)} (in-process, Dask)")
    from osustat.schema import validate_records

    ks = [int(k) for k in args.ks.split(",")]
    df = records(max(ks), args.queries)
    print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    print(f"{args.queries:,} queries per method; 4 comparisons (2 metrics x 2 budgets) a pair")
    print()
    print("| K | pairs | backend | wall s | CPU s | comparisons CPU s (per pair) | corrections "
          "CPU s | MDEs CPU s (rows; per row) | load | peak RSS GB (this process / "
          "largest finished worker) |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|---|")
    measured: dict[str, list[tuple[int, dict[str, float]]]] = {}
    for k in ks:
        names = sorted(df["method"].unique())[:k]
        valid = validate_records(df[df["method"].isin(names)])
        pairs = k * (k - 1) // 2
        results = []
        for backend in backends:
            t, calls, res = one_run(valid, backend)
            t["MDE calls here"] = calls["MDEs"]
            results.append(res.to_json())
            measured.setdefault(backend, []).append((pairs, t))
            comp, mdes = t["comparisons CPU"], t["MDEs CPU"]
            print(
                f"| {k} | {pairs} | {backend} | {t['wall']:.1f} | {t['cpu']:.1f} | "
                f"{comp:.1f} ({comp / pairs:.2f}) | {t['corrections CPU']:.2f} | "
                f"{mdes:.1f} ({calls['MDEs']}; {mdes / max(calls['MDEs'], 1):.3f}) | "
                f"{os.getloadavg()[0]:.1f} | {peak_rss_gb()} |"
            )
        if len(results) == 2:
            print(f"<!-- K = {k}: same result both ways: {results[0] == results[1]} -->")
    if len(backends) == 2 and len(ks) >= 2:
        extrapolate(measured, res, args.target)
    print(f"load average after: {os.getloadavg()[0]:.2f}")


def extrapolate(
    measured: dict[str, list[tuple[int, dict[str, float]]]], res: Any, methods: int
) -> None:
    """The fitted lines of each part's CPU against the pairs, their values at `methods`
    methods, and the MDE searches timed at that family's level."""
    target = methods * (methods - 1) // 2
    print()
    print(f"CPU s = a + b P, least squares over P = {[p for p, _ in measured['in-process']]} "
          f"pairs, at K = {methods} (P = {target:,}):")  # fmt: skip
    print()
    print("| backend | part | a s | b s per pair | growth exponent (two largest K) | at K = "
          f"{methods}: CPU s |")  # fmt: skip
    print("|---|---|---|---|---|---|")
    at: dict[tuple[str, str], float] = {}
    for backend, points in measured.items():
        for part in PARTS:
            a, b, growth = fit([p for p, _ in points], [t[f"{part} CPU"] for _, t in points])
            at[backend, part] = max(a + b * target, 0.0)  # a part that does not grow: 0
            print(f"| {backend} | {part} | {a:.2f} | {b:.3f} | {growth:.2f} | "
                  f"{at[backend, part]:,.0f} |")  # fmt: skip
    alpha, n_rows, per_row = mde_at_target(res, target)
    mdes = per_row * n_rows * target
    print()
    print(f"MDE searches at K = {methods}'s level α/m = {alpha:.3g}, timed on {n_rows} rows of "
          f"one pair: {per_row:.3f} CPU s per row, so {n_rows * target:,} rows = {mdes:,.0f} "
          "CPU s (in this process; on the Dask workers from 0b06621 on)")  # fmt: skip
    for backend, share in (("in-process", 1.0), ("Dask", 0.5)):
        comp, corr = at[backend, "comparisons"], at[backend, "corrections"]
        # from 0b06621 the workers search the MDEs too: in the comparisons' CPU, not here
        here = any(t["MDE calls here"] for _, t in measured[backend])
        wall = comp * share + corr + mdes * here
        print(f"- {backend}: comparisons {comp:,.0f} CPU s{' over 2 workers' * (share < 1)} + "
              f"corrections {corr:,.0f} s + MDEs {mdes * here:,.0f} s in this process = about "
              f"{wall / 3600:.1f} h of wall on a quiet 2-core machine")  # fmt: skip


if __name__ == "__main__":
    main()
