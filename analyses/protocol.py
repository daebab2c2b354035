"""The benchmark protocol: what a benchmark implements so that ``osustat reproduce`` runs it.

One base class (:class:`Benchmark`) and the value types it passes around. The driver
(:mod:`analyses.driver`) owns everything every benchmark shares — option checks before any
work, ``--out``/``--force``, data resolution, the sweep backend (``--jobs``, ``--scheduler``,
resume), user retrievers and their paired tests, the embedded claims audit, atomic output with
``provenance.json``, ``--choice`` and ``--sensitivity`` — and knows no benchmark by name: it
finds a benchmark through the entry-point group ``osustat.benchmarks``
(:mod:`analyses.registry`), where a benchmark of another installed package is found the same
way as the built-in ones.

A benchmark declares (class attributes of its :class:`Benchmark` subclass)
  - ``name`` (the CLI's ``reproduce NAME``), ``description`` and ``data`` (:class:`DataSpec`:
    what ``--data`` takes) and ``datasets`` (the data registry's datasets read without
    ``--data``);
  - ``choices`` (:class:`Choices`, read from a TOML file shipped as package data beside the
    benchmark: every choice the paper leaves open, its allowed values, the default and why, and
    the paper's words);
  - ``claims`` (:class:`ClaimSelection`: which claims files the driver audits on its records —
    shared ones of ``analyses/claims/`` by name, its own by path — and which of their claims,
    by benchmark name or by id — never retyped);
  - ``references`` (the paper's main methods; user retrievers are tested against them) and
    :meth:`Benchmark.methods` (the method names it writes itself);
  - ``options`` (:class:`Option`: its command-line options beyond the driver's) and
    ``grid_file`` (its ``--sensitivity`` grid);

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

Optional hooks, each with its default on :class:`Benchmark`: :meth:`Benchmark.run_many`
(``--sensitivity``'s points run together), :meth:`Benchmark.load_grid` and
:meth:`Benchmark.sensitivity` (a grid of its own instead of the driver's choice grid),
:meth:`Benchmark.sections` (report sections the driver places after :meth:`Benchmark.write`'s
markdown) and the attribute ``paper_values`` (the paper's printed values its report compares
with, written beside the report).

How to add a benchmark: docs/new-benchmark.md.
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    import pandas as pd

#: The file beside ``report.md`` holding a benchmark's :attr:`Benchmark.paper_values`.
PAPER_VALUES_FILE = "paper_values.json"

__all__ = [
    "PAPER_VALUES_FILE",
    "Backend",
    "Benchmark",
    "BenchmarkRun",
    "Choice",
    "ChoiceError",
    "Choices",
    "ClaimSelection",
    "DataSpec",
    "Option",
    "ReportSection",
    "RunSpec",
    "integer",
    "integers",
    "load_choices",
    "names",
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

    `files` are the claims files the driver audits for this benchmark: a name for a shared one
    (``analyses/claims/<name>.toml``, :func:`analyses.claims_audit.claims_file`; default the
    paper's ``paper``), a path for the benchmark's own (in its folder, package data). A claim
    of those files is selected when its ``benchmark`` starts with one of `benchmark_prefixes`
    or its id is in `ids`. `title` heads the audit section;
    `bootstrap_resamples` is the audit's bootstrap size; `drop_columns` are record columns the
    audit must not see.
    """

    title: str
    benchmark_prefixes: tuple[str, ...] = ()
    ids: tuple[str, ...] = ()
    bootstrap_resamples: int = 2_000
    drop_columns: tuple[str, ...] = ()
    files: tuple[str | Path, ...] = ("paper",)


@dataclass(frozen=True)
class Option:
    """One option of a benchmark beyond the driver's, on the command line and from Python.

    The CLI adds ``flag`` (e.g. ``--selector``) to ``osustat reproduce`` in the benchmark's own
    argument group; ``osustat.reproduce(name, out, KEY=VALUE)`` takes it by :attr:`key` (the
    flag without its dashes, ``-`` read as ``_``). Both go through the driver's one check
    (:func:`analyses.driver.benchmark_options`): the value must be one of `values` (empty: any)
    and is turned into the option's value by `convert` (the command line's text or a Python
    value alike; a ``ValueError`` it raises is reported naming the flag). A `convert` that
    returns a tuple declares a list option: the driver refuses a repeat in it, naming it (the
    one rule of every list option); an option whose value is a tuple in which equal entries
    are legitimate must return another type. Given, the value
    reaches the benchmark as ``spec.options[key]``; not given, ``default``. With `choice` the
    option is a shortcut for ``--choice CHOICE=VALUE`` instead. With `const` it is a flag:
    given (``True`` from Python), it sets `const` — the choice's value, or the option's. Giving
    the option of another benchmark is an error naming it.
    """

    flag: str
    help: str
    values: tuple[str, ...] = ()
    default: Any = None
    choice: str | None = None
    const: Any = None
    convert: Callable[[Any], Any] | None = None

    @property
    def key(self) -> str:
        return self.flag.lstrip("-").replace("-", "_")


