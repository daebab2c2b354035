"""The retriever contract, importable: run it on your own class before a benchmark does.

In the spirit of scikit-learn's ``check_estimator``: :func:`check_retriever` takes a
zero-argument factory (usually the class) and runs every check below on small random
trajectories, returning a :class:`ContractReport` (it never raises for a failed check; call
``report.raise_if_failed()`` for that, which raises :class:`ContractViolation`). The checks raise
that named error themselves, never ``assert``, so they hold under ``python -O`` too.
``osustat check-retriever module:Class`` prints the report.

Checks: the protocol; no work in ``__init__`` (no fitted, trailing-underscore state before
``build``); parameters not overwritten by ``build``; retrieving before ``build`` is a clear
error; the budget is never exceeded and tokens add up; no duplicate or out-of-range steps, and
none at or after the query time; future steps do not shape the answer (an index built on the
whole trajectory answers a query at time t as one built on the first t steps); deterministic;
``build`` idempotent and rebuildable on another trajectory; picklable (a built retriever
survives a pickle round trip with the same answers); empty trajectories and zero budgets give
nothing; bad arguments are refused with ``ValueError``; only oracles see the evidence; and
bad settings (given by the caller) are refused at construction. When "deterministic" fails,
the failures of the checks that compare two builds' answers (:data:`FOLLOW_DETERMINISM`) say
they follow from it.

The per-answer rules are one function, :func:`check_answer`; ``osustat reproduce --retriever``
runs it on every answer a user retriever gives (:class:`CheckedFactory`) and stops at the
first breach with a :class:`RetrieverError`.
"""

from __future__ import annotations

import copy
import numbers
import pickle
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .base import RetrievalResult, Retriever
from .trajectory import Trajectory

__all__ = [
    "CHECKS",
    "FOLLOW_DETERMINISM",
    "CheckResult",
    "CheckedFactory",
    "CheckedRetriever",
    "ContractReport",
    "ContractViolation",
    "RetrieverError",
    "build_in",
    "check_answer",
    "check_retriever",
    "random_trajectory",
]


class ContractViolation(AssertionError):
    """A retriever breaks the retriever contract.

    Raised by every check (never a bare ``assert``, which ``python -O`` strips) and by
    :meth:`ContractReport.raise_if_failed`; its message names the check and what failed.
    """


def _require(condition: Any, message: str) -> None:
    """Raise :class:`ContractViolation` with `message` unless `condition` holds."""
    if not condition:
        raise ContractViolation(message)


def random_trajectory(rng: np.random.Generator, n: int = 60, dim: int = 16) -> Trajectory:
    """Annotated random steps (a few tools, entities, subgoal segments) for the checks."""
    emb = rng.normal(size=(n, dim))
    costs = np.clip(rng.normal(15, 3, n), 5, None)
    tools = [None if rng.random() < 0.2 else f"tool{rng.integers(6)}(x)" for _ in range(n)]
    entities = [
        {f"ent{e}" for e in rng.choice(8, size=int(rng.integers(0, 3)), replace=False)}
        for _ in range(n)
    ]
    subgoals = np.sort(rng.integers(0, 5, n)).tolist()
    return Trajectory.from_steps(emb, costs, tools=tools, entities=entities, subgoals=subgoals)


def _query(rng: np.random.Generator, traj: Trajectory, k: int = 3) -> tuple[Any, Any]:
    ev = rng.choice(traj.n_steps, size=min(k, traj.n_steps), replace=False)
    q = traj.embeddings[ev].mean(axis=0) + 0.1 * rng.normal(size=traj.dim)
    return q, np.sort(ev)


def _ask(r: Retriever, q: Any, budget: float, time: int | None = None, ev: Any = None) -> Any:
    if r.oracle:
        ev = np.zeros(0, dtype=np.int64) if ev is None else ev
        if time is not None:
            ev = ev[ev < time]
        return r.retrieve(q, budget, time=time, evidence=ev)
    return r.retrieve(q, budget, time=time)


def _params(r: Any) -> dict[str, Any]:
    return {k: v for k, v in vars(r).items() if not k.startswith("_") and not k.endswith("_")}


