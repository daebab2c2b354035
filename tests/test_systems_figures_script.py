"""examples/systems_figures.py draws the pair its analysis holds (a new user's run drew
mine − zep numbers under the default title "zep − mem0", and crashed on a several-pair
results.json)."""

import importlib.util
import json
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "examples" / "systems_figures.py"


def _script():
    spec = importlib.util.spec_from_file_location("systems_figures", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _pair(t, b, effect):
    row = {"cell": "Aggregate", "effect": effect, "ci": [effect - 0.1, effect + 0.1], "n": 10,
           "pvalue": 0.01}  # fmt: skip
    return {"treatment": t, "baseline": b, "unit": "episode",
            "comparisons": [{"metric": "judge", "rows": [row]}]}  # fmt: skip


def test_the_title_is_the_analysis_pair_and_a_pair_it_lacks_is_refused(tmp_path):
    rows = _script()._rows
    one = tmp_path / "one.json"
    one.write_text(json.dumps(_pair("mine", "zep", 0.2)))
    t, b, got = rows(one, None, None)
    assert (t, b) == ("mine", "zep") and got[0]["effect"] == 0.2
    with pytest.raises(SystemExit, match=r"no analysis of zep vs mem0; it holds mine vs zep;"):
        rows(one, "zep", "mem0")
    several = tmp_path / "several.json"
    several.write_text(json.dumps({"unit": "episode", "results_by_pair": [
        _pair("mem0", "zep", -0.3), _pair("mem0", "mine", -0.1)]}))  # fmt: skip
    with pytest.raises(SystemExit, match=r"it holds mem0 vs zep, mem0 vs mine; name one"):
        rows(several, None, None)
    assert rows(several, "mem0", "mine")[2][0]["effect"] == -0.1
    with pytest.raises(SystemExit, match=r"the other way round: swap --treatment and --baseline"):
        rows(several, "zep", "mem0")
