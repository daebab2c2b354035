"""The declared open choices of the LoCoMo pipeline, read from ``choices.toml`` (package data)."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, fields, replace
from importlib import resources
from typing import Any

__all__ = ["Choices", "declared", "variants"]


@dataclass(frozen=True)
class Choices:
    """One setting of every open choice (defaults: ``choices.toml``)."""

    labels: str = "original"
    query_time: str = "end"
    entity_extractor: str = "proper-nouns"
    captions: str = "in"
    speaker_view: str = "off"

    def __post_init__(self) -> None:
        table = declared()
        for f in fields(self):
            value = getattr(self, f.name)
            options = table[f.name]["options"]
            if value not in options:
                raise ValueError(f"choice `{f.name}` must be one of {options}; got {value!r}.")

    def label(self) -> str:
        """``name=value`` of the settings that differ from the defaults (``'default'`` if none)."""
        base = Choices()
        diff = [
            f"{f.name}={getattr(self, f.name)}"
            for f in fields(self)
            if getattr(self, f.name) != getattr(base, f.name)
        ]
        return ", ".join(diff) or "default"


def declared() -> dict[str, dict[str, Any]]:
    """The ``[choices.*]`` tables of ``choices.toml``: ``default``, ``options``, ``why``."""
    text = resources.files(__package__).joinpath("choices.toml").read_text(encoding="utf-8")
    table: dict[str, dict[str, Any]] = tomllib.loads(text)["choices"]
    return table


def variants() -> list[Choices]:
    """The default setting, then each non-default option of one choice at a time."""
    out = [Choices()]
    for name, spec in declared().items():
        for option in spec["options"]:
            if option != spec["default"]:
                out.append(replace(Choices(), **{name: option}))
    return out