def _equal(a: Any, b: Any) -> bool:
    try:
        return bool(np.all(a == b))
    except Exception:
        return repr(a) == repr(b)


def _same(a: Any, b: Any) -> bool:
    return bool(np.array_equal(a.steps, b.steps)) and float(a.tokens) == float(b.tokens)


Factory = Callable[[], Any]


def _protocol(make: Factory) -> None:
    r = make()
    _require(
        isinstance(r, Retriever),
        "does not follow the Retriever protocol: needs class attributes `name`, `oracle` and "
        "methods `build`, `retrieve`",
    )
    _require(isinstance(type(r).name, str), "`name` must be a class attribute string")


def _no_work_in_init(make: Factory) -> None:
    fitted = [k for k in vars(make()) if k.endswith("_") and not k.startswith("_")]
    _require(not fitted, f"__init__ sets fitted state {fitted}; set it in build()")


def _params_not_overwritten(make: Factory) -> None:
    r = make()
    before = copy.deepcopy(_params(r))
    r.build(random_trajectory(np.random.default_rng(0)))
    after = _params(r)
    changed = [k for k in before if k not in after or not _equal(before[k], after[k])]
    _require(not changed, f"build() changed the parameters {changed}")


def _unbuilt_error(make: Factory) -> None:
    try:
        _ask(make(), np.ones(16), 64)
    except (RuntimeError, ValueError):
        return
    raise ContractViolation("retrieving before build() did not raise RuntimeError/ValueError")


def _shown(values: Any, limit: int = 5) -> str:
    """Up to `limit` values as a list, with how many more there are."""
    items = np.asarray(values).tolist()
    more = f" and {len(items) - limit} more" if len(items) > limit else ""
    return f"{items[:limit]}{more}"


def check_answer(answer: Any, costs: Any, budget: float, time: int) -> None:
    """The per-answer rules of the contract; raise :class:`ContractViolation` on the first broken.

    `answer` is what ``retrieve(query, budget, time=time)`` returned on a trajectory whose step
    costs are `costs`. The rules, in order: a result with ``steps`` and ``tokens``; the steps
    a 1-d array of integers (an empty array of any type passes), each in ``[0, time)`` -- a
    step of the trajectory, and not at or after the query time; no step twice; ``tokens``
    within the budget; ``summary_tokens`` and ``n_summaries`` not negative; and ``tokens``
    equal to the steps' costs plus ``summary_tokens``. Types
    and ranges are checked before the steps index `costs`, so every message names the
    offending step(s), the budget and the time. The contract's "budget, duplicates, step
    range" check and every answer a user retriever gives during ``osustat reproduce`` run
    this one function.

    >>> import numpy as np
    >>> from osustat.retrieval.base import RetrievalResult
    >>> from osustat.retrieval.contract import check_answer
    >>> check_answer(RetrievalResult(np.array([0, 2, 0]), 30.0), np.full(4, 10.0), 64, 3)
    Traceback (most recent call last):
    ...
    osustat.retrieval.contract.ContractViolation: duplicate steps [0] (budget 64, time 3)
    """
    where = f"(budget {budget:g}, time {time})"
    if not hasattr(answer, "steps") or not hasattr(answer, "tokens"):
        raise ContractViolation(
            f"retrieve() returned {type(answer).__name__}, not a RetrievalResult with `steps` "
            f"and `tokens` {where}"
        )
    steps = np.asarray(answer.steps)
    if steps.ndim != 1:
        raise ContractViolation(f"steps must be a 1-d array; got shape {steps.shape} {where}")
    if steps.size == 0:
        steps = steps.astype(np.int64)
    if not np.issubdtype(steps.dtype, np.integer):
        raise ContractViolation(
            f"steps must be integers; got {steps.dtype} {_shown(steps)} {where}"
        )
    n = len(costs)
    # messages are built only on a breach: this runs on every answer of a user retriever
    low, high = (int(steps.min()), int(steps.max())) if steps.size else (0, -1)
    if low < 0 or high >= n:
        outside = steps[(steps < 0) | (steps >= n)]
        raise ContractViolation(
            f"steps {_shown(outside)} are not steps of the trajectory [0, {n}) {where}"
        )
    if high >= time:
        raise ContractViolation(
            f"steps {_shown(steps[steps >= time])} are at or after the query time {where}: "
            "future steps"
        )
    if steps.size > 1:
        ordered = np.sort(steps)
        repeated = ordered[1:] == ordered[:-1]
        if repeated.any():
            twice = np.unique(ordered[1:][repeated])
            raise ContractViolation(f"duplicate steps {_shown(twice)} {where}")
    tokens = _number(answer.tokens, "tokens", where)
    if not tokens <= budget + 1e-9:
        raise ContractViolation(f"used {tokens:g} tokens of a budget {budget:g} (time {time})")
    # a negative summary cost would let the steps spend more than the budget while `tokens`
    # adds up (a red team: steps worth twice the budget passed)
    summaries = _number(getattr(answer, "summary_tokens", 0.0), "summary_tokens", where)
    if not summaries >= 0:
        raise ContractViolation(
            f"`summary_tokens` must be >= 0 (a summary costs tokens); got {summaries:g} {where}"
        )
    n_summaries = getattr(answer, "n_summaries", 0)
    if not _is_count(n_summaries):
        raise ContractViolation(f"`n_summaries` must be a count >= 0; got {n_summaries!r} {where}")
    spent = float(np.asarray(costs)[steps].sum()) + summaries
    if not abs(spent - tokens) <= 1e-6 * max(1.0, spent):
        raise ContractViolation(f"tokens {tokens:g} != step costs + summaries {spent:g} {where}")


