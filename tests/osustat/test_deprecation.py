"""Former keyword and attribute names: one decorator, absent from the public signatures."""

import inspect
import warnings

import pytest

import osustat
from osustat._deprecation import renamed_attribute, renamed_keywords


def test_old_names_are_not_in_public_signatures():
    params = inspect.signature(osustat.analyze).parameters
    assert "n_resamples" in params and "rng" in params
    assert "resamples" not in params and "seed" not in params
    assert params["n_resamples"].default == 10_000 and params["rng"].default == 0


def test_keyword_is_moved_with_a_warning_and_both_is_an_error():
    @renamed_keywords(old="new")
    def f(a, *, new=1):
        return a, new

    with pytest.warns(DeprecationWarning, match="`old` is deprecated; use `new`."):
        assert f(0, old=5) == (0, 5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert f(0, new=6) == (0, 6)  # the current name never warns
    with pytest.raises(TypeError, match="pass `new` or its old name `old`, not both"):
        f(0, old=5, new=6)


def test_attribute_alias_reads_the_new_attribute():
    class C:
        def __init__(self):
            self.value = 7

        old_value = renamed_attribute("value")

    with pytest.warns(DeprecationWarning, match="`old_value` is deprecated; use `value`."):
        assert C().old_value == 7
    assert isinstance(C.old_value, renamed_attribute)
