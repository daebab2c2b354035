"""Independent reference: statsmodels' ``multipletests``, without its per-call ``gc.collect()``.

statsmodels' Holm branch runs ``gc.collect()`` on every call; in a test process that has
built up a large heap each collection takes up to a second, which made two property tests
cost 30 s each. The collection frees memory only, so the returned decisions and adjusted
p-values are statsmodels' own.
"""

from __future__ import annotations

import gc
from typing import Any
from unittest import mock

from statsmodels.stats.multitest import multipletests as _multipletests


def multipletests(pvals: Any, **kw: Any) -> Any:
    """``statsmodels.stats.multitest.multipletests(pvals, **kw)`` with ``gc.collect`` a no-op."""
    with mock.patch.object(gc, "collect", return_value=0):
        return _multipletests(pvals, **kw)
