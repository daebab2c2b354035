"""Inputs other than long records: raw retrievals + evidence, and TREC runs + qrels.

Both are turned into records of the schema in :mod:`osustat.records` (docs/inputs.md):

- :func:`records_from_retrievals`: one row per retrieval (episode, query, method, budget,
  optional seed, the retrieved step ids, optional token cost) and an evidence file (per
  query: the evidence step ids, each with its tool signature and entities). ``hit@k`` is 1
  when *at least k evidence steps* were retrieved (the paper's Hit@2; not TREC Success@k),
  ``recall`` the fraction of evidence steps retrieved, the cell comes from
  :func:`osustat.label_cell`.
- :func:`records_from_trec`: a TREC run (``qid Q0 docid rank score tag``) and qrels
  (``qid iter docid rel``): ``tag`` is the method, ``docid`` a step id, ``qid`` is
  ``EPISODE/QUERY``, the top ``depth`` documents are "retrieved at budget ``depth``", the
  docids with ``rel > 0`` are the evidence; cells need an evidence file.

Every bad input raises ``ValueError`` naming the file, the line (or row) and the ids; rows
that are left out on purpose (qrels queries without relevant documents, run queries without
qrels, evidence queries nobody retrieved) are counted in :attr:`Loaded.exclusions`.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ._validation import list_some
from .cells import label_cell
from .metrics import evidence_metrics
from .schema import RecordRow

__all__ = [
    "Evidence",
    "Exclusion",
    "Loaded",
    "load_records",
    "read_evidence",
    "read_records",
    "records_from_retrievals",
    "records_from_trec",
]

_RETRIEVAL_COLUMNS = ("episode_id", "query_id", "method", "budget", "retrieved")
_EVIDENCE_COLUMNS = ("episode_id", "query_id", "step")


@dataclass(frozen=True)
class Evidence:
    """One query's evidence: step ids and, per step, a tool signature and entity set."""

    steps: tuple[str, ...]
    tools: tuple[str | None, ...]
    entities: tuple[frozenset[str], ...]
    where: str

    @property
    def cell(self) -> str:
        return label_cell(list(self.tools), list(self.entities)).value


@dataclass(frozen=True)
class Exclusion:
    """Units left out on purpose: why, how many, and which (up to 10 listed)."""

    reason: str
    ids: tuple[str, ...]

    def __str__(self) -> str:
        return f"{len(self.ids)} {self.reason}: {list_some(self.ids)}"


@dataclass(frozen=True)
class Loaded:
    """Records computed from an input, with what was left out and how they were built."""

    records: pd.DataFrame
    exclusions: tuple[Exclusion, ...]
    description: str
    warnings: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


# -- reading ------------------------------------------------------------------------------

_RECORD_SUFFIXES = ".csv, .jsonl/.ndjson or .parquet"


def _looks_like_trec(path: Path) -> str | None:
    try:
        with open(path, encoding="utf-8") as fh:
            first = fh.readline().split()
    except (OSError, UnicodeDecodeError):
        return None
    if len(first) == 6 and first[1].upper() == "Q0":
        return "run"
    if len(first) == 4 and first[3].lstrip("-").isdigit():
        return "qrels"
    return None


