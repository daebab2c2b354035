"""Markdown tables and figures rendered from `osustat` result objects."""

from .cellwise import forest_plot, render_markdown, to_json

__all__ = ["forest_plot", "render_markdown", "to_json"]
