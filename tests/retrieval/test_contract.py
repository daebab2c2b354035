"""The contract every retriever passes (one parametrized test, scikit-learn style)."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest

from osustat.retrieval import FlatVector, RetrievalResult, Retriever, Trajectory
from osustat.retrieval.base import pack
from osustat.retrieval.contract import CHECKS, ContractViolation, check_retriever
from osustat.retrieval.registry import METHODS, load_retriever, make

from .trajectories import random_trajectory

FACTORIES = {name: spec.factory for name, spec in METHODS.items()}

#: Settings each method must refuse at construction.
BAD_SETTINGS = {
    "Periodic Summary": [{"period": 0}, {"period": 2.5}, {"recent_fraction": 1.5}],
    "Flat + MMR": [{"lam": -0.1}, {"lam": float("nan")}],
    "Coverage-Aware": [{"beta": -1}, {"beta": "x"}],
    "Tree Abstraction": [{"branching": 1}, {"seed": -1}],
    "OSU-Mem": [{"top_c": 0}, {"alpha": 2}, {"lambda_nov": -1}, {"osu_config": {"m_max": 1}}],
    "OSU-Mem (coverage-guided)": [{"beta": float("inf")}],
    "OSU-Mem (cohesion)": [{"alpha": -0.5}],
}


def run(retriever, traj, q, budget, time=None, evidence=None):
    kwargs = {"time": time}
    if retriever.oracle:
        kwargs["evidence"] = evidence if evidence is not None else np.zeros(0, dtype=np.int64)
    return retriever.retrieve(q, budget, **kwargs)


@pytest.mark.parametrize("check", list(CHECKS))
@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_contract_check(name, check):
    """Every method passes every check of the one contract (retrieval/contract.py): the
    tests run those checks, they do not re-implement them."""
    check_retriever(FACTORIES[name], checks=[check]).raise_if_failed()


@pytest.mark.parametrize("name", sorted(FACTORIES))
class TestBeyondTheContract:
    def test_early_query_time_with_disjoint_pool(self, name):
        # OSUs exist, but none starts before time 2 (crashed OSU-Mem once)
        traj = Trajectory.from_steps(
            np.eye(6), [10.0] * 6, entities=[set(), set(), set(), {"x"}, {"x"}, set()]
        )
        res = run(
            FACTORIES[name]().build(traj), traj, np.ones(6), 64, time=2, evidence=np.array([1])
        )
        assert np.all(res.steps < 2)

    def test_errors_name_the_argument(self, name):
        """The contract checks that bad arguments are refused; these are the messages."""
        with pytest.raises(RuntimeError, match="is not built"):
            run(FACTORIES[name](), None, np.ones(16), 64)
        traj = random_trajectory(np.random.default_rng(3), n=30)
        r = FACTORIES[name]().build(traj)
        with pytest.raises(ValueError, match="`budget` must be a finite number >= 0"):
            run(r, traj, np.ones(16), -1)
        with pytest.raises(ValueError, match=r"`query` must have shape \(16,\)"):
            run(r, traj, np.ones(8), 64)
        with pytest.raises(ValueError, match=r"`time` must be in \[0, 30\]"):
            run(r, traj, np.ones(16), 64, time=31)
        if r.oracle:
            with pytest.raises(TypeError, match="is an oracle: pass `evidence=`"):
                r.retrieve(np.ones(16), 64)
        else:
            with pytest.raises(TypeError, match="must not see evidence"):
                r.retrieve(np.ones(16), 64, evidence=[1, 2])


@pytest.mark.parametrize("name", sorted(METHODS))
def test_importable_contract(name):
    """The same contract users run with ``osustat check-retriever`` (retrieval/contract.py)."""
    factory = type(make(name)) if name in BAD_SETTINGS else METHODS[name].factory
    report = check_retriever(METHODS[name].factory)
    report.raise_if_failed()
    assert len(report.results) == len(CHECKS)
    if name in BAD_SETTINGS:
        refused = check_retriever(factory, bad_settings=BAD_SETTINGS[name], checks=[])
        refused.raise_if_failed()


class _Greedy(FlatVector):
    name = "broken"


class _OverBudget(_Greedy):
    def _retrieve(self, q, budget, end, evidence):
        return RetrievalResult(
            np.arange(end, dtype=np.int64), float(self.trajectory_.costs[:end].sum())
        )


class _WorkInInit(_Greedy):
    def __init__(self):
        self.index_ = {}


class _PeeksAtFuture:
    """Centers the query on the mean of ALL steps, future ones included."""

    name = "peeks"
    oracle = False

    def build(self, trajectory):
        self.trajectory_ = trajectory
        return self

    def retrieve(self, query, budget, *, time=None, evidence=None):
        t = self.trajectory_
        end = t.n_steps if time is None else time
        center = t.embeddings.mean(axis=0) if t.n_steps else 0.0
        scores = t.embeddings[:end] @ (np.asarray(query) - center)
        steps, used = pack(np.argsort(-scores, kind="stable"), t.costs, budget)
        return RetrievalResult(np.array(steps, dtype=np.int64), used)


class _Unpicklable(_Greedy):
    def _build(self, trajectory):
        self.key_ = lambda: None


class _AcceptsAnything(_Greedy):
    def __init__(self, *, k=3):
        self.k = k


class TestContractCanFail:
    """Each check catches the defect it is named for (so the contract is not vacuous)."""

    @pytest.mark.parametrize(
        "cls, check",
        [
            (_OverBudget, "budget, duplicates, step range"),
            (_WorkInInit, "no work in __init__"),
            (_PeeksAtFuture, "future steps do not shape the answer"),
            (_Unpicklable, "picklable"),
        ],
    )
    def test_defect_is_caught(self, cls, check):
        report = check_retriever(cls)
        assert check in {f.name for f in report.failures}
        with pytest.raises(ContractViolation, match="fails the retriever contract"):
            report.raise_if_failed()

    def test_bad_settings_accepted_is_a_failure(self):
        report = check_retriever(_AcceptsAnything, bad_settings=[{"k": -1}], checks=[])
        assert not report.passed and "accepted [{'k': -1}]" in report.failures[0].message

    def test_budget_check_holds_under_python_O(self):
        """``python -O`` strips ``assert``; the contract still fails an over-budget retriever."""
        code = textwrap.dedent(
            """
            import numpy as np
            from osustat.retrieval import FlatVector, RetrievalResult
            from osustat.retrieval.contract import ContractViolation, check_retriever

            assert False, "asserts run: this is not python -O"

            class IgnoresBudget(FlatVector):
                name = "ignores the budget"

                def _retrieve(self, q, budget, end, evidence):
                    costs = self.trajectory_.costs[:end]
                    return RetrievalResult(np.arange(end, dtype=np.int64), float(costs.sum()))

            report = check_retriever(IgnoresBudget, checks=["budget, duplicates, step range"])
            print(report.to_text())
            try:
                report.raise_if_failed()
            except ContractViolation as exc:
                print("raised", type(exc).__name__)
            """
        )
        out = subprocess.run(
            [sys.executable, "-O", "-c", code], capture_output=True, text=True, check=True
        ).stdout
        assert "FAIL  budget, duplicates, step range -- used" in out
        assert "0 of 1 checks passed" in out and "raised ContractViolation" in out

    def test_unknown_check(self):
        with pytest.raises(ValueError, match="unknown checks"):
            check_retriever(FlatVector, checks=["nope"])


class _RawSteps(_PeeksAtFuture):
    """Answers with one given step (a function of ``n``) at every nonzero budget."""

    step = staticmethod(lambda n: n + 5)

    def retrieve(self, query, budget, *, time=None, evidence=None):
        t = self.trajectory_
        if not 0 <= (t.n_steps if time is None else time) <= t.n_steps or budget < 0:
            raise ValueError("bad argument")
        if budget == 0 or t.n_steps == 0:
            return RetrievalResult(np.zeros(0, dtype=np.int64), 0.0)
        return RetrievalResult(np.array([self.step(t.n_steps)]), 0.0)


class _Negative(_RawSteps):
    step = staticmethod(lambda n: -1)


class _FloatSteps(_Greedy):
    def _retrieve(self, q, budget, end, evidence):
        steps, used = pack(range(end), self.trajectory_.costs, budget)
        return RetrievalResult(np.array(steps, dtype=float), used)


class _Duplicates(_Greedy):
    def _retrieve(self, q, budget, end, evidence):
        steps, used = pack(range(end), self.trajectory_.costs, budget / 2)
        if steps:
            steps, used = [*steps, steps[0]], used + self.trajectory_.costs[steps[0]]
        return RetrievalResult(np.array(steps, dtype=np.int64), used)


class _Random(_Greedy):
    """Packs a fresh random order on every call: only non-deterministic."""

    def _retrieve(self, q, budget, end, evidence):
        order = np.random.default_rng().permutation(end)
        steps, used = pack(order, self.trajectory_.costs, budget)
        return RetrievalResult(np.array(steps, dtype=np.int64), used)


class TestContractMessages:
    """Failures say what is wrong, naming the step, budget and time (a new user's review:
    raw numpy IndexErrors, a negative step wrapping silently, "duplicate steps" alone)."""

    @pytest.mark.parametrize(
        ("cls", "needle"),
        [
            (_RawSteps, "are not steps of the trajectory [0, "),
            (_Negative, "steps [-1] are not steps of the trajectory [0, "),
            (_FloatSteps, "steps must be integers; got float64 ["),
            (_Duplicates, "duplicate steps [0] (budget "),
        ],
    )
    def test_step_messages(self, cls, needle):
        report = check_retriever(cls, checks=["budget, duplicates, step range"])
        [failure] = report.failures
        assert needle in failure.message and "(budget " in failure.message, failure.message
        assert ", time " in failure.message and "IndexError" not in failure.message

    def test_nondeterminism_is_named_as_the_cause(self):
        report = check_retriever(_Random)
        failed = {f.name: f.message for f in report.failures}
        assert "deterministic" in failed
        follows = {n: m for n, m in failed.items() if n != "deterministic"}
        assert follows, failed
        for name, message in follows.items():
            assert message.startswith("follows from `deterministic` failing"), (name, message)


class TestLoadRetriever:
    def test_module_class(self):
        spec = load_retriever("osustat.retrieval.baselines:FlatVector")
        assert spec.name == "Flat Vector" and not spec.oracle
        assert isinstance(spec.factory(), Retriever)

    @pytest.mark.parametrize(
        "text, match",
        [
            ("no_such_module_xyz:Thing", "cannot import module 'no_such_module_xyz'"),
            ("osustat.retrieval.baselines:Nope", "has no attribute 'Nope'"),
            ("osustat.retrieval.base:pack", "constructing it with no arguments failed"),
            ("builtins:dict", "does not follow the retriever protocol"),
            ("no-such-entry-point", "no entry point named 'no-such-entry-point'"),
            ("", "must be .module:Class. or an entry point"),
        ],
    )
    def test_errors(self, text, match):
        with pytest.raises(ValueError, match=match):
            load_retriever(text)

    def test_make_unknown(self):
        with pytest.raises(ValueError, match="unknown retrieval method 'x'"):
            make("x")


def test_a_check_raising_without_a_message_names_the_exception(monkeypatch):
    """`RuntimeError()` printed "RuntimeError: " and an empty ContractViolation nothing at all
    (a review of the day's changes): the exception's name stands in for a missing message."""
    from osustat.retrieval.contract import _run_check

    def raises(exc):
        def check(factory):
            raise exc

        return check

    monkeypatch.setitem(CHECKS, "bare", raises(RuntimeError()))
    monkeypatch.setitem(CHECKS, "empty", raises(ContractViolation("")))
    assert _run_check("bare", None)[0].message == "RuntimeError"
    assert _run_check("empty", None)[0].message == "ContractViolation"


def test_a_negative_summary_cost_is_a_breach():
    """A red team (stop 61): steps worth twice the budget with ``summary_tokens = -budget``
    added up to `tokens` and passed; so did a negative count of summaries."""
    from osustat.retrieval.contract import check_answer

    costs = np.full(10, 32.0)
    over = RetrievalResult(np.arange(4), 64.0, summary_tokens=-64.0, n_summaries=1)
    with pytest.raises(ContractViolation, match=r"`summary_tokens` must be >= 0 .* got -64 \("):
        check_answer(over, costs, 64, 10)
    for bad in (-1, "1", None, True, 1.5):  # each field with its own message (a reviewer)
        with pytest.raises(
            ContractViolation, match=rf"`n_summaries` must be a count >= 0; got {bad!r}"
        ):
            check_answer(RetrievalResult(np.arange(2), 64.0, n_summaries=bad), costs, 64, 10)
    with pytest.raises(ContractViolation, match=r"`summary_tokens` must be a number; got None"):
        check_answer(RetrievalResult(np.arange(2), 64.0, summary_tokens=None), costs, 64, 10)
    check_answer(RetrievalResult(np.arange(1), 40.0, 8.0, 1), costs, 64, 10)  # a real summary
    check_answer(RetrievalResult(np.arange(1), 32.0, n_summaries=0.0), costs, 64, 10)
    check_answer(
        RetrievalResult(np.arange(1), np.array(32.0), np.float32(0), np.int64(0)), costs, 64, 10
    )


def test_steps_given_as_a_list_reach_the_run_as_an_array():
    """A red team (stop 61): a list of step indices passed the contract, then the pipeline's
    ``res.steps.tolist()`` ended the run with a traceback."""
    from osustat.retrieval.contract import CheckedRetriever

    class Listed(FlatVector):
        name = "Listed"

        def retrieve(self, query, budget, *, time=None, evidence=None):
            res = super().retrieve(query, budget, time=time, evidence=evidence)
            return RetrievalResult(res.steps.tolist(), res.tokens)

    traj = random_trajectory(np.random.default_rng(3), n=30)
    checked = CheckedRetriever(Listed(), "t:Listed").build(traj)
    got = checked.retrieve(traj.embeddings[5], 256, time=20)
    want = FlatVector().build(traj).retrieve(traj.embeddings[5], 256, time=20)
    assert isinstance(got.steps, np.ndarray) and got.steps.dtype == np.int64
    np.testing.assert_array_equal(got.steps, want.steps)
    assert got.tokens == want.tokens
