"""The shared data for tests: ``$OSUSTAT_DATA_DIR`` (``make test`` sets it to ../shared/data)."""

import os
from pathlib import Path

import pytest


def data_folder(name: str) -> Path:
    """``$OSUSTAT_DATA_DIR/<name>``, or skip saying which dataset is missing and how to get it."""
    root = os.environ.get("OSUSTAT_DATA_DIR")
    if not root:
        pytest.skip(
            f"needs dataset {name!r}: set OSUSTAT_DATA_DIR to a folder holding {name}/ "
            f"(make test uses ../shared/data), or run `osustat data fetch {name}`"
        )
    folder = Path(root) / name
    if not folder.is_dir():
        pytest.skip(
            f"needs dataset {name!r}: {folder} is absent; `osustat data fetch {name}` "
            f"with OSUSTAT_DATA_DIR={root}"
        )
    return folder


@pytest.fixture
def tau_bench_data() -> Path:
    return data_folder("tau-bench")


@pytest.fixture
def tau2_bench_data() -> Path:
    return data_folder("tau2-bench")