def read_records(path: str | Path) -> pd.DataFrame:
    """Read long records from CSV, JSON Lines (.jsonl/.ndjson) or Parquet, by extension.

    The returned frame's index is the file's line number (CSV, JSON Lines) or 0-based row
    (Parquet), so :func:`load_records` can name lines in its errors.

    Raises
    ------
    FileNotFoundError
        No such file.
    ValueError
        Unknown extension (with a hint when the file looks like a TREC run or qrels), an
        empty file, a header without rows, text that is not UTF-8, invalid JSON (with its
        line) or an unreadable Parquet file -- each naming the file.
    """
    path = Path(path)
    name = f"records file {str(path)!r}"
    if not path.exists():
        raise FileNotFoundError(f"{name} does not exist.")
    if path.is_dir():
        raise ValueError(f"{name} is a folder, not a file.")
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".jsonl", ".ndjson", ".parquet", ".pq"):
        kind = _looks_like_trec(path)
        hint = ""
        if kind == "run":
            hint = (
                " It looks like a TREC run (qid Q0 docid rank score tag): pass --qrels QRELS "
                "--depth K (Python: osustat.records_from_trec)."
            )
        elif kind == "qrels":
            hint = " It looks like TREC qrels: give the run as the input and this file as --qrels."
        raise ValueError(
            f"cannot read {name}: unknown extension {suffix!r}; use {_RECORD_SUFFIXES}.{hint}"
        )
    if path.stat().st_size == 0:
        raise ValueError(f"{name} is empty.")
    try:
        if suffix == ".csv":
            df = pd.read_csv(path, encoding="utf-8")
            df.index = pd.RangeIndex(2, 2 + len(df))
        elif suffix in (".jsonl", ".ndjson"):
            rows, lines = [], []
            for no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if not line.strip():
                    continue
                try:
                    obj = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise ValueError(f"{name}, line {no}: invalid JSON: {exc}.") from None
                if not isinstance(obj, dict):
                    raise ValueError(f"{name}, line {no}: expected a JSON object per line.")
                rows.append(obj)
                lines.append(no)
            df = pd.DataFrame(rows, index=lines)
        else:
            df = pd.read_parquet(path)
            df.index = pd.RangeIndex(len(df))
    except UnicodeDecodeError as exc:
        raise ValueError(f"{name} is not UTF-8 text ({exc.reason} at byte {exc.start}).") from None
    except pd.errors.EmptyDataError:
        raise ValueError(f"{name} is empty.") from None
    except pd.errors.ParserError as exc:
        raise ValueError(f"{name} is not valid CSV: {exc}") from None
    except (OSError, ValueError) as exc:
        if isinstance(exc, ValueError) and str(exc).startswith(name):
            raise
        if isinstance(exc, FileNotFoundError | PermissionError):
            raise
        raise ValueError(f"cannot read {name}: {exc}") from None
    if df.empty:
        raise ValueError(f"{name} has no records (a header or nothing but blank lines).")
    return df


def load_records(path: str | Path) -> pd.DataFrame:
    """:func:`read_records` + :func:`osustat.validate_records`, errors naming the file and
    its lines (CSV/JSON Lines) or 0-based rows (Parquet)."""
    from .records import validate_records

    path = Path(path)
    df = read_records(path)
    where = "rows (0-based)" if path.suffix.lower() in (".parquet", ".pq") else "lines"
    try:
        out = validate_records(df)
        if "budget" in out and (out["budget"] <= 0).any():
            bad = out.index[(out["budget"] <= 0).to_numpy()].tolist()
            raise ValueError(f"`budget` must be positive; bad values in rows {list_some(bad)}.")
    except (ValueError, TypeError) as exc:
        msg = str(exc).replace("in rows ", f"on {where} ").replace(" rows ", f" {where} ")
        raise type(exc)(f"records file {str(path)!r}: {msg}") from None
    return out.reset_index(drop=True)


def _table(path: Path, what: str) -> tuple[list[dict[str, Any]], list[str]]:
    """Rows of a CSV, JSON Lines or Parquet file with a location label per row."""
    if not path.exists():
        raise FileNotFoundError(f"{what} file {str(path)!r} does not exist.")
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        rows, where = [], []
        for no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(
                    f"{what} file {str(path)!r}, line {no}: invalid JSON: {exc}."
                ) from None
            if not isinstance(obj, dict):
                raise ValueError(f"{what} file {str(path)!r}, line {no}: expected a JSON object.")
            rows.append(obj)
            where.append(f"line {no}")
        return rows, where
    if suffix == ".csv":
        df = pd.read_csv(path, dtype=str, keep_default_na=False)
        return df.to_dict("records"), [f"line {i + 2}" for i in range(len(df))]
    if suffix in (".parquet", ".pq"):
        df = pd.read_parquet(path)
        return df.to_dict("records"), [f"row {i}" for i in range(len(df))]
    raise ValueError(
        f"cannot read {what} file {str(path)!r}: unknown extension {suffix!r}; use .csv, "
        ".jsonl/.ndjson or .parquet."
    )


