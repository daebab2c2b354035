"""Every figure is a real PNG of the documented size, and the tables render several ways."""

import struct

import numpy as np
import pandas as pd
import pytest

from osustat import analyze, paired
from osustat.cellwise import cell_conditional
from osustat.reports.cellwise import budget_effects_plot, forest_figure, forest_plot
from osustat.reports.figures import dose_response


def png_size(path):
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"  # a real PNG, not an empty file
    return struct.unpack(">II", data[16:24])


def frame():
    rng = np.random.default_rng(0)
    rows = []
    cells = np.repeat(["T+E+", "T+E-", "T-E+", "T-E-"], [12, 10, 8, 14])
    for budget in (128, 256):
        for i, c in enumerate(cells):
            for m in ("a", "b"):
                rows.append(
                    {
                        "episode_id": f"e{i % 7}",
                        "query_id": f"q{i}",
                        "method": m,
                        "budget": budget,
                        "metric": "recall",
                        "value": float(rng.integers(0, 4)) / 3,
                        "cell": c,
                    }
                )
    return pd.DataFrame(rows)


def results(scale=1.0):
    """Two budgets' results on `frame` (its values times `scale`)."""
    df = frame()
    df["value"] *= scale
    return [
        (
            f"recall at B = {b}",
            cell_conditional(
                paired(df, "a", "b", metric="recall", budget=b),
                n_resamples=199,
                bootstrap_resamples=100,
                rng=b,
            ),
        )
        for b in (128, 256)
    ]


