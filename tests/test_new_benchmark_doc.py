"""docs/new-benchmark.md's complete minimal example, built from the page: a benchmark in a
package of its own (not osustat's), found through its entry point in the group
``osustat.benchmarks``, runs through ``osustat reproduce`` with everything the built-in ones get
— atomic output with provenance, ``--choice``, ``--sensitivity``, the audit of its own claims
file (parsed before any work) and ``--retriever`` — touching no file of osustat.

"Installed" here means path-loaded: the package folder on ``sys.path`` with the metadata pip
would write (its name, version and the entry points of the page's ``pyproject.toml``).
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
import tomllib
from pathlib import Path

import pandas as pd
import pytest

from osustat.analyses.registry import benchmark_names
from osustat.cli.main import main

DOC = Path(__file__).resolve().parent.parent / "docs" / "new-benchmark.md"
FAST = ["--episodes", "8", "--resamples", "99", "--no-progress"]


def doc_files(text: str) -> dict[str, str]:
    """Every code block of the page whose first line is ``# file: PATH``, by PATH."""
    out = {}
    for block in re.findall(r"```(?:python|toml)\n(.*?)```", text, re.S):
        first, _, rest = block.partition("\n")
        if first.startswith("# file: "):
            out[first.removeprefix("# file: ").strip()] = rest
    return out


def _install(root: Path) -> None:
    """Write the package's metadata as pip does (a .dist-info beside it)."""
    project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    info = root / f"{project['name']}-{project['version']}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n"
    )
    (info / "entry_points.txt").write_text(
        "".join(
            f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in items.items()) + "\n"
            for group, items in project["entry-points"].items()
        )
    )


@pytest.fixture
def toy(tmp_path, monkeypatch):
    root = tmp_path / "toy"
    files = doc_files(DOC.read_text(encoding="utf-8"))
    assert {"toybench/benchmark.py", "pyproject.toml", "tests/test_toybench.py"} <= set(files)
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    _install(root)
    monkeypatch.syspath_prepend(str(root))
    yield root
    for name in [m for m in sys.modules if m == "toybench" or m.startswith("toybench.")]:
        del sys.modules[name]


def test_the_examples_own_tests_pass(toy):
    spec = importlib.util.spec_from_file_location("toy_tests", toy / "tests" / "test_toybench.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    tests = [getattr(module, n) for n in dir(module) if n.startswith("test_")]
    assert len(tests) == 2
    for test in tests:
        test()


def test_it_runs_through_osustat_reproduce(toy, tmp_path):
    assert "toybench" in benchmark_names()
    out = tmp_path / "out"
    argv = ["reproduce", "toybench", "--out", str(out), *FAST, "--choice", "query-noise=high"]
    argv += ["--retriever", "osustat.retrieval.baselines:FlatMMR"]
    assert main(argv) == 0
    report = (out / "report.md").read_text(encoding="utf-8")
    assert report.startswith("# Toy benchmark")
    assert "Audit of the toy claims" in report and "TOY-1" in report  # its own claims file
    assert "### Paired tests against the paper's methods" in report  # --retriever
    assert "| `query-noise` | `high` (changed) | `low` |" in report  # --choice
    # its declared report section, after write()'s markdown and before the driver's sections
    section = report.index("## Beside the printed values")
    assert report.index("TOY-1") < section < report.index("### Paired tests against")
    assert "| Flat Vector |" in report[section:] and "| 0.40 |" in report[section:]
    printed = json.loads((out / "paper_values.json").read_text(encoding="utf-8"))
    assert printed == {"hit@2": {"Flat Vector": 0.4, "Sliding Window": 0.2}}
    assert "`paper_values.json`" in report
    records = pd.read_csv(out / "records.csv")
    assert set(records["method"]) == {"Flat Vector", "Sliding Window", "Flat + MMR"}
    provenance = json.loads((out / "provenance.json").read_text(encoding="utf-8"))
    assert provenance["choices"] == {"query-noise": "high"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "toy"]  # atomic, no leftovers


def test_its_own_option_from_the_cli_and_from_python(toy, tmp_path, capsys):
    """A declared Option: `--queries N` on the command line, `queries=N` from Python; the same
    records, the same check (errors name the flag)."""
    import osustat

    argv = ["reproduce", "toybench", "--out", str(tmp_path / "cli"), *FAST, "--queries", "2"]
    assert main(argv) == 0
    py = osustat.reproduce(
        "toybench", tmp_path / "py", episodes=8, n_resamples=99, progress=False, queries=2
    )
    csv = "records.csv"
    assert (tmp_path / "py" / csv).read_bytes() == (tmp_path / "cli" / csv).read_bytes()
    assert set(py.run.records["query_id"]) == {"q0", "q1"}
    with pytest.raises(ValueError, match="`--queries` must be an integer >= 1; got 0"):
        osustat.reproduce("toybench", tmp_path / "bad", queries=0)
    assert main(["reproduce", "toybench", "--out", str(tmp_path / "bad"), "--queries", "x"]) == 2
    assert "`--queries` must be an integer >= 1; got 'x'" in capsys.readouterr().err
    assert not (tmp_path / "bad").exists()


def test_its_sensitivity_audits_its_own_claims_file(toy, tmp_path):
    out = tmp_path / "sens"
    assert main(["reproduce", "toybench", "--out", str(out), *FAST, "--sensitivity"]) == 0
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "## Sensitivity to the open choices" in report
    assert f"its claims of `{toy / 'toybench' / 'claims.toml'}` are audited" in report
    effects = pd.read_csv(out / "sensitivity" / "effects.csv")
    assert set(effects["point_name"]) == {"default", "query-noise=high"}


def test_a_broken_claims_file_stops_it_before_any_work(toy, tmp_path, capsys):
    claims = toy / "toybench" / "claims.toml"
    claims.write_text(claims.read_text().replace("budget = 48", 'budget = "all"'))
    out = tmp_path / "out"
    assert main(["reproduce", "toybench", "--out", str(out), *FAST]) == 2
    assert str(claims) in capsys.readouterr().err and not out.exists()
