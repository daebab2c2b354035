"""The result types of a claim audit: :class:`ClaimCheck` per claim, :class:`AuditResult`.

:func:`osustat.audit.run.audit` builds them.
"""

from __future__ import annotations

from dataclasses import dataclass

from osustat.audit.claim import Claim, Family
from osustat.bootstrap import BootstrapCI
from osustat.combine import SeedDependence
from osustat.equivalence import EquivalenceResult
from osustat.interaction import InteractionResult
from osustat.power import PowerValue
from osustat.ratio import RatioResult
from osustat.reproduction import ReproductionMeasures
from osustat.signflip import SignFlipResult

from .measure import Note
from .verdicts import STANDARDS, UNDECIDED, Flag, StandardVerdict

__all__ = ["VERDICTS", "AuditResult", "ClaimCheck"]

VERDICTS = (
    "reproduced",
    "significant (paper: n.s.)",
    "direction only",
    "not significant",
    "equivalence not shown",
    "opposite direction",
    "contradicted",
    "underpowered",
    UNDECIDED,
    "not checkable",
)


@dataclass(frozen=True, kw_only=True)
class ClaimCheck:
    """The audit of one claim.

    Attributes
    ----------
    claim : Claim
    verdict : str
        The strict standard's verdict (one of :data:`VERDICTS`; same as ``strict.verdict``).
    n : int or None
        Units (queries or episodes) in the claimed cell; seeds averaged per unit.
    n_seeds : int or None
        Seeds present in the records for this comparison (1 with a ``seed`` selector).
    effect, treatment_mean, baseline_mean : float or None
        Recomputed from the records (``effect``: mean paired difference).
    test : SignFlipResult or None
        Two-sided paired sign-flip test of the claim's boundary null (``mean(d) =
        threshold``; relative claims: ``mean(t - (1 + threshold) b) = 0``).
    ci : BootstrapCI or None
        Bootstrap interval of the mean difference (clustered by episode for queries).
    pvalue_adjusted : float or None
        The strict standard's corrected p.
    family_size : int
        The strict standard's m.
    mde : PowerValue or None
        Minimum detectable effect of the recomputed test (family alpha, power .8) at this n,
        from the observed differences (:func:`osustat.minimum_detectable_effect` with
        ``differences=``: exact binomial for 0/1 metrics, simulation for small n); infinite
        when the test is underpowered at any effect.
    min_attainable_p : float or None
        Smallest p the claim's own test could have produced.
    seed_dependence : SeedDependence or None
    pooled_pvalue, fisher_pvalue : float or None
        The anti-conservative contrasts (every (unit, seed) pair independent; Fisher's
        combination of per-seed tests).
    flags : tuple of Flag
    notes : tuple of Note
        Codes (:data:`NOTE_CODES`); :func:`osustat.reports._audit_words.note_text` words them.
    as_tested, strict : StandardVerdict or None
        The verdict under each standard.
    equivalence : EquivalenceResult or None
        TOST at the claim's margin (equivalence claims).
    ratio : RatioResult or None
        Ratio of means with Fieller's interval (relative claims).
    interaction, interaction_as_tested : InteractionResult or None
        The studentized (strict) and the paper's centered (as tested) interaction tests.
    strict_bh : StandardVerdict or None
        The strict standard with Benjamini-Hochberg (``'fdr_bh'``) in place of the family's
        strict correction: the false-discovery-rate reading beside the familywise one.
    reproduction : ReproductionMeasures or None
        Effect ratio and ΔRI of the recomputed effect against the paper's printed means (or
        its printed effect), with bootstrap intervals of the records' sampling error
        (:func:`osustat.reproduction.reproduction_measures`); None when the claim prints
        neither, and for interaction and equivalence claims.
    """

    claim: Claim
    verdict: str
    n: int | None = None
    n_seeds: int | None = None
    effect: float | None = None
    treatment_mean: float | None = None
    baseline_mean: float | None = None
    test: SignFlipResult | None = None
    ci: BootstrapCI | None = None
    pvalue_adjusted: float | None = None
    family_size: int = 0
    mde: PowerValue | None = None
    min_attainable_p: float | None = None
    seed_dependence: SeedDependence | None = None
    pooled_pvalue: float | None = None
    fisher_pvalue: float | None = None
    flags: tuple[Flag, ...] = ()
    notes: tuple[Note, ...] = ()
    as_tested: StandardVerdict | None = None
    strict: StandardVerdict | None = None
    equivalence: EquivalenceResult | None = None
    ratio: RatioResult | None = None
    interaction: InteractionResult | None = None
    interaction_as_tested: InteractionResult | None = None
    strict_bh: StandardVerdict | None = None
    reproduction: ReproductionMeasures | None = None

    @property
    def checkable(self) -> bool:
        return self.verdict != "not checkable"

    def under(self, standard: str) -> StandardVerdict | None:
        """The verdict under ``'as tested'`` or ``'strict'``."""
        if standard not in STANDARDS:
            raise ValueError(f"`standard` must be one of {list(STANDARDS)}; got {standard!r}.")
        return self.as_tested if standard == "as tested" else self.strict


@dataclass(frozen=True)
class AuditResult:
    """All claims' checks, in file order, with the settings that produced them."""

    checks: tuple[ClaimCheck, ...]
    families: dict[str, Family]
    n_resamples: int
    bootstrap_resamples: int
    level: float
    title: str = ""
    source: str = ""

    def counts(self, standard: str = "strict") -> dict[str, int]:
        """Number of claims per verdict under `standard`, in :data:`VERDICTS` order."""
        if standard not in STANDARDS:
            raise ValueError(f"`standard` must be one of {list(STANDARDS)}; got {standard!r}.")
        verdicts = [
            (c.under(standard) or c).verdict  # hand-built checks may lack the standards
            for c in self.checks
        ]
        return {v: sum(x == v for x in verdicts) for v in VERDICTS}

    def counts_bh(self) -> dict[str, int]:
        """Verdict counts of the strict standard with Benjamini-Hochberg within families."""
        verdicts = [(c.strict_bh or c.strict or c).verdict for c in self.checks]
        return {v: sum(x == v for x in verdicts) for v in VERDICTS}

    def summary(self) -> dict[str, dict[str, int]]:
        """``{standard: counts}`` for both standards."""
        return {s: self.counts(s) for s in STANDARDS}

    def kinds(self) -> dict[str, int]:
        """Number of claims per kind, in file order of first appearance."""
        out: dict[str, int] = {}
        for c in self.checks:
            out[c.claim.kind] = out.get(c.claim.kind, 0) + 1
        return out
