"""The result of :func:`osustat.analyze` with several method pairs.

``analyze(records, treatment=["A", "B"], baseline="X")`` (or ``all_pairs=True``) compares
every pair on the same metrics and budgets. Each pair's tables are an ordinary
:class:`~osustat.analysis_result.AnalysisResult` (:attr:`MultiAnalysisResult.results`), whose
raw numbers equal the pair analysed alone with the same seed; what the pairs share is the
*correction*: each declared family holds the tests of every pair it names, so a row's
corrected p and its m count all the methods compared (and the Westfall–Young step-down,
``correction='maxt'`` or ``'minp'``, resamples them with one sign per unit).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pandas as pd

from .analysis_result import AnalysisResult, analysis_options
from .provenance import Provenance
from .wording import CORRECTION_NAMES

__all__ = ["MultiAnalysisResult"]

#: The families' text, by name (shared with the one-pair sentence's wording).
_FAMILY_TEXT = {
    "per-metric-budget": "one family per (metric, budget) table over every method pair",
    "per-metric": "one family per metric over every budget and method pair",
    "all": "one family of every test of this report",
}


@dataclass(frozen=True, kw_only=True, eq=False)
class MultiAnalysisResult:
    """Several method pairs analysed together (module docstring).

    Attributes
    ----------
    pairs : tuple of (treatment, baseline)
    results : tuple of AnalysisResult
        One per pair, in the order of `pairs`; their rows carry the corrected p of the
        families below (``family_size`` counts every pair's tests).
    family : str
        The declared family (``'per-metric-budget'``, ``'per-metric'``, ``'all'`` or
        ``'user'``).
    family_groups : tuple of (name, members)
        Each family's members as ``(treatment, baseline, metric, budget)`` tables.
    correction : str
    alpha : float
    provenance : Provenance
    methods_not_compared : tuple of str
        Methods of the records that no pair uses (also in the provenance's exclusions).
    """

    pairs: tuple[tuple[str, str], ...]
    results: tuple[AnalysisResult, ...]
    family: str
    family_groups: tuple[tuple[str, tuple[tuple[str, str, str, int], ...]], ...]
    correction: str
    alpha: float
    provenance: Provenance
    methods_not_compared: tuple[str, ...] = ()

    def result(self, treatment: str, baseline: str) -> AnalysisResult:
        """The tables of one method pair."""
        for pair, res in zip(self.pairs, self.results, strict=True):
            if pair == (treatment, baseline):
                return res
        raise KeyError(f"({treatment!r}, {baseline!r}) is not compared; pairs: {list(self.pairs)}.")

    @property
    def first(self) -> AnalysisResult:
        """The first pair's result: unit, seed, resamples, level are the same for all."""
        return self.results[0]

    def family_size(self, group: str) -> int:
        return max((r.family_size(group) for r in self.results), default=0)

    def family_sentence(self) -> str:
        name = CORRECTION_NAMES.get(self.correction, self.correction)
        desc = _FAMILY_TEXT.get(self.family, "the user's families")
        listing = "; ".join(f"{g}: m = {self.family_size(g)}" for g, _ in self.family_groups)
        shared = (
            ", resampled with one sign per unit shared by every test of the family"
            if self.correction in ("maxt", "minp")
            else ""
        )
        return (
            f"- Correction family (`{self.family}`): {desc} of the {self.first.family_members} "
            f"of {len(self.pairs)} method pairs ({listing}); {name} at α = {self.alpha:g}"
            f"{shared}."
        )

    # -- views -------------------------------------------------------------------------

    def __repr__(self) -> str:
        pairs = ", ".join(f"{t} vs {b}" for t, b in self.pairs)
        n_tests = sum(
            r.family is not None for x in self.results for c in x.comparisons for r in c.rows
        )
        return (
            f"<MultiAnalysisResult {len(self.pairs)} pairs ({pairs}): {n_tests} tests in "
            f"{len(self.family_groups)} famil{'y' if len(self.family_groups) == 1 else 'ies'} "
            f"({self.correction}, α = {self.alpha:g}), seed {self.first.seed}>"
        )

    def _repr_markdown_(self) -> str:
        return "\n".join(
            f"### {r.treatment} vs {r.baseline}\n\n{r._repr_markdown_()}" for r in self.results
        )

    def _repr_html_(self) -> str:
        return "".join(
            f"<h3>{r.treatment} vs {r.baseline}</h3>{r._repr_html_()}" for r in self.results
        )

    def to_latex(self, *, digits: int = 3) -> str:
        """One booktabs ``tabular`` with the treatment and baseline on every line."""
        from ._analysis_views import latex_table

        return latex_table(list(self.results), digits=digits)

    def to_markdown(self, *, figures: dict[str, Any] | None = None) -> str:
        """The report (markdown): the family, a summary over pairs, each pair's tables."""
        from .renderers import renderer

        return str(renderer("analysis-multi-markdown")(self, figures))

    # -- data --------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """Self-describing JSON-serializable dict: the pairs, the families (members as
        treatment/baseline/metric/budget), and per pair its comparisons as in
        :meth:`AnalysisResult.to_dict`."""
        per_pair = []
        for res in self.results:
            item = res.to_dict()
            for key in ("schema", "provenance", "families", "family", "correction", "alpha"):
                item.pop(key)
            item.pop("methods_not_compared")
            per_pair.append(item)
        first = self.first
        return {
            "schema": "osustat.analysis-multi/1",
            "method_pairs": [{"treatment": t, "baseline": b} for t, b in self.pairs],
            "methods_not_compared": list(self.methods_not_compared),
            "benchmark": first.benchmark,
            "unit": first.unit,
            "family": self.family,
            "families": {
                g: {
                    "members": [
                        {"treatment": t, "baseline": b, "metric": m, "budget": x}
                        for t, b, m, x in ms
                    ],
                    "m": self.family_size(g),
                }
                for g, ms in self.family_groups
            },
            "family_members": first.family_members,
            "correction": self.correction,
            "correction_resamples_units_jointly": self.correction in ("maxt", "minp"),
            "alpha": self.alpha,
            "seed": first.seed,
            "resamples": first.resamples,
            "bootstrap_resamples": first.bootstrap_resamples,
            "provenance": self.provenance.to_dict(),
            "results_by_pair": per_pair,
        }

    def to_json(self) -> str:
        """:meth:`to_dict` as JSON text (NaN/inf as null)."""
        from .provenance import json_text

        return json_text(self.to_dict())

    def to_frame(self) -> pd.DataFrame:
        """One row per (pair, comparison, cell), with ``treatment`` and ``baseline``."""
        frames = [
            r.to_frame().assign(treatment=r.treatment, baseline=r.baseline) for r in self.results
        ]
        out = pd.concat(frames, ignore_index=True)
        return out[
            [
                "treatment",
                "baseline",
                *[c for c in out.columns if c not in ("treatment", "baseline")],
            ]
        ]

    def save(
        self, out: str | Path, *, force: bool = False, json: bool = True, figures: bool = True
    ) -> Path:
        """Write ``report.md``, ``results.json``, ``provenance.json`` and each pair's
        figures into `out`, atomically (as :meth:`AnalysisResult.save`)."""
        from .provenance import PROVENANCE_FILE, write_json
        from .renderers import renderer

        out = Path(out)
        prov = replace(self.provenance, options=self.run_options())
        with prov.atomic_output(out, force=force) as tmp:
            names = renderer("analysis-multi-figures")(self, tmp) if figures else None
            (tmp / "report.md").write_text(self.to_markdown(figures=names) + "\n", "utf-8")
            if json:
                write_json(tmp / "results.json", self.to_dict())
            write_json(tmp / PROVENANCE_FILE, prov.to_dict())
        return out

    def run_options(self) -> dict[str, Any]:
        """What determines this run beside its inputs (as :meth:`AnalysisResult.run_options`)."""
        return analysis_options(
            self.first,
            self.pairs,
            self.family_groups,
            family=self.family,
            correction=self.correction,
            alpha=self.alpha,
        )