def _real(x: Any) -> bool:
    """Whether `x` is a real number: Python's, numpy's (a 0-d array too); not a bool or text."""
    if isinstance(x, np.ndarray) and x.ndim == 0:
        x = x[()]
    return isinstance(x, numbers.Real) and not isinstance(x, bool | np.bool_)


def _number(x: Any, field: str, where: str) -> float:
    """An answer's `field` as a float, else the breach naming it."""
    if not _real(x):
        raise ContractViolation(f"`{field}` must be a number; got {x!r} {where}")
    return float(x)


def _is_count(x: Any) -> bool:
    """Whether `x` is a whole number >= 0 (``2`` or ``2.0``; not text nor a bool)."""
    return _real(x) and float(x) >= 0 and float(x).is_integer()


def _budget_and_steps(make: Factory) -> None:
    for seed in range(6):
        rng = np.random.default_rng(100 + seed)
        traj = random_trajectory(rng, n=int(rng.integers(1, 80)))
        q, ev = _query(rng, traj)
        r = make().build(traj)
        for budget in (0, 7, 64, 256, 512):
            time = int(rng.integers(0, traj.n_steps + 1))
            check_answer(_ask(r, q, budget, time, ev), traj.costs, budget, time)


def _no_future(make: Factory) -> None:
    for seed in range(4):
        rng = np.random.default_rng(200 + seed)
        traj = random_trajectory(rng, n=int(rng.integers(2, 80)))
        q, ev = _query(rng, traj)
        time = int(rng.integers(1, traj.n_steps))
        full = _ask(make().build(traj), q, 256, time, ev)
        prefix = traj.prefix(time)
        alone = _ask(make().build(prefix), q, 256, None, ev[ev < time])
        _require(_same(full, alone), f"steps after the query time {time} changed the answer")


def _deterministic(make: Factory) -> None:
    rng = np.random.default_rng(1)
    traj = random_trajectory(rng, n=120)
    q, ev = _query(rng, traj)
    _require(
        _same(
            _ask(make().build(traj), q, 256, None, ev), _ask(make().build(traj), q, 256, None, ev)
        ),
        "two builds on the same trajectory answer differently",
    )


def _idempotent_build(make: Factory) -> None:
    rng = np.random.default_rng(2)
    a, b = random_trajectory(rng, n=70), random_trajectory(rng, n=50)
    q, ev = _query(rng, b)
    r = make().build(a).build(b)
    _require(
        _same(_ask(r, q, 256, None, ev), _ask(make().build(b), q, 256, None, ev)),
        "build(a).build(b) answers differently from build(b): state leaks across builds",
    )
    r2 = make().build(b).build(b)
    _require(
        _same(_ask(r2, q, 256, None, ev), _ask(make().build(b), q, 256, None, ev)),
        "building twice on the same trajectory changes the answer",
    )


