"""Validation of :func:`osustat.analyze`'s options (private): levels and counts, the
metrics and budgets asked for, and the correction families (see :mod:`osustat.analysis`)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

from ._validation import check_positive_int, check_resamples, unique_items
from .multitest import CORRECTIONS
from .stepdown import STEPDOWN_METHODS

FAMILIES = ("per-metric-budget", "per-metric", "all")


def check_options(
    correction: str, alpha: Any, level: Any, resamples: Any, bootstrap_resamples: Any, seed: Any
) -> tuple[float, float, int, int, int]:
    if correction not in (*CORRECTIONS, *STEPDOWN_METHODS, "none"):
        raise ValueError(
            f"`correction` must be one of {[*CORRECTIONS, *STEPDOWN_METHODS, 'none']}; got "
            f"{correction!r}."
        )

    def prob(x: Any, name: str) -> float:
        try:
            v = float(x)
        except (TypeError, ValueError):
            raise TypeError(f"`{name}` must be a number in (0, 1); got {x!r}.") from None
        if not (0 < v < 1):
            raise ValueError(f"`{name}` must lie strictly between 0 and 1; got {x!r}.")
        return v

    return (
        prob(alpha, "alpha"),
        prob(level, "level"),
        check_resamples(resamples, "n_resamples"),
        check_resamples(bootstrap_resamples, "bootstrap_resamples"),
        check_positive_int(seed, "rng", minimum=0),
    )


#: A correction family's member: (index of the method pair, metric, budget).
Table = tuple[int, str, int]

#: What the budget column counts: tokens (B), TREC depths, or nothing -- answer-level
#: records (a system's graded answers, ``osustat import``) carry one placeholder budget.
BUDGET_KINDS = ("tokens", "depth", "answers")


def table_heading(metric: str, budget: int, kind: str) -> str:
    """A comparison's heading: ``'hit@2 at B = 256'``, ``'ndcg@10 at depth 10'``, the metric
    alone for answers."""
    if kind == "answers":
        return metric
    return f"{metric} at {f'depth {budget}' if kind == 'depth' else f'B = {budget}'}"


def pair_label(metric: str, budget: int, kind: str = "tokens") -> str:
    """A (metric, budget) pair in lists: ``'hit@2 @ 256'``; the metric alone for answers."""
    return metric if kind == "answers" else f"{metric} @ {budget}"


def family_groups(
    family: str | Sequence[Sequence[Any]],
    pairs: Sequence[tuple[str, int]],
    methods: Sequence[tuple[str, str]] = (("", ""),),
    kind: str = "tokens",
) -> list[tuple[str, list[Table]]]:
    """The declared families as lists of (method pair index, metric, budget) tables.

    A named family spans every method pair (several treatments are corrected together); a
    user group lists ``(metric, budget)`` pairs (every method pair's table there) or
    ``(treatment, baseline, metric, budget)`` tuples (that method pair's table only).
    """
    every = range(len(methods))
    if isinstance(family, str):
        if family == "per-metric-budget":
            return [(pair_label(m, b, kind), [(k, m, b) for k in every]) for m, b in pairs]
        if family == "per-metric":
            metrics = list(dict.fromkeys(m for m, _ in pairs))
            return [(m, [(k, x, b) for x, b in pairs if x == m for k in every]) for m in metrics]
        if family == "all":
            return [("all", [(k, m, b) for m, b in pairs for k in every])]
        raise ValueError(
            f"`family` must be one of {list(FAMILIES)} or a list of groups of (metric, budget) "
            f"pairs; got {family!r}."
        )
    groups: list[tuple[str, list[Table]]] = []
    seen: dict[Table, int] = {}
    for g, members in enumerate(family):
        ms = []
        for item in members:
            for key in _group_item(item, g, pairs, methods):
                if key in seen:
                    where = (
                        f"names {_named(key, methods)} twice in group {g + 1}"
                        if seen[key] == g
                        else f"puts {_named(key, methods)} in groups {seen[key] + 1} and {g + 1}"
                    )
                    raise ValueError(f"`family` {where} (groups counted from 1).")
                seen[key] = g
                ms.append(key)
        groups.append((f"group {g + 1}", ms))
    missing = [_named((k, m, b), methods) for m, b in pairs for k in every if (k, m, b) not in seen]
    if missing:
        raise ValueError(f"`family` leaves out analysed (metric, budget) pairs {missing}.")
    return groups


def _named(key: Table, methods: Sequence[tuple[str, str]]) -> Any:
    k, m, b = key
    return (m, b) if len(methods) == 1 else (*methods[k], m, b)


def _group_item(
    item: Any, g: int, pairs: Sequence[tuple[str, int]], methods: Sequence[tuple[str, str]]
) -> list[Table]:
    """The tables one user group item names (see :func:`family_groups`)."""
    try:
        *who, m, b = item
        key = (str(m).strip().lower(), int(b))
        if len(who) not in (0, 2):
            raise ValueError
    except (TypeError, ValueError):
        raise ValueError(
            f"`family` group {g} must hold (metric, budget) pairs or (treatment, baseline, "
            f"metric, budget) tuples; got {item!r}."
        ) from None
    if key not in pairs:
        raise ValueError(
            f"`family` group {g} names {key}, which is not analysed; analysed "
            f"(metric, budget) pairs: {list(pairs)}."
        )
    if not who:
        return [(k, *key) for k in range(len(methods))]
    pair = (str(who[0]), str(who[1]))
    if pair not in methods:
        raise ValueError(
            f"`family` group {g} names the method pair {pair}, which is not compared; "
            f"compared: {list(methods)}."
        )
    return [(list(methods).index(pair), *key)]


def metric_key(name: Any) -> str:
    """A metric name as the records spell it: lower case, no whitespace."""
    return "".join(str(name).split()).lower()


def select(
    df: pd.DataFrame, metrics: Iterable[str] | str | None, budgets: Iterable[int] | int | None
) -> tuple[list[str], list[int]]:
    """The metrics and budgets to analyse, checked against the records."""
    present_metrics = sorted(df["metric"].unique().tolist())
    if metrics is None:
        ms = [m for m in present_metrics if m != "tokens"] or present_metrics
    else:
        ms = [metrics] if isinstance(metrics, str) else list(metrics)
        ms = [metric_key(m) for m in unique_items(ms, "metrics", metric_key)]
        if not ms:
            raise ValueError("`metrics` is empty.")
        unknown = [m for m in ms if m not in present_metrics]
        if unknown:
            hint = ""
            if any(m.startswith("hit@") for m in unknown):
                hint = (
                    " hit@k is computed from raw retrievals or TREC runs for the k given by "
                    "`hit_k` (CLI: --hit-k), e.g. --hit-k "
                    + ",".join(m.split("@", 1)[1] for m in unknown if m.startswith("hit@"))
                    + "."
                )
            raise ValueError(
                f"`metrics` {unknown} are not in the records; metrics present: "
                f"{present_metrics}.{hint}"
            )
    present_budgets = sorted(int(b) for b in df["budget"].unique())
    if budgets is None:
        return ms, present_budgets
    if isinstance(budgets, str | bytes) or not isinstance(budgets, Iterable):
        if not isinstance(budgets, int | float | np.integer | np.floating):
            raise TypeError(
                f"`budgets` must be a positive integer or a list of them; got {budgets!r}."
            )
        budgets = [budgets]  # one budget (a string is refused: "128" is not 1, 2, 8)
    bs = []
    budgets = list(budgets)
    for b in budgets:
        try:
            ok = not isinstance(b, bool | str) and float(b).is_integer() and int(b) > 0
        except (TypeError, ValueError, OverflowError):
            ok = False
        if not ok:
            raise ValueError(f"`budgets` must be positive integers; got {b!r}.")
        bs.append(int(b))
    if not bs:
        raise ValueError("`budgets` is empty.")
    unique_items(budgets, "budgets", int)
    unknown_b = [b for b in bs if b not in present_budgets]
    if unknown_b:
        raise ValueError(
            f"`budgets` {unknown_b} are not in the records; budgets present: {present_budgets}."
        )
    return ms, bs


def _names(value: Any, what: str) -> list[str]:
    if value is None:
        return []
    names = [value] if isinstance(value, str) else list(value)
    if not names or not all(isinstance(x, str) and x for x in names):
        raise TypeError(
            f"`{what}` must be a method name or a non-empty list of them; got {value!r}."
        )
    return unique_items(names, what)


def self_pairs(treatment: Any, baseline: Any, all_pairs: bool) -> list[str]:
    """The methods named both as a treatment and as a baseline, whose pair with itself
    :func:`method_pairs` skips (``--treatment zep --baseline mem0,zep`` compares zep with
    mem0 only): listed so that the skip is said, never silent. None with `all_pairs` (its
    pairs are of distinct methods by definition)."""
    if all_pairs:
        return []
    baselines = set(_names(baseline, "baseline"))
    return [t for t in _names(treatment, "treatment") if t in baselines]


def method_pairs(
    df: pd.DataFrame, treatment: Any, baseline: Any, all_pairs: bool
) -> tuple[list[tuple[str, str]], list[str]]:
    """The (treatment, baseline) pairs to compare and the methods of `df` left out of them.

    Every treatment against every baseline (a name in both lists is not compared with
    itself); with `all_pairs`, every pair of the methods named (in their order: the first
    is the treatment), or of all methods in the records when none is named.
    """
    known = sorted(df["method"].unique().tolist())
    treatments, baselines = _names(treatment, "treatment"), _names(baseline, "baseline")
    for what, names in (("treatment", treatments), ("baseline", baselines)):
        unknown = [x for x in names if x not in known]
        if unknown:
            said = f"method {unknown[0]!r} is" if len(unknown) == 1 else f"methods {unknown} are"
            raise ValueError(f"`{what}` {said} not in the records; known methods: {known}.")
    if all_pairs:
        chosen = list(dict.fromkeys(treatments + baselines)) or known
        pairs = [(a, b) for i, a in enumerate(chosen) for b in chosen[i + 1 :]]
        if not pairs:
            raise ValueError(f"`all_pairs` needs at least two methods; got {chosen}.")
    else:
        if not treatments or not baselines:
            raise TypeError(
                "give `treatment` and `baseline` (names or lists), or `all_pairs=True`."
            )
        pairs = [(t, b) for b in baselines for t in treatments if t != b]
        if not pairs:
            raise ValueError("`treatment` and `baseline` must be different methods.")
    used = {x for p in pairs for x in p}
    return pairs, [m for m in known if m not in used]