class TestFigures:
    def test_sizes(self, tmp_path):
        res = results()
        # 6.4 x 3.2 in and 6.4 x 3.6 in at 150 dpi, with an SVG beside each PNG
        assert png_size(forest_plot(res[0][1], tmp_path / "f.png", title="t")) == (960, 480)
        cells = [r for _, r in res]
        path = budget_effects_plot(cells, "recall", tmp_path / "b.png", title="t", xlabel="depth")
        assert png_size(path) == (960, 540)
        for name in ("f.svg", "b.svg"):
            assert (tmp_path / name).read_text().lstrip().startswith("<?xml")
        assert "depth" in (tmp_path / "b.svg").read_text()
        table = pd.DataFrame(
            {
                "beta": [0, 0.04, 0.12, 0.2],
                "effect": [0, 0.02, 0.05, 0.04],
                "lo": [-0.02, 0, 0.02, 0.01],
                "hi": [0.02, 0.04, 0.08, 0.07],
            }
        )
        path = dose_response(table, tmp_path / "d.png", x="beta", y="effect", ci=("lo", "hi"))
        assert png_size(path) == (960, 540)  # 6.4 x 3.6 in at 150 dpi, like the others
        svg = (tmp_path / "d.svg").read_bytes()
        assert svg.lstrip().startswith(b"<?xml") and b"beta" in svg
        again = dose_response(table, tmp_path / "e.png", x="beta", y="effect", ci=("lo", "hi"))
        assert again.read_bytes() == path.read_bytes()
        assert (tmp_path / "e.svg").read_bytes() == svg  # no date, no random id salt

    def test_forest_shows_every_row_its_effect_and_interval(self):
        # what the forest plot shows, independent of how it is drawn: one point per cell
        # (blue) and the aggregate (black, bottom row) at Δ, the error bar from the interval's
        # low to its high end, the rows labelled `cell (n=…)` top to bottom
        from matplotlib.colors import to_hex

        from osustat.reports._style import pyplot

        res = results()[0][1]
        rows = [*res.cells, res.aggregate]
        fig = forest_figure(res, title="the title")
        try:
            ax = fig.axes[0]
            shown = {}
            for bars in ax.containers:
                line, _, (segments,) = bars.lines
                for x, y, seg in zip(
                    line.get_xdata(), line.get_ydata(), segments.get_segments(), strict=True
                ):
                    shown[int(y)] = (x, seg[0][0], seg[1][0], to_hex(line.get_color()))
            # the bar's ends are drawn at effect -/+ its distances to the ends (1 ulp off)
            ys = range(len(rows) - 1, -1, -1)
            assert sorted(shown) == sorted(ys)
            for y, r in zip(ys, rows, strict=True):
                x, low, high, color = shown[y]
                assert (x, low, high) == pytest.approx((r.effect, r.ci.low, r.ci.high), abs=1e-12)
                assert color == ("#000000" if r.cell is None else to_hex("tab:blue"))
            labels = {
                int(t): lab.get_text()
                for t, lab in zip(ax.get_yticks(), ax.get_yticklabels(), strict=True)
            }
            # with k, the clusters (episodes) resampled, where fewer than the units
            assert labels == {
                y: f"{'Aggregate' if r.cell is None else r.cell.value} (n={r.n}, "
                f"k={r.ci.n_clusters})"
                for y, r in zip(ys, rows, strict=True)
            }
            assert all(r.ci.n_clusters < r.n for r in rows)
            assert ax.get_title() == "the title"
            assert ax.get_xlabel().endswith("95% expanded BCa CI")
        finally:
            pyplot().close(fig)

    @pytest.mark.parametrize("scale", [1.0, 1e-6])
    def test_budget_plot_title_where_automatic_placement_puts_it(
        self, tmp_path, monkeypatch, scale
    ):
        # the title is fixed at the axes' top unless a y-axis offset text ("1e-7", at
        # scale 1e-6) sits there: the same picture as matplotlib's own placement, without
        # re-measuring the y axis's labels in each file's drawing
        import matplotlib.axes
        from matplotlib.axis import YAxis

        import osustat.reports.cellwise as cellwise
        from tests.reports.test_style import pixels

        res = [r for _, r in results(scale)]
        measured = []
        saving = []
        save, tightbbox = cellwise.save_figure, YAxis.get_tightbbox
        monkeypatch.setattr(
            cellwise, "save_figure", lambda *a, **k: saving.append(1) or save(*a, **k)
        )
        monkeypatch.setattr(
            YAxis,
            "get_tightbbox",
            lambda *a, **k: measured.append(bool(saving)) or tightbbox(*a, **k),
        )
        budget_effects_plot(res, "recall", tmp_path / "fixed.png", title="the title")
        offset = scale < 1
        assert any(measured) == offset  # measured while saving only where the text is
        set_title = matplotlib.axes.Axes.set_title
        monkeypatch.setattr(
            matplotlib.axes.Axes,
            "set_title",
            lambda ax, label, **k: set_title(ax, label, **{n: v for n, v in k.items() if n != "y"}),
        )
        budget_effects_plot(res, "recall", tmp_path / "auto.png", title="the title")
        assert pixels(tmp_path / "fixed.png") == pixels(tmp_path / "auto.png")
        assert (tmp_path / "fixed.svg").read_bytes() == (tmp_path / "auto.svg").read_bytes()

    def test_budget_plot_needs_two_budgets(self, tmp_path):
        with pytest.raises(ValueError, match="at least two budgets"):
            budget_effects_plot([results()[0][1]], "recall", tmp_path / "b.png", title="t")

    def test_dose_response_names_missing_columns(self, tmp_path):
        with pytest.raises(ValueError, match=r"`table` lacks columns \['effect'\]"):
            dose_response(pd.DataFrame({"beta": [1]}), tmp_path / "d.png", x="beta", y="effect")


class TestRenderings:
    def test_dataframe_and_json_carry_the_same_numbers(self):
        res = analyze(
            frame(), treatment="a", baseline="b", n_resamples=199, bootstrap_resamples=100, rng=1
        )
        table = res.to_frame()
        payload = res.to_dict()
        rows = [r for p in payload["comparisons"] for r in p["rows"]]
        assert len(table) == len(rows) == 10
        assert table["effect"].tolist() == [r["effect"] for r in rows]
        assert set(table["unit"]) == {"query"} and set(table["budget"]) == {128, 256}
        assert payload["treatment"] == "a" and payload["correction"] == "holm"


def test_forest_and_budget_svgs_are_byte_reproducible(tmp_path):
    # matplotlib salts SVG element ids with a random uuid unless svg.hashsalt is set, so two
    # runs of the same analysis wrote different SVG files
    res = [r for _, r in results()]
    for k in (1, 2):
        forest_plot(res[0], tmp_path / f"f{k}.png", title="t")
        budget_effects_plot(res, "recall", tmp_path / f"b{k}.png", title="t")
    for name in ("f", "b"):
        first, second = (tmp_path / f"{name}{k}.svg" for k in (1, 2))
        assert first.read_bytes() == second.read_bytes()
        assert (tmp_path / f"{name}1.png").read_bytes() == (tmp_path / f"{name}2.png").read_bytes()