def _picklable(make: Factory) -> None:
    rng = np.random.default_rng(3)
    traj = random_trajectory(rng, n=60)
    q, ev = _query(rng, traj)
    r = make().build(traj)
    clone = pickle.loads(pickle.dumps(r))
    _require(
        _same(_ask(r, q, 128, None, ev), _ask(clone, q, 128, None, ev)),
        "a pickled and unpickled retriever answers differently",
    )


def _empty_and_zero(make: Factory) -> None:
    _require(
        np.asarray(_ask(make().build(Trajectory.empty(16)), np.ones(16), 256).steps).size == 0,
        "an empty trajectory returned steps",
    )
    traj = random_trajectory(np.random.default_rng(4), n=30)
    res = _ask(make().build(traj), np.ones(16), 0)
    _require(np.asarray(res.steps).size == 0 and res.tokens == 0, "a zero budget returned steps")


def _bad_arguments(make: Factory) -> None:
    r = make().build(random_trajectory(np.random.default_rng(5), n=30))
    for label, call in (
        ("budget=-1", lambda: _ask(r, np.ones(16), -1)),
        ("budget=nan", lambda: _ask(r, np.ones(16), float("nan"))),
        ("a query of the wrong dimension", lambda: _ask(r, np.ones(8), 64)),
        ("time beyond the trajectory", lambda: _ask(r, np.ones(16), 64, 31)),
    ):
        try:
            call()
        except ValueError:
            continue
        raise ContractViolation(f"{label} was not refused with ValueError")


def _evidence_only_for_oracles(make: Factory) -> None:
    r = make().build(random_trajectory(np.random.default_rng(6), n=30))
    try:
        if r.oracle:
            r.retrieve(np.ones(16), 64)
        else:
            r.retrieve(np.ones(16), 64, evidence=[1, 2])
    except TypeError:
        return
    raise ContractViolation(
        "an oracle accepted no evidence" if r.oracle else "a non-oracle accepted the evidence"
    )


class RetrieverError(ValueError):
    """A user retriever broke the contract, or raised, during a run (``osustat reproduce``).

    A ``ValueError``, so the command line reports it in one line with exit status 2. It names
    the retriever (as ``--retriever`` gave it), the episode (once the benchmark has said
    which: :func:`build_in`), the budget and query time, and the rule broken or the exception.
    """

    def __init__(
        self,
        retriever: str,
        problem: str,
        *,
        episode: str | None = None,
        budget: float | None = None,
        time: int | None = None,
    ) -> None:
        super().__init__(retriever, problem)
        self.retriever, self.problem = retriever, problem
        self.episode, self.budget, self.time = episode, budget, time

    def __reduce__(self) -> Any:  # keyword attributes survive a worker process's pickling
        return (
            _rebuild_error,
            (self.retriever, self.problem, self.episode, self.budget, self.time),
        )

    def __str__(self) -> str:
        where = [f"episode {self.episode}"] if self.episode is not None else []
        if self.budget is not None:
            where.append(f"budget {self.budget:g}")
        if self.time is not None:
            where.append(f"query time {self.time}")
        at = f" ({', '.join(where)})" if where else ""
        return (
            f"`--retriever {self.retriever}`{at}: {self.problem}; "
            f"`osustat check-retriever {self.retriever}` runs every check of the contract"
        )


def _rebuild_error(
    retriever: str, problem: str, episode: Any, budget: Any, time: Any
) -> RetrieverError:
    return RetrieverError(retriever, problem, episode=episode, budget=budget, time=time)


