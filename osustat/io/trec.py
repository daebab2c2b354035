"""TREC run(s) and qrels to records, ordered as trec_eval orders them (docs/inputs.md).

``tag`` (or the run's name) is the method, ``docid`` a step id, ``qid`` is
``EPISODE/QUERY``, the top ``depth`` documents are "retrieved at budget ``depth``", the
documents with ``rel > 0`` are the evidence; cells need an evidence file. hit@k and recall
come from :func:`osustat.io.evidence.evidence_metrics`, other measures from ir_measures.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from osustat._validation import list_some, unique_items
from osustat.record_row import QueryKey

from .evidence import Evidence, check_hit_k, metric_rows, read_evidence
from .reading import Exclusion, Loaded, Loc, trec_lines

__all__ = ["records_from_trec"]


def _run_sources(
    runs: str | Path | Sequence[str | Path] | Mapping[str, str | Path],
) -> list[tuple[str | None, Path]]:
    if isinstance(runs, str | Path):
        return [(None, Path(runs))]
    if isinstance(runs, Mapping):
        out: list[tuple[str | None, Path]] = []
        for name, p in runs.items():
            if not str(name).strip():
                raise ValueError(f"`runs`: empty run name for file {str(p)!r}.")
            out.append((str(name).strip(), Path(p)))
        return out
    return [(None, Path(r)) for r in runs]


def _same_file_notes(sources: list[tuple[str | None, Path]]) -> list[str]:
    """A note per run file given under several names: their comparisons tie everywhere (a
    reviewer, stop 57: accepted without a word)."""
    names: dict[Path, list[str]] = {}
    for name, path in sources:
        if name is not None and path.is_file():
            names.setdefault(path.resolve(), []).append(name)
    return [
        f"runs {', '.join(map(repr, same))} are one file ({str(path)!r}): every comparison "
        "between them ties"
        for path, same in names.items()
        if len(same) > 1
    ]


def _trec_order(entries: list[tuple[int, float, str, Any]], order: str) -> list[str]:
    """Documents in trec_eval's order (score descending, ties by docid descending) or, with
    ``order='rank'``, by the rank column (same tie-break)."""
    by_docid = sorted(entries, key=lambda e: e[2], reverse=True)
    by_score = sorted(by_docid, key=lambda e: -e[1])
    if order == "rank":
        by_score = sorted(by_score, key=lambda e: e[0])
    return [d for _, _, d, _ in by_score]


def _has_cutoff(measure: Any) -> bool:
    """nDCG@10, P@10, R@100: the measure fixes its own depth."""
    return measure.params.get("cutoff") is not None


def _at_depth(measure: Any, depth: int) -> Any:
    """What a measure without its own cut-off is at depth k: ir_measures' ``measure@k`` where
    the measure takes a cut-off (nDCG at depth 10 is nDCG@10, trec_eval's ``ndcg_cut_10``,
    whose ideal ranking is cut at 10 too), else the measure itself, computed on the top k
    documents (trec_eval ``-M k``: Bpref, infAP, Rprec)."""
    if not _has_cutoff(measure) and "cutoff" in getattr(measure, "SUPPORTED_PARAMS", {}):
        return measure(cutoff=depth)
    return measure


def _metric_name(measure: Any, depth: int) -> str:
    """The records' name of `measure` (as given) computed at `depth`: ``ndcg@10``."""
    if _has_cutoff(measure):
        return str(measure).lower()
    at = _at_depth(measure, depth)
    return str(at).lower() if at is not measure else f"{str(measure).lower()}@{depth}"


def _tie_only(entries: list[tuple[int, float, str, Any]], a: list[str], b: list[str]) -> bool:
    """True when orders `a` and `b` differ only among documents with equal scores."""
    score = {d: s for _, s, d, _ in entries}
    return [score[d] for d in a] == [score[d] for d in b]


def _measures(names: Sequence[str]) -> list[Any]:
    if not names:
        return []
    try:
        import ir_measures
    except ImportError:
        raise ValueError(
            f"measures {list(names)} need the optional dependency ir_measures: "
            "pip install 'osustat[ir]' (or pip install ir-measures)."
        ) from None
    out = []
    seen: dict[str, str] = {}
    for name in names:
        meas = _parse_measure(ir_measures, name)
        metric = str(meas).lower()  # the records' metric name
        if metric in seen:
            raise ValueError(
                f"`--measure` (Python: measures=): {seen[metric]!r} and {name!r} are the same "
                f"measure ({meas}); give it once."
            )
        seen[metric] = name
        out.append(meas)
    return out


