"""The extension point through which result objects are turned into words and pictures.

The core computes and returns data; ``reports/`` renders it. The core never imports
``reports``: a renderer is looked up by name, registered either by the composition root (the
CLI registers the shipped renderers before it renders) or, for use from Python, found through
the entry-point group :data:`GROUP`, in which the osustat distribution declares its own
(pyproject.toml: ``analysis-markdown`` and ``analysis-figures`` from
``osustat.reports.cellwise``). So :meth:`osustat.AnalysisResult.to_markdown` works after a
plain ``import osustat``, and another package can register its own renderer by name.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Any

__all__ = ["GROUP", "register_renderer", "renderer"]

#: The entry-point group searched for renderers not registered in this process.
GROUP = "osustat.renderers"

_REGISTRY: dict[str, Callable[..., Any]] = {}


def register_renderer(name: str, function: Callable[..., Any]) -> None:
    """Use `function` for the renderer `name` in this process (replaces an earlier one)."""
    if not isinstance(name, str) or not name:
        raise TypeError(f"`name` must be a non-empty string; got {name!r}.")
    if not callable(function):
        raise TypeError(f"`function` must be callable; got {function!r}.")
    _REGISTRY[name] = function


def renderer(name: str) -> Callable[..., Any]:
    """The renderer registered as `name`, else the one of entry-point group :data:`GROUP`.

    Raises ``LookupError`` naming the renderer when neither exists (osustat installed without
    its metadata, e.g. the source tree on ``PYTHONPATH``): register one with
    :func:`register_renderer`, or reinstall osustat (``pip install -e .``).
    """
    if name in _REGISTRY:
        return _REGISTRY[name]
    for point in entry_points(group=GROUP, name=name):
        function: Callable[..., Any] = point.load()
        _REGISTRY[name] = function
        return function
    raise LookupError(
        f"no renderer {name!r}: register one with osustat.renderers.register_renderer(), or "
        f"reinstall osustat so that its entry points (group {GROUP!r}) are found."
    )
