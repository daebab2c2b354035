"""Write examples/records.csv: a small *simulated* records file for the demo and the CLI tests.

These are not results of any retriever. Each of 328 queries in 125 episodes gets a cell with
the τ-bench cross-tab's counts (56/96/44/132), 2 to 5 evidence steps, and each evidence step is
retrieved independently with a per-cell probability: the baseline ("flat-vector") with .30 in
every cell, the treatment ("osu-mem") with .42/.28/.36/.20 in T+E+/T+E-/T-E+/T-E-, a pattern
chosen by hand to resemble the signs of the paper's Table 4. Hit@2 = at least 2 evidence steps
retrieved; recall = fraction retrieved. Run: python examples/make_example_records.py
"""

from pathlib import Path

import numpy as np
import pandas as pd

CELLS = ("T+E+", "T+E-", "T-E+", "T-E-")
COUNTS = (56, 96, 44, 132)
P_BASE = dict.fromkeys(CELLS, 0.30)
P_TREAT = dict(zip(CELLS, (0.42, 0.28, 0.36, 0.20), strict=True))


def main(seed: int = 20261202) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    cells = rng.permutation(np.repeat(CELLS, COUNTS))
    episodes = np.sort(rng.integers(0, 125, cells.size))
    rows = []
    for i, (cell, ep) in enumerate(zip(cells, episodes, strict=True)):
        k = int(rng.integers(2, 6))
        for method, probs in (("osu-mem", P_TREAT), ("flat-vector", P_BASE)):
            for budget in (128, 256):
                p = min(1.0, probs[cell] * (1.2 if budget == 256 else 1.0))
                got = int((rng.random(k) < p).sum())
                base = {
                    "benchmark": "example",
                    "episode_id": f"ep{ep:03d}",
                    "query_id": f"q{i:03d}",
                    "method": method,
                    "budget": budget,
                    "seed": 0,
                    "cell": cell,
                }
                rows.append({**base, "metric": "hit@2", "value": float(got >= 2)})
                rows.append({**base, "metric": "recall", "value": got / k})
    return pd.DataFrame(rows)


if __name__ == "__main__":
    out = Path(__file__).with_name("records.csv")
    main().to_csv(out, index=False)
    print(f"wrote {out}")
