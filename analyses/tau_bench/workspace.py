"""Work shared by the runs of one data set: the records of a run, and of many (``--sensitivity``).

A :class:`Workspace` holds what several runs (points of the choice grid, seeds) can share
without changing any record: Stage B/C and the encodings once per data-building choice
(matching, packing, and the encoder backend, whose vectors differ in the last bits), each query
set once, and every sweep once -- batched so that one task per group builds each retriever once
on its trajectory for every query set that uses it (the unaugmented trajectory does not depend
on the seed or on any noise reading; the Stage-D one only on the seed and the copy noise).
:func:`point_records` assembles one run's records from the workspace; ``run_tau`` calls it on a
fresh workspace, :func:`run_points` on one shared by every point, so a point's records are
those of a single ``--choice`` run at that point.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from osustat.analyses.protocol import BenchmarkRun, RunSpec

from .data import Group, concatenate, drop_counts
from .formats import MIN_MATCHED, MIN_STEPS, TauDataError, load_files
from .run import (
    BUDGETS,
    MAIN_METHODS,
    SMALL_METHODS,
    GroupQueries,
    QuerySet,
    make_queries,
    run_sweeps,
)

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Built", "Workspace", "audit_unavailable", "point_records", "run_points"]

KINDS = {"noisy-mean": 0, "weak": 1, "instruction": 2}
OTHER_NOISE = {"per-coordinate": "per-norm", "per-norm": "per-coordinate"}


@dataclass(frozen=True)
class Built:
    """Stage B and C of one data-building choice, with the encodings."""

    loaded: Any
    groups: list[Group]
    drops: list[Any]
    n_focal_all: int
    embs: list[NDArray[np.float64]]
    instr_emb: dict[str, NDArray[np.float64]]
    encode_seconds: float


@dataclass(frozen=True)
class Sweep:
    """One sweep of a run: the records' benchmark, its methods, the query construction
    (kind, noise reading), the trajectory (Stage-D copy noise, None: unaugmented), whether it
    keeps the B = 256 retrievals (§6.6)."""

    benchmark: str
    methods: tuple[str, ...]
    kind: str
    noise: str
    copy_noise: str | None = None
    keep: bool = False


def encode_groups(
    groups: list[Group], encoder: Any, extra: list[str]
) -> tuple[list[NDArray[np.float64]], NDArray[np.float64]]:
    """Every step text of `groups` and the `extra` texts, l2-normalized (one encoder call)."""
    texts = sorted({t for g in groups for t in g.texts} | set(extra))
    vecs = np.asarray(encoder.encode(texts), dtype=np.float64)
    norms = np.linalg.norm(vecs, axis=1, keepdims=True)
    vecs = vecs / np.where(norms > 0, norms, 1.0)
    row = {t: i for i, t in enumerate(texts)}
    embs = [vecs[[row[t] for t in g.texts]] for g in groups]
    return embs, np.vstack([vecs[row[t]] for t in extra]) if extra else vecs[:0]


def group_queries(
    groups: list[Group],
    embs: list[NDArray[np.float64]],
    kind: str,
    seed: int,
    focal: str,
    instr: dict[str, NDArray[np.float64]] | None = None,
    noise: str = "per-coordinate",
) -> list[GroupQueries]:
    """The queries of every group (draws from ``rng([seed, kind, group])``)."""
    out = []
    for g, (group, emb) in enumerate(zip(groups, embs, strict=True)):
        rng = np.random.default_rng([seed, KINDS[kind], g])
        q = make_queries(group, emb, kind, rng, instr, noise=noise)
        if focal == "one" and len(q.positions) > 1:
            q = GroupQueries(q.positions[:1], q.tasks[:1], q.evidence[:1], q.embeddings[:1])
        out.append(q)
    return out


def sweeps_of(spec: RunSpec) -> list[Sweep]:
    """The sweeps behind one run's records, in record order (the §6.6 records follow the
    first)."""
    c = spec.choices
    noise, kind = c["query-noise"], c["query-kind"]
    main = tuple(MAIN_METHODS)
    keep = 256 in tuple(spec.options.get("budgets", BUDGETS))
    out = [
        Sweep("tau-bench", main, kind, noise, keep=keep),
        Sweep("tau-bench-augmented", main, kind, noise, copy_noise=c["copy-noise"]),
    ]
    if not spec.options.get("no_variants", False):
        other = OTHER_NOISE[noise]
        out += [
            Sweep(f"tau-bench-query-{other}", SMALL_METHODS, "noisy-mean", other),
            Sweep("tau-bench-weak-query", SMALL_METHODS, "weak", noise),
            Sweep("tau-bench-natural-query", SMALL_METHODS, "instruction", noise),
        ]
    return out


def _data_key(spec: RunSpec) -> tuple[str, ...]:
    c = spec.choices
    # the encoder backend changes the vectors (in the last bits), so it builds its own data
    return (c["matching"], c["packing"], c["namespace-prefix"], c["focal"], spec.text_backend)


def _query_key(kind: str, noise: str, seed: int) -> tuple[Any, ...]:
    # the instruction query draws nothing and reads no noise
    return (kind, None if kind == "instruction" else noise, seed)


class Workspace:
    """Built data, query sets and sweeps of runs that share data files, sweep backend,
    budgets, options and user retrievers (module docstring); one encoder per encoder backend,
    whose data are built apart."""

    def __init__(self, spec: RunSpec, encoder: Any = None) -> None:
        self.spec = spec
        self._given = encoder
        self._encoders: dict[str, Any] = {}
        self._loaded: dict[str, Any] = {}
        self._built: dict[tuple[str, ...], Built] = {}
        self._queries: dict[tuple[Any, ...], list[GroupQueries]] = {}
        self._sweeps: dict[tuple[Any, ...], tuple[pd.DataFrame, list[dict[str, Any]]]] = {}
        self._llm: dict[tuple[Any, ...], Any] = {}

    def encoder(self, spec: RunSpec) -> Any:
        """The encoder of `spec`: the one given, else one per encoder backend (the grid's
        points may differ in it)."""
        if self._given is not None:
            return self._given
        backend = spec.text_backend
        if backend not in self._encoders:
            self._encoders[backend] = spec.text_encoder()
        return self._encoders[backend]

    def built(self, spec: RunSpec) -> Built:
        """Stage B/C and the encodings for `spec`'s data-building choices (errors name file
        and record)."""
        key = _data_key(spec)
        if key not in self._built:
            matching, packing, prefix = key[:3]
            if matching not in self._loaded:
                self._loaded[matching] = load_files(list(spec.data), matching=matching)
            loaded = self._loaded[matching]
            groups, drops = concatenate(
                loaded.episodes, prefix=prefix == "prefixed", packing=packing
            )
            n_focal_all = sum(s.focal for g in groups for s in g.sources)
            if n_focal_all == 0:
                counts = drop_counts(drops)
                raise TauDataError(
                    "no usable episode: every episode was dropped or left without a group "
                    f"(rules: >= {MIN_STEPS} steps, >= {MIN_MATCHED} matched ground-truth "
                    f"actions, groups of 150-300 steps); drops by reason and file: "
                    f"{json.dumps(counts)}."
                )
            focal_keys = [s.episode.episode_key for g in groups for s in g.sources if s.focal]
            by_key = {s.episode.episode_key: s.episode for g in groups for s in g.sources}
            instr_texts = [by_key[k].instruction or "(no instruction)" for k in focal_keys]
            t0 = time.perf_counter()
            embs, instr = encode_groups(groups, self.encoder(spec), instr_texts)
            seconds = time.perf_counter() - t0
            instr_emb = dict(zip(focal_keys, instr, strict=False))
            self._built[key] = Built(
                loaded, groups, drops, n_focal_all, embs, instr_emb, round(seconds, 1)
            )
        return self._built[key]

    def queries(self, spec: RunSpec, kind: str, noise: str) -> list[GroupQueries]:
        key = (*_data_key(spec), *_query_key(kind, noise, spec.seed))
        if key not in self._queries:
            b = self.built(spec)
            self._queries[key] = group_queries(
                b.groups, b.embs, kind, spec.seed, spec.choices["focal"], b.instr_emb, noise
            )
        return self._queries[key]

    def _sweep_key(self, spec: RunSpec, s: Sweep) -> tuple[Any, ...]:
        return (_data_key(spec), spec.seed, s)

    def prepare(self, specs: Sequence[RunSpec]) -> None:
        """Run every sweep the runs `specs` need that is not done yet, batched per trajectory
        (the unaugmented one per data-building choice; the Stage-D one per seed and copy
        noise)."""
        todo: dict[tuple[Any, ...], dict[tuple[Any, ...], tuple[RunSpec, Sweep]]] = {}
        for spec in specs:
            for s in sweeps_of(spec):
                key = self._sweep_key(spec, s)
                if key not in self._sweeps:
                    traj = (_data_key(spec),) + (
                        ("plain",) if s.copy_noise is None else (spec.seed, s.copy_noise)
                    )
                    todo.setdefault(traj, {})[key] = (spec, s)
        budgets = tuple(self.spec.options.get("budgets", BUDGETS))
        for pending in todo.values():
            batch = list(pending.values())
            first = batch[0][0]
            built = self.built(first)
            sets = [
                (
                    QuerySet(
                        s.benchmark, s.methods, spec.seed, _query_key(s.kind, s.noise, spec.seed),
                        tuple((m, 256) for m in ("OSU-Mem", "Flat Vector")) if s.keep else (),
                    ),
                    self.queries(spec, s.kind, s.noise),
                )
                for spec, s in batch
            ]  # fmt: skip
            copy_noise = batch[0][1].copy_noise
            results = run_sweeps(
                built.groups, built.embs, sets, budgets=budgets,
                augment=None if copy_noise is None else first.seed,
                copy_noise=copy_noise or "per-norm", retrievers=tuple(self.spec.retrievers),
                backend=self.spec.backend, desc=f"tau-bench ({len(sets)} sweeps)",
            )  # fmt: skip
            for (spec, s), result in zip(batch, results, strict=True):
                self._sweeps[self._sweep_key(spec, s)] = result

    def sweep(self, spec: RunSpec, s: Sweep) -> tuple[pd.DataFrame, list[dict[str, Any]]]:
        """The records and per-group info of sweep `s` of run `spec` (prepared or run now)."""
        key = self._sweep_key(spec, s)
        if key not in self._sweeps:
            self.prepare([spec])
        return self._sweeps[key]

    def llm(self, spec: RunSpec, main: Sweep) -> dict[str, Any]:
        """§6.6: the B = 256 retrievals of OSU-Mem and Flat Vector of sweep `main` read by
        the selector; the ``llm`` state (``selector``, ``name``, ``records``, and for
        ``local`` the variants' failure modes)."""
        from .llm import LOCAL_QUERIES, make_selector, run_llm_selection, run_local_selection

        key = self._sweep_key(spec, main)
        if key not in self._llm:
            rec, info = self.sweep(spec, main)
            built = self.built(spec)
            queries = self.queries(spec, main.kind, main.noise)
            o = spec.options
            selector = o.get("selector", "extractive")
            retrieved = {k: v for i in info for k, v in i["retrieved"].items()}
            cells = dict(zip(rec["query_id"], rec["cell"], strict=True))
            with_q = [(g, q) for g, q in zip(built.groups, queries, strict=True) if q.positions]
            args = ([g for g, _ in with_q], [q for _, q in with_q], retrieved, cells)
            if selector == "local":
                self._llm[key] = run_local_selection(
                    *args,
                    self.encoder(spec),
                    n_queries=o.get("llm_queries", LOCAL_QUERIES),
                    threads=o.get("llm_threads", 1),
                    progress=self.spec.backend.progress,
                )
            else:
                enc = self.encoder(spec)
                sel = make_selector(selector, enc, endpoint=o.get("endpoint"), model=o.get("model"))
                rec_llm = run_llm_selection(*args, sel, enc)
                name = getattr(sel, "name", selector)
                self._llm[key] = {"selector": selector, "name": name, "records": rec_llm}
        return self._llm[key]

    def release(self) -> None:
        """Forget the sweeps, queries and §6.6 records (memory); built data stays."""
        self._sweeps.clear()
        self._queries.clear()
        self._llm.clear()


def point_records(
    ws: Workspace, spec: RunSpec
) -> tuple[pd.DataFrame, dict[str, Any] | None, list[dict[str, Any]]]:
    """One run's records (validated), its §6.6 state (None without the selector) and the
    Stage-D info of its augmented sweep."""
    import pandas as pd

    from osustat.schema import validate_records

    sweeps = sweeps_of(spec)
    ws.prepare([spec])
    parts = [ws.sweep(spec, sweeps[0])[0]]
    llm = None
    if spec.options.get("selector", "extractive") is not None and sweeps[0].keep:
        llm = ws.llm(spec, sweeps[0])
        parts.append(llm["records"])
    aug_rec, aug_info = ws.sweep(spec, sweeps[1])
    parts.append(aug_rec)
    parts += [ws.sweep(spec, s)[0] for s in sweeps[2:]]
    return validate_records(pd.concat(parts, ignore_index=True)), llm, aug_info


def audit_unavailable(llm: dict[str, Any] | None) -> dict[str, str]:
    """The run state's ``audit_unavailable``: Table 7's claims are about GPT-4o-mini's
    selections, so records of the extractive stand-in cannot check them."""
    if llm is None or llm["selector"] in ("chat", "local"):  # a language model ran
        return {}
    return {
        "tau-bench-llm": "no LLM run: the §6.6 evidence was selected by the extractive "
        "stand-in, not a language model (`--selector chat --endpoint URL --model NAME` runs one)"
    }


def run_points(specs: Sequence[RunSpec]) -> Iterator[tuple[int, BenchmarkRun]]:
    """The records of every run in `specs` (the grid's points and seeds; they differ only in
    choices and seed), each as a :class:`BenchmarkRun` without state, in an order that shares
    the most work: runs with the same data-building choices together, their sweeps batched.
    Yields (index into `specs`, run)."""
    if not specs:
        return
    ws = Workspace(specs[0])
    order: dict[tuple[str, ...], list[int]] = {}
    for i, spec in enumerate(specs):
        order.setdefault(_data_key(spec), []).append(i)
    for indices in order.values():
        ws.prepare([specs[i] for i in indices])
        for i in indices:
            records, llm, _ = point_records(ws, specs[i])
            yield i, BenchmarkRun(records, {"audit_unavailable": audit_unavailable(llm)})
        ws.release()
