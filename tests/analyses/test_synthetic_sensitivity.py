"""The generator sensitivity grid: grid files, claim bookkeeping, multiplicity, outputs."""

import tomllib

import numpy as np
import pandas as pd
import pytest

from osustat import reproduce
from osustat.analyses.protocol import Backend
from osustat.analyses.synthetic.benchmark import (
    reproduce_synthetic_sensitivity,
)
from osustat.analyses.synthetic.generator import GeneratorConfig
from osustat.analyses.synthetic.grid import (
    GRID_GROUPS,
    GRID_METHODS,
    ClaimSpec,
    claim_specs,
    default_grid_path,
    load_grid,
)
from osustat.analyses.synthetic.report_sensitivity import PARAMETERS
from osustat.analyses.synthetic.sensitivity import _summarize, _test_point, run_sensitivity

QUIET = Backend(progress=False)

TINY = """
episodes = 3
seeds = [0, 1]
resamples = 99
budgets = [256]
[cross]
layout = ["spread", "segment"]
[[point]]
name = "default"
[[point]]
name = "unique"
unique_event_entity = true
"""


@pytest.fixture
def tiny(tmp_path):
    path = tmp_path / "grid.toml"
    path.write_text(TINY)
    return path


class TestGridFile:
    def test_shipped_grid(self):
        g = load_grid()
        assert default_grid_path().name == "grid.toml"
        assert len(g.points) >= 24 and len(g.seeds) >= 3 and g.episodes >= 120
        assert g.points[g.default_index].config == GeneratorConfig()
        varied = {
            k
            for p in g.points
            for k, v in p.config.as_dict().items()
            if v != GeneratorConfig().as_dict()[k]
        }
        # every parameter the report shows varies, but the spacing/gap pairs and the event rate
        assert set(PARAMETERS) - {"spacing", "gap", "events_per_episode"} <= varied
        # the shipped file parses with the standard library and names every point
        assert all("name" in p for p in tomllib.loads(default_grid_path().read_text())["point"])

    def test_cross_and_duplicates(self, tiny):
        g = load_grid(tiny)
        assert [p.name for p in g.points] == [
            "default | layout=spread",
            "default | layout=segment",
            "unique | layout=spread",
            "unique | layout=segment",
        ]
        assert g.default_index == 0 and g.budgets == (256,) and g.seeds == (0, 1)

    @pytest.mark.parametrize(
        ("text", "match"),
        [
            ("episodes = 0", "`episodes` must be a positive integer"),
            ("sedes = [1]", r"unknown top-level key\(s\) \['sedes'\]"),
            ("budgets = [128]", "must include 256"),
            ("seeds = [1, 1]", "`seeds` must be a non-empty list of distinct"),
            (
                '[[point]]\nname = "x"\nentity_rat = 0.2',
                r"\[\[point\]\] 0 \(x\): unknown generator",
            ),
            ('[[point]]\nname = "x"\nentity_rate = 2.0', r"\[\[point\]\] 0 \(x\): `entity_rate`"),
            ("episodes = [", "not valid TOML"),
        ],
    )
    def test_bad_grid_names_file_and_point(self, tmp_path, text, match):
        path = tmp_path / "bad.toml"
        path.write_text(text)
        with pytest.raises(ValueError, match=match):
            load_grid(path)
        with pytest.raises(ValueError, match=r"bad\.toml"):
            load_grid(path)

    def test_missing_grid(self, tmp_path):
        with pytest.raises(FileNotFoundError, match="does not exist"):
            load_grid(tmp_path / "nope.toml")


