"""Significance claims to audit: the TOML claims file (docs/audit.md) and its validation.

A claims file lists published (or planned) claims about paired comparisons -- "method A beats
method B on metric M at budget B in cell C, by at least t, with p = ..." -- grouped into
correction families. Five kinds of claim (:data:`~osustat.audit.claim.KINDS`): a paired
``difference`` (the default), a descriptive ordering of ``means`` (no significance claimed), a
method x cell ``interaction``, ``equivalence`` within a stated margin, and a ``relative`` effect
(ratio of means). :func:`parse_claims` turns it into frozen :class:`~osustat.audit.claim.Claim`
objects and rejects unknown keys and impossible claims with an error that names the file, the
claim's position, id and line, and the offending value; :func:`osustat.audit.run.audit` checks
the claims against records. The claim model (kinds, keys, ``Claim``, ``ClaimsFile``) is
imported from :mod:`osustat.audit.claim`, which defines it.
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from osustat._validation import read_utf8_text
from osustat.cells import Cell
from osustat.metrics import metric_spec
from osustat.multitest import CORRECTIONS

from .claim import (
    CLAIM_KEYS,
    DIRECTIONS,
    FAMILY_CORRECTIONS,
    KINDS,
    SEED_HANDLING,
    UNITS,
    Claim,
    ClaimsFile,
    Family,
    ReportedP,
)

__all__ = ["load_claims", "parse_claims"]

#: Kinds that assert a direction (``direction`` required).
_DIRECTED = ("difference", "means", "relative")
_FAMILY_KEYS = ("correction", "strict_correction", "alpha", "description")
_TOP_KEYS = ("title", "description", "defaults", "family", "claim")


def load_claims(path: str | Path) -> ClaimsFile:
    """Read and validate a claims TOML file (see :func:`parse_claims`)."""
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"claims file {str(p)!r} does not exist.")
    # UTF-8, a BOM read; gzip, UTF-16 or other bytes: an error naming the file
    return parse_claims(read_utf8_text(p, "claims file"), source=str(p))


def _claim_lines(text: str) -> list[int]:
    return [i for i, line in enumerate(text.splitlines(), 1) if line.strip() == "[[claim]]"]


def parse_claims(text: str, *, source: str = "<string>") -> ClaimsFile:
    """Parse and validate the text of a claims file.

    Parameters
    ----------
    text : str
        TOML with optional ``title``/``description``, an optional ``[defaults]`` table (any
        claim key but ``id``; each claim takes those its kind gives a meaning), optional
        ``[family.NAME]`` tables (``correction`` -- the one the authors applied, default
        ``'none'`` --, ``strict_correction`` -- default ``'holm'`` --, ``alpha``,
        ``description``) and one ``[[claim]]`` table per claim (keys in
        :data:`~osustat.audit.claim.CLAIM_KEYS`).
    source : str
        File name used in error messages.

    Returns
    -------
    ClaimsFile

    Raises
    ------
    ValueError
        Invalid TOML; unknown keys (listing the allowed ones); missing required keys;
        duplicate ids; the same test twice in a family (same comparison keys, whatever the
        ids: it would enter the family's correction twice); unknown cells, directions,
        units, seed handling or corrections; a cell with ``unit = 'episode'``; thresholds,
        effects, means or intervals outside [-1, 1] (or [0, 1] for means) for metrics in
        [0, 1] (hit@k, recall: ``osustat.metrics``); a reported effect on the wrong side of
        the threshold; a p-value outside (0, 1]; a declared family no claim uses; an unknown
        `kind`; a key without meaning for the kind (``margin`` outside equivalence,
        ``direction`` on equivalence/interaction, ``cell`` on interaction); a missing
        ``margin``/``direction`` the kind needs; a non-positive margin; a relative effect or
        threshold <= -1.
    TypeError
        A key of the wrong type (e.g. a budget given as a string).

    Examples
    --------
    >>> from osustat.audit.claims import parse_claims
    >>> cf = parse_claims('''
    ... [defaults]
    ... family = "t4"
    ... treatment = "osu-mem"
    ... baseline = "flat-vector"
    ... budget = 256
    ... [[claim]]
    ... id = "te-hit"
    ... metric = "hit@2"
    ... cell = "T+E+"
    ... direction = "greater"
    ... reported_effect = 0.179
    ... reported_p = 0.022
    ... ''')
    >>> c = cf.claims[0]
    >>> c.describe(), c.reported_p.text, cf.families["t4"].correction
    ('osu-mem − flat-vector > 0 on hit@2, B=256, T+E+ (query)', '0.022', 'none')
    """
    try:
        data = tomllib.loads(text.removeprefix("\ufeff"))  # a BOM, as the file reader reads it
    except tomllib.TOMLDecodeError as exc:
        hint = (
            " (a claims file is TOML, one [[claim]] table per claim: docs/audit.md)"
            if str(source).lower().endswith(".json")
            else ""
        )
        raise ValueError(f"claims file {source!r} is not valid TOML: {exc}{hint}.") from None
    unknown = sorted(set(data) - set(_TOP_KEYS))
    if unknown:
        raise ValueError(
            f"claims file {source!r}: unknown top-level keys {unknown}; allowed: {list(_TOP_KEYS)}."
        )
    defaults = data.get("defaults", {})
    if not isinstance(defaults, dict):
        raise TypeError(f"claims file {source!r}: `defaults` must be a table.")
    bad = sorted(set(defaults) - set(CLAIM_KEYS) | ({"id"} & set(defaults)))
    if bad:
        raise ValueError(
            f"claims file {source!r}: unknown keys in [defaults]: {bad}; allowed: "
            f"{[k for k in CLAIM_KEYS if k != 'id']}."
        )
    families = _families(data.get("family", {}), source)
    raw_claims = data.get("claim", [])
    if isinstance(raw_claims, dict):
        raise ValueError(
            f"claims file {source!r}: `[claim]` is a single table; write `[[claim]]` (two "
            "brackets) above each claim."
        )
    if not isinstance(raw_claims, list) or not raw_claims:
        raise ValueError(
            f"claims file {source!r} has no claims; add one [[claim]] table per claim."
        )
    lines = _claim_lines(text)
    claims: list[Claim] = []
    seen: dict[str, int] = {}
    for pos, raw in enumerate(raw_claims, 1):
        line = lines[pos - 1] if len(lines) == len(raw_claims) else None
        where = f"claims file {source!r}, claim {pos}" + (f" (line {line})" if line else "")
        claim = _claim({**_applying(defaults, raw), **raw}, where, line)
        if claim.id in seen:
            raise ValueError(
                f"{where}: duplicate id {claim.id!r} (first used by claim {seen[claim.id]})."
            )
        seen[claim.id] = pos
        claims.append(claim)
    _same_tests(claims, source)
    unused = sorted(set(families) - {c.family for c in claims})
    if unused:
        raise ValueError(
            f"claims file {source!r}: families {unused} are declared but no claim uses them "
            "(a misspelt `family` key?)."
        )
    for c in claims:
        families.setdefault(c.family, Family(c.family))
    return ClaimsFile(tuple(claims), families, str(data.get("title", "")), source)


#: Kinds whose comparison reads the same with treatment and baseline swapped (direction
#: flipped, threshold negated): ``a - b > t`` is ``b - a < -t``.
_SYMMETRIC = ("difference", "means", "equivalence", "interaction")
_FLIP = {"greater": "less", "less": "greater"}


def _comparison_key(c: Claim) -> tuple[Any, ...]:
    """What makes two claims of a family the same test: their kind, benchmark, the pair of
    methods, metric, budget, cell, unit, seed selector, direction, threshold and margin (the
    pair in a fixed order, the direction and threshold turned with it). Not the id, the
    printed numbers, the source, nor `seeds` -- how the claim's own p read several seeds
    (the strict standard averages them whatever it says)."""
    t, b, direction, threshold = c.treatment, c.baseline, c.direction, c.threshold
    if c.kind in _SYMMETRIC and t > b:
        t, b = b, t
        direction, threshold = _FLIP.get(direction, direction), -threshold + 0.0
    return (
        c.family, c.kind, c.benchmark, t, b, c.metric, c.budget, c.cell, c.unit, c.seed,
        direction, threshold, c.margin,
    )  # fmt: skip


def _same_tests(claims: list[Claim], source: str) -> None:
    """A claim repeated in its family (the same :func:`_comparison_key`) would enter the family's
    correction twice, inflating m: an error naming every such pair (issue 35 item 1)."""
    first: dict[tuple[Any, ...], tuple[int, Claim]] = {}
    pairs = []
    for pos, c in enumerate(claims, 1):
        key = _comparison_key(c)
        if key in first:
            pairs.append((first[key], (pos, c)))
        else:
            first[key] = (pos, c)
    if not pairs:
        return

    def name(pos: int, c: Claim) -> str:
        line = f"line {c.line}, " if c.line else ""
        return f"{pos} ({line}id {c.id!r})"

    said = [
        f"claims {name(*a)} and {name(*b)} are the same test in family {a[1].family!r}: "
        f"{a[1].describe()}"
        for a, b in pairs
    ]
    more = f"; and {len(said) - 20} more" if len(said) > 20 else ""
    why = (
        "a family counts each test once (a repeat would raise its m and every corrected p)"
        if any(a[1].kind != "means" for a, _ in pairs)
        else "a descriptive claim (kind = 'means', no test) said twice is checked twice"
    )
    raise ValueError(
        f"claims file {source!r}: " + "; ".join(said[:20]) + more + f". {why[0].upper()}"
        f"{why[1:]}: remove the repeat, or give it another family, cell, budget, threshold ... "
        "if it claims something else."
    )


def _families(raw: Any, source: str) -> dict[str, Family]:
    if not isinstance(raw, dict):
        raise TypeError(f"claims file {source!r}: `family` must hold [family.NAME] tables.")
    out = {}
    for name, spec in raw.items():
        where = f"claims file {source!r}, [family.{name}]"
        if not isinstance(spec, dict):
            raise TypeError(f"{where} must be a table.")
        unknown = sorted(set(spec) - set(_FAMILY_KEYS))
        if unknown:
            raise ValueError(f"{where}: unknown keys {unknown}; allowed: {list(_FAMILY_KEYS)}.")
        correction = spec.get("correction", "none")
        if correction not in FAMILY_CORRECTIONS:
            raise ValueError(
                f"{where}: `correction` must be one of {list(FAMILY_CORRECTIONS)}; "
                f"got {correction!r}."
            )
        strict = spec.get("strict_correction", "holm")
        if strict not in CORRECTIONS:
            raise ValueError(
                f"{where}: `strict_correction` must be one of {list(CORRECTIONS)}; got {strict!r}."
            )
        alpha = _number(spec.get("alpha", 0.05), "alpha", where)
        if not 0.0 < alpha < 1.0:
            raise ValueError(f"{where}: `alpha` must be in (0, 1); got {alpha}.")
        out[name] = Family(name, correction, alpha, str(spec.get("description", "")), strict)
    return out


def _number(value: Any, key: str, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{where}: `{key}` must be a number; got {value!r}.")
    if not math.isfinite(value):
        raise ValueError(f"{where}: `{key}` must be finite; got {value!r}.")
    return float(value)


def _integer(value: Any, key: str, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{where}: `{key}` must be an integer; got {value!r}.")
    if value < 1:
        raise ValueError(f"{where}: `{key}` must be a positive integer; got {value}.")
    return value


def _string(value: Any, key: str, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise TypeError(f"{where}: `{key}` must be a non-empty string; got {value!r}.")
    return value.strip()


def _pair(value: Any, key: str, where: str) -> tuple[float, float]:
    if not isinstance(value, list) or len(value) != 2:
        raise TypeError(f"{where}: `{key}` must be a list of two numbers; got {value!r}.")
    return _number(value[0], key, where), _number(value[1], key, where)


def _choice(value: Any, key: str, allowed: tuple[str, ...], where: str) -> str:
    if value not in allowed:
        raise ValueError(f"{where}: `{key}` must be one of {list(allowed)}; got {value!r}.")
    return str(value)


def _claim(raw: dict[str, Any], where: str, line: int | None) -> Claim:
    """One ``[[claim]]`` table, checked step by step (errors name the file, line and id):
    its keys for its kind, cell and unit, direction and threshold, the reported values."""
    cid, kind, where = _claim_keys(raw, where)
    metric = _string(raw["metric"], "metric", where).lower()
    in_range = _range_check(metric, where)
    cell, unit = _cell_and_unit(raw, kind, where)
    direction = (
        _choice(raw["direction"], "direction", DIRECTIONS, where)
        if kind in _DIRECTED
        else "two-sided"
    )
    threshold, margin = _threshold_and_margin(raw, kind, in_range, where)
    effect, means, ci, p = _reported(raw, kind, direction, threshold, in_range, where)
    treatment = _string(raw["treatment"], "treatment", where)
    baseline = _string(raw["baseline"], "baseline", where)
    if treatment == baseline:
        raise ValueError(f"{where}: `treatment` and `baseline` are both {treatment!r}.")
    reported_over = _reported_over(raw, kind, unit, effect, means, where)
    seed = None
    if "seed" in raw:
        seed = raw["seed"]
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise TypeError(f"{where}: `seed` must be a non-negative integer; got {seed!r}.")
    return Claim(
        id=cid,
        family=_string(raw["family"], "family", where),
        treatment=treatment,
        baseline=baseline,
        metric=metric,
        budget=_integer(raw["budget"], "budget", where),
        cell=cell,
        direction=direction,
        threshold=threshold,
        unit=unit,
        benchmark=_string(raw["benchmark"], "benchmark", where) if "benchmark" in raw else None,
        reported_effect=effect,
        reported_means=means,
        reported_p=p,
        reported_ci=ci,
        reported_n=_integer(raw["reported_n"], "reported_n", where)
        if "reported_n" in raw
        else None,
        reported_resamples=_integer(raw["reported_resamples"], "reported_resamples", where)
        if "reported_resamples" in raw
        else None,
        seeds=_choice(raw.get("seeds", "average"), "seeds", SEED_HANDLING, where),
        source=str(raw.get("source", "")),
        note=str(raw.get("note", "")),
        reported_over=reported_over,
        line=line,
        kind=kind,
        margin=margin,
        seed=seed,
    )


def _meaningless(kind: str) -> list[str]:
    """The claim keys a claim of `kind` gives no meaning (an error where a claim writes one)."""
    return {
        "interaction": ["direction", "threshold", "margin", "reported_effect", "reported_ci"],
        "equivalence": ["direction", "threshold"],
    }.get(kind, ["margin"])


def _applying(defaults: dict[str, Any], raw: Any) -> dict[str, Any]:
    """The ``[defaults]`` that apply to the claim `raw`: those its kind gives a meaning (a
    file of several kinds sets ``direction`` once for its directed claims, not in each; a
    red team: an equivalence claim was refused for the defaults' ``direction``)."""
    if not isinstance(raw, dict):
        return defaults
    kind = raw.get("kind", defaults.get("kind", "difference"))
    skip = _meaningless(kind) if isinstance(kind, str) else []
    return {k: v for k, v in defaults.items() if k not in skip}


def _claim_keys(raw: dict[str, Any], where: str) -> tuple[str, str, str]:
    """The claim's id, its kind and `where` naming the id; its keys checked: none unknown,
    the required ones and those its kind needs present, none its kind gives no meaning."""
    unknown = sorted(set(raw) - set(CLAIM_KEYS))
    if unknown:
        raise ValueError(f"{where}: unknown keys {unknown}; allowed: {list(CLAIM_KEYS)}.")
    missing = [k for k, (required, _) in CLAIM_KEYS.items() if required and k not in raw]
    if missing:
        raise ValueError(f"{where}: missing required keys {missing}.")
    cid = _string(raw["id"], "id", where)
    where = f"{where} (id {cid!r})"
    kind = _choice(raw.get("kind", "difference"), "kind", KINDS, where)
    needed = ["direction"] if kind in _DIRECTED else []
    needed += ["cell"] if kind != "interaction" else []
    needed += ["margin"] if kind == "equivalence" else []
    missing = [k for k in needed if k not in raw]
    if missing:
        raise ValueError(f"{where}: missing required keys {missing} for kind {kind!r}.")
    present = [k for k in _meaningless(kind) if k in raw]
    if present:
        raise ValueError(f"{where}: keys {present} have no meaning for kind {kind!r}.")
    return cid, kind, where


def _range_check(metric: str, where: str) -> Callable[..., None]:
    """``in_range(x, key, low=-1.0)``: for a metric in [0, 1] (hit@k, recall:
    :mod:`osustat.metrics`), a value outside [low, 1] is an error naming `key`."""
    spec = metric_spec(metric)
    bounded = spec is not None and spec.unit_interval

    def in_range(x: float, key: str, low: float = -1.0) -> None:
        if bounded and not low <= x <= 1.0:
            raise ValueError(
                f"{where}: `{key}` = {x} is impossible for metric {metric!r}, whose values "
                f"lie in [0, 1] (so differences lie in [-1, 1]); effects are in metric units, "
                "not percentage points."
            )

    return in_range


def _reported_over(
    raw: dict[str, Any], kind: str, unit: str, effect: Any, means: Any, where: str
) -> str | None:
    """``reported_over``: ``'query'`` only beside ``unit = 'episode'``, a kind compared with
    its printed numbers (difference, relative) and a printed effect or means (the estimand ER
    and ΔRI compare with); None when absent."""
    if "reported_over" not in raw:
        return None
    over = _choice(raw["reported_over"], "reported_over", ("query",), where)
    if kind not in ("difference", "relative"):
        raise ValueError(
            f"{where}: `reported_over` says what ER and ΔRI compare with, which a "
            f"{kind!r} claim does not print; it is for kind 'difference' or 'relative'."
        )
    if unit != "episode":
        raise ValueError(
            f"{where}: `reported_over = 'query'` is for a claim tested at unit = 'episode' "
            "whose printed numbers are pooled over queries; at unit = 'query' they already are."
        )
    if effect is None and means is None:
        raise ValueError(
            f"{where}: `reported_over` says how the printed effect or means were computed; "
            "the claim prints neither (`reported_effect`, `reported_means`)."
        )
    return over


def _cell_and_unit(raw: dict[str, Any], kind: str, where: str) -> tuple[Cell | None, str]:
    """The claim's cell (None: the aggregate) and unit, and the combinations that cannot be."""
    cell_raw = raw.get("cell", "aggregate")
    if isinstance(cell_raw, str) and cell_raw.strip().lower() == "aggregate":
        cell = None
    else:
        try:
            cell = Cell.parse(cell_raw)
        except ValueError:
            raise ValueError(
                f"{where}: unknown cell {cell_raw!r}; expected 'aggregate' or one of "
                f"{[c.value for c in Cell]}."
            ) from None
    if kind == "interaction" and cell is not None:
        raise ValueError(f"{where}: an interaction claim spans the cells; omit `cell`.")
    unit = _choice(raw.get("unit", "query"), "unit", UNITS, where)
    if unit == "episode" and cell is not None:
        raise ValueError(
            f"{where}: cell {cell.value!r} with unit 'episode' is impossible: an episode mixes "
            "queries of several cells; use unit = 'query' or cell = 'aggregate'."
        )
    if unit == "episode" and kind == "interaction":
        raise ValueError(f"{where}: an interaction claim needs unit = 'query' (cells).")
    return cell, unit


def _threshold_and_margin(
    raw: dict[str, Any], kind: str, in_range: Callable[..., None], where: str
) -> tuple[float, float | None]:
    """The claim's threshold (a relative one is ratio - 1, above -1) and an equivalence
    claim's margin (positive)."""
    threshold = _number(raw.get("threshold", 0.0), "threshold", where)
    if kind == "relative":
        if threshold <= -1.0:
            raise ValueError(
                f"{where}: a relative `threshold` is ratio - 1 and must exceed -1; got {threshold}."
            )
    else:
        in_range(threshold, "threshold")
    margin = None
    if kind == "equivalence":
        margin = _number(raw["margin"], "margin", where)
        if margin <= 0:
            raise ValueError(f"{where}: `margin` must be positive; got {margin}.")
        in_range(margin, "margin")
    return threshold, margin


def _reported(
    raw: dict[str, Any],
    kind: str,
    direction: str,
    threshold: float,
    in_range: Callable[..., None],
    where: str,
) -> tuple[float | None, tuple[float, float] | None, tuple[float, float] | None, Any]:
    """The paper's reported effect, means, CI and p of the claim, each checked; a reported
    effect that contradicts the claim's own direction and threshold is an error."""
    relative = kind == "relative"
    effect = None
    if "reported_effect" in raw:
        effect = _number(raw["reported_effect"], "reported_effect", where)
        if relative and effect <= -1.0:
            raise ValueError(
                f"{where}: a relative `reported_effect` is ratio - 1 (+0.399 for +39.9%) and "
                f"must exceed -1; got {effect}."
            )
        if not relative:
            in_range(effect, "reported_effect")
    means = None
    if "reported_means" in raw:
        means = _pair(raw["reported_means"], "reported_means", where)
        for m in means:
            in_range(m, "reported_means", low=0.0)
    claimed = effect if effect is not None else (means[0] - means[1] if means else None)
    if relative and effect is None and means is not None:
        claimed = means[0] / means[1] - 1.0 if means[1] > 0 else None
    if (
        kind in _DIRECTED
        and claimed is not None
        and (
            (direction == "greater" and claimed < threshold)
            or (direction == "less" and claimed > threshold)
        )
    ):
        raise ValueError(
            f"{where}: the reported effect {claimed:+g} contradicts the claim itself "
            f"(direction {direction!r}, threshold {threshold:g})."
        )
    ci = None
    if "reported_ci" in raw:
        ci = _pair(raw["reported_ci"], "reported_ci", where)
        if ci[0] > ci[1]:
            raise ValueError(f"{where}: `reported_ci` must be [low, high]; got {list(ci)}.")
        if not relative:
            for x in ci:
                in_range(x, "reported_ci")
    p = None
    if "reported_p" in raw:
        try:
            p = ReportedP.parse(raw["reported_p"])
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"{where}: `reported_p`: {exc}") from None
    return effect, means, ci, p
