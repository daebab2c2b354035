"""``osustat reproduce synthetic|tau-bench|toolbench``: options, checks and the three pipelines.

Every option is checked before any work (one check per option, shared by the three
pipelines). User retrievers (``--retriever``) are loaded and their names checked against the
pipeline's methods up front; ``--scheduler`` connects to the Dask cluster once for the whole
run. Finished sweep tasks are kept in a folder beside ``--out`` (``.<out>.sweep``) so that an
interrupted run resumes where it stopped; the folder is removed when the run has been written.
"""

from __future__ import annotations

import argparse
import contextlib
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from osustat.cli.common import UsageError, _check_out, _count, _digest, _ints, _split

__all__ = ["add_reproduce_parser", "checkpoint_dir", "reproduce"]

BENCHMARKS = ("synthetic", "tau-bench", "toolbench")


def checkpoint_dir(out: str | Path) -> Path:
    """Where a run keeps its finished sweep tasks: ``.<name>.sweep`` beside `out`."""
    out = Path(out)
    return out.parent / f".{out.name}.sweep"


# -- checks -------------------------------------------------------------------------------


def _check_options(args: argparse.Namespace) -> None:
    """The options every pipeline shares, in the order the synthetic pipeline always used."""
    if args.benchmark == "synthetic" and args.grid and not args.sensitivity:
        raise ValueError("`--grid` needs `--sensitivity`.")
    if args.benchmark != "synthetic" and not args.data:
        if args.benchmark == "toolbench":
            raise ValueError("`--data` (one ToolBench data directory) is required for toolbench.")
        raise ValueError("`reproduce tau-bench` needs `--data FILE [FILE ...]`.")
    if args.benchmark == "toolbench" and len(args.data) != 1:
        raise ValueError("`--data` (one ToolBench data directory) is required for toolbench.")
    _count(args.episodes, "--episodes", 1, 1_000_000)
    _count(args.jobs, "--jobs", 1, 1024)
    _count(args.resamples, "--resamples")
    _count(args.seed, "--seed", 0, 2**63 - 1)
    if args.scheduler is not None and args.jobs != 1:
        raise UsageError(
            "give `--jobs` (worker processes here) or `--scheduler` (a Dask cluster), not both."
        )
    if args.scheduler is not None and not args.scheduler.strip():
        raise UsageError("`--scheduler` is empty; give a Dask address like tcp://HOST:8786.")


def _taken(benchmark: str) -> list[str]:
    """Method names the pipeline writes itself (a user retriever must not reuse one)."""
    if benchmark == "synthetic":
        from osustat.analyses.synthetic.run import method_factories

        return list(method_factories())
    if benchmark == "tau-bench":
        from osustat.analyses.tau_bench.run import MAIN_METHODS

        return list(MAIN_METHODS)
    from osustat.analyses.toolbench.run import method_names

    return list(method_names())


def _user_retrievers(args: argparse.Namespace) -> tuple[Any, ...]:
    """``--retriever`` values (repeatable, comma-separated) as checked ``MethodSpec``."""
    from osustat.retrieval.registry import load_retriever, user_factories

    specs = []
    for value in args.retriever:
        items = _split(value)
        if not items:
            raise UsageError(f"`--retriever` is empty; give module:Class; got {value!r}.")
        for item in items:
            try:
                specs.append(load_retriever(item))
            except ValueError as exc:
                raise UsageError(f"`--retriever`: {exc}") from None
    try:
        user_factories(specs, taken=_taken(args.benchmark))
    except ValueError as exc:
        raise UsageError(f"`--retriever`: {exc}") from None
    return tuple(specs)


@contextlib.contextmanager
def _scheduler(address: str | None) -> Iterator[Any]:
    """A ``distributed.Client`` connected once for the whole run (None without --scheduler)."""
    if address is None:
        yield None
        return
    try:
        from distributed import Client
    except ImportError:
        raise UsageError(
            "`--scheduler` needs dask.distributed: pip install 'osustat[distributed]'."
        ) from None
    try:
        client = Client(address.strip(), timeout="20s")
    except (OSError, TimeoutError, ValueError) as exc:
        raise UsageError(
            f"`--scheduler` {address!r}: cannot connect to a Dask scheduler ({exc})."
        ) from None
    with client:
        yield client


# -- running ------------------------------------------------------------------------------


def reproduce(args: argparse.Namespace) -> int:
    """Check every option, then run the pipeline with resuming and the chosen backend."""
    _check_options(args)
    retrievers = _user_retrievers(args)
    run = {"synthetic": _synthetic, "tau-bench": _tau, "toolbench": _toolbench}[args.benchmark]
    ckpt = checkpoint_dir(args.out)
    with _scheduler(args.scheduler) as scheduler:
        try:
            result = run(args, retrievers, scheduler, ckpt)
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
    print(
        f"wrote {Path(args.out) / 'report.md'} ({result.n_records:,} records, "
        f"{result.seconds:.1f} s)",
        file=sys.stderr,
    )
    return 0


def _backend(args: argparse.Namespace, scheduler: Any, ckpt: Path) -> dict[str, Any]:
    return {
        "jobs": args.jobs,
        "scheduler": scheduler,
        "checkpoint": ckpt,
        "progress": not args.no_progress,
    }