def _columns(rows: list[dict[str, Any]], required: Sequence[str], path: Path, what: str) -> None:
    found = list(rows[0]) if rows else []
    missing = [c for c in required if c not in found]
    if missing or not rows:
        raise ValueError(
            f"{what} file {str(path)!r} is missing required columns {missing or list(required)}; "
            f"found columns {found}. Required: {list(required)}."
        )


def _blank(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v)) or str(v).strip() == ""


def _ids(value: Any, *, split: str) -> list[str]:
    """A list of ids from a JSON/Parquet list or a separated string."""
    if isinstance(value, list | tuple | np.ndarray):
        return [str(x).strip() for x in value]
    if _blank(value):
        return []
    return [x for x in re.split(split, str(value).strip()) if x]


def _int(value: Any, name: str, loc: str) -> int:
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{loc}: `{name}` must be an integer; got {value!r}.") from None
    if not math.isfinite(x) or x != round(x):
        raise ValueError(f"{loc}: `{name}` must be an integer; got {value!r}.")
    return int(x)


def read_evidence(path: str | Path) -> dict[tuple[str, str, str], Evidence]:
    """Read an evidence file: per query, the evidence steps with tool and entities.

    JSON Lines: one object per query, ``{"episode_id", "query_id", "evidence": [{"step",
    "tool", "entities": [...]}, ...]}`` (``benchmark`` optional). CSV or Parquet: one row per
    evidence step with columns ``episode_id, query_id, step`` and optional ``tool``,
    ``entities`` (``;``-separated in CSV) and ``benchmark``.

    Returns
    -------
    dict
        ``(benchmark, episode_id, query_id) -> Evidence``; benchmark ``'default'`` when absent.

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> from osustat.inputs import read_evidence
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "evidence.jsonl"
    >>> _ = p.write_text(json.dumps({"episode_id": "e1", "query_id": "q1", "evidence": [
    ...     {"step": "3", "tool": "search", "entities": ["NYC"]},
    ...     {"step": "8", "tool": "search", "entities": []}]}) + "\\n")
    >>> ev = read_evidence(p)[("default", "e1", "q1")]
    >>> ev.steps, ev.cell
    (('3', '8'), 'T+E-')
    """
    path = Path(path)
    rows, where = _table(path, "evidence")
    name = f"evidence file {str(path)!r}"
    nested = path.suffix.lower() in (".jsonl", ".ndjson")
    grouped: dict[tuple[str, str, str], list[tuple[str, str | None, frozenset[str], str]]] = {}
    first: dict[tuple[str, str, str], str] = {}
    if nested:
        _columns(rows, ("episode_id", "query_id", "evidence"), path, "evidence")
    else:
        _columns(rows, _EVIDENCE_COLUMNS, path, "evidence")
    for row, loc in zip(rows, where, strict=True):
        loc = f"{name}, {loc}"
        for col in ("episode_id", "query_id"):
            if _blank(row.get(col)):
                raise ValueError(f"{loc}: `{col}` is missing.")
        key = (
            str(row.get("benchmark") or "default"),
            str(row["episode_id"]).strip(),
            str(row["query_id"]).strip(),
        )
        if nested:
            if key in first:
                raise ValueError(
                    f"{loc}: query {key[1]}/{key[2]} already listed at {first[key]}; give "
                    "each query's evidence once."
                )
            steps = row.get("evidence")
            if not isinstance(steps, list):
                raise ValueError(f"{loc}: `evidence` must be a list of steps; got {steps!r}.")
            items = []
            for j, st in enumerate(steps):
                if not isinstance(st, dict) or _blank(st.get("step")):
                    raise ValueError(f"{loc}: evidence[{j}] must be an object with a `step`.")
                ents = st.get("entities") or []
                if isinstance(ents, str):
                    raise ValueError(
                        f"{loc}: evidence[{j}].entities must be a list of strings, not {ents!r}."
                    )
                tool = None if _blank(st.get("tool")) else str(st["tool"])
                items.append((str(st["step"]).strip(), tool, frozenset(map(str, ents)), loc))
            grouped[key] = items
        else:
            tool = None if _blank(row.get("tool")) else str(row["tool"])
            ents = frozenset(_ids(row.get("entities"), split=r"\s*;\s*"))
            grouped.setdefault(key, []).append((str(row["step"]).strip(), tool, ents, loc))
        first.setdefault(key, loc)
    out = {}
    for key, items in grouped.items():
        steps = [s for s, _, _, _ in items]
        dup = sorted({s for s in steps if steps.count(s) > 1})
        if dup:
            raise ValueError(
                f"{name}: query {key[1]}/{key[2]} ({first[key]}) lists evidence steps "
                f"{list_some(dup)} more than once."
            )
        if not steps:
            raise ValueError(
                f"{name}, {first[key]}: query {key[1]}/{key[2]} has no evidence steps "
                "(recall is undefined)."
            )
        out[key] = Evidence(
            tuple(steps),
            tuple(t for _, t, _, _ in items),
            tuple(e for _, _, e, _ in items),
            first[key],
        )
    return out