def _parse_measure(ir_measures: Any, name: str) -> Any:
    """ir_measures' measure `name`, its name matched regardless of case when that is
    unambiguous (``ap`` is AP, ``ndcg@10`` nDCG@10); else an error suggesting the spelling."""
    try:
        return ir_measures.parse_measure(name)
    except Exception as exc:  # ir_measures raises several types for unknown names
        error = exc
    head = name.split("@")[0].split("(")[0]
    rest = name[len(head) :]
    found: dict[str, Any] = {}
    for known in ir_measures.measures.registry:
        if known.casefold() == head.casefold():
            try:
                meas = ir_measures.parse_measure(known + rest)
            except Exception:  # the parameters are wrong for this spelling as well
                continue
            found.setdefault(str(meas), meas)
    if len(found) == 1:
        return next(iter(found.values()))
    hint = (
        f"; did you mean {' or '.join(map(repr, sorted(found)))}? (measure names are "
        "case-sensitive where the case tells measures apart)"
        if found
        else "; examples: nDCG@10, AP, P@5, RR, R@100"
    )
    raise ValueError(
        f"`--measure` (Python: measures=): ir_measures does not know {name!r} ({error}){hint}."
    )


def records_from_trec(
    runs: str | Path | Sequence[str | Path] | Mapping[str, str | Path],
    qrels: str | Path,
    *,
    depths: int | Sequence[int] | None = None,
    evidence: str | Path | None = None,
    qid_separator: str = "/",
    hit_k: Sequence[int] = (2,),
    order: str = "score",
    zero_fill: bool = False,
    measures: Sequence[str] = (),
) -> Loaded:
    """Records from TREC run file(s) and qrels (the format trec_eval, ranx and ir_measures read).

    Mapping (docs/inputs.md): ``tag`` -> method (or the name given in a ``{name: file}``
    mapping); ``docid`` -> step id; ``qid`` -> ``episode_id`` and ``query_id`` split at the
    last `qid_separator` (a qid without it is its own episode); the first ``depth``
    documents -> retrieved "at budget ``depth``" (the budget column then counts retrieved
    documents, not tokens); qrels documents with ``rel > 0`` -> the evidence. Cells come
    from `evidence` (whose steps must equal the relevant documents) and are absent without it.

    Parameters
    ----------
    runs : path, sequence of paths, or mapping name -> path
        ``qid Q0 docid rank score tag`` per line (whitespace-separated). With a mapping the
        name is the method and the file's tags are ignored (several runs that share a tag).
    qrels : path
        ``qid iteration docid rel`` per line.
    depths : int or sequence of int, optional
        Cut-offs; one "budget" per depth. Default (None): trec_eval's, the whole ranking
        (trec_eval evaluates every retrieved document unless ``-M`` caps it): one depth equal
        to the longest ranking in the runs.
    evidence : path, optional
        Evidence annotations (:func:`read_evidence`) for the cells.
    qid_separator : str
    hit_k : sequence of int
    order : {'score', 'rank'}
        ``'score'`` (default) orders each ranking as trec_eval does: score descending, ties
        by docid descending. ``'rank'`` keeps the file's rank column. A warning in
        :attr:`Loaded.warnings` counts the rankings where the two orders disagree and says how
        many of them disagree only among documents with equal scores (ties).
    zero_fill : bool
        trec_eval ``-c``: a judged query (with relevant documents) that a run does not rank
        scores 0 on every metric for that run instead of being unpaired. Filled queries are
        counted in :attr:`Loaded.notes`.
    measures : sequence of str
        Extra measures computed by ir_measures (optional dependency, ``pip install
        'osustat[ir]'``), e.g. ``('nDCG@10', 'AP', 'P@5')``. A measure with its own cut-off
        (``nDCG@10``, ``P@5``) is computed once, on the ranking cut at the largest depth, and
        recorded at that depth only, under its name lower-cased (``ndcg@10``): it is one
        test, not one per depth; a cut-off above the largest depth is refused (nDCG@10 of
        the top 5 documents is not nDCG@10). A measure without a cut-off (``AP``, ``RR``,
        ``nDCG``) is at each depth k ir_measures' ``measure@k`` and named so (``ap@100``,
        ``ndcg@10``: trec_eval's ``ndcg_cut_10``, its ideal ranking cut at 10 too), never
        bare ``ap``; one that takes no cut-off (``Bpref``, ``infAP``, ``Rprec``) is computed
        on the top k documents (trec_eval ``-M k``) and named ``bpref@10`` likewise. Two
        requests of the same values are refused, naming both: ``nDCG@10`` beside ``nDCG``
        at depth 10, or ``R@k`` / ``Success@k``, which are osustat's own ``recall`` /
        ``hit@1`` at depth k. A note (:attr:`Loaded.notes`) lists every metric the records
        hold (each a test in a family unless ``metrics=`` chooses).

    Returns
    -------
    Loaded

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from osustat.io.trec import records_from_trec
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "run.txt").write_text("e1/q1 Q0 s3 1 9.1 osu\\ne1/q1 Q0 s5 2 8.0 osu\\n"
    ...                                "e1/q1 Q0 s8 3 7.5 osu\\n")
    >>> _ = (d / "qrels.txt").write_text("e1/q1 0 s3 1\\ne1/q1 0 s8 1\\ne1/q1 0 s9 0\\n")
    >>> rec = records_from_trec(d / "run.txt", d / "qrels.txt", depths=[2, 3]).records
    >>> rec[["budget", "metric", "value"]].values.tolist()
    [[2, 'hit@2', 0.0], [2, 'recall', 0.5], [3, 'hit@2', 1.0], [3, 'recall', 1.0]]
    """
    ks = check_hit_k(hit_k)
    ds = _check_options(depths, qid_separator, order)
    ir = _measures(list(measures))
    _check_cutoffs(list(measures), ir, ds)
    sources = _run_sources(runs)
    if not sources:
        raise ValueError("`runs` is empty: give at least one run file.")
    qrels_path = Path(qrels)
    relevant, grades, judged = _read_qrels(qrels_path)
    ranked = _read_runs(sources)
    notes: list[str] = _same_file_notes(sources)
    if depths is None:
        ds = [max((len(e) for e in ranked.values()), default=1)]
        notes.append(
            f"depth {ds[0]}: the whole ranking (trec_eval's default; the longest ranking has "
            f"{ds[0]} documents); pass --depth (Python: depths=) for cut-offs"
        )
    _check_names(list(measures), ir, ds, ks)
    if ir:
        notes.append(_metrics_note(ir, ds, ks))
    annotations = read_evidence(evidence) if evidence is not None else None
    methods = sorted({m for m, _ in ranked})
    ranked_q = {q for _, q in ranked}
    _check_overlap(methods, ranked, relevant, sources, qrels_path)
    warnings: list[str] = []
    orders = _orders(ranked, order, warnings)
    queries = sorted(set(relevant) if zero_fill else set(relevant) & ranked_q)
    filled = _fill(methods, queries, ranked, zero_fill, warnings, notes)
    ir_values = _ir_values(methods, queries, ds, orders, grades, ir) if ir else {}
    out = _rows(
        methods,
        queries,
        ranked,
        filled,
        relevant,
        orders,
        ds,
        ks,
        qid_separator,
        annotations,
        evidence,
        qrels_path,
        ir_values,
        ir,
    )
    exclusions = _exclusions(judged, relevant, ranked_q, zero_fill)
    desc = _description(sources, qrels_path, qid_separator, order, ds, ir, zero_fill, evidence)
    return Loaded(
        pd.DataFrame(out), tuple(exclusions), desc, tuple(warnings), tuple(notes), "depth"
    )