def _synthetic(
    args: argparse.Namespace, retrievers: tuple[Any, ...], scheduler: Any, ckpt: Path
) -> Any:
    from osustat.analyses.synthetic.reproduce import reproduce_synthetic
    from osustat.provenance import Provenance, atomic_output, write_json

    _check_out(args)
    settings = f"synthetic episodes={args.episodes} seed={args.seed}"
    key = f"synthetic/{args.episodes}/{args.seed}"
    if retrievers:  # other methods, other records: another inputs digest
        names = ",".join(r.source for r in retrievers)
        settings += f" retrievers={names}"
        key += f"/{names}"
    prov = Provenance(
        command=args.command_line,
        inputs=(("generator settings (no input files)", settings, _digest(key)),),
        seeds={"master": args.seed},
        resamples={"sign-flip": args.resamples},
        exclusions_note="the pipeline's own exclusions, if any, are stated in the report above.",
    )
    with atomic_output(args.out, inputs_digest=prov.inputs_digest, force=args.force) as tmp:
        result = reproduce_synthetic(
            tmp,
            episodes=args.episodes,
            seed=args.seed,
            n_resamples=args.resamples,
            layout=args.layout,
            sensitivity=args.sensitivity,
            grid=Path(args.grid) if args.grid else None,
            retrievers=retrievers,
            **_backend(args, scheduler, ckpt),
        )
        report = tmp / "report.md"
        if report.exists():
            text = report.read_text(encoding="utf-8").rstrip("\n")
            report.write_text(text + "\n\n" + "\n".join(prov.markdown()) + "\n", "utf-8")
        write_json(tmp / "provenance.json", prov.to_dict())
    return result


def _toolbench(
    args: argparse.Namespace, retrievers: tuple[Any, ...], scheduler: Any, ckpt: Path
) -> Any:
    from osustat.analyses.toolbench.reproduce import TOOLBENCH_SEEDS, reproduce_toolbench

    seeds = tuple(_ints(args.seeds, "--seeds", low=0)) if args.seeds else TOOLBENCH_SEEDS
    return reproduce_toolbench(
        Path(args.data[0]),
        Path(args.out),
        cache=None if args.cache is None else Path(args.cache),
        seeds=seeds,
        episodes=args.episodes,
        n_resamples=args.resamples,
        retrievers=retrievers,
        **_backend(args, scheduler, ckpt),
    )


def _tau(args: argparse.Namespace, retrievers: tuple[Any, ...], scheduler: Any, ckpt: Path) -> Any:
    from osustat.analyses.tau_bench.reproduce import reproduce_tau_bench

    return reproduce_tau_bench(
        args.data,
        Path(args.out),
        cache=args.cache,
        seed=args.seed,
        n_resamples=args.resamples,
        prefix=not args.no_prefix,
        focal=args.focal,
        query_noise=args.query_noise,
        copy_noise=args.copy_noise,
        matching=args.matching,
        packing=args.packing,
        query_kind=args.query_kind,
        selector=args.selector,
        endpoint=args.endpoint,
        model=args.model,
        retrievers=retrievers,
        **_backend(args, scheduler, ckpt),
    )


# -- parser -------------------------------------------------------------------------------


def add_reproduce_parser(sub: Any) -> None:
    """The ``reproduce`` sub-command and its options."""
    rp = sub.add_parser("reproduce", help="run a benchmark pipeline of the paper end to end")
    rp.add_argument("benchmark", choices=BENCHMARKS, help="which pipeline")
    rp.add_argument("--seeds", default=None, help="comma-separated seeds (toolbench: 42,123,456)")
    rp.add_argument("--out", required=True, help="directory for records, report and figures")
    rp.add_argument(
        "--force", action="store_true", help="replace an --out folder made with other settings"
    )
    rp.add_argument("--episodes", type=int, default=200, help="episodes to generate")
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
        help="τ-/τ²-bench trajectory files (tau-bench) or the data directory (toolbench)",
    )
    rp.add_argument("--cache", default=None, help="embedding cache directory")
    rp.add_argument(
        "--layout",
        choices=("spread", "segment"),
        default="spread",
        help="synthetic generator layout (default spread; segment = the first version's)",
    )
    rp.add_argument(
        "--sensitivity",
        action="store_true",
        help="also run the synthetic generator sensitivity grid (into OUT/sensitivity)",
    )
    rp.add_argument(
        "--grid", default=None, help="grid file for --sensitivity (default: the shipped one)"
    )
    tau = rp.add_argument_group("tau-bench")
    tau.add_argument("--no-prefix", action="store_true", help="no per-source namespace prefix")
    tau.add_argument(
        "--focal",
        choices=("all", "one"),
        default="all",
        help="focal sources per group: all surviving sources (default, the paper's n) or one",
    )
    for flag, values, text in (
        ("--query-noise", ("per-coordinate", "per-norm"), "reading of the query's σ = .25"),
        ("--copy-noise", ("per-norm", "per-coordinate"), "reading of Stage D's σ = .10"),
        ("--matching", ("order-free", "in-order"), "ground-truth matching"),
        ("--packing", ("any", "one-episode-per-task-per-group"), "Stage C packing"),
        ("--query-kind", ("noisy-mean", "weak", "instruction"), "query of the main run"),
    ):
        tau.add_argument(
            flag, choices=values, default=values[0], help=f"{text} (default {values[0]})"
        )
    tau.add_argument(
        "--selector",
        choices=("extractive", "chat"),
        default="extractive",
        help="§6.6 selector: extractive (offline stand-in, not an LLM) or chat (an endpoint)",
    )
    tau.add_argument("--endpoint", default=None, help="OpenAI-compatible base URL (chat)")
    tau.add_argument("--model", default=None, help="model name sent to the endpoint (chat)")
    rp.set_defaults(func=reproduce)
