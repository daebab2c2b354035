"""The one set of number formatters every report and the verdict words use."""

import math

import numpy as np
import pytest

from osustat.formatting import fmt_interval, fmt_number, fmt_p, fmt_signed, p_phrase, yes_no


class TestFmtP:
    @pytest.mark.parametrize(
        ("p", "kw", "text"),
        [
            (0.0009999, {}, "< .001"),
            (0.001, {}, ".001"),
            (0.0504, {}, ".050"),
            (0.99951, {}, "1.000"),
            (1.0, {}, "1.000"),
            (np.float64(0.25), {}, ".250"),
            (None, {}, "—"),
            (math.nan, {"missing": "n/a"}, "n/a"),
            (math.inf, {}, "—"),
        ],
    )
    def test_values(self, p, kw, text):
        assert fmt_p(p, **kw) == text

    def test_phrase(self):
        assert (p_phrase(0.0004), p_phrase(0.5), p_phrase(0.01, name="p_adj")) == (
            "p < .001",
            "p = .500",
            "p_adj = .010",
        )

    def test_never_a_mark_or_leading_zero(self):
        for p in np.linspace(0.0, 1.0, 1001):
            text = fmt_p(p)
            assert not text.startswith("0") and "*" not in text and not text.endswith(".")


class TestSigned:
    @pytest.mark.parametrize(
        ("x", "digits", "text"),
        [
            (0.1791, 3, "+0.179"),
            (-0.0312, 3, "-0.031"),
            (-0.00004, 3, "0.000"),  # never -0.000
            (0.00004, 3, "0.000"),
            (0.06494, 4, "+0.0649"),
            (math.inf, 3, "+∞"),
            (-math.inf, 3, "−∞"),
            (None, 3, "—"),
            (math.nan, 3, "—"),
        ],
    )
    def test_values(self, x, digits, text):
        assert fmt_signed(x, digits) == text

    def test_interval_and_number(self):
        assert fmt_interval(-0.1041, -0.0107) == "[-0.104, -0.011]"
        assert fmt_interval(0.0, 0.5, signed=False) == "[0.000, 0.500]"
        assert fmt_interval(math.nan, 1) == "—"
        assert fmt_number(0.5) == "0.500" and fmt_number(None) == "—"


def test_yes_no_never_python_booleans():
    assert [yes_no(v) for v in (True, False, np.bool_(True), None)] == ["yes", "no", "yes", "—"]
