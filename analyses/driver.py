"""The one ``reproduce`` driver: what every benchmark gets alike (analyses.protocol).

:func:`reproduce` takes a :class:`Request` (what the CLI parsed, or a Python caller's) and

1. checks every option before any work: counts, ``--jobs`` vs ``--scheduler``, ``--grid``
   without ``--sensitivity``, ``--out`` (an existing file, or a non-empty folder without an
   osustat ``provenance.json``, is refused unless ``--force``), ``--choice NAME=VALUE``
   against the benchmark's declared choices, the data (:func:`resolve_data`, the single place
   where ``--data`` values become inputs), user retrievers (``--retriever``: loaded, names
   checked against the benchmark's methods), and the benchmark's own :meth:`check`;
2. runs the benchmark (load, build, sweep through the one runner with ``--jobs`` /
   ``--scheduler`` and resuming from ``.<out>.sweep``), its analysis, the embedded claims audit
   (claims of the claims files the benchmark declares, ``analyses/claims/paper.toml`` unless
   it names others, selected by the benchmark; a cell too small for a test is "not
   testable", the report is still written), paired sign-flip tests of every user
   retriever against the benchmark's reference methods, and ``--sensitivity``;
3. writes every file atomically (a temporary folder renamed into place) with
   ``provenance.json`` (versions incl. Python, platform and torch; the command line; input
   SHA-256; seeds; resamples; choices) and the same provenance at the end of ``report.md``.

The driver knows no benchmark by name: it looks them up in :mod:`analyses.registry`.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from osustat._validation import MAX_RESAMPLES, UsageError, check_option_count, unique_items
from osustat.dask_cluster import check_address, connected
from osustat.streams import stream_seed

from .claims_audit import claims_audit, claims_paths, load_selected_claims, shown_path
from .protocol import PAPER_VALUES_FILE, Backend, Benchmark, BenchmarkRun, RunSpec
from .registry import get_benchmark
from .sensitivity import ChoiceGrid, ChoiceSensitivity

__all__ = [
    "ReproduceResult",
    "Request",
    "UserRetrieverTests",
    "checkpoint_dir",
    "plan",
    "reproduce",
    "resolve_data",
    "run",
    "user_retriever_tests",
]


@dataclass(frozen=True)
class Request:
    """One ``osustat reproduce`` request; ``None`` means "the benchmark's default"."""

    benchmark: str
    out: Path
    data: tuple[str, ...] = ()
    force: bool = False
    seed: int = 0
    seeds: tuple[int, ...] | None = None
    n_resamples: int = 10_000
    episodes: int | None = None
    cache: str | None = None
    jobs: int = 1
    scheduler: str | None = None
    retrievers: tuple[Any, ...] = ()  # "module:Class" strings or MethodSpec
    choices: tuple[str, ...] = ()  # "NAME=VALUE"
    sensitivity: bool = False
    grid: str | None = None
    progress: bool = True
    #: The benchmark's own options as given, by ``Option.key`` (checked and converted by
    #: :func:`benchmark_options`; not given: their defaults).
    options: Mapping[str, Any] = field(default_factory=dict)
    command: str = "python API"
    #: The command line as parsed (``Provenance.arguments``; empty from Python)
    arguments: Mapping[str, Any] = field(default_factory=dict)
    encoder: Any = None  # tests pass a stand-in for the real encoder
    encoder_backend: str = "torch"  # retrieval.encoder.BACKENDS
    claims: Path | None = None  # default: the benchmark's shipped claims files (ClaimSelection)


@dataclass(frozen=True)
class ReproduceResult:
    out: Path
    n_records: int
    seconds: float
    run: BenchmarkRun | None = None


def checkpoint_dir(out: str | Path) -> Path:
    """Where a run keeps its finished sweep tasks: ``.<name>.sweep`` beside `out`."""
    out = Path(out)
    return out.parent / f".{out.name}.sweep"


# -- checks -------------------------------------------------------------------------------


def _check_encoder_backend(bench: Benchmark, backend: str) -> None:
    """``--encoder-backend``: a known backend, and only for a benchmark that encodes text."""
    from osustat.retrieval.encoder import BACKENDS

    if backend not in BACKENDS:
        raise UsageError(f"`--encoder-backend` must be one of {list(BACKENDS)}; got {backend!r}.")
    if backend != "torch" and bench.data.kind == "none":
        raise UsageError(
            f"`--encoder-backend {backend}` has no effect on `reproduce {bench.name}`: its "
            "generated data hold no texts to encode."
        )
    if bench.data.kind != "none":  # it encodes text: a missing extra stops it before any work
        from osustat.retrieval.encoder import require_backend

        require_backend(backend, f"`reproduce {bench.name}`")


def _encoder_backend(bench: Benchmark, request: Request, choices: dict[str, str]) -> str:
    """The run's encoder backend. A benchmark that declares the choice ``encoder-backend``
    takes ``--encoder-backend NAME`` as ``--choice encoder-backend=NAME`` (both given and
    different: an error naming both); one that does not keeps ``--encoder-backend``."""
    if "encoder-backend" not in bench.choices.names():
        return request.encoder_backend
    given = [c for c in request.choices if c.partition("=")[0].strip() == "encoder-backend"]
    if request.encoder_backend != "torch":
        if given and choices["encoder-backend"] != request.encoder_backend:
            raise UsageError(
                f"`--encoder-backend {request.encoder_backend}` and `--choice "
                f"encoder-backend={choices['encoder-backend']}` disagree; give one of them."
            )
        choices["encoder-backend"] = request.encoder_backend
    return choices["encoder-backend"]


def resolve_data(benchmark_name: str, values: Sequence[str]) -> tuple[Path, ...]:
    """``--data`` values of benchmark `benchmark_name` as input paths: THE one place where
    data are resolved (``UsageError`` naming the value).

    A value is a path (a file for ``files`` benchmarks, one directory for ``directory`` ones,
    nothing for generated data) or a dataset name of the registry (``osustat data list``),
    which becomes that dataset's input paths in the data folder; with no values, the
    registry's datasets the benchmark declares (its ``datasets``). An absent
    dataset is an error naming it, the fetch command and the folder to fill by hand.
    """
    from osustat.data.store import resolve_data as registry_paths

    benchmark = get_benchmark(benchmark_name)
    kind = benchmark.data.kind
    if kind == "none":
        if values:
            raise UsageError(f"`reproduce {benchmark.name}` takes no `--data` (generated data).")
        return ()
    if values or benchmark.datasets:
        values = [str(p) for p in registry_paths(values, benchmark.datasets)]
    if not values:
        raise UsageError(f"`reproduce {benchmark.name}` needs `--data` ({benchmark.data.help}).")
    paths = tuple(Path(v) for v in values)
    if kind == "directory":
        if len(paths) != 1:
            raise UsageError(
                f"`--data`: give one directory for {benchmark.name} ({benchmark.data.help}); "
                f"got {len(paths)} values."
            )
    for v, p in zip(values, paths, strict=True):
        if not p.exists():
            raise UsageError(f"`--data` {v!r} does not exist ({benchmark.data.help}).")
        wrong = not p.is_dir() if kind == "directory" else not p.is_file()
        if wrong:
            what = "a directory" if kind == "directory" else "a file"
            raise UsageError(f"`--data` {v!r} is not {what} ({benchmark.data.help}).")
    return paths


def benchmark_options(
    bench: Benchmark, given: Mapping[str, Any]
) -> tuple[tuple[str, ...], dict[str, Any]]:
    """The benchmark's own options (:class:`~analyses.protocol.Option`) as given by
    ``Option.key`` — from the command line or from Python, one check for both: the
    ``--choice`` assignments of its shortcuts, and ``spec.options`` (every other option, its
    default where not given). A value must be one of the option's `values` and is turned by its
    `convert`; a flag (`const`) takes True/False. Errors are :class:`UsageError` s naming the
    flag; an option the benchmark does not declare is one naming it."""
    own = {o.key: o for o in bench.options}
    choices: list[str] = []
    options = {o.key: o.default for o in bench.options if o.choice is None}
    for key, value in sorted(given.items()):
        option = own.get(key)
        if option is None:
            flag = "--" + key.replace("_", "-")
            raise UsageError(f"`{flag}` is not an option of `reproduce {bench.name}`.")
        if value is None or (option.const is not None and value is False):
            continue  # not given: the default
        if option.const is not None:
            if value is not True and value != option.const:
                raise UsageError(f"`{option.flag}` is a flag (True or False); got {value!r}.")
            value = option.const
        elif option.values and value not in option.values:
            raise UsageError(
                f"`{option.flag}` must be one of {', '.join(option.values)} for {bench.name}; "
                f"got {value!r}."
            )
        elif option.convert is not None:
            try:
                value = option.convert(value)
            except (TypeError, ValueError) as exc:
                raise UsageError(f"`{option.flag}` {exc}") from None
            if isinstance(value, tuple):  # a list option (Option's contract): no repeats
                try:
                    unique_items(value, option.flag)
                except ValueError as exc:
                    raise UsageError(str(exc)) from None
        if option.choice is not None:
            choices.append(f"{option.choice}={value}")
        else:
            options[key] = value
    return tuple(choices), options


def _load_retrievers(values: Sequence[Any], taken: Sequence[str]) -> tuple[Any, ...]:
    from osustat.retrieval.registry import MethodSpec, load_retriever, user_factories

    specs = []
    for value in values:
        if isinstance(value, MethodSpec):
            specs.append(value)
            continue
        items = [x.strip() for x in str(value).split(",") if x.strip()]
        if not items:
            raise UsageError(f"`--retriever` is empty; give module:Class; got {value!r}.")
        for item in items:
            try:
                specs.append(load_retriever(item))
            except ValueError as exc:
                raise UsageError(f"`--retriever`: {exc}") from None
    try:
        user_factories(specs, taken=list(taken))
    except ValueError as exc:
        raise UsageError(f"`--retriever`: {exc}") from None
    return tuple(specs)


def _sha_of(paths: Sequence[Path]) -> list[tuple[str, str, str]]:
    """(role, path, SHA-256) per input; a directory is hashed over its files' names and bytes."""
    from osustat.provenance import file_sha256

    out = []
    for p in paths:
        if p.is_dir():
            h = hashlib.sha256()
            for f in sorted(x for x in p.rglob("*") if x.is_file()):
                h.update(str(f.relative_to(p)).encode() + b"\0" + file_sha256(f).encode())
            out.append(("data directory", str(p), h.hexdigest()))
        else:
            out.append(("data file", str(p), file_sha256(p)))
    return out


