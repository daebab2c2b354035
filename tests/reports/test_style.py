import pytest

from osustat.reports._style import DPI, md_table, pyplot, save_figure
from tests.reports.test_figures import png_size


def pixels(path):
    """A PNG's mode, size, resolution and pixels (what a viewer shows)."""
    from PIL import Image

    with Image.open(path) as image:
        return image.mode, image.size, image.info.get("dpi"), image.tobytes()


class TestMdTable:
    def test_layout(self):
        assert md_table(["a", "b", "c"], [[1, 2.5, "x"], ["", "y", None]]) == [
            "| a | b | c |",
            "| --- | --- | --- |",
            "| 1 | 2.5 | x |",
            "|  | y | None |",
        ]

    def test_ragged_row_is_an_error(self):
        with pytest.raises(ValueError, match=r"a row has 1 cells, the header 2"):
            md_table(["a", "b"], [["only"]])


class TestSaveFigure:
    def test_png_at_dpi_and_reproducible_svg(self, tmp_path):
        def draw(path):
            plt = pyplot()
            fig, ax = plt.subplots(figsize=(2, 1))
            ax.plot([0, 1], [1, 0], marker="o")
            return save_figure(fig, path, dpi=DPI, svg=True)

        a, b = draw(tmp_path / "sub" / "a.png"), draw(tmp_path / "b.png")
        assert png_size(a) == (2 * DPI, DPI)
        assert a.read_bytes() == b.read_bytes()
        assert (tmp_path / "sub" / "a.svg").read_bytes() == (tmp_path / "b.svg").read_bytes()
        assert not pyplot().get_fignums()  # closed

    def test_png_only_keeps_figure_dpi(self, tmp_path):
        plt = pyplot()
        fig, _ = plt.subplots(figsize=(2, 1), dpi=100)
        path = save_figure(fig, tmp_path / "c.png")
        assert png_size(path) == (200, 100) and not (tmp_path / "c.svg").exists()

    def test_tight_figure_is_drawn_once_per_file_with_the_same_bytes(self, tmp_path, monkeypatch):
        # tight_layout leaves a placeholder layout engine on the figure, and savefig then
        # ran a layout-only draw before each file's draw: 4 draws for PNG + SVG, not 2
        import matplotlib
        from matplotlib.figure import Figure

        def laid_out():
            fig, ax = pyplot().subplots(figsize=(3, 2), dpi=DPI)
            ax.plot([1, 2, 3], [0.1, -0.2, 0.3], marker="o", label="Aggregate")
            ax.set_title("a title", fontsize=10)
            ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5))
            fig.tight_layout()
            return fig

        plain = laid_out()
        plain.savefig(tmp_path / "plain.png", metadata={"Software": None})
        with matplotlib.rc_context({"svg.hashsalt": "osustat"}):
            plain.savefig(tmp_path / "plain.svg", metadata={"Date": None, "Creator": None})
        draws = []
        draw = Figure.draw
        monkeypatch.setattr(Figure, "draw", lambda fig, r: draws.append(r) or draw(fig, r))
        path = save_figure(laid_out(), tmp_path / "saved.png", svg=True)
        assert len(draws) == 2
        assert pixels(path) == pixels(tmp_path / "plain.png")
        assert (tmp_path / "saved.svg").read_bytes() == (tmp_path / "plain.svg").read_bytes()

    def test_png_takes_zlibs_fastest_level_with_the_same_pixels(self, tmp_path):
        # zlib's default level (6) spent ~14 ms of a figure's ~60 for a 10 % smaller file
        def drawn():
            fig, ax = pyplot().subplots(figsize=(3, 2), dpi=DPI)
            ax.errorbar([0.1, -0.2], [1, 0], xerr=[[0.1, 0.2], [0.3, 0.1]], fmt="o", capsize=3)
            ax.set_title("a title", fontsize=10)
            return fig

        plain = drawn()
        plain.savefig(tmp_path / "plain.png", metadata={"Software": None})
        path = save_figure(drawn(), tmp_path / "saved.png")
        data = path.read_bytes()
        idat = data.index(b"IDAT") + 4
        assert data[idat] & 0x0F == 8 and data[idat + 1] >> 6 == 0  # deflate, FLEVEL 0: fastest
        assert pixels(path) == pixels(tmp_path / "plain.png")


def test_sensitivity_figure_orders_numeric_values_numerically() -> None:
    from osustat.analyses.synthetic.report_sensitivity import _value_order

    assert sorted(["12", "24", "6"], key=_value_order) == ["6", "12", "24"]
    assert sorted(["spread", "segment", "0.5", "0.1"], key=_value_order) == [
        "0.1",
        "0.5",
        "segment",
        "spread",
    ]
