"""Markdown tables and figures rendered from `osustat` result objects."""

from .audit import render_markdown as render_audit_markdown
from .audit import to_json as audit_to_json
from .cellwise import forest_plot, render_markdown, to_json

__all__ = ["audit_to_json", "forest_plot", "render_audit_markdown", "render_markdown", "to_json"]
