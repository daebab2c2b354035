"""A package module as it is at a git revision: the reference of a before/after benchmark.

The module's source is read with ``git show REV:PATH`` and executed as a module of the
installed package (its relative imports resolve to today's modules), so a benchmark compares
the new code with the old code itself, not with a copy kept in the tree.
"""

from __future__ import annotations

import os
import subprocess
import sys
import types

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def module_at(rev: str, path: str, package: str = "osustat.retrieval") -> types.ModuleType:
    """``path`` (e.g. ``retrieval/osu.py``) at git revision `rev`, as a module of `package`."""
    source = subprocess.run(
        ["git", "-C", ROOT, "show", f"{rev}:{path}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    name = os.path.splitext(os.path.basename(path))[0]
    module = types.ModuleType(f"{package}._{name}_at_{rev}")
    module.__package__ = package
    sys.modules[module.__name__] = module  # dataclasses look their module up
    exec(compile(source, f"{rev}:{path}", "exec"), module.__dict__)
    return module
