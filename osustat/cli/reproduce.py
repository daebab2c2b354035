"""``osustat reproduce BENCHMARK``: parse the options and call the one driver.

The options are the driver's, then each benchmark's own (``Benchmark.options``, added here
generically in a group per benchmark: no benchmark is named in this module; ``reproduce NAME
--help`` shows only NAME's group, though every group's options parse so that the driver refuses
another benchmark's by name). Everything else
— option checks before any work, ``--out`` / ``--force``, data resolution, the sweep backend
and resuming, user retrievers and their paired tests, the claims audit, atomic output with
provenance, ``--choice`` and ``--sensitivity`` — is :mod:`analyses.driver`'s, the same for
every benchmark of the entry-point group ``osustat.benchmarks`` (:mod:`analyses.registry`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from osustat.cli.common import _ints

__all__ = ["add_reproduce_parser", "reproduce"]


#: argparse's destination of a benchmark's own option (``Benchmark.options``).
_DEST = "benchmark_option_"


def _given_options(args: argparse.Namespace) -> dict[str, Any]:
    """The benchmarks' own options given on the command line, by ``Option.key`` (the driver
    checks them against the asking benchmark's declaration: ``benchmark_options``)."""
    return {
        name.removeprefix(_DEST): value
        for name, value in vars(args).items()
        if name.startswith(_DEST) and value is not None
    }


def _request(args: argparse.Namespace) -> Any:
    from osustat.analyses.driver import Request

    return Request(
        args.benchmark,
        Path(args.out),
        data=tuple(args.data or ()),
        force=args.force,
        seed=args.seed,
        seeds=tuple(_ints(args.seeds, "--seeds", low=0)) if args.seeds else None,
        n_resamples=args.resamples,
        episodes=args.episodes,
        cache=args.cache,
        encoder_backend=args.encoder_backend,
        jobs=args.jobs,
        scheduler=args.scheduler,
        retrievers=tuple(args.retriever),
        choices=tuple(args.choice),
        sensitivity=args.sensitivity,
        grid=args.grid,
        progress=not args.no_progress,
        options=_given_options(args),
        command=args.command_line,
        arguments=args.arguments,
    )


def reproduce(args: argparse.Namespace) -> int:
    """Parse into a driver request and run it (the driver checks every option first)."""
    from osustat.analyses.driver import reproduce as run

    result = run(_request(args))
    print(
        f"wrote {Path(args.out) / 'report.md'} ({result.n_records:,} records, "
        f"{result.seconds:.1f} s)",
        file=sys.stderr,
    )
    return 0


# -- parser -------------------------------------------------------------------------------


def add_reproduce_parser(sub: Any) -> None:
    """The ``reproduce`` sub-command and its options."""
    rp = sub.add_parser("reproduce", help="run a benchmark pipeline of the paper end to end")
    rp.deferred.append(_add_options)  # they import the benchmarks: only when asked for
    rp.help_for = _benchmark_help
    rp.set_defaults(func=reproduce)


def _benchmark_help(rp: Any, parsed: argparse.Namespace) -> Any:
    """``reproduce BENCHMARK --help``: a parser of the driver's options and that benchmark's
    own only (every benchmark's options still parse, so the driver can refuse another's by
    name); None (every benchmark's groups) when no benchmark came before ``--help``."""
    from osustat.cli.common import DeferredParser

    name = getattr(parsed, "benchmark", None)
    if name is None:
        return None
    shown = DeferredParser(prog=rp.prog, description=rp.description)
    _add_options(shown, only=name)
    return shown


