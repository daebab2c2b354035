"""osustat: the statistics core of a cell-conditional evaluation of agent-memory retrieval.

Arrays in, frozen dataclass results out; randomness only through a keyword ``rng``
(SPEC 7). See ``docs/statistics.md`` for the methods and their measured calibration.

The public names load on first use (PEP 562): ``import osustat`` and the command line's
``--help`` stay free of numpy's statistics stack (pandas, scipy) until a name that needs it is
touched. ``_PUBLIC`` maps each name to the module that defines it; the ``TYPE_CHECKING``
imports give type checkers the same names (``tests/test_imports.py`` checks they agree).
"""

from __future__ import annotations

import importlib as _importlib
import os as _os
import sys as _sys
import types as _types
from typing import TYPE_CHECKING, Any

from ._version import __version__ as __version__

if TYPE_CHECKING:
    from .analysis import analyze
    from .analysis_multi import MultiAnalysisResult
    from .analysis_result import AnalysisResult
    from .audit.claim import Claim, ClaimsFile
    from .audit.claims import load_claims, parse_claims
    from .audit.result import AuditResult, ClaimCheck
    from .audit.run import audit as audit_claims
    from .bootstrap import BootstrapCI, bootstrap_ci
    from .breakeven import BreakEvenResult, break_even, break_even_bootstrap, cell_effects
    from .cells import CELLS, Cell, SharingRates, label_cell, sharing_rates
    from .combine import (
        CombinedResult,
        SeedDependence,
        fisher_combine,
        seed_dependence,
        stouffer_combine,
    )
    from .equivalence import EquivalenceResult, tost_signflip
    from .front_door import reproduce
    from .interaction import INTERACTION_METHODS, InteractionResult, interaction_test
    from .intervals import ConfidenceInterval
    from .io.evidence import evidence_metrics, read_evidence
    from .io.inputs import records_from_retrievals
    from .io.reading import load_records, read_records
    from .io.trec import records_from_trec
    from .multitest import AdjustedPValues, adjust_pvalues, stars
    from .oracle import OracleCeiling, oracle_ceiling
    from .planning import CellPlans, SampleSizePlan, plan, plan_cells
    from .power import minimum_detectable_effect, power
    from .ratio import RatioResult, ratio_of_means
    from .records import PairedRecords, paired
    from .schema import validate_records
    from .seeds import PerSeedValues, SeedTests, per_seed_values, seed_tests
    from .signflip import SignFlipResult, paired_signflip_test, signflip_tests
    from .stepdown import StepDownResult, westfall_young
    from .trend import TrendResult, mean_trend_test, within_block_trend_test

# name -> (defining module relative to this package, attribute there)
_PUBLIC: dict[str, tuple[str, str]] = {
    "analyze": (".analysis", "analyze"),
    "MultiAnalysisResult": (".analysis_multi", "MultiAnalysisResult"),
    "AnalysisResult": (".analysis_result", "AnalysisResult"),
    "Claim": (".audit.claim", "Claim"),
    "ClaimsFile": (".audit.claim", "ClaimsFile"),
    "load_claims": (".audit.claims", "load_claims"),
    "parse_claims": (".audit.claims", "parse_claims"),
    "AuditResult": (".audit.result", "AuditResult"),
    "ClaimCheck": (".audit.result", "ClaimCheck"),
    "audit_claims": (".audit.run", "audit"),
    "BootstrapCI": (".bootstrap", "BootstrapCI"),
    "bootstrap_ci": (".bootstrap", "bootstrap_ci"),
    "BreakEvenResult": (".breakeven", "BreakEvenResult"),
    "break_even": (".breakeven", "break_even"),
    "break_even_bootstrap": (".breakeven", "break_even_bootstrap"),
    "cell_effects": (".breakeven", "cell_effects"),
    "CELLS": (".cells", "CELLS"),
    "Cell": (".cells", "Cell"),
    "SharingRates": (".cells", "SharingRates"),
    "label_cell": (".cells", "label_cell"),
    "sharing_rates": (".cells", "sharing_rates"),
    "CombinedResult": (".combine", "CombinedResult"),
    "SeedDependence": (".combine", "SeedDependence"),
    "fisher_combine": (".combine", "fisher_combine"),
    "seed_dependence": (".combine", "seed_dependence"),
    "stouffer_combine": (".combine", "stouffer_combine"),
    "EquivalenceResult": (".equivalence", "EquivalenceResult"),
    "tost_signflip": (".equivalence", "tost_signflip"),
    "reproduce": (".front_door", "reproduce"),
    "INTERACTION_METHODS": (".interaction", "INTERACTION_METHODS"),
    "InteractionResult": (".interaction", "InteractionResult"),
    "interaction_test": (".interaction", "interaction_test"),
    "ConfidenceInterval": (".intervals", "ConfidenceInterval"),
    "evidence_metrics": (".io.evidence", "evidence_metrics"),
    "read_evidence": (".io.evidence", "read_evidence"),
    "records_from_retrievals": (".io.inputs", "records_from_retrievals"),
    "load_records": (".io.reading", "load_records"),
    "read_records": (".io.reading", "read_records"),
    "records_from_trec": (".io.trec", "records_from_trec"),
    "AdjustedPValues": (".multitest", "AdjustedPValues"),
    "adjust_pvalues": (".multitest", "adjust_pvalues"),
    "stars": (".multitest", "stars"),
    "OracleCeiling": (".oracle", "OracleCeiling"),
    "oracle_ceiling": (".oracle", "oracle_ceiling"),
    "CellPlans": (".planning", "CellPlans"),
    "SampleSizePlan": (".planning", "SampleSizePlan"),
    "plan": (".planning", "plan"),
    "plan_cells": (".planning", "plan_cells"),
    "minimum_detectable_effect": (".power", "minimum_detectable_effect"),
    "power": (".power", "power"),
    "RatioResult": (".ratio", "RatioResult"),
    "ratio_of_means": (".ratio", "ratio_of_means"),
    "PairedRecords": (".records", "PairedRecords"),
    "paired": (".records", "paired"),
    "validate_records": (".schema", "validate_records"),
    "PerSeedValues": (".seeds", "PerSeedValues"),
    "SeedTests": (".seeds", "SeedTests"),
    "per_seed_values": (".seeds", "per_seed_values"),
    "seed_tests": (".seeds", "seed_tests"),
    "SignFlipResult": (".signflip", "SignFlipResult"),
    "paired_signflip_test": (".signflip", "paired_signflip_test"),
    "signflip_tests": (".signflip", "signflip_tests"),
    "StepDownResult": (".stepdown", "StepDownResult"),
    "westfall_young": (".stepdown", "westfall_young"),
    "TrendResult": (".trend", "TrendResult"),
    "mean_trend_test": (".trend", "mean_trend_test"),
    "within_block_trend_test": (".trend", "within_block_trend_test"),
}