@dataclass(frozen=True)
class Plan:
    """A checked request: the benchmark, the run it asks for, and its provenance."""

    benchmark: Benchmark
    spec: RunSpec
    request: Request
    provenance: Any
    grid: Any = None


def plan(request: Request) -> Plan:
    """Every check of `request`, before any work (``UsageError`` / ``ValueError`` naming the
    option). Returns what :func:`reproduce` runs."""
    from osustat.provenance import API_COMMAND, OutputError, check_target

    try:
        bench = get_benchmark(request.benchmark)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    _check_counts(request, bench)
    try:
        python = request.command == API_COMMAND  # the words of the caller's arguments
        check_target(request.out, None, force=request.force, python=python)
    except OutputError as exc:
        raise UsageError(str(exc)) from None
    shortcuts, options = benchmark_options(bench, request.options)
    try:
        choices = bench.choices.resolve((*request.choices, *shortcuts))
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    encoder_backend = _encoder_backend(bench, request, choices)
    if bench.claims is not None:  # parsed and validated before any work (errors name the file)
        load_selected_claims(bench.claims, request.claims)
    data = resolve_data(bench.name, request.data)
    _check_encoder_backend(bench, encoder_backend)
    retrievers = _load_retrievers(request.retrievers, bench.methods())
    grid = None
    if request.sensitivity:
        grid = _load_grid(bench, request.grid)
        points = grid.points if isinstance(grid, ChoiceGrid) else ()
        for backend in {v.get("encoder-backend") for _, v in points} - {None, encoder_backend}:
            if request.encoder is None:  # every backend the grid varies, before any work
                _check_encoder_backend(bench, str(backend))
    spec = RunSpec(
        data=data,
        seed=request.seed,
        seeds=request.seeds,
        n_resamples=request.n_resamples,
        episodes=request.episodes,
        cache=Path(request.cache) if request.cache else None,
        choices=choices,
        retrievers=retrievers,
        backend=Backend(
            jobs=request.jobs,
            checkpoint=checkpoint_dir(request.out),
            progress=request.progress,
        ),
        options=options,
        encoder=request.encoder,
        encoder_backend=encoder_backend,
        # one command line per run: the header names the command the provenance records
        # (from Python, the equivalent CLI call, built here once for every benchmark)
        command=(
            equivalent_command(bench, request, choices, options, retrievers)
            if request.command == API_COMMAND
            else request.command
        ),
    )
    bench.check(spec)
    prov = _provenance(bench, spec, request)
    try:
        # the digest covers what is computed: the data's hashes and the settings (choices,
        # options, seeds, retrievers) as resolved, so `--choice layout=spread`, `--layout
        # spread` and neither are one run; the command's words are not compared
        check_target(
            request.out,
            prov.inputs_digest,
            force=request.force,
            python=request.command == API_COMMAND,
            options=prov.options,
            keep=_kept(prov, request),
        )
    except OutputError as exc:
        raise UsageError(str(exc)) from None
    return Plan(bench, spec, request, prov, grid)


