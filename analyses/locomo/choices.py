"""The declared open choices of LoCoMo (``choices.toml``, package data, read through the
protocol's :func:`analyses.protocol.load_choices`) as one typed setting."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

__all__ = ["Choices", "declared"]


def declared() -> Any:
    """The protocol's :class:`~analyses.protocol.Choices` of LoCoMo."""
    from osustat.analyses.protocol import load_choices

    return load_choices("osustat.analyses.locomo", "locomo")


@dataclass(frozen=True)
class Choices:
    """One setting of every open choice (field ``query_time`` <-> choice ``query-time``)."""

    labels: str = "original"
    query_time: str = "end"
    entity_extractor: str = "proper-nouns"
    speaker_view: str = "off"
    captions: str = "in"
    #: The encoder's runtime (``RunSpec.text_backend`` reads it; nothing here does).
    encoder_backend: str = "torch"

    def __post_init__(self) -> None:
        table = declared()
        for f in fields(self):
            choice = table.get(f.name.replace("_", "-"))
            if getattr(self, f.name) not in choice.values:
                raise ValueError(
                    f"choice `{choice.name}` must be one of {list(choice.values)}; "
                    f"got {getattr(self, f.name)!r}."
                )

    @classmethod
    def from_mapping(cls, values: Mapping[str, str]) -> Choices:
        """From the protocol's ``{choice name: value}`` (missing names take the default)."""
        return cls(**{k.replace("-", "_"): v for k, v in values.items()})

    def as_mapping(self) -> dict[str, str]:
        return {f.name.replace("_", "-"): getattr(self, f.name) for f in fields(self)}

    def label(self) -> str:
        """``name=value`` of the settings that differ from the defaults (``'default'`` if none)."""
        base = Choices().as_mapping()
        diff = [f"{k}={v}" for k, v in self.as_mapping().items() if v != base[k]]
        return ", ".join(diff) or "default"
