"""The benchmark protocol: what a benchmark implements so that ``osustat reproduce`` runs it.

One small interface (:class:`Benchmark`) and the value types it passes around. The driver
(:mod:`analyses.driver`) owns everything every benchmark shares — option checks before any
work, ``--out``/``--force``, data resolution, the sweep backend (``--jobs``, ``--scheduler``,
resume), user retrievers and their paired tests, the embedded claims audit, atomic output with
``provenance.json``, ``--choice`` and ``--sensitivity`` — and knows no benchmark by name: it
looks a benchmark up in :data:`analyses.registry.BENCHMARKS` (one line per benchmark).

A benchmark declares
  - ``name`` (the CLI's ``reproduce NAME``), ``description`` and ``data`` (:class:`DataSpec`:
    what ``--data`` takes);
  - ``choices`` (:class:`Choices`, read from a TOML file shipped as package data beside the
    benchmark: every choice the paper leaves open, its allowed values, the default and why, and
    the paper's words);
  - ``claims`` (:class:`ClaimSelection`: which claims files of ``analyses/claims/`` the driver
    audits on its records — the paper's ``paper.toml`` unless it names others, e.g. LoCoMo's
    transfer claims — and which of their claims, by benchmark name or by id — never retyped);
  - ``references`` (the paper's main methods; user retrievers are tested against them) and
    :meth:`Benchmark.methods` (the method names it writes itself, from the method registry);

and implements four steps:
  1. :meth:`Benchmark.check` — validate its settings before any work (errors name the option);
  2. :meth:`Benchmark.run` — load the data (errors name the file and the record), build the
     episodes / queries / tasks, and sweep them through the one runner
     (``analyses.runner.run_tasks``) with the backend in :class:`RunSpec`; returns a
     :class:`BenchmarkRun` whose ``records`` are validated long records;
  3. :meth:`Benchmark.analyze` — the analysis step (tables, tests) from a run's records, pure;
  4. :meth:`Benchmark.write` — its own files (records, tables, figures) into a folder, and the
     report's markdown (its sections), given the claims audit's markdown to place (the
     audit's result itself is in ``run.state['claims_audit']``, for sections that read it).

How to add a benchmark: docs/architecture.md ("How to add a benchmark").
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

import pandas as pd

__all__ = [
    "Backend",
    "Benchmark",
    "BenchmarkRun",
    "Choice",
    "ChoiceError",
    "Choices",
    "ClaimSelection",
    "DataSpec",
    "RunSpec",
    "load_choices",
]


class ChoiceError(ValueError):
    """A ``--choice`` or a choices file that is not valid (names the choice and its values)."""


@dataclass(frozen=True)
class Choice:
    """One choice the paper leaves open.

    ``values`` are the readings implemented, ``default`` the one a plain run uses, ``why`` the
    argument for the default (from the paper's text, never from our outcome), ``paper`` the
    paper's own words.
    """

    name: str
    values: tuple[str, ...]
    default: str
    why: str
    paper: str


@dataclass(frozen=True)
class Choices:
    """The declared open choices of one benchmark (:func:`load_choices`)."""

    benchmark: str
    choices: tuple[Choice, ...]
    source: str

    def names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.choices)

    def get(self, name: str) -> Choice:
        for c in self.choices:
            if c.name == name:
                return c
        known = ", ".join(self.names()) or "none"
        raise ChoiceError(
            f"`--choice {name}`: {self.benchmark} has no choice {name!r}; its choices: {known}."
        )

    def defaults(self) -> dict[str, str]:
        return {c.name: c.default for c in self.choices}

    def resolve(self, assignments: Sequence[str] | Mapping[str, str] = ()) -> dict[str, str]:
        """The defaults with `assignments` applied (``"NAME=VALUE"`` strings or a mapping).

        Raises :class:`ChoiceError` naming the choice and its allowed values.
        """
        out = self.defaults()
        items: list[tuple[str, str]] = []
        if isinstance(assignments, Mapping):
            items = [(str(k), str(v)) for k, v in assignments.items()]
        else:
            for raw in assignments:
                name, sep, value = str(raw).partition("=")
                if not sep or not name.strip() or not value.strip():
                    raise ChoiceError(f"`--choice` must look like NAME=VALUE; got {raw!r}.")
                items.append((name.strip(), value.strip()))
        seen: set[str] = set()
        for name, value in items:
            choice = self.get(name)
            if name in seen:
                raise ChoiceError(f"`--choice {name}` is given twice.")
            seen.add(name)
            if value not in choice.values:
                raise ChoiceError(
                    f"`--choice {name}={value}`: {value!r} is not allowed; "
                    f"allowed: {', '.join(choice.values)} (default {choice.default})."
                )
            out[name] = value
        return out


def load_choices(package: str, benchmark: str, filename: str = "choices.toml") -> Choices:
    """Read a benchmark's declared choices from the TOML file shipped in `package`.

    Format: one table per choice, ``[choice.NAME]`` with ``values`` (list of strings),
    ``default`` (one of them), ``why`` and ``paper`` (strings). Errors name the file and the
    choice.
    """
    path = resources.files(package).joinpath(filename)
    where = f"{package}/{filename}"
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ChoiceError(f"{where}: the choices file does not exist.") from None
    except tomllib.TOMLDecodeError as exc:
        raise ChoiceError(f"{where}: not valid TOML ({exc}).") from None
    unknown = sorted(set(data) - {"choice"})
    if unknown:
        raise ChoiceError(f"{where}: unknown top-level key(s) {unknown}; known: ['choice'].")
    out = []
    for name, raw in data.get("choice", {}).items():
        if not isinstance(raw, dict):
            raise ChoiceError(f"{where}: [choice.{name}] is not a table.")
        keys = {"values", "default", "why", "paper"}
        if set(raw) != keys:
            raise ChoiceError(
                f"{where}: [choice.{name}] needs exactly the keys {sorted(keys)}; "
                f"got {sorted(raw)}."
            )
        values = raw["values"]
        if not isinstance(values, list) or len(values) < 2 or len(set(values)) != len(values):
            raise ChoiceError(f"{where}: [choice.{name}] `values` must list >= 2 distinct values.")
        if not all(isinstance(v, str) and v for v in values):
            raise ChoiceError(f"{where}: [choice.{name}] `values` must be non-empty strings.")
        if raw["default"] not in values:
            raise ChoiceError(
                f"{where}: [choice.{name}] `default` {raw['default']!r} is not one of {values}."
            )
        for key in ("why", "paper"):
            if not isinstance(raw[key], str) or not raw[key].strip():
                raise ChoiceError(f"{where}: [choice.{name}] `{key}` must be a non-empty string.")
        out.append(
            Choice(name, tuple(values), raw["default"], raw["why"].strip(), raw["paper"].strip())
        )
    return Choices(benchmark, tuple(out), where)


@dataclass(frozen=True)
class DataSpec:
    """What ``--data`` takes: nothing (generated data), trajectory files, or one directory."""

    kind: Literal["none", "files", "directory"]
    help: str = ""


@dataclass(frozen=True)
class ClaimSelection:
    """Which claims of which claims files a benchmark's records can test.

    `files` names the shipped claims files the driver audits for this benchmark
    (``analyses/claims/<name>.toml``, :func:`analyses.claims_audit.claims_file`; default the
    paper's ``paper``). A claim of those files is selected when its ``benchmark`` starts with
    one of `benchmark_prefixes` or its id is in `ids`. `title` heads the audit section;
    `bootstrap_resamples` is the audit's bootstrap size; `drop_columns` are record columns the
    audit must not see.
    """

    title: str
    benchmark_prefixes: tuple[str, ...] = ()
    ids: tuple[str, ...] = ()
    bootstrap_resamples: int = 2_000
    drop_columns: tuple[str, ...] = ()
    files: tuple[str, ...] = ("paper",)


@dataclass(frozen=True)
class Backend:
    """How the sweep runs (passed to ``analyses.runner.run_tasks``)."""

    jobs: int = 1
    scheduler: Any = None
    checkpoint: Path | None = None
    progress: bool = True


@dataclass(frozen=True)
class RunSpec:
    """Everything one run of a benchmark is asked to do (built and checked by the driver).

    ``data`` are resolved paths (empty for generated data); ``choices`` maps every declared
    choice to its value; ``options`` holds the benchmark's own options (e.g. τ-bench's
    ``selector``), ``None`` meaning "the benchmark's default"; ``command`` the run's command
    line, which the report's header and ``provenance.json`` both name.
    """

    data: tuple[Path, ...] = ()
    seed: int = 0
    seeds: tuple[int, ...] | None = None
    n_resamples: int = 10_000
    episodes: int | None = None
    cache: Path | None = None
    choices: Mapping[str, str] = field(default_factory=dict)
    retrievers: tuple[Any, ...] = ()
    backend: Backend = field(default_factory=Backend)
    options: Mapping[str, Any] = field(default_factory=dict)
    encoder: Any = None
    #: Which backend encodes texts (``retrieval.encoder.BACKENDS``; ``--encoder-backend``).
    encoder_backend: str = "torch"
    #: The command line of this run as its provenance records it; reports name this one
    #: (None: the benchmark writes the equivalent ``osustat reproduce`` call).
    command: str | None = None

    def text_encoder(self) -> Any:
        """The encoder of this run: ``encoder`` if given (tests pass a stand-in), else
        all-MiniLM-L6-v2 on ``encoder_backend`` through the disk cache (``cache`` or the
        default cache folder; each backend has its own cache key)."""
        if self.encoder is not None:
            return self.encoder
        from osustat.retrieval.encoder import (
            CachedEncoder,
            SentenceTransformerEncoder,
            default_cache_dir,
        )

        return CachedEncoder(
            SentenceTransformerEncoder(
                backend=self.encoder_backend, progress=self.backend.progress
            ),
            self.cache or default_cache_dir(),
        )


@dataclass(frozen=True)
class BenchmarkRun:
    """What :meth:`Benchmark.run` returns: the validated records and the benchmark's own state
    (``state``: anything its analysis and writer need, e.g. structure counts)."""

    records: pd.DataFrame
    state: Mapping[str, Any] = field(default_factory=dict)


@runtime_checkable
class Benchmark(Protocol):
    """The interface a benchmark implements (module docstring)."""

    name: str
    description: str
    data: DataSpec
    choices: Choices
    claims: ClaimSelection | None
    references: tuple[str, ...]
    #: Whether the benchmark runs several seeds (``--seeds``); the driver refuses ``--seeds``
    #: for a benchmark that would ignore it.
    multi_seed: bool

    def methods(self) -> tuple[str, ...]:
        """Method names the benchmark writes itself (a user retriever must not reuse one)."""
        ...

    def check(self, spec: RunSpec) -> None:
        """Raise ``ValueError`` naming the option when `spec` cannot run (before any work)."""
        ...

    def run(self, spec: RunSpec) -> BenchmarkRun:
        """Load, build and sweep (through the one runner); validated records and state."""
        ...

    def analyze(self, run: BenchmarkRun, spec: RunSpec) -> Any:
        """The analysis step: tables and tests from the run's records (no files)."""
        ...

    def write(
        self, run: BenchmarkRun, analysis: Any, spec: RunSpec, folder: Path, audit: str | None
    ) -> str:
        """Write the benchmark's files into `folder`; return the report's markdown, placing
        `audit` (the claims audit's markdown; None when the benchmark selects no claim). The
        driver puts the audit's :class:`~osustat.audit.result.AuditResult` (or None) in
        ``run.state['claims_audit']``."""
        ...