def _kept(prov: Any, request: Request) -> list[tuple[str, Any]]:
    """What the run's `--out` must not hold: its inputs, and the embedding cache it reads and
    writes while it works."""
    return [*prov.input_files(), ("--cache folder", request.cache)]


def _check_counts(request: Request, bench: Benchmark) -> None:
    """The driver's own settings: counts and seeds, ``--grid``, ``--jobs`` vs ``--scheduler``."""
    if request.grid and not request.sensitivity:
        raise UsageError("`--grid` needs `--sensitivity`.")
    if request.episodes is not None:
        check_option_count(request.episodes, "--episodes", 1, 1_000_000)
    check_option_count(request.jobs, "--jobs", 1, 1024)
    check_option_count(request.n_resamples, "--resamples", 1, MAX_RESAMPLES)
    check_option_count(request.seed, "--seed", 0, 2**63 - 1)
    for s in request.seeds or ():
        check_option_count(s, "--seeds", 0, 2**63 - 1)
    if request.seeds is not None and not request.seeds:
        raise UsageError("`--seeds` is empty; give comma-separated integers.")
    try:
        unique_items(request.seeds or (), "--seeds")
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if request.episodes is not None and bench.counts_episodes is False:
        raise UsageError(
            f"`--episodes` does not apply to {bench.name}, whose episodes are those of its "
            "data; it sets how many episodes a generating benchmark makes (e.g. synthetic)."
        )
    if request.seeds is not None and not bench.multi_seed:
        raise UsageError(
            f"`--seeds` does not apply to {bench.name}, which runs one master `--seed`; "
            "it sets the seeds of a multi-seed benchmark (toolbench)."
        )
    check_address(request.scheduler, request.jobs)


