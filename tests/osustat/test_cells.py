import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from osustat import Cell, label_cell, sharing_rates

tool = st.sampled_from(["search(q)", "book(id)", "cancel(id)", None])
entity_set = st.sets(st.sampled_from(["u1", "f9", "NYC", "LAX"]), max_size=2)


class TestLabelCell:
    # -- Input validation --
    def test_string_entities(self):
        with pytest.raises(TypeError, match=r"`entities\[1\]` must be a collection of strings"):
            label_cell(["a", "b"], [{"x"}, "x"])

    def test_length_mismatch(self):
        with pytest.raises(ValueError, match="one entry per evidence step; got 2 and 1"):
            label_cell(["a", "b"], [{"x"}])

    def test_tools_not_sequence(self):
        with pytest.raises(TypeError, match="`tools` must be a sequence"):
            label_cell("search")

    # -- Reference values (Definition 2) --
    @pytest.mark.parametrize(
        ("tools", "entities", "cell"),
        [
            (["a", "a"], [{"x"}, {"x"}], Cell.TE),
            (["a", "a", "b"], [{"x"}, {"y"}, {"z"}], Cell.T_ONLY),
            (["a", "b"], [{"x", "y"}, {"y"}], Cell.E_ONLY),
            (["a", "b"], [{"x"}, {"y"}], Cell.NEITHER),
            ([None, None], [set(), set()], Cell.NEITHER),  # None never matches None
            # the tool pair (0, 2) and the entity pair (0, 1) differ: still T+E+
            (["a", "b", "a"], [{"x"}, {"x"}, {"z"}], Cell.TE),
            (["a"], [{"x"}], Cell.NEITHER),
        ],
    )
    def test_definition_2(self, tools, entities, cell):
        assert label_cell(tools, entities) is cell

    def test_parse(self):
        assert Cell.parse("t+e-") is Cell.T_ONLY
        assert Cell.parse("T\u2212E\u2212") is Cell.NEITHER
        with pytest.raises(ValueError, match="Unknown cell label 'TE'"):
            Cell.parse("TE")

    # -- Properties --
    @given(st.lists(st.tuples(tool, entity_set), min_size=1, max_size=6))
    def test_agrees_with_sharing_rates(self, steps):
        tools = [t for t, _ in steps]
        ents = [e for _, e in steps]
        cell = label_cell(tools, ents)
        rates = sharing_rates(tools, ents)
        if len(steps) < 2:
            assert cell is Cell.NEITHER and rates.n_pairs == 0
        else:
            assert cell.tool_shared == (rates.tool > 0)
            assert cell.entity_shared == (rates.entity > 0)

    @given(st.lists(st.tuples(tool, entity_set), min_size=2, max_size=6), st.randoms())
    def test_order_invariant(self, steps, random):
        shuffled = list(steps)
        random.shuffle(shuffled)
        assert label_cell(*zip(*steps, strict=True)) is label_cell(*zip(*shuffled, strict=True))


class TestSharingRates:
    def test_reference(self):
        r = sharing_rates(["a", "a", "b", None], [{"x"}, {"x"}, set(), {"x"}], [1, 2, 2, None])
        assert r.n_pairs == 6
        assert r.tool == pytest.approx(1 / 6)
        assert r.entity == pytest.approx(3 / 6)
        assert r.subgoal == pytest.approx(1 / 6)

    def test_no_pairs(self):
        r = sharing_rates(["a"])
        assert math.isnan(r.tool) and r.n_pairs == 0

    def test_subgoal_length(self):
        with pytest.raises(ValueError, match="`subgoals` must have one entry per evidence step"):
            sharing_rates(["a", "b"], None, [1])
