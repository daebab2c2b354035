"""The declared open choices: the TOML (package data) and the dataclass agree."""

from __future__ import annotations

from dataclasses import fields

import pytest

from osustat.analyses.locomo.choices import Choices, declared, variants


def test_defaults_agree_with_the_toml() -> None:
    table = declared()
    assert set(table) == {f.name for f in fields(Choices)}
    for f in fields(Choices):
        assert getattr(Choices(), f.name) == table[f.name]["default"]
        assert table[f.name]["default"] in table[f.name]["options"]
        assert table[f.name]["why"].strip()


def test_variants_change_one_choice_at_a_time() -> None:
    vs = variants()
    assert vs[0] == Choices()
    assert len(vs) == 1 + sum(len(v["options"]) - 1 for v in declared().values())
    for v in vs[1:]:
        assert v.label().count("=") == 1


def test_unknown_option_is_an_error() -> None:
    with pytest.raises(ValueError, match="query_time"):
        Choices(query_time="middle")