def _check_cutoffs(names: list[str], ir: list[Any], ds: list[int]) -> None:
    """A measure whose own cut-off exceeds the largest depth asked for is refused: on the
    ranking cut at that depth it would not be the measure its name says (nDCG@10 of the
    top 5 documents is not nDCG@10). Without depths (the whole ranking) every cut-off holds."""
    if not ds:
        return
    deepest = max(ds)
    for name, meas in zip(names, ir, strict=True):
        cutoff = meas.params.get("cutoff")
        if cutoff is not None and cutoff > deepest:
            raise ValueError(
                f"`--measure {name}` (Python: measures=): its cut-off {cutoff} exceeds the "
                f"largest --depth {deepest} (Python: depths=), so it would be computed on the "
                f"top {deepest} documents and would not be {name}; raise --depth to at least "
                f"{cutoff} (e.g. --depth {','.join(map(str, sorted({*ds, cutoff})))}) or drop "
                f"{name}."
            )


def _check_names(names: list[str], ir: list[Any], ds: list[int], ks: list[int]) -> None:
    """Refuse two requests that would record the same values twice (a family would count
    the test twice), naming both: a measure without its own cut-off at depth k is
    ``measure@k``, which may be asked for by name too (``nDCG`` and ``nDCG@10`` with a depth
    10), and ``R@k`` / ``Success@k`` are osustat's own ``recall`` / ``hit@1`` at depth k."""
    deepest = max(ds)
    seen: dict[str, str] = {}
    for name, meas in zip(names, ir, strict=True):
        own_cut = _has_cutoff(meas)
        for depth in [deepest] if own_cut else ds:
            metric = _metric_name(meas, depth)
            said = f"{name!r}" if own_cut else f"{name!r} at depth {depth}"
            if metric in seen:
                raise ValueError(
                    f"`--measure` (Python: measures=): {seen[metric]} and {said} are both "
                    f"{metric}: the same values twice, which a correction family would count "
                    "twice; give it once."
                )
            seen[metric] = said
            own = _osustat_equivalent(meas if own_cut else _at_depth(meas, depth), ds, ks)
            if own:
                raise ValueError(
                    f"`--measure` (Python: measures=): {said} is {metric}, osustat's own {own} "
                    "(the same values, computed for every TREC run), which a correction family "
                    f"would count twice; drop {name!r} and read {own}."
                )


