"""Independent reference: the sign-flip p-value by brute-force enumeration in exact rationals.

Used by tests/osustat/test_signflip.py. Shares no code with osustat: every one of the 2**n
sign patterns is summed with fractions.Fraction, so ties are exact by construction.
"""

from __future__ import annotations

import itertools
from fractions import Fraction


def exact_signflip_pvalue(diffs: list[Fraction], alternative: str = "two-sided") -> Fraction:
    observed = sum(diffs, Fraction(0))
    hits = 0
    total = 0
    for signs in itertools.product((1, -1), repeat=len(diffs)):
        t = sum((s * d for s, d in zip(signs, diffs, strict=False)), Fraction(0))
        total += 1
        if alternative == "two-sided":
            hits += abs(t) >= abs(observed)
        elif alternative == "greater":
            hits += t >= observed
        else:
            hits += t <= observed
    return Fraction(hits, total)
