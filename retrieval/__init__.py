"""Retrievers over agent trajectories: OSU-Mem, its variants and the paper's baselines.

Not built yet (tracked in the retrieval issue); the package exists so that the layout of
docs/architecture.md is in place. Nothing here is imported by `osustat`.
"""

__all__: list[str] = []