def _osustat_equivalent(measure: Any, ds: list[int], ks: list[int]) -> str:
    """The metric of osustat's own that `measure` equals ('' for none): ``R@k`` is
    ``recall`` at depth k, ``Success@k`` is ``hit@1`` at depth k (docs/inputs.md)."""
    cutoff = measure.params.get("cutoff")
    if cutoff not in ds or set(measure.params) != {"cutoff"}:
        return ""
    if str(measure) == f"R@{cutoff}":
        return f"`recall` at depth {cutoff}"
    if str(measure) == f"Success@{cutoff}" and 1 in ks:
        return f"`hit@1` at depth {cutoff}"
    return ""


def _metrics_note(ir: list[Any], ds: list[int], ks: list[int]) -> str:
    """Which metrics the records hold, so a family's size can be read off them."""
    deepest = max(ds)
    own = ", ".join([*(f"hit@{k}" for k in ks), "recall"])
    theirs = [_metric_name(m, d) for m in ir for d in ([deepest] if _has_cutoff(m) else sorted(ds))]
    return (
        f"metrics: osustat's own {own} (at each depth) and ir_measures' {', '.join(theirs)}; "
        "`analyze` tests every one, each in its family, unless --metric (Python: metrics=) "
        "chooses"
    )


def _check_overlap(
    methods: list[str],
    ranked: Ranked,
    relevant: dict[str, list[str]],
    sources: list[tuple[str | None, Path]],
    qrels_path: Path,
) -> None:
    """Every run must share a judged query (one with relevant documents) with the qrels: a
    run that shares none would be zero-filled entirely (--zero-fill) or unpaired, its cause
    (a qid spelling, often its case: 'T00' vs 't00') shown nowhere."""
    by_run: dict[str, list[str]] = {m: [] for m in methods}
    for m, q in ranked:
        by_run[m].append(q)
    lost = [m for m in methods if not set(by_run[m]) & set(relevant)]
    if not lost:
        return
    theirs = sorted(relevant)
    folded = {q.casefold() for q in theirs}
    if len(lost) == len(methods):
        head = (
            f"no run query of {[str(p) for _, p in sources]} has relevant documents in qrels "
            f"{str(qrels_path)!r}; check that the qids match"
        )
        ours = sorted({q for qs in by_run.values() for q in qs})
    else:
        files = {n: str(p) for n, p in sources if n is not None}
        m = lost[0]
        where = f" (file {files[m]!r})" if m in files else ""
        head = (
            f"run {m!r}{where} shares no judged query with qrels {str(qrels_path)!r} (none of "
            f"its {len(set(by_run[m]))} qids has relevant documents there), so every query of "
            "it would be unpaired, or zero-filled with --zero-fill; check that its qids match"
        )
        ours = sorted(set(by_run[m]))
    case = (
        "; they match when case is ignored: the qids differ in case"
        if {q.casefold() for q in ours} & folded
        else ""
    )
    raise ValueError(
        f"{head}. Run qids: {list_some(ours, 3)}; qrels qids with relevant documents: "
        f"{list_some(theirs, 3) or 'none'}{case}."
    )


