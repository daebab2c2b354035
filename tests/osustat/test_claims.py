import gzip
import os
import re
from pathlib import Path

import pytest

from osustat import Cell
from osustat.analyses.claims_audit import claims_file
from osustat.audit.claim import CLAIM_KEYS, KINDS, ReportedP
from osustat.audit.claims import load_claims, parse_claims

ROOT = Path(__file__).resolve().parents[2]
PAPER_TOML = claims_file("paper")
# The paper's text (the specification) is not part of the repository: OSUSTAT_PAPER names it
# (`make test` sets it to ../shared/paper/osu-mem-paper.md when that exists).
PAPER_MD = Path(os.environ.get("OSUSTAT_PAPER") or "/nonexistent/osu-mem-paper.md")

BASE = """
[[claim]]
id = "c1"
family = "f"
treatment = "new"
baseline = "old"
metric = "hit@2"
budget = 256
cell = "T+E+"
direction = "greater"
"""


def claims_with(extra: str = "", *, replace: tuple[str, str] | None = None, head: str = "") -> str:
    text = BASE + extra
    if replace is not None:
        assert replace[0] in text
        text = text.replace(*replace)
    return head + text


class TestParseClaims:
    # -- Input validation --
    def test_invalid_toml(self):
        with pytest.raises(ValueError, match=r"claims file 'x.toml' is not valid TOML: .*line 2"):
            parse_claims("[[claim]]\nid = \n", source="x.toml")

    def test_a_json_file_and_a_single_claim_table_say_what_to_write(self):
        # a new user's review: a claims file in JSON, and [claim] for [[claim]]
        with pytest.raises(ValueError, match=r"not valid TOML: .*one \[\[claim\]\] table per"):
            parse_claims('{"claim": []}', source="claims.json")
        single = '[claim]\nid = "a"\n'
        with pytest.raises(ValueError, match=r"`\[claim\]` is a single table; write `\[\[claim"):
            parse_claims(single, source="c.toml")

    def test_unknown_top_level_key(self):
        with pytest.raises(ValueError, match=r"unknown top-level keys \['claims'\]"):
            parse_claims(claims_with(head="claims = 1\n"))

    def test_no_claims(self):
        with pytest.raises(ValueError, match="has no claims; add one"):
            parse_claims('title = "empty"\n')

    def test_unknown_claim_key_names_claim_line_and_allowed_keys(self):
        with pytest.raises(
            ValueError,
            match=r"claims file 'c.toml', claim 1 \(line 2\): unknown keys \['treatmnt'\]; "
            r"allowed: \['id', 'family'",
        ):
            parse_claims(claims_with('treatmnt = "x"\n'), source="c.toml")

    def test_unknown_defaults_key(self):
        with pytest.raises(ValueError, match=r"unknown keys in \[defaults\]: \['id'\]"):
            parse_claims(claims_with(head='[defaults]\nid = "x"\n'))

    def test_missing_required(self):
        with pytest.raises(ValueError, match=r"missing required keys \['direction'\]"):
            parse_claims(claims_with(replace=('direction = "greater"\n', "")))

    def test_duplicate_id(self):
        with pytest.raises(
            ValueError, match=r"claim 2 \(line 12\): duplicate id 'c1' \(first used by claim 1\)"
        ):
            parse_claims(BASE + BASE)

    def test_the_same_test_twice_in_a_family_is_an_error_naming_both(self):
        # red team: claims `a` and `b` (or `a` and `A`) with the same comparison keys made
        # Holm count one test twice (m = 2, p .100 -> .201), exit 0 and nothing said
        second = BASE.replace('id = "c1"', 'id = "c2"').replace("[[claim]]", "\n[[claim]]")
        with pytest.raises(ValueError) as err:
            parse_claims(BASE + second + 'reported_p = 0.01\nsource = "Table 4"\n', source="d.toml")
        said = str(err.value)
        assert said.startswith("claims file 'd.toml': claims 1 (line 2, id 'c1') and 2 (line 13, ")
        assert "id 'c2') are the same test in family 'f'" in said
        assert "new − old > 0 on hit@2, B=256, T+E+ (query)" in said
        assert "A family counts each test once (a repeat would raise its m" in said
        # a descriptive claim has no test and no m: its repeat is said as what it is
        means = (BASE + second).replace(
            'direction = "greater"', 'kind = "means"\ndirection = "greater"'
        )
        with pytest.raises(
            ValueError, match=r"A descriptive claim \(kind = 'means', no test\) said twice"
        ):
            parse_claims(means)

    @pytest.mark.parametrize(
        ("old", "new"),
        [
            ('id = "c2"', 'id = "C1"'),  # ids differing only in case
            ('seeds = "average"', 'seeds = "pooled"'),  # the same test, its seeds read apart
            # the same comparison written the other way round
            (
                'treatment = "new"\nbaseline = "old"',
                'treatment = "old"\nbaseline = "new"',
            ),
        ],
    )
    def test_what_counts_as_the_same_test(self, old, new):
        first = BASE + 'seeds = "average"\n'
        second = first.replace('id = "c1"', 'id = "c2"').replace(old, new)
        if "old" in new:  # the other way round: old − new < 0
            second = second.replace('"greater"', '"less"')
        with pytest.raises(ValueError, match=r"are the same test in family 'f'"):
            parse_claims(first + second)

    @pytest.mark.parametrize(
        "edit",
        [
            ('family = "f"', 'family = "g"'),  # another family: its own correction
            ('"T+E+"', '"T-E-"'),
            ("budget = 256", "budget = 128"),
            ('metric = "hit@2"', 'metric = "recall"'),
            ('"greater"', '"less"'),
            ('treatment = "new"', 'treatment = "newer"'),
        ],
    )
    def test_a_different_test_is_not_a_duplicate(self, edit):
        second = BASE.replace('id = "c1"', 'id = "c2"').replace(*edit)
        assert len(parse_claims(BASE + second).claims) == 2

    def test_unknown_cell(self):
        with pytest.raises(ValueError, match=r"\(id 'c1'\): unknown cell 'T\+X\+'; expected"):
            parse_claims(claims_with(replace=('"T+E+"', '"T+X+"')))

    def test_cell_with_episode_unit_is_impossible(self):
        with pytest.raises(ValueError, match="with unit 'episode' is impossible"):
            parse_claims(claims_with('unit = "episode"\n'))

    def test_reported_over_needs_an_episode_claim_that_prints_a_number(self):
        episode = ('cell = "T+E+"', 'cell = "aggregate"\nunit = "episode"')
        c = parse_claims(claims_with('reported_effect = 0.1\nreported_over = "query"\n',
                                     replace=episode)).claims[0]  # fmt: skip
        assert c.reported_over == "query" and c.unit == "episode"
        assert parse_claims(claims_with(replace=episode)).claims[0].reported_over is None
        with pytest.raises(ValueError, match=r"\(id 'c1'\): `reported_over = 'query'` is for a "
                           "claim tested at unit = 'episode'"):  # fmt: skip
            parse_claims(claims_with('reported_effect = 0.1\nreported_over = "query"\n'))
        with pytest.raises(ValueError, match="it is for kind 'difference' or 'relative'"):
            parse_claims(claims_with('kind = "means"\nreported_means = [0.5, 0.4]\n'
                                     'reported_over = "query"\n', replace=episode))  # fmt: skip
        with pytest.raises(ValueError, match="the claim prints neither"):
            parse_claims(claims_with('reported_over = "query"\n', replace=episode))
        with pytest.raises(ValueError, match=r"`reported_over` must be one of \['query'\]"):
            parse_claims(claims_with('reported_effect = 0.1\nreported_over = "episode"\n',
                                     replace=episode))  # fmt: skip

    def test_unknown_direction(self):
        with pytest.raises(ValueError, match=r"`direction` must be one of \['greater', 'less'\]"):
            parse_claims(claims_with(replace=('"greater"', '"up"')))

    def test_unknown_seeds(self):
        with pytest.raises(ValueError, match=r"`seeds` must be one of \['average', 'pooled'"):
            parse_claims(claims_with('seeds = "stacked"\n'))

    def test_threshold_outside_unit_interval_for_hit(self):
        with pytest.raises(ValueError, match=r"`threshold` = 5.0 is impossible for metric 'hit@2'"):
            parse_claims(claims_with("threshold = 5.0\n"))

    def test_threshold_outside_unit_interval_for_named_recall(self):
        with pytest.raises(ValueError, match=r"`threshold` = 2.0 is impossible for metric 'hard_"):
            parse_claims(claims_with("threshold = 2.0\n", replace=('"hit@2"', '"hard_recall@0.5"')))

    def test_threshold_unbounded_metric_is_allowed(self):
        cf = parse_claims(claims_with("threshold = 5.0\n", replace=('"hit@2"', '"latency-ms"')))
        assert cf.claims[0].threshold == 5.0

    def test_reported_effect_in_pp_is_impossible(self):
        with pytest.raises(ValueError, match=r"`reported_effect` = 17.9 is impossible"):
            parse_claims(claims_with("reported_effect = 17.9\n"))

    def test_reported_means_outside_unit_interval(self):
        with pytest.raises(ValueError, match=r"`reported_means` = -0.1 is impossible"):
            parse_claims(claims_with("reported_means = [0.2, -0.1]\n"))

    def test_reported_effect_contradicting_direction(self):
        with pytest.raises(ValueError, match=r"reported effect -0.1 contradicts the claim itself"):
            parse_claims(claims_with("reported_effect = -0.1\n"))

    def test_reported_ci_order(self):
        with pytest.raises(ValueError, match=r"`reported_ci` must be \[low, high\]"):
            parse_claims(claims_with("reported_ci = [0.2, 0.1]\n"))

    def test_reported_p_out_of_range(self):
        with pytest.raises(ValueError, match=r"`reported_p`: a p-value must lie in \(0, 1\]"):
            parse_claims(claims_with("reported_p = 1.5\n"))

    def test_reported_p_unreadable(self):
        with pytest.raises(ValueError, match=r"cannot read p-value 'small'"):
            parse_claims(claims_with('reported_p = "small"\n'))

    def test_budget_type(self):
        with pytest.raises(TypeError, match=r"`budget` must be an integer; got '256'"):
            parse_claims(claims_with(replace=("budget = 256", 'budget = "256"')))

    def test_budget_positive(self):
        with pytest.raises(ValueError, match=r"`budget` must be a positive integer; got 0"):
            parse_claims(claims_with(replace=("budget = 256", "budget = 0")))

    def test_same_methods(self):
        with pytest.raises(ValueError, match="`treatment` and `baseline` are both 'old'"):
            parse_claims(claims_with(replace=('"new"', '"old"')))

    def test_unused_family(self):
        with pytest.raises(ValueError, match=r"families \['g'\] are declared but no claim uses"):
            parse_claims(claims_with(head="[family.g]\n"))

    def test_unknown_family_key(self):
        with pytest.raises(ValueError, match=r"\[family.f\]: unknown keys \['method'\]"):
            parse_claims(claims_with(head='[family.f]\nmethod = "holm"\n'))

    # -- kinds, margin, seed, strict correction --
    def test_unknown_kind(self):
        with pytest.raises(ValueError, match=r"`kind` must be one of \['difference', 'means'"):
            parse_claims(claims_with('kind = "ratio"\n'))

    def test_equivalence_needs_margin_and_no_direction(self):
        eq = 'kind = "equivalence"\n'
        with pytest.raises(ValueError, match=r"keys \['direction'\] have no meaning for kind"):
            parse_claims(claims_with(eq + "margin = 0.01\n"))
        no_dir = ('direction = "greater"\n', eq)
        with pytest.raises(ValueError, match=r"missing required keys \['margin'\] for kind"):
            parse_claims(claims_with(replace=no_dir))
        with pytest.raises(ValueError, match="`margin` must be positive"):
            parse_claims(claims_with("margin = -0.01\n", replace=no_dir))
        with pytest.raises(ValueError, match=r"`margin` = 1\.5 is impossible"):
            parse_claims(claims_with("margin = 1.5\n", replace=no_dir))
        c = parse_claims(claims_with("margin = 0.01\n", replace=no_dir)).claims[0]
        assert c.kind == "equivalence" and c.margin == 0.01 and c.direction == "two-sided"
        assert c.describe() == "|new − old| < 0.01 on hit@2, B=256, T+E+ (query)"

    def test_margin_only_for_equivalence(self):
        with pytest.raises(ValueError, match=r"keys \['margin'\] have no meaning for kind"):
            parse_claims(claims_with("margin = 0.01\n"))

    def test_interaction_spans_cells(self):
        text = BASE.replace('cell = "T+E+"\ndirection = "greater"\n', 'kind = "interaction"\n')
        c = parse_claims(text).claims[0]
        assert c.cell is None and c.kind == "interaction"
        assert c.describe() == "new − old differs across cells on hit@2, B=256, aggregate (query)"
        with pytest.raises(ValueError, match="an interaction claim spans the cells; omit `cell`"):
            parse_claims(text + 'cell = "T+E+"\n')
        with pytest.raises(ValueError, match="an interaction claim needs unit = 'query'"):
            parse_claims(text + 'unit = "episode"\n')
        with pytest.raises(ValueError, match=r"keys \['direction'\] have no meaning"):
            parse_claims(text + 'direction = "greater"\n')

    def test_relative_effects(self):
        rel = 'kind = "relative"\n'
        c = parse_claims(claims_with(rel + "reported_effect = 1.5\n")).claims[0]
        assert c.claimed_effect == 1.5 and c.describe().startswith("new / old − 1 > 0")
        means = parse_claims(claims_with(rel + "reported_means = [0.221, 0.158]\n")).claims[0]
        assert means.claimed_effect == pytest.approx(0.221 / 0.158 - 1)
        with pytest.raises(ValueError, match="a relative `reported_effect` is ratio - 1"):
            parse_claims(claims_with(rel + "reported_effect = -1.0\n"))
        with pytest.raises(ValueError, match="a relative `threshold` is ratio - 1"):
            parse_claims(claims_with(rel + "threshold = -2.0\n"))
        with pytest.raises(ValueError, match="contradicts the claim itself"):
            parse_claims(claims_with(rel + "reported_means = [0.1, 0.2]\n"))

    def test_means_kind_needs_direction(self):
        text = claims_with('kind = "means"\n', replace=('direction = "greater"\n', ""))
        with pytest.raises(ValueError, match=r"missing required keys \['direction'\] for kind"):
            parse_claims(text)

    def test_seed(self):
        assert parse_claims(claims_with("seed = 42\n")).claims[0].seed == 42
        with pytest.raises(TypeError, match="`seed` must be a non-negative integer"):
            parse_claims(claims_with("seed = -1\n"))
        with pytest.raises(TypeError, match="`seed` must be a non-negative integer"):
            parse_claims(claims_with('seed = "42"\n'))

    def test_corrections(self):
        cf = parse_claims(claims_with(head='[family.f]\ncorrection = "none"\n'))
        fam = cf.families["f"]
        assert (fam.correction, fam.strict_correction) == ("none", "holm")
        with pytest.raises(ValueError, match=r"`strict_correction` must be one of \['holm'"):
            parse_claims(claims_with(head='[family.f]\nstrict_correction = "none"\n'))
        cf = parse_claims(claims_with())  # no [family] table: the defaults
        assert (cf.families["f"].correction, cf.families["f"].strict_correction) == (
            "none",
            "holm",
        )

    def test_unknown_correction(self):
        with pytest.raises(ValueError, match=r"`correction` must be one of \['none', 'holm'"):
            parse_claims(claims_with(head='[family.f]\ncorrection = "tukey"\n'))

    def test_family_alpha(self):
        with pytest.raises(ValueError, match=r"`alpha` must be in \(0, 1\); got 5.0"):
            parse_claims(claims_with(head="[family.f]\nalpha = 5\n"))

    def test_missing_file(self, tmp_path):
        with pytest.raises(FileNotFoundError, match="does not exist"):
            load_claims(tmp_path / "nope.toml")

    def test_a_bom_is_read(self, tmp_path):
        # red team: a UTF-8 BOM gave "not valid TOML: Invalid statement (at line 1, column 1)"
        # where the JSON and CSV readers accept one
        path = tmp_path / "bom.toml"
        path.write_bytes(b"\xef\xbb\xbf" + BASE.encode())
        assert [c.id for c in load_claims(path).claims] == ["c1"]

    @pytest.mark.parametrize(
        ("encode", "said"),
        [
            (lambda t: gzip.compress(t.encode()), r"is gzip-compressed, not text: decompress it"),
            (lambda t: t.encode("utf-16"), r"is not UTF-8 text: UTF-16 \(it starts with a"),
            (lambda t: t.encode("latin-1"), r"is not UTF-8 text \(invalid .* at byte \d+\)"),
        ],
    )
    def test_other_encodings_name_the_file(self, tmp_path, encode, said):
        # red team: "error: 'utf-8' codec can't decode byte 0x8b in position 1", no file named
        path = tmp_path / "c.toml"
        path.write_bytes(encode(BASE.replace("new", "néw")))
        with pytest.raises(ValueError, match=rf"^claims file '{re.escape(str(path))}' {said}"):
            load_claims(path)

    # -- Parsing --
    def test_defaults_apply_and_claims_override(self):
        cf = parse_claims(
            claims_with('budget = 128\nbenchmark = "b"\n', replace=("budget = 256\n", "")),
            source="s",
        )
        cf2 = parse_claims(
            '[defaults]\nbudget = 64\nbenchmark = "z"\n' + BASE.replace("budget = 256\n", "")
        )
        assert cf.claims[0].budget == 128 and cf.claims[0].benchmark == "b"
        assert cf2.claims[0].budget == 64 and cf2.claims[0].benchmark == "z"

    def test_defaults_apply_where_the_kind_gives_them_a_meaning(self):
        # a red team (stop 61): [defaults] direction = "greater" refused an equivalence claim
        # of the same file ("keys ['direction'] have no meaning"), a key its line never wrote
        text = (
            '[defaults]\nfamily = "f"\nmetric = "hit@2"\nbudget = 256\ndirection = "greater"\n'
            'treatment = "a"\nbaseline = "b"\n'
            '[[claim]]\nid = "d"\ncell = "T+E+"\n'
            '[[claim]]\nid = "eq"\nkind = "equivalence"\ncell = "T-E+"\nmargin = 0.05\n'
        )
        d, eq = parse_claims(text).claims
        assert d.direction == "greater" and eq.kind == "equivalence" and eq.margin == 0.05
        written = text.replace("margin = 0.05\n", 'margin = 0.05\ndirection = "less"\n')
        with pytest.raises(ValueError, match=r"keys \['direction'\] have no meaning"):
            parse_claims(written)  # written in the claim itself: refused, as before

    def test_fields(self):
        cf = parse_claims(
            claims_with(
                'reported_means = [0.3, 0.1]\nreported_p = "<.01"\nseeds = "fisher"\n',
                head='[family.f]\ncorrection = "bonferroni"\nalpha = 0.1\n',
            )
        )
        c = cf.claims[0]
        assert c.cell is Cell.TE and c.unit == "query" and c.seeds == "fisher"
        assert c.claimed_effect == pytest.approx(0.2)
        assert c.reported_p == ReportedP("<", 0.01, "<.01") and c.reported_p.upper == 0.01
        assert cf.families["f"].correction == "bonferroni" and cf.families["f"].alpha == 0.1
        assert c.line == 5  # three [family.f] lines and the blank line before [[claim]]

    def test_aggregate_and_episode(self):
        cf = parse_claims(claims_with('unit = "episode"\n', replace=('"T+E+"', '"Aggregate"')))
        assert cf.claims[0].cell is None and cf.claims[0].cell_label == "aggregate"

    @pytest.mark.parametrize(
        ("raw", "relation", "value", "upper"),
        [
            (0.022, "=", 0.022, 0.022),
            ("<.001", "<", 0.001, 0.001),
            ("<=.002", "<=", 0.002, 0.002),
            (">=.05", ">=", 0.05, 1.0),
            ("=.65", "=", 0.65, 0.65),
        ],
    )
    def test_reported_p(self, raw, relation, value, upper):
        p = ReportedP.parse(raw)
        assert (p.relation, p.value, p.upper) == (relation, value, upper)

    def test_every_key_is_documented(self):
        doc = (ROOT / "docs" / "audit.md").read_text(encoding="utf-8")
        assert all(f"`{k}`" in doc for k in CLAIM_KEYS)


