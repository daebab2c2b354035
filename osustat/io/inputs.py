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

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from osustat._validation import list_some
from osustat.record_row import QueryKey

from .evidence import check_hit_k, metric_rows, read_evidence
from .reading import (
    Exclusion,
    Loaded,
    as_int,
    blank,
    read_rows,
    require_columns,
    split_ids,
)

__all__ = ["records_from_retrievals"]

_RETRIEVAL_COLUMNS = ("episode_id", "query_id", "method", "budget", "retrieved")


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
    >>> from osustat.io.inputs import records_from_retrievals
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
    ks = check_hit_k(hit_k)
    path = Path(retrievals)
    ev = read_evidence(evidence)
    rows, where = read_rows(path, "retrievals")
    require_columns(rows, _RETRIEVAL_COLUMNS, path, "retrievals")
    name = f"retrievals file {str(path)!r}"
    out: list[dict[str, Any]] = []
    seen: dict[QueryKey, str] = {}
    unknown: list[str] = []
    used: set[tuple[str, str, str]] = set()
    for row, loc in zip(rows, where, strict=True):
        loc = f"{name}, {loc}"
        for col in ("episode_id", "query_id", "method"):
            if blank(row.get(col)):
                raise ValueError(f"{loc}: `{col}` is missing.")
        bench = "default" if blank(row.get("benchmark")) else str(row["benchmark"])
        episode, query = str(row["episode_id"]).strip(), str(row["query_id"]).strip()
        budget = as_int(row["budget"], "budget", loc)
        seed = 0 if blank(row.get("seed")) else as_int(row["seed"], "seed", loc)
        key = QueryKey(bench, episode, query, str(row["method"]), budget, seed)
        if key in seen:
            raise ValueError(
                f"{loc}: duplicate retrieval of {episode}/{query} by {row['method']!r} at "
                f"budget {budget}, seed {seed} (also at {seen[key]})."
            )
        seen[key] = loc
        qkey = (bench, episode, query)
        if qkey not in ev:
            unknown.append(f"{episode}/{query} ({loc.rsplit(', ', 1)[1]})")
            continue
        used.add(qkey)
        got = split_ids(row["retrieved"], split=r"[;,\s]+")
        dup = sorted({s for s in got if got.count(s) > 1})
        if dup:
            raise ValueError(f"{loc}: step ids {list_some(dup)} are retrieved more than once.")
        out += metric_rows(key, got, ev[qkey], ks)
        if not blank(row.get("tokens")):
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
            cell = out[-1]["cell"]
            out.append(key.row(cell, "tokens", tokens)._asdict())
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
