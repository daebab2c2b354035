"""``osustat.reproduce``: run a benchmark from Python, as ``osustat reproduce`` does.

The core never imports the benchmark layer (``osustat.analyses``; docs/architecture.md,
"Layers"): like the renderers (:mod:`osustat.renderers`), the driver's Python entry is found
through an entry point — ``reproduce`` of the group :data:`GROUP`, which the osustat
distribution declares (pyproject.toml: ``osustat.analyses.driver:run``).
"""

from __future__ import annotations

from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from osustat._deprecation import renamed_keywords

__all__ = ["GROUP", "reproduce"]

#: The entry-point group holding the driver's Python entry.
GROUP = "osustat.driver"


@renamed_keywords(resamples="n_resamples")
def reproduce(benchmark: str, out: str | Path, **options: Any) -> Any:
    """Run `benchmark` (a name of ``osustat reproduce``) into the folder `out` through the one
    driver, with everything the CLI gives it; `options` as :func:`osustat.analyses.driver.run`
    takes them (e.g. ``seed=3, episodes=20, choices={"layout": "segment"}``, a benchmark's own
    options by their keys: ``budgets=(256,)``, ``no_variants=True``), checked as on the command
    line. Returns the driver's result (``.out``, ``.n_records``, ``.run``).

    Raises ``LookupError`` when the driver's entry point is not found (osustat installed
    without its metadata: reinstall it, ``make``).
    """
    for point in entry_points(group=GROUP, name="reproduce"):
        return point.load()(benchmark, out, **options)
    raise LookupError(
        f"no entry point 'reproduce' in the group {GROUP!r}: reinstall osustat (make) so that "
        "its metadata is found."
    )
