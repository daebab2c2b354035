"""Test configuration: a deterministic hypothesis profile (no database, no deadline), and how
pytest-xdist (``make test`` runs ``pytest -n 2``) hands tests to its workers."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import settings

settings.register_profile(
    "deterministic", derandomize=True, database=None, deadline=None, max_examples=60
)
settings.load_profile("deterministic")

#: Modules that run whole on one worker: their module-scoped fixtures (the wheel and its fresh
#: environment, pipeline runs, a calibrated audit, analyses) or pynndescent's JIT compilation
#: cost seconds to minutes, paid once per worker that runs any of their tests. Every other
#: test is handed out on its own.
WHOLE_MODULES = frozenset(
    {
        "tests/test_packaging.py",
        "tests/retrieval/test_osu_ann.py",
        "tests/osustat/test_audit_calibration.py",
        "tests/analyses/locomo/test_pipeline.py",
        "tests/analyses/test_tau_analysis.py",
        "tests/osustat/test_analysis_multi.py",
        "tests/osustat/test_effect_sizes_and_views.py",
    }
)


def xdist_scope(nodeid: str) -> str:
    """The unit of work of a test: its module for :data:`WHOLE_MODULES`, else the test."""
    module = nodeid.split("::", 1)[0]
    return module if module in WHOLE_MODULES else nodeid


@pytest.hookimpl(optionalhook=True, tryfirst=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """With the default ``--dist load``: xdist's scope scheduler over :func:`xdist_scope`.

    Units are handed out largest (most tests) first, so the whole modules start first and
    no worker ends the run alone on one of them. (xdist's own ``--dist loadgroup`` marks do
    not take effect with pytest 9, whose node ids xdist can no longer rename.)
    """
    if config.getvalue("dist") != "load":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class WholeModuleScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return xdist_scope(nodeid)

    return WholeModuleScheduling(config, log)