def _provenance(bench: Benchmark, spec: RunSpec, request: Request) -> Any:
    """The run's provenance: its command, the data's SHA-256 and the settings (their digest is
    what an existing ``--out`` folder and resumed work are compared by), seeds, resamples."""
    from osustat.provenance import Provenance, file_sha256

    settings = {
        "benchmark": bench.name,
        "seed": spec.seed,
        "seeds": list(spec.seeds or ()),
        "episodes": spec.episodes,
        "resamples": spec.n_resamples,
        "choices": dict(sorted(spec.choices.items())),
        # JSON values as JSON writes them (false, null), never Python's False/None as text
        "options": {
            k: v if v is None or isinstance(v, bool | int | float) else str(v)
            for k, v in sorted(spec.options.items())
        },
        "retrievers": [r.source or r.name for r in spec.retrievers],
        "sensitivity": bool(request.sensitivity),
        # whether a grid file was given (its content is hashed as the grid file), not its
        # spelling; null without one, as every earlier version wrote (the same digest)
        "grid": None if request.grid is None else True,
        "encoder_backend": spec.encoder_backend,
    }
    settings_text = json.dumps(settings, sort_keys=True)
    inputs = [*_sha_of(spec.data)]
    # files a user gives beside the data (the shipped claims are the package's own)
    for role, given in (("claims file", request.claims), ("grid file", request.grid)):
        if given is not None:
            inputs.append((role, str(given), file_sha256(given)))
    inputs.append(("settings", settings_text, hashlib.sha256(settings_text.encode()).hexdigest()))
    seeds = {"master": spec.seed}
    if spec.seeds:
        seeds.update({f"seed {k + 1}": s for k, s in enumerate(spec.seeds)})
    return Provenance(
        command=request.command,
        arguments=request.arguments,
        inputs=tuple(inputs),
        seeds=seeds,
        resamples={"sign-flip": spec.n_resamples},
        exclusions_note="the benchmark's own exclusions, if any, are stated in the report above.",
        options=settings,  # recorded to name what differs in a folder of another run
    )


def equivalent_command(
    bench: Benchmark,
    request: Request,
    choices: Mapping[str, str],
    options: Mapping[str, Any],
    retrievers: Sequence[Any],
) -> str:
    """The ``osustat reproduce`` call a Python `request` equals, for every benchmark alike:
    ``--out DIR`` (reports never name their folder), the data as given (a path by its file
    name), the counts and seeds, every choice that differs from its declared default, every
    option of the benchmark's own that differs from its default, ``--sensitivity`` /
    ``--grid`` and the user retrievers."""
    import shlex

    words = ["osustat", "reproduce", bench.name]
    if request.data:
        words += ["--data", *(Path(d).name if Path(d).exists() else d for d in request.data)]
    words += ["--out", "DIR"]
    if request.episodes is not None:
        words += ["--episodes", str(request.episodes)]
    if request.seeds:
        words += ["--seeds", ",".join(map(str, request.seeds))]
    words += ["--seed", str(request.seed), "--resamples", str(request.n_resamples)]
    defaults = bench.choices.defaults()
    for name, value in sorted(choices.items()):
        if value != defaults[name]:
            words += ["--choice", f"{name}={value}"]
    for option in bench.options:  # a shortcut's choice is among the --choice words
        value = options.get(option.key, option.default)
        if option.choice is not None or value == option.default:
            continue
        if option.const is not None:
            words.append(option.flag)
        elif isinstance(value, tuple | list):
            words += [option.flag, ",".join(map(str, value))]
        else:
            words += [option.flag, str(value)]
    if request.sensitivity:
        words += ["--sensitivity", *(["--grid", Path(request.grid).name] if request.grid else [])]
    words += [w for r in retrievers for w in ("--retriever", r.source or r.name)]
    return shlex.join(words)


def _load_grid(bench: Benchmark, grid: str | None) -> Any:
    own = bench.load_grid(Path(grid) if grid else None)
    if own is not None:
        return own
    from .sensitivity import load_choice_grid

    return load_choice_grid(bench, Path(grid) if grid else None)


