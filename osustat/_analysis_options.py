"""Validation of :func:`osustat.analyze`'s options (private): levels and counts, the
metrics and budgets asked for, and the correction families (see :mod:`osustat.analysis`)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from .multitest import CORRECTIONS

FAMILIES = ("per-metric-budget", "per-metric", "all")


def check_options(
    correction: str, alpha: Any, level: Any, resamples: Any, bootstrap_resamples: Any, seed: Any
) -> tuple[float, float, int, int, int]:
    if correction not in (*CORRECTIONS, "none"):
        raise ValueError(
            f"`correction` must be one of {[*CORRECTIONS, 'none']}; got {correction!r}."
        )

    def prob(x: Any, name: str) -> float:
        try:
            v = float(x)
        except (TypeError, ValueError):
            raise TypeError(f"`{name}` must be a number in (0, 1); got {x!r}.") from None
        if not (0 < v < 1):
            raise ValueError(f"`{name}` must lie strictly between 0 and 1; got {x!r}.")
        return v

    def count(x: Any, name: str, low: int) -> int:
        if isinstance(x, bool) or not isinstance(x, int | np.integer) or int(x) < low:
            raise ValueError(f"`{name}` must be an integer >= {low}; got {x!r}.")
        return int(x)

    return (
        prob(alpha, "alpha"),
        prob(level, "level"),
        count(resamples, "n_resamples", 1),
        count(bootstrap_resamples, "bootstrap_resamples", 1),
        count(seed, "rng", 0),
    )


def family_groups(
    family: str | Sequence[Sequence[tuple[str, int]]], pairs: Sequence[tuple[str, int]]
) -> list[tuple[str, list[tuple[str, int]]]]:
    if isinstance(family, str):
        if family == "per-metric-budget":
            return [(f"{m} @ {b}", [(m, b)]) for m, b in pairs]
        if family == "per-metric":
            metrics = list(dict.fromkeys(m for m, _ in pairs))
            return [(m, [(x, b) for x, b in pairs if x == m]) for m in metrics]
        if family == "all":
            return [("all", list(pairs))]
        raise ValueError(
            f"`family` must be one of {list(FAMILIES)} or a list of groups of (metric, budget) "
            f"pairs; got {family!r}."
        )
    groups: list[tuple[str, list[tuple[str, int]]]] = []
    seen: dict[tuple[str, int], int] = {}
    for g, members in enumerate(family):
        ms = []
        for item in members:
            try:
                m, b = item
                key = (str(m).strip().lower(), int(b))
            except (TypeError, ValueError):
                raise ValueError(
                    f"`family` group {g} must hold (metric, budget) pairs; got {item!r}."
                ) from None
            if key not in pairs:
                raise ValueError(
                    f"`family` group {g} names {key}, which is not analysed; analysed "
                    f"(metric, budget) pairs: {list(pairs)}."
                )
            if key in seen:
                raise ValueError(f"`family`: {key} is in groups {seen[key]} and {g}.")
            seen[key] = g
            ms.append(key)
        groups.append((f"group {g + 1}", ms))
    missing = [p for p in pairs if p not in seen]
    if missing:
        raise ValueError(f"`family` leaves out analysed (metric, budget) pairs {missing}.")
    return groups


def select(
    df: pd.DataFrame, metrics: Iterable[str] | str | None, budgets: Iterable[int] | int | None
) -> tuple[list[str], list[int]]:
    """The metrics and budgets to analyse, checked against the records."""
    present_metrics = sorted(df["metric"].unique().tolist())
    if metrics is None:
        ms = [m for m in present_metrics if m != "tokens"] or present_metrics
    else:
        ms = [metrics] if isinstance(metrics, str) else list(metrics)
        ms = ["".join(str(m).split()).lower() for m in ms]
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
    unknown_b = [b for b in bs if b not in present_budgets]
    if unknown_b:
        raise ValueError(
            f"`budgets` {unknown_b} are not in the records; budgets present: {present_budgets}."
        )
    return ms, bs
