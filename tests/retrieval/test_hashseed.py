"""Retrieval must not depend on PYTHONHASHSEED (set iteration order of entity names)."""

import subprocess
import sys

SCRIPT = """
import numpy as np
from osustat.retrieval import OSUConfig, OSUMem, Trajectory
rng = np.random.default_rng(0)
n = 80
ents = [{f"e{rng.integers(10)}", f"x{rng.integers(6)}"} for _ in range(n)]
t = Trajectory.from_steps(rng.normal(size=(n, 16)), np.full(n, 15.0), entities=ents,
                          tools=[f"t{i % 5}" for i in range(n)])
out = []
for cfg in (OSUConfig(), OSUConfig(m_max=1)):
    r = OSUMem(osu_config=cfg).build(t)
    out += [r.retrieve(rng.normal(size=16), 128).steps.tolist() for _ in range(10)]
print(out, t.entity_vocab)
"""


def test_same_answers_under_any_hash_seed():
    outs = {
        subprocess.run(
            [sys.executable, "-c", SCRIPT],
            env={"PYTHONHASHSEED": str(h), "PATH": ""},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for h in (1, 2, 3, 4)
    }
    assert len(outs) == 1