def _add_options(rp: Any, only: str | None = None) -> None:
    """``reproduce``'s arguments: the benchmark, the driver's options, each benchmark's own
    (`only` that benchmark's: its ``--help``)."""
    from osustat.analyses.registry import benchmark_names
    from osustat.retrieval.encoder import BACKENDS

    rp.add_argument("benchmark", choices=benchmark_names(), help="which benchmark")
    rp.add_argument("--seeds", default=None, help="comma-separated seeds (toolbench: 42,123,456)")
    rp.add_argument("--out", required=True, help="directory for records, report and figures")
    rp.add_argument(
        "--force", action="store_true", help="replace an --out folder made with other settings"
    )
    rp.add_argument(
        "--episodes",
        type=int,
        default=None,
        help="episodes (per seed) to generate or plant, where a benchmark makes its episodes "
        "(refused where they are its data's)",
    )
    rp.add_argument("--seed", type=int, default=0, help="master seed")
    rp.add_argument("--jobs", type=int, default=1, help="parallel worker processes")
    rp.add_argument(
        "--scheduler",
        default=None,
        metavar="ADDRESS",
        help="run the sweep on an existing Dask cluster (tcp://HOST:8786; needs the "
        "'distributed' extra) instead of --jobs; same records (docs/scaling.md)",
    )
    rp.add_argument(
        "--retriever",
        action="append",
        default=[],
        metavar="module:Class[,...]",
        help="your retriever(s) beside the paper's methods: module:Class or an entry point "
        "of the group osustat.retrievers (repeatable; check it with check-retriever)",
    )
    rp.add_argument("--resamples", type=int, default=10_000, help="sign-flip resamples")
    rp.add_argument("--no-progress", action="store_true", help="no progress bar")
    rp.add_argument(
        "--data",
        nargs="+",
        default=None,
        help="the benchmark's input files or directory, or dataset names (osustat data list); "
        "default: the datasets the benchmark declares, from the data folder",
    )
    rp.add_argument("--cache", default=None, help="embedding cache directory")
    rp.add_argument(
        "--encoder-backend",
        choices=BACKENDS,
        default="torch",
        help="what runs all-MiniLM-L6-v2 for benchmarks that encode text: torch (the reference, "
        "default), onnx or openvino (faster; same weights exported offline, every text's "
        "vector within cosine 0.9999 of the reference, own cache key; extras onnx, openvino; "
        "docs/performance.md)",
    )
    rp.add_argument(
        "--choice",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="set one of the benchmark's declared open choices (repeatable; the report lists "
        "them with their defaults)",
    )
    rp.add_argument(
        "--sensitivity",
        action="store_true",
        help="also run the benchmark's grid of open choices (into OUT/sensitivity): per claim "
        "and point effect, CI, p and verdict robust / choice-dependent / not reproduced",
    )
    rp.add_argument(
        "--grid", default=None, help="grid file for --sensitivity (default: the shipped one)"
    )
    _add_benchmark_options(rp, only)


def _add_benchmark_options(rp: Any, only: str | None = None) -> None:
    """Every registered benchmark's own options (``Benchmark.options``), in a group named after
    it. A flag two benchmarks declare is added once (the second's help joins the group of the
    first); the driver checks the value against the asking benchmark's declaration. A benchmark
    whose module fails to import adds no option here: asking for it reports the error. With
    `only`, that benchmark's options alone (its ``--help``)."""
    from osustat.analyses.registry import benchmark_names, get_benchmark

    added: set[str] = set()
    for name in benchmark_names() if only is None else [only]:
        try:
            bench = get_benchmark(name)
        except Exception:  # reported when this benchmark is asked for (get_benchmark)
            continue
        group = None
        for option in bench.options:
            if option.flag in added:
                continue
            added.add(option.flag)
            group = group or rp.add_argument_group(name)
            dest = _DEST + option.key
            if option.const is not None:
                group.add_argument(
                    option.flag, dest=dest, action="store_const", const=option.const,
                    default=None, help=option.help,
                )  # fmt: skip
            else:
                group.add_argument(
                    option.flag, dest=dest, default=None, help=option.help,
                    metavar="{" + ",".join(option.values) + "}"
                    if option.values
                    else option.key.upper(),
                )  # fmt: skip