def integers(low: int = 1) -> Callable[[Any], tuple[int, ...]]:
    """An :class:`Option`'s `convert`: integers >= `low`, as ``"200,400"`` (the command line)
    or a sequence of integers (Python), in the order given (the driver refuses a repeat)."""

    def convert(value: Any) -> tuple[int, ...]:
        items = [v.strip() for v in value.split(",")] if isinstance(value, str) else value
        try:
            out = tuple(int(x) if isinstance(x, str) else x for x in items)
        except (TypeError, ValueError):
            raise ValueError(f"must be comma-separated integers; got {value!r}.") from None
        bad = [x for x in out if isinstance(x, bool) or not isinstance(x, int) or x < low]
        if not out or bad:
            raise ValueError(f"must be integers >= {low}; got {value!r}.")
        return out  # a repeat: refused by the driver, naming it (osustat._validation.unique_items)

    return convert


def integer(low: int = 1) -> Callable[[Any], int]:
    """An :class:`Option`'s `convert`: one integer >= `low` (``"3"`` or ``3``)."""

    def convert(value: Any) -> int:
        try:
            x = int(value) if isinstance(value, str) else value
        except ValueError:
            raise ValueError(f"must be an integer >= {low}; got {value!r}.") from None
        if isinstance(x, bool) or not isinstance(x, int) or x < low:
            raise ValueError(f"must be an integer >= {low}; got {value!r}.")
        return x

    return convert


def names(value: Any) -> tuple[str, ...]:
    """An :class:`Option`'s `convert`: non-empty names, as ``"A,B"`` or a sequence (the driver
    refuses a repeat)."""
    items = value.split(",") if isinstance(value, str) else value
    out = tuple(str(x).strip() for x in items)
    if not out or not all(out):
        raise ValueError(f"must be non-empty names; got {value!r}.")
    return out


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
    #: Which backend encodes texts (``retrieval.encoder.BACKENDS``; ``--encoder-backend``) for
    #: a benchmark that does not declare the choice ``encoder-backend``; one that does (every
    #: built-in benchmark that encodes) reads it from ``choices``, so ``--sensitivity`` varies
    #: it like any choice (:attr:`text_backend`).
    encoder_backend: str = "torch"
    #: The command line of this run, set by the driver: the one given, or from Python the
    #: equivalent ``osustat reproduce`` call (``analyses.driver.equivalent_command``); reports
    #: name this one.
    command: str = ""

    @property
    def text_backend(self) -> str:
        """The encoder backend of this run: the choice ``encoder-backend`` where the benchmark
        declares it, else ``encoder_backend``."""
        return str(self.choices.get("encoder-backend", self.encoder_backend))

    def text_encoder(self) -> Any:
        """The encoder of this run: ``encoder`` if given (tests pass a stand-in), else
        all-MiniLM-L6-v2 on :attr:`text_backend` through the disk cache (``cache`` or the
        default cache folder; each backend has its own cache key)."""
        if self.encoder is not None:
            return self.encoder
        from osustat.retrieval.encoder import (
            CachedEncoder,
            SentenceTransformerEncoder,
            default_cache_dir,
        )

        return CachedEncoder(
            SentenceTransformerEncoder(backend=self.text_backend, progress=self.backend.progress),
            self.cache or default_cache_dir(),
        )


@dataclass(frozen=True)
class ReportSection:
    """One section of a benchmark's report that the driver places (:meth:`Benchmark.sections`):
    its heading (without the ``##``) and its markdown body."""

    title: str
    body: str

    def markdown(self) -> str:
        return f"## {self.title}\n\n{self.body.strip()}"


@dataclass(frozen=True)
class BenchmarkRun:
    """What :meth:`Benchmark.run` returns: the validated records and the benchmark's own state
    (``state``: anything its analysis and writer need, e.g. structure counts)."""

    records: pd.DataFrame
    state: Mapping[str, Any] = field(default_factory=dict)


