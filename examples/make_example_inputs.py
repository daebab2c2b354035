"""Write small *simulated* inputs for `osustat analyze` other than records (docs/inputs.md).

Not results of any retriever: 40 queries in 10 episodes of 60 steps each; every query has 3
evidence steps whose tool signatures and entities are drawn so that all four cells occur;
each method "retrieves" 8 steps: every evidence step with a per-method probability (osu-mem
.45, flat-vector .35) plus random other steps. Written:

- ``retrievals.csv`` + ``evidence.jsonl`` (raw retrievals and their evidence annotations);
- ``run.trec`` + ``qrels.txt`` (the same retrievals as a TREC run ranked by a random score,
  and the evidence as qrels), usable with ``evidence.jsonl`` for the cells.

Run: python examples/make_example_inputs.py
"""

import json
from pathlib import Path

import numpy as np

TOOLS = ("search_flights", "get_user", "book", "cancel", "update_seat")
ENTITIES = ("NYC", "LAX", "u_1042", "F-881", "2024-05-01", "gold")
P_FOUND = {"osu-mem": 0.45, "flat-vector": 0.35}


def main(seed: int = 20261202) -> None:
    rng = np.random.default_rng(seed)
    here = Path(__file__).parent
    evidence, retrievals, run, qrels = [], [], [], []
    for q in range(40):
        episode = f"ep{q // 4:02d}"
        query = f"q{q:02d}"
        steps = [f"s{s}" for s in sorted(rng.choice(60, size=3, replace=False))]
        tools = [str(t) for t in rng.choice(TOOLS[: int(rng.integers(2, 6))], size=3)]
        ents = [
            sorted({str(e) for e in rng.choice(ENTITIES, size=int(rng.integers(0, 3)))})
            for _ in steps
        ]
        evidence.append(
            {
                "episode_id": episode,
                "query_id": query,
                "evidence": [
                    {"step": s, "tool": t, "entities": e}
                    for s, t, e in zip(steps, tools, ents, strict=True)
                ],
            }
        )
        qrels += [f"{episode}/{query} 0 {s} 1" for s in steps]
        others = [f"s{s}" for s in range(60) if f"s{s}" not in steps]
        for method, p in P_FOUND.items():
            found = [s for s in steps if rng.random() < p]
            got = found + [str(s) for s in rng.choice(others, size=8 - len(found), replace=False)]
            order = [got[i] for i in rng.permutation(len(got))]
            tokens = int(rng.integers(150, 257))
            retrievals.append(f"{episode},{query},{method},256,0,{';'.join(order)},{tokens}")
            run += [
                f"{episode}/{query} Q0 {s} {r} {10 - r / 2:.2f} {method}"
                for r, s in enumerate(order, 1)
            ]
    (here / "evidence.jsonl").write_text("".join(json.dumps(e) + "\n" for e in evidence))
    (here / "retrievals.csv").write_text(
        "episode_id,query_id,method,budget,seed,retrieved,tokens\n" + "\n".join(retrievals) + "\n"
    )
    (here / "run.trec").write_text("\n".join(run) + "\n")
    (here / "qrels.txt").write_text("\n".join(qrels) + "\n")
    print(f"wrote evidence.jsonl, retrievals.csv, run.trec, qrels.txt in {here}")


if __name__ == "__main__":
    main()
