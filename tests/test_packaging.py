"""The installed package: one import name, declared dependencies (issue 8).

Builds the wheel, installs it with no extras into a fresh virtual environment (dependencies come
from the package registry or pip's cache), and runs the three commands from a folder that holds a
user package named ``reports`` — the collision a generic top-level name would cause.
"""

import os
import shutil
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow


#: The commands' environment: bytecode written, so that the fresh environment's modules (installed
#: without it, below) compile once, in the first command, not in each (the test 21.5 ->
#: 17.6-19.6 s where PYTHONDONTWRITEBYTECODE is set, as on this project's machines).
_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _run(args, cwd, **kw):
    proc = subprocess.run(args, cwd=cwd, capture_output=True, text=True, env=_ENV, **kw)
    assert proc.returncode == 0, f"{args}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return proc


#: What building the wheel printed (the `wheel` fixture's pip run).
_BUILD: dict[str, str] = {}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("wheel")
    # Build from a clean copy: setuptools reuses an in-tree build/ folder, whose stale files
    # would end up in the wheel.
    src = tmp_path_factory.mktemp("src") / "osustat"
    ignore = shutil.ignore_patterns(
        ".git", ".venv", "build", "*.egg-info", "__pycache__", "demo-output"
    )
    shutil.copytree(ROOT, src, ignore=ignore)
    built = _run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(src)], ROOT
    )
    _BUILD["output"] = built.stdout + built.stderr
    (path,) = out.glob("osustat-*.whl")
    return path


@pytest.fixture(scope="module")
def fresh_env(tmp_path_factory, wheel):
    env = tmp_path_factory.mktemp("env") / "venv"
    venv.create(env, with_pip=True)
    # --no-compile: byte-compiling every file of numpy, scipy, pandas... took 13 s; the few
    # modules the commands import compile on first use (the fixture and test: 35 -> 29 s)
    _run(
        [str(env / "bin" / "python"), "-m", "pip", "install", "-q", "--no-compile", str(wheel)],
        ROOT,
    )
    return env


def test_every_package_of_the_wheel_is_declared(wheel):
    # setuptools warned that osustat.io.mappings (the named readers' folder, package data of
    # osustat.io) "would be ignored": a future setuptools would build a wheel without them
    assert "absent from the `packages` configuration" not in _BUILD["output"]


def test_wheel_claims_one_top_level_name(wheel):
    with zipfile.ZipFile(wheel) as zf:
        tops = {n.split("/")[0] for n in zf.namelist() if not n.startswith("osustat-")}
        names = zf.namelist()
    assert tops == {"osustat"}
    assert "osustat/retrieval/osumem.py" in names
    assert "osustat/reports/cellwise.py" in names
    assert "osustat/analyses/synthetic/benchmark.py" in names
    assert "osustat/analyses/synthetic/grid.toml" in names
    assert "osustat/cli/main.py" in names
    # the claims files the pipelines audit are package data (a wheel once had none, and the
    # embedded audit was skipped without a word)
    for claims in ("claims/paper", "locomo/claims", "claims/paper_checks"):
        assert f"osustat/analyses/{claims}.toml" in names
    # the named readers of `osustat import` are mappings shipped as package data
    assert {"osustat/io/mappings/mem0.toml", "osustat/io/mappings/zep.toml"} <= set(names)
    assert "osustat/analyses/locomo/systems_claims.toml" in names


def test_commands_beside_a_user_reports_package(fresh_env, tmp_path):
    user = tmp_path / "project"
    (user / "reports").mkdir(parents=True)
    (user / "reports" / "__init__.py").write_text("WHO = 'user'\n")
    py = str(fresh_env / "bin" / "python")
    cli = str(fresh_env / "bin" / "osustat")
    records = ROOT / "examples" / "records.csv"
    # The user's package and osustat's reports both import in one process.
    code = (
        "import reports, osustat.reports.cellwise as c; "
        "assert reports.WHO == 'user'; print(c.__name__)"
    )
    _run([py, "-c", code], user)
    analyze = [cli, "analyze", str(records), "--treatment", "osu-mem", "--baseline"]
    analyze += ["flat-vector", "--metric", "hit@2", "--resamples", "200", "--out", "a"]
    _run(analyze, user)
    assert (user / "a" / "report.md").exists()
    audit = [cli, "audit", str(ROOT / "examples" / "claims.toml"), "--records", str(records)]
    _run([*audit, "--resamples", "200", "--bootstrap-resamples", "100"], user)
    synth = [cli, "reproduce", "synthetic", "--out", "s", "--episodes", "3", "--resamples", "100"]
    _run(synth, user)
    assert "Audit of the paper's synthetic claims" in (user / "s" / "report.md").read_text()