__all__ = [
    "CELLS",
    "INTERACTION_METHODS",
    "AdjustedPValues",
    "AnalysisResult",
    "AuditResult",
    "BootstrapCI",
    "BreakEvenResult",
    "Cell",
    "CellPlans",
    "Claim",
    "ClaimCheck",
    "ClaimsFile",
    "CombinedResult",
    "ConfidenceInterval",
    "EquivalenceResult",
    "InteractionResult",
    "MultiAnalysisResult",
    "OracleCeiling",
    "PairedRecords",
    "PerSeedValues",
    "RatioResult",
    "SampleSizePlan",
    "SeedDependence",
    "SeedTests",
    "SharingRates",
    "SignFlipResult",
    "StepDownResult",
    "TrendResult",
    "adjust_pvalues",
    "analyze",
    "audit_claims",
    "bootstrap_ci",
    "break_even",
    "break_even_bootstrap",
    "cell_effects",
    "evidence_metrics",
    "fisher_combine",
    "interaction_test",
    "label_cell",
    "load_claims",
    "load_records",
    "mean_trend_test",
    "minimum_detectable_effect",
    "oracle_ceiling",
    "paired",
    "paired_signflip_test",
    "parse_claims",
    "per_seed_values",
    "plan",
    "plan_cells",
    "power",
    "ratio_of_means",
    "read_evidence",
    "read_records",
    "records_from_retrievals",
    "records_from_trec",
    "reproduce",
    "seed_dependence",
    "seed_tests",
    "sharing_rates",
    "signflip_tests",
    "stars",
    "stouffer_combine",
    "tost_signflip",
    "validate_records",
    "westfall_young",
    "within_block_trend_test",
]


def __getattr__(name: str) -> Any:
    try:
        module, attribute = _PUBLIC[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    value = getattr(_importlib.import_module(module, __name__), attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


class _Package(_types.ModuleType):
    """Keeps a public name that shares its submodule's name (``power``) bound to the function.

    Importing ``osustat.power`` makes the import system set the package attribute ``power`` to
    the submodule; eagerly, the later ``from .power import power`` rebound it. Lazily, this
    hook does that rebinding at the moment the submodule is attached.
    """

    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(value, _types.ModuleType) and name in _PUBLIC:
            module, attribute = _PUBLIC[name]
            if value.__name__ == __name__ + module:
                value = getattr(value, attribute)
        super().__setattr__(name, value)


_sys.modules[__name__].__class__ = _Package

# Imported straight from a source checkout (the repository root on sys.path: pytest, or
# `python -m osustat` run there), this folder lacks the subpackages that pyproject maps from the
# repository's top-level folders (osustat.retrieval <- retrieval/, ...): look there too. An
# installed copy (wheel, or the strict editable link tree the Makefile builds) has them inside.
_here = _os.path.dirname(__file__)
if not _os.path.isdir(_os.path.join(_here, "retrieval")) and _os.path.isfile(
    _os.path.join(_here, _os.pardir, "retrieval", "__init__.py")
):
    __path__.append(_os.path.normpath(_os.path.join(_here, _os.pardir)))
