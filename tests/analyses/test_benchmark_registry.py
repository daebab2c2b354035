"""The benchmark registry is the entry-point group ``osustat.benchmarks`` (built-in benchmarks
are registered in pyproject.toml like any other package's), every benchmark is a
:class:`~osustat.analyses.protocol.Benchmark` declaring everything about itself, and the CLI
adds each benchmark's own options generically (no benchmark named in ``osustat/cli``)."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

import osustat.analyses.registry as registry
from osustat.analyses.driver import benchmark_options
from osustat.analyses.protocol import Benchmark
from osustat.cli.main import build_parser, main
from osustat.cli.reproduce import _given_options
from osustat.data.registry import datasets

ROOT = Path(__file__).resolve().parents[2]
BUILT_IN = ("locomo", "synthetic", "tau-bench", "toolbench")


def test_the_built_in_benchmarks_are_entry_points():
    assert set(BUILT_IN) <= set(registry.benchmark_names())
    for name in BUILT_IN:
        bench = registry.get_benchmark(name)
        assert isinstance(bench, Benchmark) and bench.name == name
        assert set(bench.datasets) <= {d.name for d in datasets()}  # declared data exist
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert '[project.entry-points."osustat.benchmarks"]' in text


def test_no_benchmark_is_named_in_the_cli_or_the_core():
    """Name-branches live in a benchmark's folder only."""
    wrong = []
    for folder in ("osustat", "retrieval"):
        for path in (ROOT / folder).rglob("*.py"):
            text = path.read_text(encoding="utf-8")
            for name in BUILT_IN:
                if f'== "{name}"' in text or "BENCHMARK_DATA" in text:
                    wrong.append(f"{path.relative_to(ROOT)}: {name}")
    assert wrong == []


class _EP:
    def __init__(self, name: str, value: str, obj: object) -> None:
        self.name, self.value, self._obj = name, value, obj

    def load(self) -> object:
        return self._obj


def test_a_bad_entry_point_is_an_error_naming_it(monkeypatch):
    real = registry.get_benchmark("synthetic")

    class Bare(Benchmark):
        name = "bare"

    eps = [_EP("mine", "pkg.mod:OBJ", object()), _EP("other", "pkg.mod:REAL", real)]
    eps.append(_EP("bare", "pkg.mod:BARE", Bare()))
    monkeypatch.setattr(registry, "entry_points", lambda group: eps)
    with pytest.raises(ValueError, match=r"entry point mine = 'pkg.mod:OBJ'.*not an osustat"):
        registry.get_benchmark("mine")
    with pytest.raises(ValueError, match=r"calls itself 'synthetic', not 'other'"):
        registry.get_benchmark("other")
    with pytest.raises(ValueError, match=r"does not declare description, data, choices"):
        registry.get_benchmark("bare")
    with pytest.raises(ValueError, match=r"unknown benchmark 'x'; known: bare, mine, other"):
        registry.get_benchmark("x")
    broken = _EP("gone", "nowhere.mod:BENCHMARK", None)
    broken.load = lambda: __import__("nowhere.mod")  # type: ignore[method-assign]
    eps.append(broken)
    with pytest.raises(ValueError, match=r"entry point gone = .*cannot load it \(Module"):
        registry.get_benchmark("gone")
    eps.append(_EP("mine", "elsewhere:OBJ", real))
    with pytest.raises(ValueError, match=r"'mine' is registered twice.*pkg.mod:OBJ and elsewhere"):
        registry.benchmark_names()


def _args(argv: list[str]) -> argparse.Namespace:
    return build_parser().parse_args(argv)


def _cli_options(argv: list[str], bench: Benchmark) -> tuple[tuple[str, ...], dict]:
    return benchmark_options(bench, _given_options(_args(argv)))


def test_benchmark_options_become_choices_and_options(tmp_path):
    out = ["--out", str(tmp_path / "o")]
    tau = registry.get_benchmark("tau-bench")
    shortcuts, options = _cli_options(["reproduce", "tau-bench", *out], tau)
    assert shortcuts == () and options == {
        "selector": "extractive",
        "endpoint": None,
        "model": None,
        "llm_queries": 24,
        "llm_threads": 1,
        "budgets": (64, 128, 256, 512),
        "no_variants": False,
    }
    argv = ["reproduce", "tau-bench", *out, "--no-prefix", "--focal", "one", "--selector", "chat"]
    shortcuts, options = _cli_options([*argv, "--budgets", "256,64", "--no-variants"], tau)
    assert sorted(shortcuts) == ["focal=one", "namespace-prefix=unprefixed"]
    assert options["selector"] == "chat"
    assert options["budgets"] == (256, 64) and options["no_variants"] is True
    synthetic = registry.get_benchmark("synthetic")
    args = ["reproduce", "synthetic", *out, "--layout", "segment"]
    assert _cli_options(args, synthetic) == (("layout=segment",), {})


