"""The count-ratio MDEs of this code against a git ref's, on random pilots of pairs (issue 35:
which printed numbers a change of the treatment's-tilt engine moves).

Draws K random pilots of (treatment, baseline) count ratios -- recall over q = 1-12 items,
12-79 units with rates U(0, 1), the treatment's shifted by U(-.2, .4), every fifth pilot with
half its units tied at (1, 1), the three alternatives in turn, n 20 or 50 -- and computes
``minimum_detectable_effect(None, n, pairs=(t, b))`` with this code and with REF's (run from
a ``git archive`` of REF on PYTHONPATH, the same interpreter), then prints every pilot whose
value, method, range or ``max_effect`` differ::

    .venv/bin/python benchmarks/tilt_mde_compare.py --ref cb4bcc5 [--pilots 240]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections import Counter
from pathlib import Path

from analyze_speed import checkout, timed_output

_CHILD = r"""
import json, sys, warnings
import numpy as np
import osustat
warnings.simplefilter("ignore")
gen = np.random.default_rng(2024)
out = []
for i in range(int(sys.argv[1])):
    q = int(gen.integers(1, 13)); n = int(gen.integers(12, 80))
    rate = gen.uniform(0, 1, n)
    t = gen.binomial(q, np.clip(rate + gen.uniform(-0.2, 0.4), 0, 1)) / q
    b = gen.binomial(q, rate) / q
    if np.all(t == b):
        continue
    if i % 5 == 0:
        t[: n // 2] = 1; b[: n // 2] = 1
    alt = ["two-sided", "greater", "less"][i % 3]
    m = osustat.minimum_detectable_effect(
        None, int(gen.choice([20, 50])), pairs=(t, b), alternative=alt, rng=i
    )
    ends = getattr(m, "mde_range", None)
    out.append([i, float(m), m.method, ends and [float(x) for x in ends], float(m.max_effect)])
print(json.dumps({"where": osustat.__file__, "mdes": out}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ref", required=True, help="git ref to compare with")
    parser.add_argument("--pilots", type=int, default=240)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = checkout(args.ref, Path(tmp))
        env = dict(os.environ, PYTHONPATH=str(root))
        child = [sys.executable, "-c", _CHILD, str(args.pilots)]
        old = json.loads(timed_output(child, env)[0])
        new = json.loads(timed_output(child, None)[0])
    if not old["where"].startswith(str(root)) or new["where"].startswith(str(root)):
        raise SystemExit(f"codes not as asked: {old['where']} / {new['where']}")
    pairs = list(zip(old["mdes"], new["mdes"], strict=True))
    moved = [(a, b) for a, b in pairs if a != b]
    printed = [(a, b) for a, b in moved if a[:4] != b[:4]]
    print(f"{len(pairs)} pilots; {len(moved)} differ ({len(printed)} in the value, method or "
          "range; the rest in max_effect only)")  # fmt: skip
    print("methods (this code):", dict(Counter(b[2] for _, b in pairs)))
    for a, b in moved:
        print(f"pilot {a[0]}: {args.ref} {a[1:]} -> this {b[1:]}")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    main()