def _check_options(depths: Any, qid_separator: str, order: str) -> list[Any]:
    """The depths asked for (empty: the whole ranking), after checking the simple options."""
    ds: list[Any] = [depths] if isinstance(depths, int) else list(depths or [])
    bad = any(isinstance(k, bool) or not isinstance(k, int) or k < 1 for k in ds)
    if (depths is not None and not ds) or bad:
        raise ValueError(f"`depths` must be positive integers; got {depths!r}.")
    unique_items(ds, "depths")  # a depth asked twice made every row twice (stop 57)
    if not qid_separator:
        raise ValueError("`qid_separator` must be a non-empty string.")
    if order not in ("score", "rank"):
        raise ValueError(f"`order` must be 'score' (trec_eval) or 'rank'; got {order!r}.")
    return ds


def _exclusions(
    judged: set[str], relevant: dict[str, list[str]], ranked_q: set[str], zero_fill: bool
) -> list[Exclusion]:
    """Every query left out, counted by reason (none unranked under zero-fill)."""
    no_rel = sorted(judged - set(relevant))
    no_qrels = sorted(ranked_q - judged)
    unranked = [] if zero_fill else sorted(set(relevant) - ranked_q)
    exclusions = []
    if no_rel:
        exclusions.append(Exclusion("judged queries without relevant documents", tuple(no_rel)))
    if no_qrels:
        exclusions.append(Exclusion("run queries absent from the qrels", tuple(no_qrels)))
    if unranked:
        exclusions.append(Exclusion("judged queries that no run ranks", tuple(unranked)))
    return exclusions


def _split_qid(qid: str, separator: str) -> tuple[str, str]:
    """``EPISODE{separator}QUERY`` split at the last separator; a qid without it is its own
    episode."""
    if separator in qid:
        episode, _, query = qid.rpartition(separator)
        return episode, query
    return qid, qid


Ranked = dict[tuple[str, str], list[tuple[int, float, str, Any]]]


def _read_qrels(
    qrels_path: Path,
) -> tuple[dict[str, list[str]], dict[str, dict[str, int]], set[str]]:
    """The qrels' relevant documents per qid (rel > 0), every grade, and the judged qids."""
    relevant: dict[str, list[str]] = {}
    grades: dict[str, dict[str, int]] = {}
    judged: set[str] = set()
    qprefix = f"qrels file {str(qrels_path)!r}"
    for no, fields in trec_lines(qrels_path, "qrels", 4):
        loc = Loc(qprefix, no)
        qid, _, docid, rel = fields
        try:
            grade = int(rel)
        except ValueError:
            raise ValueError(f"{loc}: relevance must be an integer; got {rel!r}.") from None
        judged.add(qid)
        if docid in grades.setdefault(qid, {}):
            first = _first_judgement(qrels_path, qid, docid)
            raise ValueError(
                f"{loc}: document {docid!r} is judged twice for {qid!r} (first on line {first})."
            )
        grades[qid][docid] = grade
        if grade > 0:
            relevant.setdefault(qid, []).append(docid)
    return relevant, grades, judged


def _first_judgement(qrels_path: Path, qid: str, docid: str) -> int:
    """The line of the qrels' first judgement of `docid` for `qid` (read again: an error's
    cost, not every file's)."""
    return next(no for no, f in trec_lines(qrels_path, "qrels", 4) if f[0] == qid and f[2] == docid)


