"""Test configuration: a deterministic hypothesis profile (no database, no deadline)."""

from hypothesis import settings

settings.register_profile(
    "deterministic", derandomize=True, database=None, deadline=None, max_examples=60
)
settings.load_profile("deterministic")
