"""The declared open choices: the TOML (package data, protocol format) and the dataclass agree."""

from __future__ import annotations

from dataclasses import fields

import pytest

from osustat.analyses.locomo.benchmark import BENCHMARK
from osustat.analyses.locomo.choices import Choices, declared
from osustat.analyses.protocol import Benchmark


def test_defaults_agree_with_the_toml() -> None:
    table = declared()
    assert set(table.names()) == {f.name.replace("_", "-") for f in fields(Choices)}
    assert Choices().as_mapping() == table.defaults()
    for c in table.choices:
        assert c.why and c.paper and c.default in c.values


def test_mapping_round_trip_and_labels() -> None:
    ch = Choices.from_mapping({"query-time": "after-evidence-session"})
    assert ch.query_time == "after-evidence-session" and ch.labels == "original"
    assert Choices.from_mapping(ch.as_mapping()) == ch
    assert ch.label() == "query-time=after-evidence-session"
    assert Choices().label() == "default"


def test_unknown_option_is_an_error() -> None:
    with pytest.raises(ValueError, match="query-time"):
        Choices(query_time="middle")


def test_the_benchmark_implements_the_protocol() -> None:
    assert isinstance(BENCHMARK, Benchmark)
    assert BENCHMARK.choices.defaults() == Choices().as_mapping()
    assert set(BENCHMARK.references) <= set(BENCHMARK.methods())
