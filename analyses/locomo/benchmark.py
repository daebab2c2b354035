"""LoCoMo on the benchmark protocol: load, build, run, analyze and write (issue 22).

:data:`BENCHMARK` implements :class:`analyses.protocol.Benchmark`; ``osustat reproduce locomo
--data locomo10.json --out DIR [--choice NAME=VALUE] [--sensitivity]`` runs it through
:mod:`analyses.driver`, which owns the option checks, atomic output, ``provenance.json``, user
retrievers and the choices section. This benchmark writes ``records.csv`` (benchmark ``locomo``,
with ``cell`` and ``category`` columns), ``structure.json`` (counts, every exclusion, every
repaired and unresolved evidence string, marginals, evidence-OSU membership) and the figures;
with ``--sensitivity`` also ``sensitivity/records-<choice>=<value>.csv``. A malformed file
raises :class:`~.data.LocomoDataError` (a ``ValueError``: exit 2) naming the conversation and
the field, and nothing is written.

Its claims are the transfer claims of ``analyses/locomo/claims.toml`` (not the paper's own
claims file): the driver audits them like every benchmark's declared claims
(:class:`~analyses.protocol.ClaimSelection` ``files``), and :func:`write_locomo` reads that
audit for the report's "does the paper's claim transfer?" section.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from osustat.analyses.protocol import (
    Benchmark,
    BenchmarkRun,
    ClaimSelection,
    DataSpec,
    Option,
    RunSpec,
    integers,
    load_choices,
    names,
)
from osustat.provenance import write_json

from .run import BUDGETS, MAIN_METHODS, PRIMARY_BUDGET

if TYPE_CHECKING:
    from osustat.io.join import QuestionTable

__all__ = [
    "BENCHMARK",
    "LoCoMo",
    "analyze_locomo_run",
    "run_locomo",
    "write_locomo",
]

#: The methods of a sensitivity rerun (the two comparisons of the cross-tab).
SENSITIVITY_METHODS = ("Flat Vector", "OSU-Mem", "OSU-Mem (disjoint)")


def _budgets(spec: RunSpec) -> tuple[int, ...]:
    return tuple(spec.options.get("budgets") or BUDGETS)


def _methods(spec: RunSpec) -> tuple[str, ...]:
    return tuple(spec.options.get("methods") or MAIN_METHODS)


def _primary(spec: RunSpec) -> int:
    budgets = sorted(_budgets(spec))
    return PRIMARY_BUDGET if PRIMARY_BUDGET in budgets else budgets[len(budgets) // 2]


def run_locomo(spec: RunSpec) -> BenchmarkRun:
    """Load the file (and the audit overlay when the labels need it), build every
    conversation's steps and queries under ``spec.choices``, embed, and sweep through the one
    runner; validated records, and the structure counts as state."""
    from osustat.schema import validate_records

    from .choices import Choices
    from .data import LocomoDataError, load_audit, load_locomo
    from .prepare import audit_path, prepare, structure
    from .run import run_sweep

    choices = Choices.from_mapping(spec.choices)
    data = Path(spec.data[0])
    convs = load_locomo(data)
    audit = load_audit(audit_path(data), convs) if choices.labels == "audit" else None
    prep = prepare(convs, choices, spec.text_encoder(), audit)
    records, membership = run_sweep(
        prep.steps, prep.embeddings, [t.queries for t in prep.tables], prep.query_embeddings,
        methods=_methods(spec), budgets=_budgets(spec), retrievers=spec.retrievers,
        backend=spec.backend,
    )  # fmt: skip
    if records.empty:
        raise LocomoDataError(f"{data}: no question has >= 2 resolving evidence turns.")
    state = structure(convs, prep)
    state["membership"] = membership.to_dict(orient="records")
    return BenchmarkRun(validate_records(records), {"structure": state})


def analyze_locomo_run(run: BenchmarkRun, spec: RunSpec) -> Any:
    """Cross-tabs at two units, interaction, break-even, categories, sensitivity."""
    from .analysis import analyze

    sens = [(c, r, s) for c, r, s in run.state.get("sensitivity", ()) if r is not None]
    return analyze(
        run.records, sens, primary=_primary(spec), n_resamples=spec.n_resamples, seed=spec.seed,
        progress=spec.backend.progress,
    )  # fmt: skip


def write_locomo(
    run: BenchmarkRun, analysis: Any, spec: RunSpec, folder: Path, audit: str | None
) -> str:
    """``records.csv``, ``structure.json`` and the figures; the report's markdown with the
    transfer verdicts read from the driver's claims audit (``run.state['claims_audit']``) and
    its markdown `audit` (the driver appends user-retriever tests, the choices of the run and
    the provenance)."""
    from .analysis import transfer_verdicts
    from .choices import declared
    from .report import render, write_figures

    st = run.state["structure"]
    run.records.to_csv(folder / "records.csv", index=False)
    write_json(folder / "structure.json", st, indent=1, sort_keys=True)
    write_figures(analysis, folder)
    skipped = [c.label() for c, r, _ in run.state.get("sensitivity", ()) if r is None]
    transfer = transfer_verdicts(analysis, run.state.get("claims_audit"))
    return render(analysis, st, declared(), transfer=transfer, audit=audit, skipped=skipped)


class LoCoMo(Benchmark):
    """LoCoMo (Maharana et al., ACL 2024) on the protocol (analyses.protocol)."""

    name = "locomo"
    description = "LoCoMo long conversations with natural questions and evidence turns (issue 22)"
    data = DataSpec(
        "files", "locomo10.json; the audit overlay is read from audit/errors.json beside it"
    )
    choices = load_choices("osustat.analyses.locomo", "locomo")
    claims = ClaimSelection(
        "Audit of the transfer claims (analyses/locomo/claims.toml)",
        benchmark_prefixes=("locomo",),
        files=(Path(__file__).with_name("claims.toml"),),
        drop_columns=("category",),
    )
    references = ("OSU-Mem", "Flat Vector")
    multi_seed = False
    counts_episodes = False
    #: Without --data: the fetched copy (`osustat data fetch locomo`), as the README says.
    datasets = ("locomo",)
    #: A conversation's questions share one memory: `osustat analyze` on LoCoMo-derived records
    #: (e.g. `osustat import`'s) tests at the conversation unit unless `--unit query`.
    default_unit = "episode"
    options = (
        Option(
            "--budgets", "token budgets of the sweeps, comma-separated (default: the paper's)",
            default=BUDGETS, convert=integers(1),
        ),
        Option(
            "--methods", "the paper's methods to run, comma-separated (default: all of "
            f"{', '.join(MAIN_METHODS)})", default=tuple(MAIN_METHODS), convert=names,
        ),
    )  # fmt: skip

    audit_files = MappingProxyType(
        {"locomo-systems": Path(__file__).with_name("systems_claims.toml")}
    )

    def questions(self, data: tuple[Path, ...], choices: Mapping[str, str]) -> QuestionTable:
        """LoCoMo's question table for ``osustat import`` (:func:`.questions.question_table`)."""
        from .questions import question_table

        return question_table(data[0], choices)

    def methods(self) -> tuple[str, ...]:
        return tuple(MAIN_METHODS)

    def check(self, spec: RunSpec) -> None:
        from .prepare import audit_path

        if len(spec.data) != 1:
            raise ValueError(f"`--data`: give one locomo10.json file; got {len(spec.data)}.")
        if spec.choices.get("labels") == "audit" and not audit_path(spec.data[0]).is_file():
            raise ValueError(
                f"`--choice labels=audit` needs the audit overlay {audit_path(spec.data[0])}."
            )
        unknown = [m for m in _methods(spec) if m not in MAIN_METHODS]
        if unknown:
            raise ValueError(f"`--methods`: unknown {unknown}; choose from {list(MAIN_METHODS)}.")

    run = staticmethod(run_locomo)
    analyze = staticmethod(analyze_locomo_run)
    write = staticmethod(write_locomo)

    def sensitivity(self, grid: Any, spec: RunSpec, folder: Path) -> list[tuple[Any, Any, Any]]:
        """Every grid point other than this run's setting, with OSU-Mem, its disjoint variant
        and Flat Vector; the records of each go to ``folder``. The pipeline draws no random
        numbers, so the grid's seeds do not apply (the statistics use the run's seed). The
        audit-label point is listed as not run when the overlay file is missing."""
        from .choices import Choices
        from .prepare import audit_path

        methods = tuple(m for m in SENSITIVITY_METHODS if m in _methods(spec))
        out: list[tuple[Any, Any, Any]] = []
        for _, values in grid.points:
            if dict(values) == dict(spec.choices):
                continue
            if values.get("labels") == "audit" and not audit_path(spec.data[0]).is_file():
                out.append((Choices.from_mapping(values), None, None))  # reported as not run
                continue
            point = replace(
                spec, choices=values, retrievers=(), options={**spec.options, "methods": methods}
            )
            run = run_locomo(point)
            ch = Choices.from_mapping(values)
            run.records.to_csv(folder / f"records-{ch.label()}.csv", index=False)
            out.append((ch, run.records, run.state["structure"]))
        return out


BENCHMARK = LoCoMo()
