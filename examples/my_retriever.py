"""A user retriever in 30 lines: recency-weighted cosine, for `--retriever` and check-retriever.

    osustat check-retriever examples.my_retriever:RecencyCosine    (from the repository root)
    PYTHONPATH=examples osustat reproduce synthetic --out o --retriever my_retriever:RecencyCosine
    (the same --retriever for `reproduce tau-bench` and `reproduce toolbench`; docs/scaling.md)

It follows the retriever protocol by subclassing BaseRetriever (validation, future-step
masking, empty trajectories and zero budgets come with it) and packs steps with the shared
packing policy, so it obeys the same budget rules as the paper's methods.
"""

import numpy as np

from osustat.retrieval.base import BaseRetriever, check_setting, pack


class RecencyCosine(BaseRetriever):
    """Cosine to the query plus a bonus that decays with the distance to the query time."""

    name = "Recency Cosine"
    oracle = False

    def __init__(self, *, decay: float = 0.01, weight: float = 0.2) -> None:
        self.decay = check_setting("decay", decay, low=0)
        self.weight = check_setting("weight", weight, low=0)

    def _retrieve(self, q, budget, end, evidence):
        emb = self.trajectory_.embeddings[:end]
        age = end - 1 - np.arange(end)
        score = emb @ q + self.weight * np.exp(-self.decay * age)
        steps, used = pack(np.argsort(-score, kind="stable"), self.trajectory_.costs, budget)
        return self._result(steps, used)