# -- analyses/claims/paper.toml against the paper's own tables -------------------------------


def _paper_rows(table_caption: str) -> list[list[str]]:
    text = PAPER_MD.read_text(encoding="utf-8")
    start = text.index(table_caption)
    block = text[start:].split("\n\n")[1]
    return [[c.strip() for c in line.strip("|").split("|")] for line in block.splitlines()[2:]]


def _num(cell: str) -> float:
    m = re.search(r"([+\-−]?)\.(\d+)", cell.replace("$", ""))
    assert m is not None, cell
    return (-1.0 if m.group(1) in ("-", "−") else 1.0) * float("0." + m.group(2))


needs_paper = pytest.mark.skipif(
    not PAPER_MD.is_file(),
    reason="needs the paper's text: set OSUSTAT_PAPER to osu-mem-paper.md (make test does)",
)


class TestPaperClaims:
    def test_loads(self):
        cf = load_claims(PAPER_TOML)
        tables = {c.source.split(",")[0] for c in cf.claims}
        expected = {f"Table {t}" for t in (2, 3, 4, 5, 6, 7, 10, 12, 16)}
        sections = {"Section 6.1", "Section 6.3", "Section 6.4", "Figure 2", "Appendix D.4"}
        assert tables == expected | sections
        assert all(c.source for c in cf.claims)
        kinds = {k: sum(c.kind == k for c in cf.claims) for k in KINDS}
        assert kinds == {
            "difference": 104,
            "means": 40,
            "interaction": 5,
            "equivalence": 14,
            "relative": 2,
        }
        # The paper corrects nowhere: every family says so; strict is Holm.
        assert {f.correction for f in cf.families.values()} == {"none"}
        assert {f.strict_correction for f in cf.families.values()} == {"holm"}
        header = PAPER_TOML.read_text(encoding="utf-8").split("title =")[0]
        assert "ENCODED (165 claims; kind: 104 difference, 40 means, 5 interaction, 14" in header
        assert "LEFT OUT, and why" in header

    def test_no_test_counted_twice(self):
        cf = load_claims(PAPER_TOML).claims
        keys = [
            (c.kind, c.benchmark, c.treatment, c.baseline, c.metric, c.budget, c.cell, c.unit,
             c.seed)
            for c in cf
        ]  # fmt: skip
        assert len(keys) == len(set(keys))

    def test_new_names_are_the_briefs(self):
        cf = load_claims(PAPER_TOML).claims
        benchmarks = {c.benchmark for c in cf}
        assert benchmarks == {
            "synthetic",
            "tau-bench",
            "tau-bench-augmented",
            "tau-bench-weak-query",
            "tau-bench-llm",
            "toolbench",
        }
        methods = {m for c in cf for m in (c.treatment, c.baseline)}
        assert "OSU-Mem (no novelty)" in methods
        assert "coverage-overlap-beta0.12" in methods and "coverage-disjoint-beta0.12" in methods

    def test_table10_replaces_table2_at_B256(self):
        cf = load_claims(PAPER_TOML).claims
        t10 = [c for c in cf if c.family == "table10" and c.kind == "difference"]
        assert len(t10) == 12
        assert all(c.unit == "episode" and c.reported_n == 197 and c.budget == 256 for c in t10)
        t2 = [c for c in cf if c.family == "table2"]
        assert all(c.kind == "means" for c in t2)
        retrieval = {"Flat Vector", "Flat + MMR", "Coverage-Aware", "Disjoint Hierarchy",
                     "Tree Abstraction", "OSU-Mem (disjoint)"}  # fmt: skip
        assert not [c.id for c in t2 if c.budget == 256 and c.baseline in retrieval]
        assert {c.baseline for c in t10} == retrieval

    def test_section63_and_table16(self):
        cf = {c.id: c for c in load_claims(PAPER_TOML).claims}
        printed = {("hit2", 256): 0.002, ("recall", 256): 0.021, ("hit2", 128): 0.081,
                   ("hit2", 64): 0.308, ("hit2", 512): 0.558}  # fmt: skip
        for (m, b), p in printed.items():
            c = cf[f"S63-interaction-{m}-B{b}"]
            assert c.kind == "interaction" and c.reported_p.value == p and c.cell is None
        weak = cf["S63-weak-query-TpEp-hit2"]
        assert weak.benchmark == "tau-bench-weak-query" and weak.reported_effect == 0.143
        assert weak.reported_p.value == 0.094
        assert (
            cf["T16-seed456-B400"].seed == 456 and cf["T16-seed456-B400"].reported_effect == 0.047
        )
        assert cf["S61-relative-recall"].reported_effect == 0.399
        assert cf["S61-relative-hit2"].reported_effect == 0.615
        for cid, p in (("flat-vector", 0.874), ("flat-mmr", 0.330), ("coverage-aware", 0.431)):
            c = cf[f"D4-recall-{cid}-B64"]
            assert c.kind == "equivalence" and c.margin == 0.01 and c.reported_p.value == p

    @needs_paper
    def test_table12_matches_the_paper(self):
        cf = {c.id: c for c in load_claims(PAPER_TOML).claims}
        names = {
            "Flat Vector": "flat-vector",
            "Flat $+$ MMR": "flat-mmr",
            "Coverage-Aware": "coverage-aware",
            "Disjoint Hierarchy": "disjoint-hierarchy",
            "Tree Abstraction": "tree-abstraction",
            "(disjoint)": "osu-mem-disjoint",
        }
        rows = _paper_rows("Table 12: Hit@2 effect sizes")
        assert len(rows) == 6
        for row in rows:
            key = names[row[0].removeprefix("OSU-Mem vs. ")]
            for b, cell in zip((64, 128, 256, 512), row[1:], strict=True):
                c = cf[f"T12-{key}-B{b}"]
                effect, rel, p = re.match(r"\$\+(\.\d+)\\ \(p\{(=|<)\}(\.\d+)", cell).groups()
                assert c.reported_effect == float(effect)
                assert c.reported_p.value == float(p)
                assert c.reported_p.relation == rel
                assert c.unit == "episode" and c.reported_n == 125

    @needs_paper
    def test_table5_matches_the_paper(self):
        cf = {c.id: c for c in load_claims(PAPER_TOML).claims}
        rows = _paper_rows("Table 5: τ\\tau-bench: OSU-Mem")
        assert len(rows) == 4
        marks = {"": ">=.10", ".": "<.10", "*": "<.05", "**": "<.01", "***": "<.001"}
        for row in rows:
            cell = Cell.parse(row[0].split("(")[0].replace("$", "").strip())
            n = int(re.search(r"n\{=\}(\d+)", row[0]).group(1))
            for b, printed in zip((64, 128, 256, 512), row[1:], strict=True):
                tag = cell.value.replace("+", "p").replace("-", "m")
                if b == 256:  # the column repeats Table 4: encoded there only
                    assert f"T5-{tag}-B{b}" not in cf and cf[f"T4-{tag}-hit2"]
                    continue
                c = cf[f"T5-{tag}-B{b}"]
                star = re.search(r"\^\{(\S*?)\}", printed)
                mark = star.group(1).replace("\\ast", "*").replace("{}", "") if star else ""
                assert c.reported_effect == pytest.approx(_num(printed))
                assert c.cell is cell and c.reported_n == n
                if c.reported_p.relation != "=" and c.reported_p.text != "<.001":
                    assert c.reported_p.text == marks[mark], (c.id, printed)
                assert c.direction == ("greater" if c.reported_effect > 0 else "less")

    @needs_paper
    def test_table2_matches_the_paper(self):
        cf = load_claims(PAPER_TOML).claims
        rows = {r[0]: [float(x) for x in r[1:]] for r in _paper_rows("Table 2: Synthetic")[1:]}
        osu = rows.pop("OSU-Mem")
        t2 = [c for c in cf if c.family == "table2"]
        assert len(t2) == 4 * len(rows) - 12  # B = 256 vs retrieval baselines: Table 10
        for c in t2:
            printed_row = c.source.split(" vs ")[1].split(",")[0].replace("+", "$+$")
            j = {(128, "hit@2"): 0, (128, "recall"): 1, (256, "hit@2"): 2, (256, "recall"): 3}[
                (c.budget, c.metric)
            ]
            assert c.reported_means == (osu[j], rows[printed_row][j])

    @needs_paper
    def test_table10_matches_the_paper(self):
        cf = {c.id: c for c in load_claims(PAPER_TOML).claims}
        rows = _paper_rows("Table 10: Synthetic benchmark")
        assert len(rows) == 14
        names = {"Flat Vector": "flat-vector", "Flat $+$ MMR": "flat-mmr",
                 "Tree Abstraction": "tree-abstraction", "Coverage-Aware": "coverage-aware",
                 "Disjoint Hierarchy": "disjoint-hierarchy",
                 "OSU-Mem (disjoint)": "osu-mem-disjoint",
                 "OSU-Mem (no novelty)": "osu-mem-no-novelty"}  # fmt: skip
        for metric, comparison, delta, p, n in rows:
            key = names[comparison.removeprefix("OSU-Mem vs. ")]
            c = cf[f"T10-{key}-{'hit2' if metric == 'Hit@2' else 'recall'}"]
            assert c.reported_effect == pytest.approx(float(delta.strip("$+")))
            printed = re.search(r"(<)?(\.\d+)", p.replace("$", ""))
            assert c.reported_p.value == float(printed.group(2))
            assert c.reported_p.relation == (printed.group(1) or "=")
            assert c.reported_n == int(n) == 197 and c.unit == "episode"
            assert c.kind == ("equivalence" if "novelty" in key else "difference")

    @needs_paper
    def test_table3_and_16_match_the_paper(self):
        cf = {c.id: c for c in load_claims(PAPER_TOML).claims}
        rows = {r[0]: r[1:] for r in _paper_rows("Table 3: ToolBench planted-retrieval")[1:]}
        flat = [float(x) for x in rows["Flat Vector"]][1::2]
        for label, variant in (("Cov (overlap, $M{=}5$)", "overlap"),
                               ("Cov (disjoint, $M{=}1$)", "disjoint")):  # fmt: skip
            recall = [float(x) for x in rows[label]][1::2]
            for b, r, f in zip((200, 400, 800, 1600), recall, flat, strict=True):
                c = cf[f"T3-{variant}-vs-flat-B{b}"]
                assert c.reported_means == (r, f) and c.margin == 0.01
        marks = {"": ">=.05", "*": "<.05", "**": "<.01", "***": "<.001"}
        for row in _paper_rows("Table 16: Per-seed overlap")[:3]:
            for b, printed in zip((200, 400, 800, 1600), row[1:], strict=True):
                c = cf[f"T16-seed{row[0]}-B{b}"]
                star = re.search(r"\^\{(\*+)\}", printed)
                pp = float(re.search(r"\+(\d*\.\d+)", printed).group(1))
                assert c.reported_effect == pytest.approx(pp / 100)
                assert c.reported_p.text == marks[star.group(1) if star else ""]
                assert c.seed == int(row[0])

    @needs_paper
    def test_table4_matches_the_paper(self):
        cf = {c.id: c for c in load_claims(PAPER_TOML).claims}
        rows = _paper_rows("Table 4: τ\\tau-bench 2×22{\\times}2")
        assert len(rows) == 5
        marks = {"": ">=.10", ".": "<.10", "*": "<.05", "**": "<.01", "***": "<.001"}
        exact = {("T+E+", "hit2"): "0.022", ("T-E-", "hit2"): "0.007", ("T-E-", "recall"): "<.001"}
        for row in rows:
            label = row[0].split("(")[0].replace("$", "").strip()
            tag = "agg" if label == "Aggregate" else label.replace("+", "p").replace("-", "m")
            for col, printed in zip(("hit2", "recall", "odhit2"), row[2:], strict=True):
                cid = f"T4-{tag}-{col}"
                if _num(printed) == 0:
                    assert cid not in cf  # '+.000' has no direction: left out
                    continue
                c = cf[cid]
                star = re.search(r"\^\{(\S*?)\}", printed)
                mark = star.group(1) if star else ""
                assert c.reported_effect == pytest.approx(_num(printed))
                assert c.reported_n == int(row[1])
                expected = exact.get((label, col), marks[mark])
                assert c.reported_p.text == expected, (cid, printed)
                assert c.baseline == ("OSU-Mem (disjoint)" if col == "odhit2" else "Flat Vector")

    @needs_paper
    def test_table6_matches_the_paper(self):
        cf = {c.id: c for c in load_claims(PAPER_TOML).claims}
        rows = _paper_rows("Table 6: ToolBench")
        assert len(rows) == 5
        marks = {"": ">=.05", "*": "<.05", "**": "<.01", "***": "<.001"}
        for row in rows:
            beta = format(float(re.search(r"\.\d+", row[0]).group()), ".2f")
            for b, printed in zip((200, 400, 800, 1600), row[1:], strict=True):
                c = cf[f"T6-beta{beta}-B{b}"]
                pp = float(re.search(r"\+(\d*\.\d+)", printed).group(1))
                star = re.search(r"\^\{(\*+)\}", printed)
                assert c.reported_effect == pytest.approx(pp / 100)  # printed in pp
                assert c.reported_p.text == marks[star.group(1) if star else ""]
                assert c.seeds == "fisher" and c.metric == "recall"
