import numpy as np
import pytest

from osustat.analyses.runner import child_seeds, run_tasks


def _draw(i, seed_seq):
    return i, float(np.random.default_rng(seed_seq).random())


class TestRunTasks:
    def test_order_and_values_do_not_depend_on_jobs(self):
        tasks = [(i, s) for i, s in enumerate(child_seeds(7, 6))]
        serial = run_tasks(_draw, tasks, jobs=1, progress=False)
        parallel = run_tasks(_draw, tasks, jobs=2, progress=False)
        assert serial == parallel
        assert [i for i, _ in serial] == list(range(6))
        assert len({v for _, v in serial}) == 6

    def test_child_seeds_are_reproducible(self):
        a = [np.random.default_rng(s).random() for s in child_seeds(3, 4)]
        b = [np.random.default_rng(s).random() for s in child_seeds(3, 4)]
        assert a == b

    @pytest.mark.parametrize("jobs", [0, -1, 1.5, True])
    def test_bad_jobs(self, jobs):
        with pytest.raises(ValueError, match="`jobs` must be an integer >= 1"):
            run_tasks(_draw, [], jobs=jobs, progress=False)
