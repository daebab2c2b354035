"""Every script in benchmarks/ still imports and has a `main` (run on demand, they rot
silently when a name they import moves). One subprocess imports them all (about 1.5 s; a
benchmark's imports must not touch this test process's state); nothing is run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: Modules the benchmarks import, not run themselves.
HELPERS = {"git_reference"}

IMPORT_ALL = r"""
import contextlib, importlib, io, json, pathlib, sys
folder = pathlib.Path(sys.argv[1])
sys.path.insert(0, str(folder))
bad, seen = {}, 0
for path in sorted(folder.glob("*.py")):
    seen += 1
    name = path.stem
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            module = importlib.import_module(name)
        if not callable(getattr(module, "main", None)):
            bad[name] = "no main()"
    except BaseException as exc:  # noqa: BLE001 - reported, whatever it is
        bad[name] = f"{type(exc).__name__}: {exc}"[:300]
print(json.dumps({"seen": seen, "bad": bad}))
"""


def test_every_benchmark_imports_and_has_a_main():
    out = subprocess.run(
        [sys.executable, "-c", IMPORT_ALL, str(ROOT / "benchmarks")],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        timeout=300,
    )
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report["seen"] == len(list((ROOT / "benchmarks").glob("*.py"))) > 40
    bad = {k: why for k, why in report["bad"].items() if not (k in HELPERS and why == "no main()")}
    assert not bad, bad
