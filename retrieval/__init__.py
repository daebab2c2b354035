"""Retrievers over agent trajectories: OSU-Mem, its variants and the paper's baselines.

Numpy only; of `osustat` only the record schema (`osustat.record_row.QueryKey`, which
`QueryOutcome` extends, and the `RecordRow` it makes) is imported, and nothing of `analyses`
or `reports`. The text encoder (sentence-transformers) is confined to ``retrieval.encoder``.
"""

from .base import BaseRetriever, RetrievalResult, Retriever, pack
from .baselines import (
    BASELINES,
    BudgetTruncatedReplay,
    CoverageAware,
    DisjointHierarchy,
    FlatMMR,
    FlatVector,
    NoLTMemory,
    PeriodicSummary,
    SlidingWindow,
    TreeAbstraction,
)
from .encoder import (
    MINILM_DIM,
    MINILM_NAME,
    CachedEncoder,
    CacheInfo,
    HashingBagOfWordsEncoder,
    SentenceTransformerEncoder,
    TextEncoder,
    default_cache_dir,
    text_key,
)
from .metrics import (
    NEAR_WINDOW,
    QueryOutcome,
    hit_at_k,
    near_far_recall,
    outcomes_to_records,
    recall,
)
from .osu import VIEWS, OSUConfig, OSUPool, build_osus, evidence_membership
from .osumem import CohesionOSU, CoverageGuidedOSU, OSUMem, OSUMemGF, adaptive_k
from .registry import METHODS, MethodSpec, load_retriever
from .trajectory import Query, Trajectory

__all__ = [
    "BASELINES",
    "METHODS",
    "MINILM_DIM",
    "MINILM_NAME",
    "NEAR_WINDOW",
    "VIEWS",
    "BaseRetriever",
    "BudgetTruncatedReplay",
    "CacheInfo",
    "CachedEncoder",
    "CohesionOSU",
    "CoverageAware",
    "CoverageGuidedOSU",
    "DisjointHierarchy",
    "FlatMMR",
    "FlatVector",
    "HashingBagOfWordsEncoder",
    "MethodSpec",
    "NoLTMemory",
    "OSUConfig",
    "OSUMem",
    "OSUMemGF",
    "OSUPool",
    "PeriodicSummary",
    "Query",
    "QueryOutcome",
    "RetrievalResult",
    "Retriever",
    "SentenceTransformerEncoder",
    "SlidingWindow",
    "TextEncoder",
    "Trajectory",
    "TreeAbstraction",
    "adaptive_k",
    "build_osus",
    "default_cache_dir",
    "evidence_membership",
    "hit_at_k",
    "load_retriever",
    "near_far_recall",
    "outcomes_to_records",
    "pack",
    "recall",
    "text_key",
]