def _read_runs(sources: list[tuple[str | None, Path]]) -> Ranked:
    """Every run's (rank, score, docid, line) entries per (method, qid), checked."""
    ranked: dict[tuple[str, str], list[tuple[int, float, str, Any]]] = {}
    ranked_docs: dict[tuple[str, str], set[str]] = {}
    origin: dict[str, str] = {}
    for name, path in sources:
        spath = str(path)
        rprefix = f"run file {spath!r}"
        for no, fields in trec_lines(path, "run", 6):
            qid, _, docid, rank, score, tag = fields
            method = name or tag
            try:
                r, s = int(rank), float(score)
            except ValueError:
                raise ValueError(
                    f"{Loc(rprefix, no)}: rank must be an integer and score a number; got "
                    f"{rank!r}, {score!r}."
                ) from None
            if not math.isfinite(s):
                raise ValueError(f"{Loc(rprefix, no)}: score must be finite; got {score!r}.")
            if origin.setdefault(method, spath) != spath:
                raise ValueError(
                    f"{Loc(rprefix, no)}: run {method!r} also comes from {origin[method]!r}; "
                    "give each run its own name with --run NAME=FILE (Python: runs={name: file})."
                )
            rk = (method, qid)
            entries = ranked.get(rk)
            if entries is None:
                entries = ranked[rk] = []
                ranked_docs[rk] = set()
            seen_docs = ranked_docs[rk]
            if docid in seen_docs:
                raise ValueError(
                    f"{Loc(rprefix, no)}: document {docid!r} is ranked twice for {qid!r} by "
                    f"{method!r}. If this file concatenates several runs that share a tag, give "
                    "each run its own file and name: --run NAME=FILE (repeatable)."
                )
            entries.append((r, s, docid, no))
            seen_docs.add(docid)
    return ranked


def _orders(ranked: Ranked, order: str, warnings: list[str]) -> dict[tuple[str, str], list[str]]:
    """Each ranking's documents in the chosen order; warns where score and rank orders differ."""
    orders: dict[tuple[str, str], list[str]] = {}
    disagree = ties_only = 0
    for rkey, entries in ranked.items():
        by_score = _trec_order(entries, "score")
        by_rank = _trec_order(entries, "rank")
        if by_score != by_rank:
            disagree += 1
            ties_only += _tie_only(entries, by_score, by_rank)
        orders[rkey] = by_score if order == "score" else by_rank
    if disagree:
        why = (
            f"all {disagree} only in how documents with equal scores are ordered (ties)"
            if ties_only == disagree
            else f"{ties_only} of them only in how documents with equal scores are ordered "
            f"(ties), {disagree - ties_only} in the scores' order itself"
        )
        warnings.append(
            f"in {disagree} of {len(ranked)} rankings the rank column disagrees with the score "
            f"order trec_eval uses (score descending, ties by docid descending): {why}; using "
            "the "
            + (
                "score order (pass --order rank to keep the file's ranks)."
                if order == "score"
                else "file's ranks (--order rank); trec_eval would use the scores."
            )
        )
    return orders


def _fill(
    methods: list[str],
    queries: list[str],
    ranked: Ranked,
    zero_fill: bool,
    warnings: list[str],
    notes: list[str],
) -> dict[str, list[str]]:
    """The judged queries each run lacks: zero-filled (noted) or unpaired (warned)."""
    filled: dict[str, list[str]] = {}
    for m in methods:
        lacking = [q for q in queries if (m, q) not in ranked]
        if lacking and zero_fill:
            filled[m] = lacking
        elif lacking:
            warnings.append(
                f"run {m!r} does not rank {len(lacking)} judged queries that another run ranks "
                f"({list_some(lacking)}); they are unpaired for {m!r}. Pass --zero-fill "
                "(trec_eval -c; Python: zero_fill=True) to score them as 0."
            )
    for m, lacking in filled.items():
        notes.append(
            f"zero-filled (trec_eval -c): {len(lacking)} judged queries that run {m!r} does "
            f"not rank score 0 on every metric: {list_some(lacking)}"
        )
    return filled


def _ir_values(
    methods: list[str],
    queries: list[str],
    ds: list[int],
    orders: dict[tuple[str, str], list[str]],
    grades: dict[str, dict[str, int]],
    ir: list[Any],
) -> dict[tuple[str, int], dict[str, dict[str, float]]]:
    """ir_measures' values per (method, depth) and qid (own-cut-off measures at the deepest)."""
    import ir_measures  # optional dependency (osustat[ir])

    cut_ir = [x for x in ir if _has_cutoff(x)]
    depth_ir = [x for x in ir if not _has_cutoff(x)]
    ir_values: dict[tuple[str, int], dict[str, dict[str, float]]] = {}
    deepest = max(ds)
    qrels_dict = {q: dict(g) for q, g in grades.items()}
    for m in methods:
        for depth in ds:
            todo = [_at_depth(x, depth) for x in depth_ir] + (cut_ir if depth == deepest else [])
            if not todo:
                continue
            run_dict = {}
            for q in queries:
                docs = orders.get((m, q), [])[:depth]
                if docs:
                    run_dict[q] = {d: float(len(docs) - i) for i, d in enumerate(docs)}
            vals: dict[str, dict[str, float]] = {}
            if run_dict:
                for metric in ir_measures.iter_calc(todo, qrels_dict, run_dict):
                    vals.setdefault(metric.query_id, {})[str(metric.measure)] = float(metric.value)
            ir_values[(m, depth)] = vals
    return ir_values


