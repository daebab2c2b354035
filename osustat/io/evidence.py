"""Evidence annotations and the metrics computed from them (hit@k, recall, the cell).

:func:`read_evidence` reads, per query, the evidence steps with their tool signature and
entities; :func:`evidence_metrics` scores one retrieval against them. Every loader of raw
retrievals or TREC runs (:mod:`osustat.io.inputs`, :mod:`osustat.io.trec`) computes its metrics
here, once.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from osustat._validation import list_some, unique_items
from osustat.cells import label_cell
from osustat.metrics import count_metrics
from osustat.record_row import QueryKey

from .reading import blank, read_rows, require_columns, split_ids

__all__ = ["Evidence", "check_hit_k", "evidence_metrics", "metric_rows", "read_evidence"]

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
    >>> from osustat.io.evidence import read_evidence
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "evidence.jsonl"
    >>> _ = p.write_text(json.dumps({"episode_id": "e1", "query_id": "q1", "evidence": [
    ...     {"step": "3", "tool": "search", "entities": ["NYC"]},
    ...     {"step": "8", "tool": "search", "entities": []}]}) + "\\n")
    >>> ev = read_evidence(p)[("default", "e1", "q1")]
    >>> ev.steps, ev.cell
    (('3', '8'), 'T+E-')
    """
    path = Path(path)
    rows, where = read_rows(path, "evidence")
    name = f"evidence file {str(path)!r}"
    nested = path.suffix.lower() in (".jsonl", ".ndjson")
    grouped: dict[tuple[str, str, str], list[tuple[str, str | None, frozenset[str], str]]] = {}
    first: dict[tuple[str, str, str], str] = {}
    if nested:
        require_columns(rows, ("episode_id", "query_id", "evidence"), path, "evidence")
    else:
        require_columns(rows, _EVIDENCE_COLUMNS, path, "evidence")
    for row, loc in zip(rows, where, strict=True):
        loc = f"{name}, {loc}"
        for col in ("episode_id", "query_id"):
            if blank(row.get(col)):
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
                if not isinstance(st, dict) or blank(st.get("step")):
                    raise ValueError(f"{loc}: evidence[{j}] must be an object with a `step`.")
                ents = st.get("entities") or []
                if isinstance(ents, str):
                    raise ValueError(
                        f"{loc}: evidence[{j}].entities must be a list of strings, not {ents!r}."
                    )
                tool = None if blank(st.get("tool")) else str(st["tool"])
                items.append((str(st["step"]).strip(), tool, frozenset(map(str, ents)), loc))
            grouped[key] = items
        else:
            tool = None if blank(row.get("tool")) else str(row["tool"])
            ents = frozenset(split_ids(row.get("entities"), split=r"\s*;\s*"))
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


def check_hit_k(hit_k: Sequence[int]) -> list[int]:
    """`hit_k` as a list of positive integers, or a ValueError naming it."""
    ks = list(hit_k)
    if not ks or any(isinstance(k, bool) or not isinstance(k, int) or k < 1 for k in ks):
        raise ValueError(f"`hit_k` must be positive integers; got {ks!r}.")
    return unique_items(ks, "hit_k")  # hit_k=[2, 2] was one k, silently (stop 57)


def evidence_metrics(
    retrieved: Iterable[Hashable], evidence: Iterable[Hashable], hit_k: Sequence[int] = (2,)
) -> dict[str, float]:
    """hit@k and recall of one retrieval against its query's evidence.

    ``hit@k`` is 1.0 when at least `k` distinct evidence items were retrieved (the paper's
    Hit@2; not TREC Success@k); ``recall`` is the fraction of the distinct evidence items
    retrieved. Ids may be any hashable values (step ids, docids), compared by equality.

    Raises
    ------
    ValueError
        Empty `evidence` (hit@k and recall are undefined).

    Examples
    --------
    >>> from osustat.io.evidence import evidence_metrics
    >>> evidence_metrics(["4", "9", "11"], ["9", "11", "30"], hit_k=(1, 2, 3))
    {'hit@1': 1.0, 'hit@2': 1.0, 'hit@3': 0.0, 'recall': 0.6666666666666666}
    """
    ev = set(evidence)
    if not ev:
        raise ValueError("`evidence` is empty: hit@k and recall are undefined for this query.")
    return dict(count_metrics(len(ev & set(retrieved)), len(ev), hit_k))


def metric_rows(
    key: QueryKey, retrieved: Sequence[str], ev: Evidence, hit_k: Sequence[int]
) -> list[dict[str, Any]]:
    """Record rows (`key` + cell, metric, value) of :func:`evidence_metrics`."""
    cell = ev.cell
    return [
        key.row(cell, metric, value)._asdict()
        for metric, value in evidence_metrics(retrieved, ev.steps, hit_k).items()
    ]