class CheckedRetriever:
    """A user retriever whose every answer is checked by :func:`check_answer` during a run.

    ``build`` and ``retrieve`` go to the wrapped retriever; a broken rule or an exception of
    its own becomes a :class:`RetrieverError` naming the retriever, the episode, the budget and
    the query time. Other attributes are the wrapped retriever's.
    """

    def __init__(self, inner: Any, label: str, episode: str | None = None) -> None:
        self.inner, self.label, self.episode = inner, label, episode
        self.name, self.oracle = inner.name, inner.oracle
        self.costs_: Any = None

    def __getattr__(self, attr: str) -> Any:
        inner = self.__dict__.get("inner")
        if inner is None or attr.startswith("__"):
            raise AttributeError(attr)
        return getattr(inner, attr)

    def _error(self, problem: str, **where: Any) -> RetrieverError:
        return RetrieverError(self.label, problem, episode=self.episode, **where)

    def build(self, trajectory: Trajectory) -> CheckedRetriever:
        try:
            built = self.inner.build(trajectory)
        except Exception as exc:
            raise self._error(f"build() raised {type(exc).__name__}: {exc}") from exc
        if built is None:
            raise self._error("build() returned None; it must return the retriever (self)")
        self.inner, self.costs_ = built, trajectory.costs
        return self

    def retrieve(
        self, query: Any, budget: float, *, time: int | None = None, evidence: Any = None
    ) -> Any:
        if self.costs_ is None:
            raise RuntimeError(f"{self.label} is not built; call .build(trajectory).")
        end = len(self.costs_) if time is None else int(time)
        kwargs = {} if evidence is None else {"evidence": evidence}
        try:
            answer = self.inner.retrieve(query, budget, time=time, **kwargs)
        except Exception as exc:
            problem = f"retrieve() raised {type(exc).__name__}: {exc}"
            raise self._error(problem, budget=budget, time=end) from exc
        try:
            check_answer(answer, self.costs_, float(budget), end)
        except ContractViolation as exc:
            raise self._error(f"broke the contract: {exc}", budget=budget, time=end) from None
        if not isinstance(answer.steps, np.ndarray):  # a list of ints passes the check
            return RetrievalResult(
                np.asarray(answer.steps, dtype=np.int64),
                float(answer.tokens),
                float(getattr(answer, "summary_tokens", 0.0)),
                int(getattr(answer, "n_summaries", 0)),
            )
        return answer


@dataclass(frozen=True)
class CheckedFactory:
    """A user retriever's factory whose retrievers check every answer (:class:`CheckedRetriever`).

    What ``reproduce --retriever`` runs (``retrieval.registry.user_factories``); the paper's
    own methods pass the whole contract in the test suite and are not wrapped.
    """

    factory: Callable[[], Any]
    label: str

    def __call__(self) -> CheckedRetriever:
        return CheckedRetriever(self.factory(), self.label)


def build_in(factory: Callable[[], Any], trajectory: Trajectory, episode: str) -> Any:
    """``factory().build(trajectory)``; a checked user retriever learns its `episode` first,
    so that an error names it."""
    retriever = factory()
    if isinstance(retriever, CheckedRetriever):
        retriever.episode = str(episode)
    return retriever.build(trajectory)


#: Every check, by name, in the order they run.
CHECKS: dict[str, Callable[[Factory], None]] = {
    "protocol": _protocol,
    "no work in __init__": _no_work_in_init,
    "parameters not overwritten by build": _params_not_overwritten,
    "unbuilt is an error": _unbuilt_error,
    "budget, duplicates, step range": _budget_and_steps,
    "future steps do not shape the answer": _no_future,
    "deterministic": _deterministic,
    "build idempotent and rebuildable": _idempotent_build,
    "picklable": _picklable,
    "empty trajectory and zero budget": _empty_and_zero,
    "bad arguments refused": _bad_arguments,
    "evidence only for oracles": _evidence_only_for_oracles,
}


#: Checks that compare the answers of two builds: a non-deterministic retriever fails them
#: whatever else it does, so their failures are reported as following from "deterministic".
FOLLOW_DETERMINISM = (
    "future steps do not shape the answer",
    "build idempotent and rebuildable",
    "picklable",
)


@dataclass(frozen=True)
class CheckResult:
    """One check: its name, whether it passed, and why not."""

    name: str
    passed: bool
    message: str = ""