def _rows(
    methods: list[str],
    queries: list[str],
    ranked: Ranked,
    filled: dict[str, list[str]],
    relevant: dict[str, list[str]],
    orders: dict[tuple[str, str], list[str]],
    ds: list[int],
    ks: Any,
    qid_separator: str,
    annotations: Any,
    evidence: str | Path | None,
    qrels_path: Path,
    ir_values: dict[tuple[str, int], dict[str, dict[str, float]]],
    ir: list[Any],
) -> list[dict[str, Any]]:
    """The record rows: every ranked (or zero-filled) query of every run at every depth."""
    cut_ir = [x for x in ir if _has_cutoff(x)]
    depth_ir = [x for x in ir if not _has_cutoff(x)]
    deepest = max(ds)
    named = {  # per depth: (ir_measures' name of what was computed, the records' name)
        depth: [
            (str(_at_depth(m, depth)), _metric_name(m, depth))
            for m in depth_ir + (cut_ir if depth == deepest else [])
        ]
        for depth in ds
    }
    out: list[dict[str, Any]] = []
    for m in methods:
        for qid in queries:
            if (m, qid) not in ranked and qid not in filled.get(m, []):
                continue
            episode, query = _split_qid(qid, qid_separator)
            steps = relevant[qid]
            if annotations is not None:
                ev = annotations.get(("default", episode, query))
                if ev is None:
                    raise ValueError(
                        f"evidence file {str(evidence)!r} has no entry for query "
                        f"{episode}/{query} (qid {qid!r}); cells need one for every judged query."
                    )
                if set(ev.steps) != set(steps):
                    raise ValueError(
                        f"evidence file {str(evidence)!r}, {ev.where}: evidence steps "
                        f"{sorted(ev.steps)} of {episode}/{query} differ from the relevant "
                        f"documents in qrels {str(qrels_path)!r}: {sorted(steps)}."
                    )
            else:
                ev = Evidence(tuple(steps), (None,) * len(steps), (frozenset(),) * len(steps), "")
            ordered = orders.get((m, qid), [])
            for depth in ds:
                key = QueryKey("default", episode, query, m, depth, 0)
                rows = metric_rows(key, ordered[:depth], ev, ks)
                got = ir_values.get((m, depth), {}).get(qid, {})
                cell = rows[0]["cell"]
                for computed, name in named[depth]:
                    rows.append(key.row(cell, name, got.get(computed, 0.0))._asdict())
                if annotations is None:
                    for item in rows:
                        item["cell"] = None
                out += rows
    return out


def _description(
    sources: list[tuple[str | None, Path]],
    qrels_path: Path,
    qid_separator: str,
    order: str,
    ds: list[int],
    ir: list[Any],
    zero_fill: bool,
    evidence: str | Path | None,
) -> str:
    """How the TREC files were read, for the report's notes."""
    deepest = max(ds)
    shown = ", ".join(f"`{p}`" + (f" as {n!r}" if n else "") for n, p in sources)
    return (
        f"TREC run(s) {shown} with qrels `{qrels_path}`: "
        f"{'tag' if any(n is None for n, _ in sources) else 'run name'} → method, docid → step, "
        f"qid → episode{qid_separator}query, documents ordered by "
        + (
            "score as trec_eval does (ties by docid descending)"
            if order == "score"
            else "the file's rank column"
        )
        + f", top-k at depth {', '.join(map(str, ds))} → budget (retrieved documents, not "
        "tokens), rel > 0 → evidence"
        + (
            f"; ir_measures {', '.join(map(str, ir))} (own cut-off: once, at depth {deepest}; "
            "others: at each depth k, named measure@k: ir_measures' measure@k, or the "
            "measure on the top k documents where it takes no cut-off)"
            if ir
            else ""
        )
        + ("; zero-fill on (trec_eval -c)" if zero_fill else "")
        + (
            f"; cells from `{evidence}`"
            if evidence is not None
            else "; no cells (no evidence file)"
        )
    )
