"""Markdown tables and figures rendered from `osustat` result objects."""

from .audit import render_markdown as render_audit_markdown
from .audit import to_json as audit_to_json
from .cellwise import budget_effects_plot, forest_plot, render_analysis, write_figures
from .figures import dose_response

__all__ = [
    "audit_to_json",
    "budget_effects_plot",
    "dose_response",
    "forest_plot",
    "render_analysis",
    "render_audit_markdown",
    "write_figures",
]
