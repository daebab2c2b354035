"""How every report writes a number: p-values, signed effects, intervals, yes/no.

One formatter per kind of number, used by the core's verdict words (:mod:`osustat.wording`)
and by every report (``osustat.reports``), so a p-value or an effect reads the same in every
table and sentence of every report:

* :func:`fmt_p` -- ``.047``, ``< .001``, ``1.000``: three decimals, no leading zero (a p is
  never above 1), never a significance mark glued to it (marks have their own column);
* :func:`p_phrase` -- ``p = .047`` or ``p < .001`` in a sentence;
* :func:`fmt_signed` -- ``+0.179``, ``-0.031``, ``0.000`` (a value that rounds to zero never
  prints as ``-0.000``), ``+∞``;
* :func:`fmt_interval` -- ``[-0.104, -0.011]`` in the same style;
* :func:`fmt_number` -- an unsigned quantity (a mean, a share): ``0.211``;
* :func:`yes_no` -- ``yes`` / ``no`` for a truth value in prose (never Python's ``True``).

Missing values (None, NaN) print as ``—`` unless the caller names another mark.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = [
    "MISSING",
    "fmt_interval",
    "fmt_number",
    "fmt_p",
    "fmt_signed",
    "p_phrase",
    "yes_no",
]

#: What a missing number prints as.
MISSING = "—"


def _missing(x: Any) -> bool:
    if x is None:
        return True
    try:
        return math.isnan(float(x))
    except (TypeError, ValueError):
        return False


def fmt_p(p: Any, *, missing: str = MISSING) -> str:
    """A p-value: ``'< .001'`` below .001, else three decimals without the leading zero.

    Examples
    --------
    >>> from osustat.formatting import fmt_p
    >>> fmt_p(0.0004), fmt_p(0.04213), fmt_p(1.0), fmt_p(None), fmt_p(float("nan"), missing="n/a")
    ('< .001', '.042', '1.000', '—', 'n/a')
    """
    if _missing(p) or not math.isfinite(float(p)):
        return missing
    p = float(p)
    if p < 0.001:
        return "< .001"
    text = f"{p:.3f}"
    return text[1:] if text.startswith("0.") else text


def p_phrase(p: Any, *, name: str = "p", alpha: float | None = None) -> str:
    """``'p = .047'`` or ``'p < .001'`` (`name` replaces ``p``, e.g. ``p_adj``). Given the
    `alpha` it is judged against, a p above alpha that three decimals would print as alpha
    gets four (``'p = .0501'``, not ``'.050'`` beside α = .05).

    >>> from osustat.formatting import p_phrase
    >>> p_phrase(0.047), p_phrase(1e-5), p_phrase(0.2, name="p_adj")
    ('p = .047', 'p < .001', 'p_adj = .200')
    >>> p_phrase(0.0501, alpha=0.05)
    'p = .0501'
    """
    text = fmt_p(p)
    if alpha is not None and not _missing(p) and p > alpha and f"{p:.3f}" == f"{alpha:.3f}":
        text = f"{p:.4f}".removeprefix("0")
    return f"{name} {text}" if text.startswith("<") else f"{name} = {text}"


def fmt_signed(x: Any, digits: int = 3, *, missing: str = MISSING) -> str:
    """A signed effect: ``'+0.179'``; ``'0.000'`` when it rounds to zero; ``'+∞'``/``'−∞'``.

    >>> from osustat.formatting import fmt_signed
    >>> fmt_signed(0.1791), fmt_signed(-0.0312), fmt_signed(-0.00004), fmt_signed(2.5, 1)
    ('+0.179', '-0.031', '0.000', '+2.5')
    >>> fmt_signed(float("-inf")), fmt_signed(None)
    ('−∞', '—')
    """
    if _missing(x):
        return missing
    x = float(x)
    if math.isinf(x):
        return "−∞" if x < 0 else "+∞"
    text = f"{x:+.{digits}f}"
    return text[1:] if float(text) == 0 else text


def fmt_number(x: Any, digits: int = 3, *, missing: str = MISSING) -> str:
    """An unsigned quantity (a mean, a share, a threshold): ``'0.211'``; ``'∞'`` when infinite.

    >>> from osustat.formatting import fmt_number
    >>> fmt_number(0.2114), fmt_number(None), fmt_number(float("inf"))
    ('0.211', '—', '∞')
    """
    if _missing(x):
        return missing
    x = float(x)
    if math.isinf(x):
        return "−∞" if x < 0 else "∞"
    return f"{x:.{digits}f}"


def fmt_interval(
    low: Any, high: Any, digits: int = 3, *, signed: bool = True, missing: str = MISSING
) -> str:
    """``'[-0.104, -0.011]'``: both ends as :func:`fmt_signed` (as :func:`fmt_number` when
    not `signed`, for intervals of shares); `missing` when either end is.

    >>> from osustat.formatting import fmt_interval
    >>> fmt_interval(-0.1041, -0.0107), fmt_interval(0.2, 0.5, signed=False)
    ('[-0.104, -0.011]', '[0.200, 0.500]')
    >>> fmt_interval(None, 1.0)
    '—'
    """
    if _missing(low) or _missing(high):
        return missing
    one = fmt_signed if signed else fmt_number
    return f"[{one(low, digits)}, {one(high, digits)}]"


def yes_no(flag: Any) -> str:
    """``'yes'`` / ``'no'`` for a truth value (numpy booleans too); ``'—'`` for None.

    >>> from osustat.formatting import yes_no
    >>> yes_no(True), yes_no(False), yes_no(None)
    ('yes', 'no', '—')
    """
    if flag is None:
        return MISSING
    return "yes" if bool(flag) else "no"