class Benchmark:
    """The interface a benchmark implements: subclass it (module docstring).

    Required: the attributes ``name``, ``description``, ``data``, ``choices`` and the steps
    :meth:`methods`, :meth:`run`, :meth:`analyze`, :meth:`write` (the defaults here raise
    ``NotImplementedError``). Everything else is declared here with its default, so the driver
    and the CLI read it from any benchmark alike — never by looking for it.
    """

    #: The CLI's ``reproduce NAME`` (also the entry point's name, analyses.registry).
    name: str
    description: str
    #: What ``--data`` takes.
    data: DataSpec
    #: The declared open choices (:func:`load_choices`).
    choices: Choices
    #: Which claims of which claims files the driver audits on the records (None: no audit).
    claims: ClaimSelection | None = None
    #: The paper's main methods user retrievers are tested against.
    references: tuple[str, ...] = ()
    #: Whether the benchmark runs several seeds (``--seeds``); the driver refuses ``--seeds``
    #: for a benchmark that would ignore it.
    multi_seed: bool = False
    #: Whether the benchmark generates or plants a number of episodes (``--episodes``): False
    #: where its episodes are its data's, and the driver refuses ``--episodes``; None (not
    #: declared, as before the attribute existed) passes it on.
    counts_episodes: bool | None = None
    #: Datasets of the data registry (``osustat data list``) read when ``--data`` is not given.
    datasets: tuple[str, ...] = ()
    #: Command-line options beyond the driver's (:class:`Option`), added by the CLI.
    options: tuple[Option, ...] = ()
    #: The ``--sensitivity`` grid file used without ``--grid`` (None: one choice at a time).
    grid_file: Path | None = None
    #: Claims files the benchmark ships for ``osustat audit NAME`` beyond the one its runs
    #: audit (name -> path in its folder), e.g. LoCoMo's ``locomo-systems``: claims about
    #: systems' outputs brought in with ``osustat import`` (docs/systems.md).
    audit_files: Mapping[str, Path] = MappingProxyType({})
    #: The unit of inference ``osustat analyze`` uses on this benchmark's records when
    #: ``--unit`` is not given: ``"episode"`` where an episode's queries share one memory and
    #: so are not independent (LoCoMo: a conversation's questions), else ``"query"``.
    default_unit: Literal["query", "episode"] = "query"
    #: The paper's printed values the benchmark's report compares with, by table (reading
    #: only: nothing computes or tunes from them). The driver writes them beside the report
    #: (:data:`PAPER_VALUES_FILE`) and the report names that file. Empty (default): none.
    paper_values: Mapping[str, Any] = MappingProxyType({})

    def methods(self) -> tuple[str, ...]:
        """Method names the benchmark writes itself (a user retriever must not reuse one)."""
        raise NotImplementedError

    def check(self, spec: RunSpec) -> None:
        """Raise ``ValueError`` naming the option when `spec` cannot run (before any work).
        Default: nothing beyond the driver's own checks."""

    def run(self, spec: RunSpec) -> BenchmarkRun:
        """Load, build and sweep (through the one runner); validated records and state."""
        raise NotImplementedError

    def run_many(self, specs: Sequence[RunSpec]) -> Iterable[tuple[int, BenchmarkRun]]:
        """``--sensitivity``'s runs: (index into `specs`, run) per spec, in any order. Default:
        :meth:`run` on each; a benchmark whose points share work (built data, sweeps) runs
        them together."""
        return enumerate(map(self.run, specs))

    def analyze(self, run: BenchmarkRun, spec: RunSpec) -> Any:
        """The analysis step: tables and tests from the run's records (no files)."""
        raise NotImplementedError

    def write(
        self, run: BenchmarkRun, analysis: Any, spec: RunSpec, folder: Path, audit: str | None
    ) -> str:
        """Write the benchmark's files into `folder`; return the report's markdown, placing
        `audit` (the claims audit's markdown; None when the benchmark selects no claim). The
        driver puts the audit's :class:`~osustat.audit.result.AuditResult` (or None) in
        ``run.state['claims_audit']`` and the claims files it audited, as reports name them
        (``analyses/claims/paper.toml``, or the ``claims`` file given in their place), in
        ``run.state['claims_files']``."""
        raise NotImplementedError

    def sections(self, run: BenchmarkRun, analysis: Any, spec: RunSpec) -> Sequence[ReportSection]:
        """Sections the driver appends to :meth:`write`'s markdown, in order, before its own
        (the sensitivity grid, user retrievers, the choices of the run, the provenance).
        Default: none (the benchmark's whole report is :meth:`write`'s)."""
        return ()

    def questions(self, data: tuple[Path, ...], choices: Mapping[str, str]) -> Any:
        """The benchmark's questions for ``osustat import`` (an
        :class:`osustat.io.join.QuestionTable`: each question's conversation, position, text,
        evidence, category and cell) from its resolved ``--data`` under `choices`
        (``--choice NAME=VALUE``; errors name the choice). Default: ``ValueError`` — the
        benchmark has no questions to join systems' answers to."""
        raise ValueError(f"benchmark {self.name!r} has no question table for `osustat import`.")

    def load_grid(self, path: Path | None) -> Any | None:
        """The benchmark's own ``--sensitivity`` grid (`path`: ``--grid``, None: its default),
        or None (the default) for the driver's choice grid (``analyses.sensitivity``)."""
        return None

    def sensitivity(self, grid: Any, spec: RunSpec, folder: Path) -> Any | None:
        """Run the benchmark's own grid (from :meth:`load_grid`) into `folder` and return
        what its :meth:`write` reports (``run.state['sensitivity']``); None (the default):
        the driver runs the choice grid and reports it."""
        return None
