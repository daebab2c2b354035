"""Drawing from the tilted model: counting cdf steps against a binary search (issue 35, a
second review: the draws of a pilot with 300+ distinct (treatment, baseline) pairs, n = 5,000,
were slow).

``EmpiricalTiltSimulation._simulate`` draws each data set's points by the inverse cdf of the
tilted law. Two ways give the same indices: count, for every cdf step, the uniforms at or past
it (one vectorized pass per point, into bytes while the count fits) or ``np.searchsorted``
(a binary search per uniform). This times both on 2,000 data sets of 100 units (the engine's
default simulations) for growing numbers of points, CPU ms per draw of the whole matrix
(median of 5); then the CPU of the MDE of a pilot with 462 distinct pairs (600 units of
recall over 5-12 items) at n = 500 and 5,000, with this code and, given ``--ref``, a git ref's::

    .venv/bin/python benchmarks/inverse_cdf.py [--ref cb4bcc5]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from analyze_speed import checkout, timed_output

POINTS = (13, 60, 120, 250, 256, 500, 1000)


def _counted(u: np.ndarray, cdf: np.ndarray) -> np.ndarray:
    index = np.zeros(u.shape, dtype=np.uint8 if cdf.size <= 256 else np.intp)
    for step in cdf[:-1]:
        index += u >= step
    return index


def _searched(u: np.ndarray, cdf: np.ndarray) -> np.ndarray:
    return np.searchsorted(cdf[:-1], u, side="right")


def _cpu_ms(f, *args) -> float:
    times = []
    for _ in range(5):
        start = time.process_time()
        f(*args)
        times.append(time.process_time() - start)
    return 1000 * float(np.median(times))


_PILOT = r"""
import json, time
import numpy as np
import osustat
gen = np.random.default_rng(3)
q = gen.integers(5, 13, 600)
t, b = gen.integers(0, q + 1) / q, gen.integers(0, q + 1) / q
out = {"where": osustat.__file__}
for n in (500, 5000):
    start = time.process_time()
    mde = osustat.minimum_detectable_effect(None, n, pairs=(t, b))
    out[n] = [float(mde), time.process_time() - start]
print(json.dumps(out))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ref", default=None, help="a git ref whose MDE times to show beside")
    args = parser.parse_args()
    gen = np.random.default_rng(0)
    u = gen.random((2000, 100))
    print("| points | counting ms | binary search ms |")
    print("|---|---|---|")
    for k in POINTS:
        cdf = np.cumsum(gen.random(k))
        cdf /= cdf[-1]
        cdf[-1] = 1.0
        assert (_counted(u, cdf) == _searched(u, cdf)).all()
        print(f"| {k} | {_cpu_ms(_counted, u, cdf):.1f} | {_cpu_ms(_searched, u, cdf):.1f} |")
    print("\n| code | n | MDE | CPU s |\n|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        codes = {"this": None}
        if args.ref:
            codes[args.ref] = dict(os.environ, PYTHONPATH=str(checkout(args.ref, Path(tmp))))
        for code, env in codes.items():
            got = json.loads(timed_output([sys.executable, "-c", _PILOT], env)[0])
            if (env is not None) != got.pop("where").startswith(tmp):
                raise SystemExit(f"{code}: not the code asked for")
            for n, (mde, cpu) in got.items():
                print(f"| {code} | {n} | {mde:.6f} | {cpu:.1f} |")


if __name__ == "__main__":
    main()