class TestClaims:
    def test_the_grid_reads_its_claims_by_id_from_the_claims_file(self, tmp_path):
        from osustat.analyses.claims_audit import claims_file

        text = claims_file("paper").read_text()
        by_id = {c["id"]: c for c in tomllib.loads(text)["claim"]}
        specs = claim_specs()
        for s in specs:
            groups = {g[0]: g[3] for g in GRID_GROUPS}
            members = groups.get(s.id, (s.id,))
            for k, mid in enumerate(members):
                c = by_id[mid]
                assert (c["treatment"], c["metric"], c["budget"]) == (
                    s.treatment,
                    s.metric,
                    s.budget,
                ), mid
                assert c["baseline"] == s.baselines[k]
                assert s.reverse == (c.get("direction") == "less")
                assert s.null == (c.get("kind") == "equivalence")
        assert {s.id for s in claim_specs(("OSU-Mem", "Flat Vector"))} == {
            "T2-flat-vector-hit2-B128",
            "T2-flat-vector-recall-B128",
            "T10-flat-vector-hit2",
            "T10-flat-vector-recall",
        }
        # a change in the claims file is a change in the grid (nothing retyped in Python) ...
        moved = text.replace('baseline = "OSU-Mem (M_max=4)"', 'baseline = "OSU-Mem (M_max=6)"')
        (tmp_path / "paper.toml").write_text(moved)
        (spec,) = [
            s
            for s in claim_specs(claims_path=tmp_path / "paper.toml")
            if s.id == "S6.4-mmax-5-beats-4-recall-B256"
        ]
        assert spec.baselines == ("OSU-Mem (M_max=6)",)
        # ... and an id the file lacks is an error naming the file
        (tmp_path / "paper.toml").write_text(
            text.replace('id = "F2-far-recall-flat-mmr"', 'id = "x"')
        )
        with pytest.raises(ValueError, match=r"paper\.toml.*'F2-far-recall-flat-mmr'"):
            claim_specs(claims_path=tmp_path / "paper.toml")

    def test_intersection_union_and_reverse(self):
        # 6 units, treatment beats A by 1 everywhere, beats B by .5 on 5 of 6 units
        units = [f"u{i}" for i in range(6)]
        rows = []
        for k, u in enumerate(units):
            rows += [
                (u, "T", 256, "recall", 2.0),
                (u, "A", 256, "recall", 1.0),
                (u, "B", 256, "recall", 1.5 if k else 2.5),
            ]
        means = pd.DataFrame(rows, columns=["unit", "method", "budget", "metric", "value"])
        specs = [
            ClaimSpec("both", "", "", "T", ("A", "B"), "recall", 256),
            ClaimSpec("a", "", "", "T", ("A",), "recall", 256),
            ClaimSpec("rev", "", "", "A", ("T",), "recall", 256, reverse=True),
        ]
        out = {r["claim"]: r for r in _test_point(means, specs, 999, 0, 0)}
        b_mean = (5 * 0.5 - 0.5) / 6
        assert out["both"]["effect"] == pytest.approx(b_mean) and out["both"]["weakest"] == "B"
        assert out["a"]["effect"] == pytest.approx(1.0)
        # all 6 differences = 1: exact sign-flip p = 2 / 2**6 (both tails)
        assert out["a"]["p"] == pytest.approx(2 / 64, abs=0.02)
        assert out["both"]["p"] >= out["a"]["p"]  # IUT: the largest p
        assert out["rev"]["effect"] == pytest.approx(1.0)

    def test_summary_verdicts_use_holm_over_points(self):
        specs = [
            ClaimSpec("r", "robust", "", "T", ("A",), "recall", 256),
            ClaimSpec("g", "dependent", "", "T", ("A",), "recall", 256),
            ClaimSpec("n", "none", "", "T", ("A",), "recall", 256),
            ClaimSpec("z", "null", "", "T", ("A",), "recall", 256, null=True),
        ]
        rows = []
        # 3 points; Holm multiplies the smallest p by 3
        for claim, ps, effs in (
            ("r", [0.001, 0.002, 0.01], [0.1, 0.1, 0.1]),
            ("g", [0.001, 0.03, 0.04], [0.1, 0.1, 0.1]),  # raw 3/3, Holm 1/3
            ("n", [0.001, 0.001, 0.001], [-0.1, -0.1, -0.1]),  # significant, wrong sign
            ("z", [0.5, 0.2, 0.01], [0.0, 0.0, 0.1]),
        ):
            for pt, (p, e) in enumerate(zip(ps, effs, strict=True)):
                rows.append(
                    {"point": pt, "claim": claim, "effect": e, "p": p, "ci_low": e, "ci_high": e}
                )
        eff = pd.DataFrame(rows)
        from osustat import adjust_pvalues

        eff["p_holm"] = np.nan
        for _c, idx in eff.groupby("claim").groups.items():
            eff.loc[idx, "p_holm"] = adjust_pvalues(eff.loc[idx, "p"].to_numpy()).pvalues_adjusted
        null = eff["claim"] == "z"
        eff["holds"] = np.where(null, eff["p"] > 0.05, (eff["effect"] > 0) & (eff["p"] <= 0.05))
        eff["holds_holm"] = np.where(
            null, eff["p"] > 0.05, (eff["effect"] > 0) & (eff["p_holm"] <= 0.05)
        )
        s = _summarize(eff, specs, 0, 3).set_index("claim")
        assert s.loc["r", "verdict"] == "robust" and s.loc["r", "holds_holm"] == 3
        assert s.loc["g", "verdict"] == "generator-dependent"
        assert (s.loc["g", "holds_raw"], s.loc["g", "holds_holm"]) == (3, 1)
        assert s.loc["n", "verdict"] == "not reproduced" and s.loc["n", "reversed_holm"] == 3
        assert s.loc["z", "verdict"] == "generator-dependent" and s.loc["z", "holds_raw"] == 2


