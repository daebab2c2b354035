"""LLM-mediated evidence selection: scoring and statistics (paper §6.6, Appendix F).

For each query, each retrieval method's retrieved steps are handed with the instruction to a
selector (an LLM, or an offline stand-in; see :mod:`analyses.evidence_selection.selectors`),
which lists the relevant past events. The listed events are re-encoded with the same encoder as the
ground-truth evidence steps, and scored:

- **soft recall** = mean over evidence steps ``e`` of ``max_l cos(e, l)`` over listed events
  ``l``;
- **hard recall** at threshold ``tau`` (default .5) = fraction of evidence steps with
  ``max_l cos(e, l) > tau`` (strictly greater, as in the paper).

With no listed event, every evidence step's maximum cosine is taken as 0 (nothing recalled).

Per-query scores per method and seed become records in the schema of :mod:`osustat.records`
(metrics ``soft_recall`` and ``hard_recall@<tau>``, e.g. ``hard_recall@0.5``).
:func:`compare_selection` (:mod:`analyses.evidence_selection.stats`) then tests a treatment
against a baseline the way Appendix F prescribes -- average each query across seeds first,
then one paired sign-flip test with one
pair per query -- and shows beside it the pooled-seed test (queries x seeds treated as
independent pairs), which is anti-conservative when seeds are near-duplicates (``T = 0``), with
:func:`osustat.seed_dependence` measuring how dependent the seeds are.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from osustat import validate_records
from osustat.analyses.evidence_selection.scoring import (
    check_threshold,
    hard_recall_metric,
    max_cosines,
)
from osustat.analyses.evidence_selection.selectors import (
    SelectionReply,
    Selector,
    SelectorError,
)
from osustat.cells import Cell
from osustat.retrieval.base import RetrievalResult
from osustat.retrieval.encoder import TextEncoder
from osustat.retrieval.trajectory import Query, Trajectory
from osustat.schema import RecordRow

__all__ = [
    "SelectionOutcome",
    "SelectionQuery",
    "query_from_trajectory",
    "retrieved_texts",
    "run_evidence_selection",
    "selection_records",
]

QueryKey = tuple[str, str]


@dataclass(frozen=True)
class SelectionQuery:
    """One query of the evidence-selection check.

    Attributes
    ----------
    episode_id, query_id : str
    instruction : str
        The user instruction given to the selector.
    evidence : tuple of str
        Texts of the ground-truth evidence steps (encoded with the scoring encoder).
    cell : str or None
        The query's evidence cell (``'T+E+'`` ...), if known.
    """

    episode_id: str
    query_id: str
    instruction: str
    evidence: tuple[str, ...]
    cell: str | None = None

    def __post_init__(self) -> None:
        for name in ("episode_id", "query_id", "instruction"):
            if not isinstance(getattr(self, name), str):
                raise TypeError(f"`{name}` must be a str; got {getattr(self, name)!r}.")
        if isinstance(self.evidence, str) or not isinstance(self.evidence, Sequence):
            raise TypeError(f"`evidence` of query {self.key} must be a sequence of str.")
        evidence = tuple(self.evidence)
        if not evidence or not all(isinstance(t, str) for t in evidence):
            raise ValueError(f"`evidence` of query {self.key} must hold at least one str.")
        object.__setattr__(self, "evidence", evidence)
        if self.cell is not None:
            try:
                object.__setattr__(self, "cell", Cell.parse(self.cell).value)
            except ValueError as exc:
                raise ValueError(f"`cell` of query {self.key}: {exc}") from None

    @property
    def key(self) -> QueryKey:
        return (self.episode_id, self.query_id)


@dataclass(frozen=True)
class SelectionOutcome:
    """What a selector listed for one (query, method, seed), and its per-step max cosines.

    Attributes
    ----------
    episode_id, query_id, method : str
    seed : int
    cell : str or None
    listed : tuple of str
        The events the selector listed (empty when it listed none).
    max_cosines : tuple of float
        Per ground-truth evidence step, its largest cosine to any listed event (0 when none
        was listed). Kept so that other thresholds can be scored without re-running
        (Appendix F releases the same per-query artifact).
    failure : str or None
        Why the selector's reply gave no event (a parse failure, counted, scored as nothing
        listed), or None. Only selectors with a ``reply`` method report one.
    positions : tuple of int
        Per listed item, the 1-based position in the context it points at: the listed id
        (``output='ids'``; repeats kept), else the context step with the largest cosine to the
        listed event (an attribution, whatever the event's wording).
    grounding : tuple of float
        Per listed event, its largest cosine to any context step (1 for a verbatim step; empty
        for an empty context). An event at or below a threshold is "invented" for
        :func:`analyses.evidence_selection.failures.failure_modes`.
    invalid_ids : int
        Listed ids that are not positions of the context (``output='ids'``).
    raw : str or None
        The model's message content (selectors with a ``reply`` method).
    n_context : int
        Steps in the context.
    """

    episode_id: str
    query_id: str
    method: str
    seed: int
    cell: str | None
    listed: tuple[str, ...]
    max_cosines: tuple[float, ...]
    failure: str | None = None
    positions: tuple[int, ...] = ()
    grounding: tuple[float, ...] = ()
    invalid_ids: int = 0
    raw: str | None = None
    n_context: int = 0

    def __post_init__(self) -> None:
        where = f"{self.episode_id}/{self.query_id}, method {self.method!r}, seed {self.seed}"
        cos = np.asarray(self.max_cosines, dtype=np.float64)
        if cos.ndim != 1 or cos.size == 0:
            raise ValueError(f"`max_cosines` ({where}) must hold one value per evidence step.")
        bad = np.flatnonzero(~(np.abs(cos) <= 1.0 + 1e-6))
        if bad.size:
            raise ValueError(
                f"`max_cosines` ({where}) must lie in [-1, 1]; bad at positions {bad.tolist()}."
            )
        object.__setattr__(self, "max_cosines", tuple(float(c) for c in cos))
        object.__setattr__(self, "listed", tuple(self.listed))
        object.__setattr__(self, "positions", tuple(int(p) for p in self.positions))
        object.__setattr__(self, "grounding", tuple(float(g) for g in self.grounding))

    @property
    def soft_recall(self) -> float:
        """Mean over evidence steps of the max cosine to any listed event."""
        return float(np.mean(self.max_cosines))

    def hard_recall(self, threshold: float = 0.5) -> float:
        """Fraction of evidence steps whose max cosine exceeds `threshold` (strictly)."""
        tau = check_threshold(threshold)
        return float(np.mean(np.asarray(self.max_cosines) > tau))


def _run_iv(
    queries: Any, contexts: Any, selector: Any, encoder: Any, seeds: Any
) -> tuple[list[SelectionQuery], dict[str, Mapping[QueryKey, Sequence[str]]], list[int]]:
    if not isinstance(queries, Sequence) or not queries:
        raise ValueError("`queries` must be a non-empty sequence of SelectionQuery.")
    bad = [i for i, q in enumerate(queries) if not isinstance(q, SelectionQuery)]
    if bad:
        raise TypeError(
            f"`queries` must hold SelectionQuery; other objects at positions {bad[:10]}."
        )
    keys = [q.key for q in queries]
    dup = sorted({k for k in keys if keys.count(k) > 1})
    if dup:
        raise ValueError(f"`queries` has duplicate (episode_id, query_id) keys {dup[:10]}.")
    with_cell = [q.cell is not None for q in queries]
    if any(with_cell) and not all(with_cell):
        lacking = [q.key for q in queries if q.cell is None]
        raise ValueError(f"`cell` is missing for queries {lacking[:10]} while others have one.")
    if not isinstance(contexts, Mapping) or not contexts:
        raise TypeError("`contexts` must be a non-empty mapping method -> {query key: steps}.")
    wanted = set(keys)
    for method, per_query in contexts.items():
        if not isinstance(method, str) or not isinstance(per_query, Mapping):
            raise TypeError(f"`contexts[{method!r}]` must map (episode_id, query_id) to texts.")
        missing = sorted(wanted - set(per_query))
        extra = sorted(set(per_query) - wanted, key=repr)
        if missing or extra:
            raise ValueError(
                f"`contexts[{method!r}]` must cover exactly the queries; missing {missing[:10]}, "
                f"unknown {extra[:10]}."
            )
    if not isinstance(selector, Selector):
        raise TypeError(f"`selector` must implement Selector; got {type(selector).__name__}.")
    if not isinstance(encoder, TextEncoder):
        raise TypeError(f"`encoder` must implement TextEncoder; got {type(encoder).__name__}.")
    seed_list = list(seeds) if isinstance(seeds, Sequence) else []
    if not seed_list or not all(
        isinstance(s, int | np.integer) and not isinstance(s, bool) for s in seed_list
    ):
        raise TypeError(f"`seeds` must be a non-empty sequence of int; got {seeds!r}.")
    if len(set(seed_list)) != len(seed_list):
        raise ValueError(f"`seeds` has duplicates: {seed_list}.")
    return list(queries), dict(contexts), [int(s) for s in seed_list]


def retrieved_texts(trajectory: Trajectory, result: RetrievalResult) -> list[str]:
    """The texts of a retrieval's steps, in packing order (the selector's context).

    >>> import numpy as np
    >>> from osustat.retrieval import RetrievalResult, Trajectory
    >>> tr = Trajectory.from_steps(np.eye(3), [5, 5, 5], text=["a", "b", "c"])
    >>> retrieved_texts(tr, RetrievalResult(np.array([2, 0]), 10.0))
    ['c', 'a']
    """
    if trajectory.text is None:
        raise ValueError("the trajectory has no step texts (`text`); the selector needs them.")
    return [trajectory.text[int(i)] for i in result.steps]


def query_from_trajectory(
    episode_id: str,
    query: Query,
    trajectory: Trajectory,
    instruction: str,
    cell: str | None = None,
) -> SelectionQuery:
    """A :class:`SelectionQuery` whose evidence texts are the query's evidence steps' texts."""
    if trajectory.text is None:
        raise ValueError("the trajectory has no step texts (`text`); evidence needs them.")
    evidence = tuple(trajectory.text[int(i)] for i in query.evidence)
    return SelectionQuery(episode_id, query.query_id, instruction, evidence, cell)


def run_evidence_selection(
    queries: Sequence[SelectionQuery],
    contexts: Mapping[str, Mapping[QueryKey, Sequence[str]]],
    selector: Selector,
    encoder: TextEncoder,
    *,
    seeds: Sequence[int] = (0,),
    progress: bool = False,
) -> tuple[SelectionOutcome, ...]:
    """Run a selector over every (seed, method, query) and measure its listed events.

    Parameters
    ----------
    queries : sequence of SelectionQuery
    contexts : mapping
        ``{method: {(episode_id, query_id): retrieved step texts}}``; every method must cover
        exactly the queries (an empty list is the no-memory condition).
    selector : Selector
    encoder : TextEncoder
        Encodes the evidence and the listed events (the paper re-encodes with the retrieval
        encoder, all-MiniLM-L6-v2; wrap it in a ``CachedEncoder``).
    seeds : sequence of int
        Passed to the selector (the chat client sends it as ``seed``).
    progress : bool
        A progress bar over the selector calls (on standard error).

    Returns
    -------
    tuple of SelectionOutcome
        Ordered by seed, method (as given), query (as given).

    Raises
    ------
    SelectorError
        A selector failure, naming the query, method and seed.

    Examples
    --------
    >>> from osustat.retrieval.encoder import HashingBagOfWordsEncoder
    >>> from osustat.analyses.evidence_selection.selectors import ExtractiveSimilaritySelector
    >>> from osustat.analyses.evidence_selection.run import SelectionQuery, run_evidence_selection
    >>> enc = HashingBagOfWordsEncoder(dim=512)
    >>> q = SelectionQuery("e1", "q1", "change flight HAT123", ("booked flight HAT123",))
    >>> ctx = {"osu": {("e1", "q1"): ["booked flight HAT123", "paid 120"]},
    ...        "none": {("e1", "q1"): []}}
    >>> out = run_evidence_selection([q], ctx, ExtractiveSimilaritySelector(enc, k=1), enc)
    >>> [(o.method, o.listed, round(o.soft_recall, 3)) for o in out]
    [('osu', ('booked flight HAT123',), 1.0), ('none', (), 0.0)]
    """
    qs, ctx, seed_list = _run_iv(queries, contexts, selector, encoder, seeds)
    evidence_emb = encoder.encode([t for q in qs for t in q.evidence])
    bounds = np.cumsum([0] + [len(q.evidence) for q in qs])
    calls = [(s, m, i) for s in seed_list for m in ctx for i in range(len(qs))]
    if progress:
        from tqdm.auto import tqdm

        calls = tqdm(calls, desc=f"selector {selector.name}", unit="call")
    replies = [(s, m, i, _ask(selector, qs[i], m, s, list(ctx[m][qs[i].key]))) for s, m, i in calls]
    steps = {t for per_query in ctx.values() for texts in per_query.values() for t in texts}
    distinct = sorted(steps | {t for *_, r in replies for t in r.events})
    row = {t: j for j, t in enumerate(distinct)}
    emb = encoder.encode(distinct) if distinct else np.zeros((0, encoder.dim))
    outcomes = []
    for seed, method, i, r in replies:
        q = qs[i]
        listed_emb = emb[[row[t] for t in r.events]]
        context = list(ctx[method][q.key])
        grounding = max_cosines(listed_emb, emb[[row[t] for t in context]]) if r.events else ()
        if r.ids is not None:
            positions: Sequence[int] = r.ids
        elif r.events and context:
            positions = (listed_emb @ emb[[row[t] for t in context]].T).argmax(axis=1) + 1
        else:
            positions = ()
        outcomes.append(
            SelectionOutcome(
                q.episode_id,
                q.query_id,
                method,
                seed,
                q.cell,
                r.events,
                tuple(map(float, max_cosines(evidence_emb[bounds[i] : bounds[i + 1]], listed_emb))),
                failure=r.failure,
                positions=tuple(positions),
                grounding=tuple(grounding) if context else (),
                invalid_ids=len(r.invalid_ids),
                raw=r.raw,
                n_context=len(context),
            )
        )
    return tuple(outcomes)


def _ask(
    selector: Selector, q: SelectionQuery, method: str, seed: int, context: list[str]
) -> SelectionReply:
    """One selection as a reply: ``selector.reply`` when it has one (parse failures counted,
    not raised), else ``select``; a selector error names the query, method and seed."""
    try:
        reply = getattr(selector, "reply", None)
        if callable(reply):
            got = reply(q.instruction, context, seed=seed)
            if not isinstance(got, SelectionReply):
                raise SelectorError(f"`reply` returned {type(got).__name__}, not SelectionReply")
            return got
        return SelectionReply(tuple(selector.select(q.instruction, context, seed=seed)), "", None)
    except SelectorError as exc:
        raise SelectorError(
            f"selector {selector.name!r} failed on query {q.episode_id}/{q.query_id}, method "
            f"{method!r}, seed {seed}: {exc}"
        ) from exc


def selection_records(
    outcomes: Sequence[SelectionOutcome],
    *,
    budget: int,
    thresholds: Sequence[float] = (0.5,),
    benchmark: str = "default",
) -> pd.DataFrame:
    """Long-format records (``osustat.records`` schema) of soft and hard recall.

    Parameters
    ----------
    outcomes : sequence of SelectionOutcome
    budget : int
        The retrieval token budget of the run (the paper: 256).
    thresholds : sequence of float
        One ``hard_recall@<tau>`` metric per threshold.
    benchmark : str

    Returns
    -------
    pandas.DataFrame
        Validated records, one row per (query, method, seed, metric), with ``cell`` when the
        queries carry cells.

    Examples
    --------
    >>> from osustat.analyses.evidence_selection.run import SelectionOutcome, selection_records
    >>> o = SelectionOutcome("e1", "q1", "osu", 0, "T+E+", ("x",), (0.8, 0.3))
    >>> recs = selection_records([o], budget=256, thresholds=[0.5, 0.2])
    >>> recs[["metric", "value"]].values.tolist()
    [['soft_recall', 0.55], ['hard_recall@0.5', 0.5], ['hard_recall@0.2', 1.0]]
    """
    if not isinstance(outcomes, Sequence) or not outcomes:
        raise ValueError("`outcomes` must be a non-empty sequence of SelectionOutcome.")
    bad = [i for i, o in enumerate(outcomes) if not isinstance(o, SelectionOutcome)]
    if bad:
        raise TypeError(f"`outcomes` must hold SelectionOutcome; other objects at {bad[:10]}.")
    if isinstance(thresholds, str) or not isinstance(thresholds, Sequence) or not thresholds:
        raise TypeError("`thresholds` must be a non-empty sequence of numbers.")
    metrics = [(hard_recall_metric(t), check_threshold(t)) for t in thresholds]
    rows = []
    for o in outcomes:
        values = [("soft_recall", o.soft_recall)]
        values += [(name, o.hard_recall(t)) for name, t in metrics]
        rows.extend(
            RecordRow(
                benchmark=benchmark,
                episode_id=o.episode_id,
                query_id=o.query_id,
                method=o.method,
                budget=budget,
                seed=o.seed,
                cell=o.cell,
                metric=metric,
                value=value,
            )._asdict()
            for metric, value in values
        )
    return validate_records(pd.DataFrame(rows))