# -- metrics ------------------------------------------------------------------------------


def _metric_rows(
    key: dict[str, Any], retrieved: Sequence[str], ev: Evidence, hit_k: Sequence[int]
) -> list[dict[str, Any]]:
    found = len(set(ev.steps) & set(retrieved))
    return [
        RecordRow(**key, cell=ev.cell, metric=metric, value=value)._asdict()
        for metric, value in evidence_metrics(found, len(ev.steps), hit_k)
    ]


def _check_k(hit_k: Sequence[int]) -> list[int]:
    ks = list(hit_k)
    if not ks or any(isinstance(k, bool) or not isinstance(k, int) or k < 1 for k in ks):
        raise ValueError(f"`hit_k` must be positive integers; got {ks!r}.")
    return ks


def records_from_retrievals(
    retrievals: str | Path, evidence: str | Path, *, hit_k: Sequence[int] = (2,)
) -> Loaded:
    """Records (hit@k, recall, tokens; with cells) from raw retrievals and an evidence file.

    Parameters
    ----------
    retrievals : path
        CSV, JSON Lines or Parquet; columns ``episode_id, query_id, method, budget,
        retrieved`` (step ids: a list, or a ``;``/space-separated string in CSV) and optional
        ``seed``, ``tokens`` (token cost of the retrieved context, at most ``budget``) and
        ``benchmark``.
    evidence : path
        See :func:`read_evidence`.
    hit_k : sequence of int
        The ``k`` of the ``hit@k`` metrics (default: the paper's Hit@2).

    Returns
    -------
    Loaded
        Records with metrics ``hit@k``, ``recall`` and, when given, ``tokens``.

    Raises
    ------
    ValueError
        Missing columns; a retrieval of a query absent from the evidence file; a step id
        retrieved twice; a token cost above the budget or not a number; a duplicate
        (benchmark, episode, query, method, budget, seed) -- each naming file, line and ids.

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> from osustat.inputs import records_from_retrievals
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "ev.jsonl").write_text(json.dumps({"episode_id": "e1", "query_id": "q1",
    ...     "evidence": [{"step": "3", "tool": "a", "entities": ["x"]},
    ...                  {"step": "8", "tool": "b", "entities": ["x"]},
    ...                  {"step": "9", "tool": "c", "entities": []}]}) + "\\n")
    >>> _ = (d / "ret.csv").write_text("episode_id,query_id,method,budget,retrieved,tokens\\n"
    ...                                "e1,q1,osu,256,3;8;11,240\\n")
    >>> rec = records_from_retrievals(d / "ret.csv", d / "ev.jsonl").records
    >>> rec[["metric", "value", "cell"]].values.tolist()
    [['hit@2', 1.0, 'T-E+'], ['recall', 0.6666666666666666, 'T-E+'], ['tokens', 240.0, 'T-E+']]
    """
    ks = _check_k(hit_k)
    path = Path(retrievals)
    ev = read_evidence(evidence)
    rows, where = _table(path, "retrievals")
    _columns(rows, _RETRIEVAL_COLUMNS, path, "retrievals")
    name = f"retrievals file {str(path)!r}"
    out: list[dict[str, Any]] = []
    seen: dict[tuple[Any, ...], str] = {}
    unknown: list[str] = []
    used: set[tuple[str, str, str]] = set()
    for row, loc in zip(rows, where, strict=True):
        loc = f"{name}, {loc}"
        for col in ("episode_id", "query_id", "method"):
            if _blank(row.get(col)):
                raise ValueError(f"{loc}: `{col}` is missing.")
        bench = "default" if _blank(row.get("benchmark")) else str(row["benchmark"])
        episode, query = str(row["episode_id"]).strip(), str(row["query_id"]).strip()
        budget = _int(row["budget"], "budget", loc)
        seed = 0 if _blank(row.get("seed")) else _int(row["seed"], "seed", loc)
        ident = (bench, episode, query, str(row["method"]), budget, seed)
        if ident in seen:
            raise ValueError(
                f"{loc}: duplicate retrieval of {episode}/{query} by {row['method']!r} at "
                f"budget {budget}, seed {seed} (also at {seen[ident]})."
            )
        seen[ident] = loc
        qkey = (bench, episode, query)
        if qkey not in ev:
            unknown.append(f"{episode}/{query} ({loc.rsplit(', ', 1)[1]})")
            continue
        used.add(qkey)
        got = _ids(row["retrieved"], split=r"[;,\s]+")
        dup = sorted({s for s in got if got.count(s) > 1})
        if dup:
            raise ValueError(f"{loc}: step ids {list_some(dup)} are retrieved more than once.")
        key = {
            "benchmark": bench,
            "episode_id": episode,
            "query_id": query,
            "method": str(row["method"]),
            "budget": budget,
            "seed": seed,
        }
        out += _metric_rows(key, got, ev[qkey], ks)
        if not _blank(row.get("tokens")):
            try:
                tokens = float(row["tokens"])
            except (TypeError, ValueError):
                raise ValueError(
                    f"{loc}: `tokens` must be a number; got {row['tokens']!r}."
                ) from None
            if not math.isfinite(tokens) or tokens < 0:
                raise ValueError(f"{loc}: `tokens` must be finite and >= 0; got {tokens}.")
            if tokens > budget:
                raise ValueError(
                    f"{loc}: {episode}/{query} by {row['method']!r} costs {tokens:g} tokens, "
                    f"over its budget {budget}; a budgeted comparison needs every retrieval "
                    "within its budget."
                )
            out.append({**key, "cell": out[-1]["cell"], "metric": "tokens", "value": tokens})
    if unknown:
        raise ValueError(
            f"{name}: {len(unknown)} retrievals are of queries absent from the evidence file "
            f"{str(evidence)!r}: {list_some(unknown, quote=False)}."
        )
    unretrieved = sorted(f"{e}/{q}" for b, e, q in set(ev) - used)
    exclusions = (
        (Exclusion("evidence queries that no retrieval covers (left out)", tuple(unretrieved)),)
        if unretrieved
        else ()
    )
    desc = (
        f"raw retrievals `{path}` ({len(rows):,} retrievals) with evidence `{evidence}`: "
        f"hit@k = at least k of the query's evidence steps retrieved (k = "
        f"{', '.join(map(str, ks))}), recall, cells from the evidence's tools and entities"
    )
    return Loaded(pd.DataFrame(out), exclusions, desc)


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