@dataclass(frozen=True)
class ContractReport:
    """All checks of one retriever.

    Attributes
    ----------
    retriever : str
        The retriever's name (its ``name`` class attribute, or the factory's repr).
    results : tuple of CheckResult
    """

    retriever: str
    results: tuple[CheckResult, ...] = field(default_factory=tuple)

    @property
    def passed(self) -> bool:
        return all(r.passed for r in self.results)

    @property
    def failures(self) -> tuple[CheckResult, ...]:
        return tuple(r for r in self.results if not r.passed)

    def raise_if_failed(self) -> None:
        if not self.passed:
            lines = "; ".join(f"{r.name}: {r.message}" for r in self.failures)
            raise ContractViolation(f"{self.retriever} fails the retriever contract: {lines}")

    def to_text(self) -> str:
        rows = [
            f"{'PASS' if r.passed else 'FAIL'}  {r.name}"
            + (f" -- {r.message}" if r.message else "")
            for r in self.results
        ]
        n_pass = len(self.results) - len(self.failures)
        summary = f"{n_pass} of {len(self.results)} checks passed"
        return "\n".join([f"retriever contract: {self.retriever}", *rows, summary])


def _run_check(name: str, factory: Factory) -> tuple[CheckResult, bool]:
    """One check's result, and whether it failed on an answer comparison (not an error)."""
    try:
        CHECKS[name](factory)
    except ContractViolation as exc:
        return CheckResult(name, False, str(exc) or type(exc).__name__), True
    except Exception as exc:
        said = f": {exc}" if str(exc) else ""  # RuntimeError() has no message of its own
        return CheckResult(name, False, f"{type(exc).__name__}{said}"), False
    return CheckResult(name, True), False


def _follow_determinism(
    runs: list[tuple[CheckResult, bool]], factory: Factory
) -> list[CheckResult]:
    """Mark the comparison failures of :data:`FOLLOW_DETERMINISM` as following from a
    non-deterministic retriever (run "deterministic" here if it was not selected)."""
    comparisons = [r.name for r, compared in runs if compared and r.name in FOLLOW_DETERMINISM]
    if not comparisons:
        return [r for r, _ in runs]
    done = {r.name: r for r, _ in runs}
    determinism = done.get("deterministic") or _run_check("deterministic", factory)[0]
    if determinism.passed:
        return [r for r, _ in runs]
    return [
        CheckResult(
            r.name,
            False,
            "follows from `deterministic` failing (two builds on one trajectory answer "
            f"differently, so no comparison of answers can pass): {r.message}",
        )
        if r.name in comparisons
        else r
        for r, _ in runs
    ]


def check_retriever(
    factory: Factory,
    *,
    bad_settings: Iterable[Mapping[str, Any]] = (),
    checks: Iterable[str] | None = None,
) -> ContractReport:
    """Run the retriever contract on `factory` (a class or a zero-argument callable).

    Parameters
    ----------
    factory : callable
        Returns a new, unbuilt retriever.
    bad_settings : iterable of dict
        Keyword settings that must be refused (``ValueError`` or ``TypeError``) when passed to
        `factory`, e.g. ``[{"top_c": 0}]``.
    checks : iterable of str, optional
        Run only these checks (names of :data:`CHECKS`).

    Examples
    --------
    >>> from osustat.retrieval import FlatVector
    >>> from osustat.retrieval.contract import check_retriever
    >>> report = check_retriever(FlatVector, bad_settings=[{"unknown": 1}])
    >>> report.passed, len(report.results)
    (True, 13)
    """
    if not callable(factory):
        raise TypeError(f"`factory` must be a class or callable; got {type(factory).__name__}.")
    names = list(CHECKS) if checks is None else list(checks)
    unknown = [n for n in names if n not in CHECKS]
    if unknown:
        raise ValueError(f"unknown checks {unknown}; known: {list(CHECKS)}.")
    try:
        label = str(type(factory()).name)
    except Exception:
        label = repr(factory)
    results = _follow_determinism([_run_check(name, factory) for name in names], factory)
    bad = list(bad_settings)
    if bad:
        accepted = []
        for settings in bad:
            try:
                factory(**settings)
            except (ValueError, TypeError):
                continue
            accepted.append(dict(settings))
        results.append(
            CheckResult(
                "bad settings refused at construction",
                not accepted,
                f"accepted {accepted}" if accepted else "",
            )
        )
    return ContractReport(label, tuple(results))
