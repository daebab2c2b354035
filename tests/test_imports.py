"""Imports on demand (issue 34): the front door loads no statistics stack it does not use.

Checked by the modules a fresh process holds, never by a timing (figures: docs/performance.md).
"""

from __future__ import annotations

import ast
import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

import osustat

HEAVY = ("pandas", "scipy")

# Runs `body` in a fresh interpreter and prints, at exit (after argparse's SystemExit), which of
# HEAVY it imported.
_PROBE = """
import atexit, json, sys
atexit.register(lambda: print(json.dumps([m for m in {heavy!r} if m in sys.modules])))
{body}
"""

_CLI = """
from osustat.cli.main import main
sys.argv = ["osustat", *{argv!r}]
try:
    main()
except SystemExit:
    pass
"""


def _heavy_loaded(body: str, heavy: tuple[str, ...] = HEAVY) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE.format(heavy=heavy, body=body)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("argv", [["--help"], ["data", "list"], ["reproduce", "--help"]])
def test_cli_front_door_loads_neither_pandas_nor_scipy(argv: list[str]) -> None:
    assert _heavy_loaded(_CLI.format(argv=argv)) == []


def test_help_builds_no_sub_commands_costly_arguments() -> None:
    """``osustat --help`` imports no numpy, no benchmark and no retrieval: reproduce's
    benchmark options and analyze's correction names are added only when that sub-command is
    asked for (``cli.common.DeferredParser``), and ``osustat._validation`` imports numpy in the
    checks that use it (issue 34: ``osustat --help`` within 0.3 s CPU)."""
    heavy = ("numpy", "osustat.analyses.registry", "osustat.retrieval")
    assert _heavy_loaded(_CLI.format(argv=["--help"]), heavy) == []
    assert _heavy_loaded(_CLI.format(argv=["reproduce", "--help"]), heavy) == list(heavy)


# The package, retrieval, and the modules whose tasks a worker runs (it retrieves; the parent
# process builds the frames).
@pytest.mark.parametrize(
    "module",
    [
        "osustat",
        "osustat.retrieval",
        "osustat.record_row",
        "osustat.analyses.runner",
        "osustat.analyses.synthetic.run",
        "osustat.analyses.tau_bench.run",
        "osustat.analyses.locomo.run",
        "osustat.analyses.toolbench.run",
    ],
)
def test_import_loads_neither_pandas_nor_scipy(module: str) -> None:
    assert _heavy_loaded(f"import {module}") == []


def test_probe_sees_a_heavy_import() -> None:
    # The probe itself can fail: a public name that needs pandas loads it.
    assert "pandas" in _heavy_loaded("import osustat; osustat.validate_records")


def test_every_public_name_resolves_to_its_module() -> None:
    for name in osustat.__all__:
        module, attribute = osustat._PUBLIC[name]
        defining = importlib.import_module(f"osustat{module}")
        assert getattr(osustat, name) is getattr(defining, attribute), name
    assert set(osustat.__all__) == set(osustat._PUBLIC)
    assert set(osustat.__all__) <= set(dir(osustat))


def test_power_stays_the_function_after_its_submodule_loads() -> None:
    body = "import osustat.power, osustat; assert callable(osustat.power), osustat.power"
    subprocess.run([sys.executable, "-c", body], check=True, timeout=120)


def test_type_checking_imports_match_the_lazy_table() -> None:
    # The TYPE_CHECKING imports (for mypy) and _PUBLIC (at run time) name the same things.
    tree = ast.parse(Path(osustat.__file__).read_text(encoding="utf-8"))
    block = next(
        n for n in tree.body if isinstance(n, ast.If) and ast.unparse(n.test) == "TYPE_CHECKING"
    )
    declared = {
        (alias.asname or alias.name): ("." * node.level + (node.module or ""), alias.name)
        for node in block.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    assert declared == osustat._PUBLIC