def _trec_order(entries: list[tuple[int, float, str, Any]], order: str) -> list[str]:
    """Documents in trec_eval's order (score descending, ties by docid descending) or, with
    ``order='rank'``, by the rank column (same tie-break)."""
    by_docid = sorted(entries, key=lambda e: e[2], reverse=True)
    by_score = sorted(by_docid, key=lambda e: -e[1])
    if order == "rank":
        by_score = sorted(by_score, key=lambda e: e[0])
    return [d for _, _, d, _ in by_score]


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
    for name in names:
        try:
            out.append(ir_measures.parse_measure(name))
        except Exception as exc:  # ir_measures raises several types for unknown names
            raise ValueError(
                f"`measures`: ir_measures does not know {name!r} ({exc}); examples: nDCG@10, "
                "AP, P@5, RR, R@100."
            ) from None
    return out


def records_from_trec(
    runs: str | Path | Sequence[str | Path] | Mapping[str, str | Path],
    qrels: str | Path,
    *,
    depths: int | Sequence[int],
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
    depths : int or sequence of int
        Cut-offs; one "budget" per depth.
    evidence : path, optional
        Evidence annotations (:func:`read_evidence`) for the cells.
    qid_separator : str
    hit_k : sequence of int
    order : {'score', 'rank'}
        ``'score'`` (default) orders each ranking as trec_eval does: score descending, ties
        by docid descending. ``'rank'`` keeps the file's rank column. A warning in
        :attr:`Loaded.warnings` counts the rankings where the two orders disagree.
    zero_fill : bool
        trec_eval ``-c``: a judged query (with relevant documents) that a run does not rank
        scores 0 on every metric for that run instead of being unpaired. Filled queries are
        counted in :attr:`Loaded.notes`.
    measures : sequence of str
        Extra measures computed by ir_measures (optional dependency, ``pip install
        'osustat[ir]'``) on each depth's ranking, e.g. ``('nDCG@10', 'AP', 'P@5')``; the
        metric name is the measure's name lower-cased (``ndcg@10``). At a depth at least
        the run length the values equal trec_eval's.

    Returns
    -------
    Loaded

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from osustat.inputs import records_from_trec
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "run.txt").write_text("e1/q1 Q0 s3 1 9.1 osu\\ne1/q1 Q0 s5 2 8.0 osu\\n"
    ...                                "e1/q1 Q0 s8 3 7.5 osu\\n")
    >>> _ = (d / "qrels.txt").write_text("e1/q1 0 s3 1\\ne1/q1 0 s8 1\\ne1/q1 0 s9 0\\n")
    >>> rec = records_from_trec(d / "run.txt", d / "qrels.txt", depths=[2, 3]).records
    >>> rec[["budget", "metric", "value"]].values.tolist()
    [[2, 'hit@2', 0.0], [2, 'recall', 0.5], [3, 'hit@2', 1.0], [3, 'recall', 1.0]]
    """
    ks = _check_k(hit_k)
    ds: list[Any] = [depths] if isinstance(depths, int) else list(depths)
    if not ds or any(isinstance(k, bool) or not isinstance(k, int) or k < 1 for k in ds):
        raise ValueError(f"`depths` must be positive integers; got {depths!r}.")
    if not qid_separator:
        raise ValueError("`qid_separator` must be a non-empty string.")
    if order not in ("score", "rank"):
        raise ValueError(f"`order` must be 'score' (trec_eval) or 'rank'; got {order!r}.")
    ir = _measures(list(measures))
    sources = _run_sources(runs)
    if not sources:
        raise ValueError("`runs` is empty: give at least one run file.")
    qrels_path = Path(qrels)

    def split(qid: str) -> tuple[str, str]:
        if qid_separator in qid:
            episode, _, query = qid.rpartition(qid_separator)
            return episode, query
        return qid, qid

    relevant: dict[str, list[str]] = {}
    grades: dict[str, dict[str, int]] = {}
    judged: set[str] = set()
    qprefix = f"qrels file {str(qrels_path)!r}"
    for no, fields in _lines(qrels_path, "qrels", 4):
        loc = _Loc(qprefix, no)
        qid, _, docid, rel = fields
        try:
            grade = int(rel)
        except ValueError:
            raise ValueError(f"{loc}: relevance must be an integer; got {rel!r}.") from None
        judged.add(qid)
        if docid in grades.setdefault(qid, {}):
            raise ValueError(f"{loc}: document {docid!r} is judged twice for {qid!r}.")
        grades[qid][docid] = grade
        if grade > 0:
            relevant.setdefault(qid, []).append(docid)

    ranked: dict[tuple[str, str], list[tuple[int, float, str, Any]]] = {}
    ranked_docs: dict[tuple[str, str], set[str]] = {}
    origin: dict[str, str] = {}
    for name, path in sources:
        spath = str(path)
        rprefix = f"run file {spath!r}"
        for no, fields in _lines(path, "run", 6):
            qid, _, docid, rank, score, tag = fields
            method = name or tag
            try:
                r, s = int(rank), float(score)
            except ValueError:
                raise ValueError(
                    f"{_Loc(rprefix, no)}: rank must be an integer and score a number; got "
                    f"{rank!r}, {score!r}."
                ) from None
            if not math.isfinite(s):
                raise ValueError(f"{_Loc(rprefix, no)}: score must be finite; got {score!r}.")
            if origin.setdefault(method, spath) != spath:
                raise ValueError(
                    f"{_Loc(rprefix, no)}: run {method!r} also comes from {origin[method]!r}; "
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
                    f"{_Loc(rprefix, no)}: document {docid!r} is ranked twice for {qid!r} by "
                    f"{method!r}. If this file concatenates several runs that share a tag, give "
                    "each run its own file and name: --run NAME=FILE (repeatable)."
                )
            entries.append((r, s, docid, no))
            seen_docs.add(docid)

    annotations = read_evidence(evidence) if evidence is not None else None
    methods = sorted({m for m, _ in ranked})
    no_rel = sorted(judged - set(relevant))
    no_qrels = sorted({q for _, q in ranked} - judged)
    ranked_q = {q for _, q in ranked}
    unranked = sorted(set(relevant) - ranked_q)
    warnings: list[str] = []
    notes: list[str] = []

    orders: dict[tuple[str, str], list[str]] = {}
    disagree = 0
    for rkey, entries in ranked.items():
        by_score = _trec_order(entries, "score")
        by_rank = _trec_order(entries, "rank")
        if by_score != by_rank:
            disagree += 1
        orders[rkey] = by_score if order == "score" else by_rank
    if disagree:
        warnings.append(
            f"in {disagree} of {len(ranked)} rankings the rank column disagrees with the score "
            f"order trec_eval uses (score descending, ties by docid descending); using the "
            + (
                "score order (pass --order rank to keep the file's ranks)."
                if order == "score"
                else "file's ranks (--order rank); trec_eval would use the scores."
            )
        )

    queries = sorted(set(relevant) if zero_fill else set(relevant) & ranked_q)
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

    ir_values: dict[tuple[str, int], dict[str, dict[str, float]]] = {}
    if ir:
        import ir_measures

        qrels_dict = {q: dict(g) for q, g in grades.items()}
        for m in methods:
            for depth in ds:
                run_dict = {}
                for q in queries:
                    docs = orders.get((m, q), [])[:depth]
                    if docs:
                        run_dict[q] = {d: float(len(docs) - i) for i, d in enumerate(docs)}
                vals: dict[str, dict[str, float]] = {}
                if run_dict:
                    for metric in ir_measures.iter_calc(ir, qrels_dict, run_dict):
                        vals.setdefault(metric.query_id, {})[str(metric.measure)] = float(
                            metric.value
                        )
                ir_values[(m, depth)] = vals

    out: list[dict[str, Any]] = []
    for m in methods:
        for qid in queries:
            if (m, qid) not in ranked and qid not in filled.get(m, []):
                continue
            episode, query = split(qid)
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
                key = {
                    "benchmark": "default",
                    "episode_id": episode,
                    "query_id": query,
                    "method": m,
                    "budget": depth,
                    "seed": 0,
                }
                metric_rows = _metric_rows(key, ordered[:depth], ev, ks)
                got = ir_values.get((m, depth), {}).get(qid, {})
                cell = metric_rows[0]["cell"]
                for meas in ir:
                    metric_rows.append(
                        {
                            **key,
                            "cell": cell,
                            "metric": str(meas).lower(),
                            "value": got.get(str(meas), 0.0),
                        }
                    )
                if annotations is None:
                    for item in metric_rows:
                        item["cell"] = None
                out += metric_rows
    exclusions = []
    if no_rel:
        exclusions.append(Exclusion("judged queries without relevant documents", tuple(no_rel)))
    if no_qrels:
        exclusions.append(Exclusion("run queries absent from the qrels", tuple(no_qrels)))
    if unranked and not zero_fill:
        exclusions.append(Exclusion("judged queries that no run ranks", tuple(unranked)))
    if not out:
        raise ValueError(
            f"no run query of {[str(p) for _, p in sources]} has relevant documents in qrels "
            f"{str(qrels_path)!r}; check that the qids match."
        )
    shown = ", ".join(f"`{p}`" + (f" as {n!r}" if n else "") for n, p in sources)
    desc = (
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
        + (f"; ir_measures {', '.join(map(str, ir))}" if ir else "")
        + ("; zero-fill on (trec_eval -c)" if zero_fill else "")
        + (
            f"; cells from `{evidence}`"
            if evidence is not None
            else "; no cells (no evidence file)"
        )
    )
    return Loaded(pd.DataFrame(out), tuple(exclusions), desc, tuple(warnings), tuple(notes))


class _Loc:
    """``<what> file '<path>', line <no>``, formatted only when an error needs it."""

    __slots__ = ("no", "prefix")

    def __init__(self, prefix: str, no: int) -> None:
        self.prefix, self.no = prefix, no

    def __str__(self) -> str:
        return f"{self.prefix}, line {self.no}"

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)


def _lines(path: Path, what: str, n_fields: int) -> list[tuple[int, list[str]]]:
    if not path.exists():
        raise FileNotFoundError(f"{what} file {str(path)!r} does not exist.")
    if path.is_dir():
        raise ValueError(f"{what} file {str(path)!r} is a folder, not a file.")
    prefix = f"{what} file {str(path)!r}"
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(
            f"{prefix} is not UTF-8 text ({exc.reason} at byte {exc.start})."
        ) from None
    out = []
    for no, line in enumerate(text.splitlines(), 1):
        fields = line.split()
        if not fields:
            continue
        if len(fields) != n_fields:
            expected = "qid Q0 docid rank score tag" if what == "run" else "qid iteration docid rel"
            raise ValueError(
                f"{prefix}, line {no}: expected {n_fields} whitespace-separated fields "
                f"({expected}); got {len(fields)}: {line.strip()!r}."
            )
        out.append((no, fields))
    if not out:
        raise ValueError(f"{prefix} is empty.")
    return out
