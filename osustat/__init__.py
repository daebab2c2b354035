"""osustat: the statistics core of a cell-conditional evaluation of agent-memory retrieval.

Arrays in, frozen dataclass results out; randomness only through a keyword ``rng``
(SPEC 7). See ``docs/statistics.md`` for the methods and their measured calibration.
"""

from ._version import __version__ as __version__
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

import os as _os

# Imported straight from a source checkout (the repository root on sys.path: pytest, or
# `python -m osustat` run there), this folder lacks the subpackages that pyproject maps from the
# repository's top-level folders (osustat.retrieval <- retrieval/, ...): look there too. An
# installed copy (wheel, or the strict editable link tree the Makefile builds) has them inside.
_here = _os.path.dirname(__file__)
if not _os.path.isdir(_os.path.join(_here, "retrieval")) and _os.path.isfile(
    _os.path.join(_here, _os.pardir, "retrieval", "__init__.py")
):
    __path__.append(_os.path.normpath(_os.path.join(_here, _os.pardir)))
