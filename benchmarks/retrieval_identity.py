"""A fingerprint of OSU-Mem-family retrievals: run it at two revisions, compare the hashes.

SHA-256 over the steps and tokens of 4,368 retrievals: OSU-Mem and its variants (disjoint, no
novelty, sim-only), OSU-Mem + GF, coverage-guided and cohesion; random annotated trajectories
at 64/384/32-d and generated synthetic episodes; budgets 64-1,600; query times before the end.
A speed-up of retrieval/osu.py or retrieval/osumem.py must leave it unchanged:

    .venv/bin/python benchmarks/retrieval_identity.py
"""

import hashlib
import os
import sys

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np
from retrieval_speed import make_trajectory

from osustat.analyses.synthetic.generator import generate_episode
from osustat.retrieval import CohesionOSU, CoverageGuidedOSU, OSUConfig, OSUMem, OSUMemGF


def main() -> None:
    h = hashlib.sha256()
    rng = np.random.default_rng(123)
    makers = [
        lambda: OSUMem(),
        lambda: OSUMem(osu_config=OSUConfig(m_max=1)),
        lambda: OSUMem(lambda_nov=0.0),
        lambda: OSUMem(osu_config=OSUConfig(views=("similarity",))),
        lambda: OSUMemGF(),
        lambda: CoverageGuidedOSU(),
        lambda: CohesionOSU(),
    ]
    trajs = [
        make_trajectory(rng, n, d) for n, d in [(220, 64), (300, 384), (150, 64), (600, 32)] * 4
    ]
    for i in range(10):
        ep = generate_episode(f"e{i}", np.random.default_rng(i))
        trajs.append(ep.trajectory)
    n = 0
    for traj in trajs:
        for mk in makers:
            r = mk().build(traj)
            for _ in range(4):
                q = traj.embeddings[rng.choice(traj.n_steps, 3)].mean(axis=0) + 0.2 * rng.normal(
                    size=traj.embeddings.shape[1]
                )
                t = int(rng.integers(traj.n_steps // 3, traj.n_steps + 1))
                for b in (64, 128, 192, 256, 512, 1600):
                    kw = {"evidence": np.sort(rng.choice(t, 3, replace=False))} if r.oracle else {}
                    res = r.retrieve(q, b, time=t, **kw)
                    h.update(res.steps.tobytes())
                    h.update(repr(res.tokens).encode())
                    n += 1
    print(n, h.hexdigest())


if __name__ == "__main__":
    main()