# -- the shared steps ----------------------------------------------------------------------


@dataclass(frozen=True)
class UserRetrieverTests:
    """The paired tests of the user retrievers (`table`) and every (retriever, reference,
    benchmark, budget, metric) group that could not be tested (`skipped`, with the reason:
    one method has no records there, or the two do not share the queries)."""

    table: pd.DataFrame
    skipped: pd.DataFrame


SKIPPED_COLUMNS = ("retriever", "reference", "benchmark", "budget", "metric", "reason")


def user_retriever_tests(
    records: pd.DataFrame,
    names: Sequence[str],
    references: Sequence[str],
    *,
    n_resamples: int,
    seed: int,
    metrics: Sequence[str] = ("hit@2", "recall"),
    level: float = 0.95,
) -> UserRetrieverTests:
    """Paired tests of every user retriever against every reference method.

    Per benchmark, budget and metric where either method has records: the mean paired
    difference (user − reference) over the queries both answered (seeds averaged per query), a
    bootstrap CI clustered by episode, and a two-sided paired sign-flip p
    (``osustat.paired_signflip_test``); Holm-adjusted p within each user retriever. Every test
    has its own seed, derived from `seed` and the test's name. A group the two methods do not
    share (one has no records there, or their queries differ) is not tested and is counted in
    ``skipped`` with :func:`osustat.paired`'s reason — never dropped without a word.
    """
    from osustat import adjust_pvalues, bootstrap_ci, paired, paired_signflip_test

    rows = []
    skipped = []
    for name in names:
        for ref in references:
            sub = records[records["method"].isin([name, ref])]
            for (bench, budget, metric), _ in sub.groupby(
                ["benchmark", "budget", "metric"], sort=True
            ):
                if metric not in metrics:
                    continue
                try:
                    p = paired(sub, name, ref, metric=metric, budget=int(budget), benchmark=bench)
                except ValueError as exc:  # not shared: counted and reported with the reason
                    skipped.append((name, ref, bench, int(budget), metric, str(exc)))
                    continue
                key = f"{name}|{ref}|{bench}|{budget}|{metric}"
                rng = stream_seed(seed, key)
                d = p.differences
                row: dict[str, Any] = {
                    "retriever": name,
                    "reference": ref,
                    "benchmark": bench,
                    "budget": int(budget),
                    "metric": metric,
                    "n": int(d.size),
                    "effect": float(d.mean()) if d.size else float("nan"),
                    "episodes": int(np.unique(p.episode_ids).size),
                    "ci_low": float("nan"),
                    "ci_high": float("nan"),
                    "p": float("nan"),
                }
                if d.size >= 2:
                    test = paired_signflip_test(
                        p.treatment, p.baseline, n_resamples=n_resamples, rng=rng
                    )
                    clusters = p.episode_ids if row["episodes"] >= 2 else None
                    ci = bootstrap_ci(d, level=level, clusters=clusters, rng=rng)
                    row.update(ci_low=float(ci.low), ci_high=float(ci.high), p=float(test.pvalue))
                    row.update(_inverted(test, (ci.low, ci.high), level))
                rows.append(row)
    table = pd.DataFrame(rows)
    skipped_table = pd.DataFrame(skipped, columns=list(SKIPPED_COLUMNS))
    if table.empty:
        return UserRetrieverTests(table, skipped_table)
    table["p_holm"] = np.nan
    for _, idx in table.groupby("retriever").groups.items():
        ps = table.loc[idx, "p"]
        ok = ps.notna()
        if ok.any():
            adj = adjust_pvalues(ps[ok].to_numpy(), method="holm").pvalues_adjusted
            table.loc[ps[ok].index, "p_holm"] = adj
    return UserRetrieverTests(table, skipped_table)


def _inverted(test: Any, interval: tuple[float, float], level: float) -> dict[str, float]:
    """Where the bootstrap interval and the test's p disagree about 0 (a red team: [-.167,
    -.143] beside p = .625 from 2 episodes, without a word): the interval that inverts the test
    and the smallest p it can reach, which the report prints under the table (as ``analyze``
    does); NaN where they agree (inverting the test is costly)."""
    from osustat.reports._style import disagrees

    if not disagrees(interval, test.pvalue, level):
        return {"test_ci_low": float("nan"), "test_ci_high": float("nan"), "min_p": float("nan")}
    inverted = test.confidence_interval(level)
    return {
        "test_ci_low": float(inverted.low),
        "test_ci_high": float(inverted.high),
        "min_p": float(test.min_pvalue),
    }


# -- running -------------------------------------------------------------------------------


#: The Request fields a Python caller sets by keyword (the rest are the driver's own).
_REQUEST_FIELDS = frozenset(f.name for f in fields(Request)) - {
    "benchmark",
    "out",
    "options",
    "arguments",
}


