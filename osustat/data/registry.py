"""The registry of datasets (``registry.toml``): what each file is, where it comes from, its hash.

Every file has a SHA-256 and a size; it comes either verbatim from one upstream ``url`` (a raw
file at a pinned commit) or is built by a ``recipe`` of :mod:`osustat.data.recipes` from
``sources`` (upstream blobs, each checked against its git blob id before use). The facts are those
of each dataset's provenance README (the ``README.md`` beside the files in the shared data).
"""

from __future__ import annotations

import functools
import tomllib
from dataclasses import dataclass
from importlib import resources

__all__ = [
    "DataFile",
    "Dataset",
    "Source",
    "datasets",
    "get_dataset",
]


@dataclass(frozen=True)
class Source:
    """One upstream blob a recipe reads: its URL and (a prefix of) its git blob id."""

    url: str
    git_blob: str


@dataclass(frozen=True)
class DataFile:
    """One file of a dataset, relative to the dataset's folder."""

    path: str
    sha256: str
    size: int
    url: str | None = None
    recipe: str | None = None
    sources: tuple[Source, ...] = ()


@dataclass(frozen=True)
class Dataset:
    """A dataset: a folder of files with one license and one provenance."""

    name: str
    folder: str
    title: str
    source: str
    license: str
    restricted: bool
    license_note: str
    inputs: tuple[str, ...]
    files: tuple[DataFile, ...]

    @property
    def size(self) -> int:
        """Bytes of all files."""
        return sum(f.size for f in self.files)


def _file(raw: dict) -> DataFile:
    sources = tuple(Source(s["url"], s["git_blob"]) for s in raw.get("sources", ()))
    if (raw.get("url") is None) == (raw.get("recipe") is None):
        raise ValueError(f"registry.toml: {raw['path']!r} needs exactly one of url and recipe.")
    return DataFile(
        path=raw["path"],
        sha256=raw["sha256"],
        size=int(raw["size"]),
        url=raw.get("url"),
        recipe=raw.get("recipe"),
        sources=sources,
    )


@functools.cache
def datasets() -> tuple[Dataset, ...]:
    """Every registered dataset, in the registry's order."""
    text = resources.files("osustat.data").joinpath("registry.toml").read_text("utf-8")
    out = []
    for raw in tomllib.loads(text)["dataset"]:
        out.append(
            Dataset(
                name=raw["name"],
                folder=raw["folder"],
                title=raw["title"],
                source=raw["source"],
                license=raw["license"],
                restricted=bool(raw["restricted"]),
                license_note=raw.get("license_note", ""),
                inputs=tuple(raw["inputs"]),
                files=tuple(_file(f) for f in raw["file"]),
            )
        )
    return tuple(out)


def get_dataset(name: str) -> Dataset:
    """The dataset called `name`; ValueError naming the known ones otherwise."""
    for ds in datasets():
        if ds.name == name:
            return ds
    known = ", ".join(d.name for d in datasets())
    raise ValueError(f"unknown dataset {name!r}; known datasets: {known}.")
