"""Write a small *simulated* TREC fixture in the real formats (examples/trec/).

Not results of any system: 12 topics (qids 301-312, Robust-style docids such as
``FBIS3-10082``), graded qrels (0/1/2, some judged-non-relevant documents), and two runs of
30 documents per topic in the six-column run format with the traps real runs contain:

- ``bm25.run`` (tag ``bm25``) and ``rm3.run`` (tag ``rm3``): scores with ties, and in
  ``rm3.run`` the rank column of three topics disagrees with the score order (trec_eval
  ignores ranks and orders by score descending, ties by docid descending);
- ``rm3.run`` does not rank topic 312 (trec_eval ``-c`` scores it as 0);
- ``concat.run``: both runs concatenated with the same tag ``run`` (needs --run NAME=FILE).

Used by tests/test_cli_trec.py to check osustat's per-query values against trec_eval's
(through ir_measures / pytrec_eval). Run: python examples/make_trec_fixture.py
"""

from pathlib import Path

import numpy as np


def main(seed: int = 20261202) -> None:
    rng = np.random.default_rng(seed)
    out = Path(__file__).parent / "trec"
    out.mkdir(exist_ok=True)
    pool = [f"FBIS3-{10000 + i}" for i in range(120)]
    qrels, runs = [], {"bm25": [], "rm3": []}
    for t in range(12):
        qid = str(301 + t)
        docs = list(rng.choice(pool, size=40, replace=False))
        for j, d in enumerate(docs[:10]):
            grade = 2 if j < 2 else (1 if j < 6 else 0)
            qrels.append(f"{qid} 0 {d} {grade}")
        for tag, skill in (("bm25", 0.8), ("rm3", 1.1)):
            if tag == "rm3" and qid == "312":
                continue
            # relevant documents get a score boost; scores rounded to 1 decimal -> ties
            base = rng.normal(0, 1, size=40) + skill * np.r_[np.ones(6), np.zeros(34)]
            scores = np.round(base * 2, 1)
            order = sorted(range(40), key=lambda i: (-scores[i], docs[i]))[:30]
            ranked = [(docs[i], scores[i]) for i in order]
            if tag == "rm3" and qid in ("303", "306", "309"):
                ranked[0], ranked[3] = ranked[3], ranked[0]  # ranks disagree with scores
            for rank, (d, s) in enumerate(ranked, 1):
                runs[tag].append(f"{qid} Q0 {d} {rank} {s:.1f} {tag}")
    (out / "qrels.txt").write_text("\n".join(qrels) + "\n")
    for tag, lines in runs.items():
        (out / f"{tag}.run").write_text("\n".join(lines) + "\n")
    concat = [line.rsplit(" ", 1)[0] + " run" for tag in runs for line in runs[tag]]
    (out / "concat.run").write_text("\n".join(concat) + "\n")


if __name__ == "__main__":
    main()