def run(benchmark: str, out: str | Path, **options: Any) -> ReproduceResult:
    """``osustat reproduce BENCHMARK --out OUT ...`` from Python (``osustat.reproduce``).

    `options` are the driver's settings by their :class:`Request` names (``seed``,
    ``n_resamples``, ``episodes``, ``data``, ``jobs``, ``scheduler``, ``retrievers``,
    ``sensitivity``, ``grid``, ``force``, ``progress``, ``cache``, ``encoder_backend``,
    ``claims``, ``encoder``), ``choices`` (a mapping NAME -> VALUE or ``"NAME=VALUE"``
    strings), and the benchmark's own options by their keys (``Option.key``, e.g. τ-bench's
    ``selector``; a choice shortcut such as ``focal`` sets that choice), checked and converted
    as on the command line (:func:`benchmark_options`: errors name the flag). Anything else is
    a ``TypeError`` naming it and what the benchmark takes. Returns the
    :class:`ReproduceResult` (``run.records`` holds the records).
    """
    try:
        bench = get_benchmark(benchmark)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    own = {o.key for o in bench.options}
    unknown = sorted(set(options) - _REQUEST_FIELDS - own)
    if unknown:
        raise TypeError(
            f"reproduce({benchmark!r}): unknown option(s) {unknown}; it takes "
            f"{sorted(_REQUEST_FIELDS | own)}."
        )
    raw = options.pop("choices", ())
    choices = [f"{k}={v}" for k, v in raw.items()] if isinstance(raw, Mapping) else list(raw)
    extra = {key: options.pop(key) for key in own & set(options)}  # checked by plan()
    if isinstance(options.get("data"), str | Path):  # one file or folder
        options["data"] = (options["data"],)
    for key in ("data", "retrievers", "seeds"):
        if options.get(key) is not None and not isinstance(options[key], tuple):
            options[key] = tuple(options[key])
    if options.get("data"):
        options["data"] = tuple(str(v) for v in options["data"])
    for key, kind in (("claims", Path), ("cache", str), ("grid", str)):
        if options.get(key) is not None:
            options[key] = kind(options[key])
    request = Request(benchmark, Path(out), choices=tuple(choices), options=extra, **options)
    return reproduce(request)


def _source_digest(module: str) -> str:
    """SHA-256 over the ``.py`` files (names and bytes) of the package that holds `module`
    (the module's own file when it is top-level)."""
    import importlib

    mod = importlib.import_module(module.rpartition(".")[0] or module)
    where = Path(str(mod.__file__))
    files = sorted(where.parent.rglob("*.py")) if where.name == "__init__.py" else [where]
    h = hashlib.sha256()
    for f in files:
        h.update(f.relative_to(where.parent).as_posix().encode() + b"\0" + f.read_bytes())
    return h.hexdigest()


def _retriever_files(factory: Any) -> list[Path]:
    """The source files of a user retriever: the file its class (or factory function) is
    defined in and those of its base classes outside osustat and the standard library. For a
    module of a package that one file is all: the package's other modules are not read (an
    edit there that changes the retriever's answers is not noticed)."""
    import functools
    import inspect

    while isinstance(factory, functools.partial):
        factory = factory.func
    owners = inspect.getmro(factory) if isinstance(factory, type) else (factory,)
    files = []
    for owner in owners:
        top = str(getattr(owner, "__module__", "") or "").partition(".")[0]
        if top in sys.stdlib_module_names or top in ("osustat", "builtins", ""):
            continue  # osustat's own code is its version and the digests beside
        module = sys.modules.get(str(owner.__module__))
        where = getattr(module, "__file__", None)
        if where and Path(where).is_file() and Path(where) not in files:
            files.append(Path(where))
    return files