class TestRun:
    def test_tiny_grid_outputs_are_byte_identical(self, tiny, tmp_path):
        a = reproduce_synthetic_sensitivity(tmp_path / "a", tiny, backend=QUIET)
        reproduce_synthetic_sensitivity(tmp_path / "b", tiny, backend=QUIET)
        for name in (
            "points.csv",
            "effects.csv",
            "summary.csv",
            "report.md",
            "effects.png",
            "episode_means.parquet",
            "grid.toml",
        ):
            assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
        assert set(a["verdict"]) <= {"robust", "generator-dependent", "not reproduced"}
        points = pd.read_csv(tmp_path / "a" / "points.csv")
        assert len(points) == 4 and points["default"].sum() == 1
        assert (points["episodes"] == 6).all()  # 2 seeds x 3 episodes, nothing dropped
        report = (tmp_path / "a" / "report.md").read_text()
        assert "## The default point and why" in report and "## Verdicts" in report
        eff = pd.read_csv(tmp_path / "a" / "effects.csv")
        # claims at B = 128 are skipped when the grid runs B = 256 only
        assert len(eff) == 4 * len(claim_specs(GRID_METHODS, (256,))) == 4 * (45 - 18)
        assert eff["effect"].notna().all()
        # episodes without near (or far) evidence drop out of those claims only, and are counted
        near_far = eff["claim"].str.startswith("F2-")
        assert (eff.loc[~near_far, "n"] == 6).all() and (eff.loc[near_far, "n"] <= 6).all()

    def test_report_section_and_bad_layout(self, tiny, tmp_path):
        with pytest.raises(ValueError, match="`--layout` must be one of spread, segment"):
            reproduce("synthetic", tmp_path / "x", episodes=2, layout="diag", progress=False)
        assert not (tmp_path / "x").exists()  # nothing half-written
        r = reproduce(
            "synthetic", tmp_path / "y", episodes=2, n_resamples=99, progress=False,
            sensitivity=True, grid=tiny,
        )  # fmt: skip
        report = (r.out / "report.md").read_text()
        assert "## Which claims are robust to the generator" in report
        assert "## Layout check" in report and (r.out / "sensitivity" / "report.md").exists()

    def test_run_sensitivity_rejects_unknown_methods(self, tiny):
        with pytest.raises(ValueError, match="unknown `methods`"):
            run_sensitivity(load_grid(tiny), methods=("OSU-Mem", "Nope"), backend=QUIET)