def test_python_options_are_the_cli_options_checked_the_same_way():
    """Issue 34: the Python entry takes a benchmark's declared options by key, with the
    CLI's check and conversion (errors name the flag); a flag given False is not given."""
    tau = registry.get_benchmark("tau-bench")
    py = benchmark_options(tau, {"budgets": [256, 64], "no_variants": True, "no_prefix": False})
    cli = _cli_options(["reproduce", "tau-bench", "--out", "o", "--budgets", "256,64"], tau)
    assert py[0] == cli[0] == ()  # no_prefix=False leaves the choice at its default
    assert py[1] == {**cli[1], "no_variants": True}
    for given, message in (
        ({"budgets": (256, 0)}, "`--budgets` must be integers >= 1"),
        ({"budgets": "64,x"}, "`--budgets` must be comma-separated integers"),
        ({"llm_queries": 1}, "`--llm-queries` must be an integer >= 2"),
        ({"selector": "oracle"}, "`--selector` must be one of extractive, chat, local"),
        ({"no_variants": "yes"}, "`--no-variants` is a flag"),
        ({"layout": "segment"}, "`--layout` is not an option of `reproduce tau-bench`"),
    ):
        with pytest.raises(ValueError, match=message):
            benchmark_options(tau, given)
    toolbench = registry.get_benchmark("toolbench")
    assert benchmark_options(toolbench, {"background": "60"})[1]["background"] == 60
    locomo = registry.get_benchmark("locomo")
    with pytest.raises(ValueError, match="`--methods` names 'OSU-Mem' twice"):
        benchmark_options(locomo, {"methods": ("OSU-Mem", "OSU-Mem")})
    with pytest.raises(ValueError, match="`--methods` must be non-empty names"):
        benchmark_options(locomo, {"methods": ("OSU-Mem", " ")})
    with pytest.raises(ValueError, match="`--budgets` names 256 twice"):  # the CLI's one rule
        benchmark_options(tau, {"budgets": [256, 256]})


def test_a_bad_option_value_is_exit_2_on_the_cli_too(tmp_path, capsys):
    out = tmp_path / "o"
    argv = ["reproduce", "tau-bench", "--out", str(out), "--budgets", "256,0"]
    assert main(argv) == 2
    assert "`--budgets` must be integers >= 1" in capsys.readouterr().err
    assert not out.exists()


def test_another_benchmarks_option_or_a_bad_value_is_exit_2(tmp_path, capsys):
    out = tmp_path / "o"
    assert main(["reproduce", "synthetic", "--out", str(out), "--selector", "chat"]) == 2
    assert "`--selector` is not an option of `reproduce synthetic`" in capsys.readouterr().err
    assert main(["reproduce", "synthetic", "--out", str(out), "--layout", "zigzag"]) == 2
    assert "`--layout` must be one of spread, segment" in capsys.readouterr().err
    assert not out.exists()


def test_the_help_groups_each_benchmarks_options(capsys):
    with pytest.raises(SystemExit):
        main(["reproduce", "--help"])
    text = capsys.readouterr().out
    assert "tau-bench:" in text and "--selector {extractive,chat,local}" in text
    assert "synthetic:" in text and "--layout {spread,segment}" in text


@pytest.mark.parametrize(
    ("name", "own", "others"),
    [
        ("synthetic", ["--layout {spread,segment}"], ["--budgets", "--selector", "--n-evs"]),
        ("tau-bench", ["--selector", "--budgets"], ["--layout", "--n-evs"]),
        ("locomo", ["--budgets", "--methods"], ["--layout", "--selector"]),
    ],
)
def test_a_benchmarks_help_lists_only_its_own_options(capsys, name, own, others):
    """`reproduce synthetic --help` listed every benchmark's options, `--budgets` among them,
    which synthetic refuses (a new user's review); a shared flag is listed under each."""
    with pytest.raises(SystemExit):
        main(["reproduce", name, "--help"])
    text = capsys.readouterr().out
    assert f"{name}:" in text and "--retriever" in text, text
    assert all(flag in text for flag in own), text
    assert not [flag for flag in others if flag in text], text
    headings = {"synthetic:", "tau-bench:", "toolbench:", "locomo:"}
    assert [line for line in text.splitlines() if line in headings] == [f"{name}:"]


def test_osustat_reproduce_is_the_cli_from_python(tmp_path):
    """One Python entry, ``osustat.reproduce(name, out, **options)``, through the same driver:
    the same records as the CLI call with the same settings; a benchmark's option by name."""
    import osustat

    py = osustat.reproduce(
        "synthetic", tmp_path / "py", episodes=2, seed=3, n_resamples=99, progress=False,
        layout="segment",
    )  # fmt: skip
    argv = ["reproduce", "synthetic", "--out", str(tmp_path / "cli"), "--episodes", "2"]
    assert main([*argv, "--seed", "3", "--resamples", "99", "--layout", "segment"]) == 0
    assert py.n_records > 0
    csv = "records.csv"
    assert (tmp_path / "py" / csv).read_bytes() == (tmp_path / "cli" / csv).read_bytes()
    prov = (tmp_path / "py" / "provenance.json").read_text()
    assert '"layout": "segment"' in prov
    with pytest.raises(TypeError, match=r"unknown option\(s\) \['selector'\]"):
        osustat.reproduce("synthetic", tmp_path / "x", selector="chat")


@pytest.mark.parametrize("dtype", ["object", "category", "string[pyarrow]", "float"])
def test_records_benchmarks_are_the_distinct_names_as_text(dtype):
    """Read off the distinct values (issue 37: one by one, a million rows took 0.7 s), the
    same names as every row's text: LoCoMo's records are tested at the episode unit."""
    import pandas as pd

    values = [1.0, 2.0, 1.0] if dtype == "float" else ["locomo", "x", "locomo", "x"]
    records = pd.DataFrame({"benchmark": pd.Series(values, dtype=dtype)})
    assert registry.records_benchmarks(records) == sorted(set(records["benchmark"].astype(str)))
    assert registry.records_benchmarks(pd.DataFrame({"method": ["a"]})) == []
    both = pd.DataFrame({"benchmark": ["locomo", "x"]})
    assert registry.episode_unit_benchmarks(both) == ["locomo"]
    assert registry.episode_unit_benchmarks(both.iloc[:1]) == ["locomo"]
