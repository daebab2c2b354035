"""The real data for tests, found as the CLI finds it (``osustat.data.store.dataset_dir``):
``$OSUSTAT_DATA_DIR`` when set (``make test`` sets it to ../shared/data), else the user cache
folder that ``osustat data fetch`` fills."""

from pathlib import Path

import pytest

from osustat.data.store import DATA_DIR_ENV, dataset_dir


def data_folder(name: str) -> Path:
    """Dataset `name`'s folder, or skip saying which dataset is missing, where it was looked
    for and how to get it there."""
    folder = dataset_dir(name)
    if not folder.is_dir():
        pytest.skip(missing_reason(name))
    return folder


def missing_reason(name: str) -> str:
    """Why a test of dataset `name` skips: the folder looked in and the two ways to fill it."""
    return (
        f"needs dataset {name!r}: {dataset_dir(name)} is absent; `osustat data fetch {name}` "
        f"fills it, or set {DATA_DIR_ENV} to a folder holding {name}/ (make test uses "
        "../shared/data)"
    )


@pytest.fixture
def tau_bench_data() -> Path:
    return data_folder("tau-bench")


@pytest.fixture
def tau2_bench_data() -> Path:
    return data_folder("tau2-bench")
