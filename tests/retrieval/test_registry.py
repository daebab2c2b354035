"""The method list lives in the registry only: every benchmark's list names registered methods."""

import pytest

from osustat.analyses.synthetic.run import MAIN_METHODS as SYNTHETIC
from osustat.analyses.tau_bench.run import MAIN_METHODS as TAU
from osustat.analyses.toolbench.run import BASELINES as TOOLBENCH
from osustat.retrieval.registry import METHODS, PAPER_METHODS, paper_methods


@pytest.mark.parametrize("benchmark", sorted(PAPER_METHODS))
def test_every_listed_method_is_registered(benchmark):
    names = PAPER_METHODS[benchmark]
    assert set(names) <= set(METHODS) and len(set(names)) == len(names)
    assert all(f is METHODS[n].factory for n, f in paper_methods(benchmark).items())


def test_pipelines_read_their_lists_from_the_registry():
    assert tuple(SYNTHETIC) == PAPER_METHODS["synthetic"]
    assert tuple(TAU) == PAPER_METHODS["tau-bench"]
    assert tuple(TOOLBENCH) == PAPER_METHODS["toolbench"]


def test_unknown_benchmark():
    with pytest.raises(ValueError, match="unknown benchmark 'x'; known:"):
        paper_methods("x")
