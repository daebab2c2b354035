"""``osustat reproduce BENCHMARK``: parse the options and call the one driver.

Everything else — option checks before any work, ``--out`` / ``--force``, data resolution, the
sweep backend and resuming, user retrievers and their paired tests, the claims audit, atomic
output with provenance, ``--choice`` and ``--sensitivity`` — is :mod:`analyses.driver`'s, the
same for every benchmark of :mod:`analyses.registry`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from osustat.cli.common import _ints

__all__ = ["add_reproduce_parser", "reproduce"]


def _request(args: argparse.Namespace) -> Any:
    from osustat.analyses.driver import Request

    choices = list(args.choice)
    if args.layout is not None:
        choices.append(f"layout={args.layout}")
    if args.focal is not None:
        choices.append(f"focal={args.focal}")
    if args.no_prefix:
        choices.append("namespace-prefix=unprefixed")
    options: dict[str, Any] = {}
    if args.benchmark == "tau-bench":
        options = {"selector": args.selector, "endpoint": args.endpoint, "model": args.model}
    if args.benchmark == "synthetic":
        options = {"sensitivity": args.sensitivity, "grid": args.grid}
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
        choices=tuple(choices),
        sensitivity=args.sensitivity,
        grid=args.grid,
        progress=not args.no_progress,
        options=options,
        command=args.command_line,
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
    from osustat.analyses.registry import BENCHMARKS
    from osustat.retrieval.encoder import BACKENDS

    rp.add_argument("benchmark", choices=tuple(BENCHMARKS), help="which benchmark")
    rp.add_argument("--seeds", default=None, help="comma-separated seeds (toolbench: 42,123,456)")
    rp.add_argument("--out", required=True, help="directory for records, report and figures")
    rp.add_argument(
        "--force", action="store_true", help="replace an --out folder made with other settings"
    )
    rp.add_argument(
        "--episodes", type=int, default=None, help="episodes (per seed) to generate or plant"
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
        help="τ-/τ²-bench trajectory files (tau-bench) or the data directory (toolbench), or "
        "dataset names (osustat data list); default: the registry's copy (tau-bench: "
        "tau-bench and tau2-bench; toolbench: toolbench)",
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
        "--layout",
        choices=("spread", "segment"),
        default=None,
        help="synthetic: same as --choice layout=VALUE",
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
    tau = rp.add_argument_group("tau-bench")
    tau.add_argument(
        "--no-prefix", action="store_true", help="same as --choice namespace-prefix=unprefixed"
    )
    tau.add_argument(
        "--focal", choices=("all", "one"), default=None, help="same as --choice focal=VALUE"
    )
    tau.add_argument(
        "--selector",
        choices=("extractive", "chat", "local"),
        default="extractive",
        help="§6.6 selector: extractive (offline stand-in, not an LLM), chat (an endpoint) or "
        "local (SmolLM2-135M on 127.0.0.1, free text and constrained ids, a declared subset; "
        "osustat llm fetch)",
    )
    tau.add_argument("--endpoint", default=None, help="OpenAI-compatible base URL (chat)")
    tau.add_argument("--model", default=None, help="model name sent to the endpoint (chat)")
    rp.set_defaults(func=reproduce)