def _retrievers_digest(retrievers: Sequence[Any]) -> str:
    """SHA-256 over the user retrievers' names and source files (:func:`_retriever_files`)."""
    h = hashlib.sha256()
    for spec in retrievers:
        h.update(f"{spec.source or spec.name}\0".encode())
        for f in _retriever_files(spec.factory):
            h.update(str(f.resolve()).encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()


def _made_by(checked: Plan) -> dict[str, str]:
    """What makes a sweep's finished tasks: osustat's version, the sources of the benchmark's
    package, of ``osustat.retrieval`` and of the user retrievers (``--retriever``: the file
    each one's class is defined in, :func:`_retriever_files`), and the run's settings and data
    (the provenance's inputs digest: options, choices, seeds, resamples, data SHA-256)."""
    from osustat._version import __version__

    made_by = {
        "osustat": __version__,
        "benchmark code": _source_digest(type(checked.benchmark).__module__),
        "retrieval code": _source_digest("osustat.retrieval.base"),
        "settings and data": checked.provenance.inputs_digest,
    }
    if checked.spec.retrievers:  # a run without them resumes tasks made before this key
        made_by["user retriever code"] = _retrievers_digest(checked.spec.retrievers)
    return made_by


#: The file in a checkpoint folder that says what made its finished tasks.
MADE_BY = "made-by.json"


def _fresh_checkpoints(ckpt: Path, made_by: dict[str, str]) -> None:
    """Resume from `ckpt` only when its tasks were made by this code with these settings and
    data; otherwise remove them and say which differs (they are recomputed)."""
    stamp = ckpt / MADE_BY
    if ckpt.is_dir():
        try:
            old = json.loads(stamp.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            old = {}
        differs = [k for k in made_by if old.get(k) != made_by[k]]
        if differs:
            n = len(list(ckpt.glob("*.pkl")))
            shutil.rmtree(ckpt)
            if n:
                print(
                    f"osustat reproduce: {n} finished task(s) in {ckpt} were made with other "
                    f"{', '.join(differs)}; recomputing them.",
                    file=sys.stderr,
                )
    ckpt.mkdir(parents=True, exist_ok=True)
    from osustat.provenance import write_json

    write_json(stamp, made_by, indent=1, sort_keys=True)


def _check_user_records(records: pd.DataFrame, retrievers: Sequence[Any], name: str) -> None:
    """Every user retriever has records: one the benchmark did not run is an error naming it
    (never "not in the records" in a report)."""
    written = set(records["method"].unique()) if len(records) else set()
    missing = [r.source or r.name for r in retrievers if r.name not in written]
    if missing:
        raise ValueError(
            f"`--retriever` {', '.join(missing)}: `reproduce {name}` wrote no records for it "
            "(a benchmark's run must sweep `spec.retrievers` beside its own methods, "
            "docs/new-benchmark.md)."
        )


def reproduce(request: Request) -> ReproduceResult:
    """Check `request` (before any work), run its benchmark and write every output atomically.

    Finished sweep tasks of an interrupted run are resumed only when the same code made them
    with the same settings and data (:func:`_made_by`); otherwise they are recomputed."""
    checked = plan(request)
    ckpt = checkpoint_dir(request.out)
    _fresh_checkpoints(ckpt, _made_by(checked))
    with connected(request.scheduler) as scheduler:
        spec = replace(checked.spec, backend=replace(checked.spec.backend, scheduler=scheduler))
        try:
            result = _run(replace(checked, spec=spec))
        except BaseException:
            finished = len(list(ckpt.glob("*.pkl"))) if ckpt.is_dir() else 0
            if finished:
                print(
                    f"osustat reproduce: {finished} finished task(s) kept in {ckpt}; run the "
                    "same command again to resume from them.",
                    file=sys.stderr,
                )
            elif ckpt.is_dir():
                shutil.rmtree(ckpt, ignore_errors=True)
            raise
    shutil.rmtree(ckpt, ignore_errors=True)  # written: nothing left to resume
    return result


def _run(checked: Plan) -> ReproduceResult:
    from osustat.provenance import API_COMMAND, atomic_output, write_json
    from osustat.reports.audit import render_markdown
    from osustat.reports.user_methods import render_user_methods, render_user_tests

    bench, spec, request, prov = (
        checked.benchmark,
        checked.spec,
        checked.request,
        checked.provenance,
    )
    start = time.perf_counter()
    # the inputs digest decides (see `plan`): not the command's words or parsed arguments
    with atomic_output(
        request.out,
        inputs_digest=prov.inputs_digest,
        force=request.force,
        keep=_kept(prov, request),
        python=request.command == API_COMMAND,
    ) as tmp:
        sensitivity = None
        if checked.grid is not None:
            sensitivity = _sensitivity(bench, checked.grid, spec, tmp / "sensitivity", request)
        run = bench.run(spec)
        _check_user_records(run.records, spec.retrievers, bench.name)
        if sensitivity is not None:
            run = replace(run, state={**run.state, "sensitivity": sensitivity})
        say = _phases(request.progress)
        say("analysis: tests and bootstrap intervals")
        analysis = bench.analyze(run, spec)
        say("claims audit")
        used = ()  # the claims files audited, as reports name them (the audit's heading)
        if bench.claims is not None:
            used = tuple(shown_path(p) for p in claims_paths(bench.claims, request.claims))
        audited = claims_audit(
            run.records,
            bench.claims,
            n_resamples=spec.n_resamples,
            seed=spec.seed,
            claims_path=request.claims,
            unavailable=run.state.get("audit_unavailable"),
            progress=request.progress,
        )
        run = replace(run, state={**run.state, "claims_audit": audited, "claims_files": used})
        audit_md = None
        if audited is not None and bench.claims is not None:
            audit_md = render_markdown(audited, title=bench.claims.title)
        say("report and figures")
        text = bench.write(run, analysis, spec, tmp, audit_md)
        text = _declared_parts(bench, run, analysis, spec, tmp, text)
        say(None)
        if isinstance(sensitivity, ChoiceSensitivity):  # the generic grid: the driver reports it
            from osustat.reports.choice_sensitivity import render_choice_sensitivity

            text = text.rstrip("\n") + "\n\n" + render_choice_sensitivity(sensitivity)
        if spec.retrievers:
            names = [r.name for r in spec.retrievers]
            text += "\n\n" + render_user_methods(run.records, names, references=bench.references)
            tests = user_retriever_tests(
                run.records,
                names,
                bench.references,
                n_resamples=spec.n_resamples,
                seed=spec.seed,
            )
            tests.table.to_csv(tmp / "user_retriever_tests.csv", index=False)
            tests.skipped.to_csv(tmp / "user_retriever_skipped.csv", index=False)
            text += "\n\n" + render_user_tests(
                tests.table, tests.skipped, n_resamples=spec.n_resamples
            )
        if spec.choices:
            text += "\n\n" + _choices_section(bench, spec)
        text = text.rstrip("\n") + "\n\n" + "\n".join(prov.markdown()) + "\n"
        (tmp / "report.md").write_text(text, encoding="utf-8")
        write_json(tmp / "provenance.json", {**prov.to_dict(), "choices": dict(spec.choices)})
    return ReproduceResult(Path(request.out), len(run.records), time.perf_counter() - start, run)


def _declared_parts(
    bench: Benchmark, run: BenchmarkRun, analysis: Any, spec: RunSpec, folder: Path, text: str
) -> str:
    """The report parts a benchmark declares on the protocol: its :meth:`~Benchmark.sections`
    after :meth:`~Benchmark.write`'s markdown, and its ``paper_values`` written to
    :data:`PAPER_VALUES_FILE` beside the report, which names the file."""
    from osustat.provenance import write_json

    parts = [s.markdown() for s in bench.sections(run, analysis, spec)]
    if bench.paper_values:
        write_json(folder / PAPER_VALUES_FILE, dict(bench.paper_values), indent=1)
        parts.append(
            f"The paper's printed values this report compares with are in `{PAPER_VALUES_FILE}` "
            "(as printed; nothing computes or tunes from them)."
        )
    if not parts:
        return text
    return "\n\n".join([text.rstrip("\n"), *parts]) + "\n"


def _phases(progress: bool) -> Any:
    """``say(name)``: on stderr, the phase starting now and how long the previous one took
    (after the sweeps' progress bars, the analysis, audit and report ran a minute in silence;
    issue 38). ``say(None)`` closes the last phase."""
    state: dict[str, Any] = {}

    def say(name: str | None) -> None:
        if not progress:
            return
        now = time.perf_counter()
        if state:
            print(f"osustat: {state['name']}: {now - state['t']:.1f} s", file=sys.stderr)
        if name is not None:
            print(f"osustat: {name} …", file=sys.stderr)
        state.update(name=name, t=now)

    return say


def _choices_section(bench: Benchmark, spec: RunSpec) -> str:
    lines = [
        "## Open choices of this run",
        "",
        f"Declared in `{bench.choices.source}`; set one with `--choice NAME=VALUE`.",
        "",
        "| choice | value | default | allowed |",
        "|---|---|---|---|",
    ]
    for c in bench.choices.choices:
        value = spec.choices.get(c.name, c.default)
        mark = "" if value == c.default else " (changed)"
        lines.append(f"| `{c.name}` | `{value}`{mark} | `{c.default}` | {', '.join(c.values)} |")
    declared = "encoder-backend" in bench.choices.names()
    if bench.data.kind != "none" and not declared:  # it may encode text: name the backend
        from osustat.retrieval.encoder import BACKENDS

        value = spec.encoder_backend
        mark = "" if value == "torch" else " (changed)"
        lines.append(
            f"| encoder backend (`--encoder-backend`) | `{value}`{mark} | `torch` | "
            f"{', '.join(BACKENDS)} |"
        )
    if declared or bench.data.kind != "none":
        lines += [
            "",
            "The encoder backend is a choice too: onnx and openvino run the same weights but "
            "their vectors differ from torch's in the last bits (cosine ≥ .9999), which breaks "
            "near-ties the other way, moves some values and can move a verdict near α "
            '(measured: docs/performance.md, "Encoder backends: vectors and verdicts"); each '
            "has its own embedding-cache key, and the provenance names the runtimes' versions."
            + (" `--sensitivity` varies it like every declared choice." if declared else ""),
        ]
    return "\n".join(lines)


def _sensitivity(bench: Benchmark, grid: Any, spec: RunSpec, folder: Path, request: Request) -> Any:
    folder.mkdir(parents=True, exist_ok=True)
    own = bench.sensitivity(grid, spec, folder)  # None: the driver's choice grid
    if own is not None:
        return own
    from .sensitivity import run_choice_sensitivity

    return run_choice_sensitivity(bench, grid, spec, folder, claims_path=request.claims)
