import doctest
import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import osustat.analyses.evidence_selection.run as selection_module
import osustat.analyses.evidence_selection.selectors as selectors_module
import osustat.analyses.evidence_selection.stats as stats_module
from osustat import adjust_pvalues, paired_signflip_test, validate_records
from osustat.analyses.evidence_selection.run import (
    SelectionOutcome,
    SelectionQuery,
    run_evidence_selection,
    selection_records,
)
from osustat.analyses.evidence_selection.scoring import (
    hard_recall_metric,
    max_cosines,
    score_selection,
)
from osustat.analyses.evidence_selection.selectors import (
    ChatCompletionsSelector,
    ExtractiveSimilaritySelector,
    Selector,
    SelectorError,
    build_user_prompt,
    parse_listed_events,
)
from osustat.analyses.evidence_selection.stats import compare_selection, seed_aware_test
from osustat.retrieval.encoder import HashingBagOfWordsEncoder


@pytest.mark.parametrize("module", [selection_module, stats_module, selectors_module])
def test_doctests(module):
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0


# -- Scoring ------------------------------------------------------------------------------


class TestScoreSelection:
    # -- Input validation --
    def test_dimension_mismatch(self):
        with pytest.raises(ValueError, match="same dimension; got 2 and 3"):
            score_selection([[1, 0]], [[1, 0, 0]])

    def test_zero_vector_rows_named(self):
        with pytest.raises(ValueError, match=r"`listed` has zero vectors .* rows \[1\]"):
            score_selection([[1, 0]], [[1, 0], [0, 0]])

    def test_nan_rows_named(self):
        with pytest.raises(ValueError, match=r"`evidence` has NaN .* rows 0"):
            score_selection([[np.nan, 0], [1, 0]], [[1, 0]])

    def test_not_2d(self):
        with pytest.raises(ValueError, match="`evidence` must be 2-D"):
            score_selection([1, 0], [[1, 0]])

    def test_no_evidence(self):
        with pytest.raises(ValueError, match="at least one evidence step"):
            max_cosines(np.zeros((0, 2)), [[1, 0]])

    @pytest.mark.parametrize(
        ("tau", "exc"), [(1.0, ValueError), (-1.5, ValueError), (True, TypeError)]
    )
    def test_bad_threshold(self, tau, exc):
        with pytest.raises(exc, match="`threshold`"):
            score_selection([[1, 0]], [[1, 0]], threshold=tau)

    # -- Reference values (hand-computed cosines) --
    def test_three_evidence_two_listed(self):
        # e1, e2, e3 = unit axes; l1 = (1, 1, 0)/sqrt 2 -> cos .7071, .7071, 0;
        # l2 = (0, .6, .8) -> cos 0, .6, .8. Max per evidence step: .7071, .7071, .8.
        ev = np.eye(3)
        listed = [[1, 1, 0], [0, 0.6, 0.8]]
        s = score_selection(ev, listed)
        r = 1 / np.sqrt(2)
        np.testing.assert_allclose(s.max_cosines, [r, r, 0.8])
        assert s.soft_recall == pytest.approx((2 * r + 0.8) / 3)
        assert s.hard_recall == 1.0
        assert score_selection(ev, listed, threshold=0.75).hard_recall == pytest.approx(1 / 3)
        assert s.n_listed == 2

    def test_threshold_is_strict(self):
        # cos((1, 0), (3, 4)) = 3/5 exactly: not above a threshold of .6.
        assert score_selection([[1, 0]], [[3, 4]], threshold=0.6).hard_recall == 0.0
        assert score_selection([[1, 0]], [[3, 4]], threshold=0.59).hard_recall == 1.0

    def test_negative_cosines_kept(self):
        s = score_selection([[1, 0]], [[-1, 0.0001]])
        assert s.soft_recall == pytest.approx(-1.0)
        assert s.hard_recall == 0.0

    def test_nothing_listed_scores_zero(self):
        s = score_selection(np.eye(2), np.zeros((0, 2)))
        assert (s.soft_recall, s.hard_recall, s.n_listed) == (0.0, 0.0, 0)

    def test_scale_invariant(self):
        a = score_selection([[2, 0], [0, 5]], [[30, 40]])
        b = score_selection([[1, 0], [0, 1]], [[0.6, 0.8]])
        assert a == b

    def test_metric_names(self):
        assert hard_recall_metric() == "hard_recall@0.5"
        assert hard_recall_metric(0.7) == "hard_recall@0.7"

    # -- Properties --
    @given(
        ev=hnp.arrays(np.float64, (4, 3), elements=st.floats(-1, 1)),
        listed=hnp.arrays(np.float64, (3, 3), elements=st.floats(-1, 1)),
    )
    def test_more_events_never_lower_recall_and_hard_monotone(self, ev, listed):
        ev = ev + np.array([2.0, 0, 0])  # keep rows non-zero
        listed = listed + np.array([0, 2.0, 0])
        fewer = score_selection(ev, listed[:2])
        more = score_selection(ev, listed)
        assert more.soft_recall >= fewer.soft_recall - 1e-12
        assert more.hard_recall >= fewer.hard_recall
        taus = [-0.5, 0.0, 0.3, 0.5, 0.9]
        hards = [score_selection(ev, listed, threshold=t).hard_recall for t in taus]
        assert hards == sorted(hards, reverse=True)
        assert -1.0 <= more.soft_recall <= 1.0


# -- Selectors ----------------------------------------------------------------------------


class TestParseListedEvents:
    def test_bullets_and_numbering(self):
        reply = "1. Booked HAT123\n2) Paid with card\n(3) Asked about bags\n[4] extra"
        assert parse_listed_events(reply, max_events=4) == (
            "Booked HAT123",
            "Paid with card",
            "Asked about bags",
            "extra",
        )

    def test_preamble_dropped_when_items_are_marked(self):
        reply = "Here are the events:\n- A\n• B\n* C\n"
        assert parse_listed_events(reply) == ("A", "B", "C")

    def test_unmarked_lines_and_quotes(self):
        assert parse_listed_events('"first"\n\nsecond\n') == ("first", "second")

    def test_time_not_taken_for_a_marker(self):
        assert parse_listed_events("12:30 flight departed") == ("12:30 flight departed",)

    def test_json_list_object_and_fence(self):
        assert parse_listed_events('["a", " b "]') == ("a", "b")
        assert parse_listed_events('{"events": ["x"]}') == ("x",)
        assert parse_listed_events('```\n["y", "z"]\n```') == ("y", "z")

    def test_keeps_first_max_events(self):
        assert parse_listed_events("- a\n- b\n- c\n- d") == ("a", "b", "c")

    @pytest.mark.parametrize("content", ["", "   \n  ", "-  \n* "])
    def test_no_events_is_an_error(self, content):
        with pytest.raises(SelectorError, match="no listed events"):
            parse_listed_events(content)

    def test_validation(self):
        with pytest.raises(TypeError, match="`content` must be a str"):
            parse_listed_events(None)
        with pytest.raises(ValueError, match="`max_events` must be at least 1"):
            parse_listed_events("- a", max_events=0)


class _ScriptedHandler(BaseHTTPRequestHandler):
    """Answers each POST with the next scripted (status, body, delay); records requests."""

    def do_POST(self):
        length = int(self.headers.get("Content-Length", 0))
        raw = self.rfile.read(length)
        self.server.requests.append(
            {"path": self.path, "headers": dict(self.headers), "body": json.loads(raw)}
        )
        script = self.server.script
        status, body, delay = script.pop(0) if script else (500, {"error": "no script"}, 0)
        if delay:
            time.sleep(delay)
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except OSError:  # the client gave up (timeout test)
            pass

    def log_message(self, format, *args):  # keep test output clean
        pass


def chat_reply(content):
    return {"choices": [{"index": 0, "message": {"role": "assistant", "content": content}}]}


@pytest.fixture
def server():
    """An OpenAI-compatible stand-in on 127.0.0.1; shuts itself down after 30 s at most."""
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _ScriptedHandler)
    srv.daemon_threads = True
    srv.script, srv.requests = [], []
    srv.handle_error = lambda request, client_address: None
    thread = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.02})
    thread.daemon = True
    thread.start()
    watchdog = threading.Timer(30.0, srv.shutdown)
    watchdog.daemon = True
    watchdog.start()
    srv.base_url = f"http://127.0.0.1:{srv.server_address[1]}/v1"
    yield srv
    watchdog.cancel()
    srv.shutdown()
    srv.server_close()
    thread.join(timeout=5)


def make_client(server, **kw):
    defaults = {
        "base_url": server.base_url,
        "model": "test-model",
        "api_key_env": None,
        "timeout": 5.0,
        "max_retries": 2,
        "backoff": 0.0,
    }
    return ChatCompletionsSelector(**{**defaults, **kw})


class TestChatCompletionsSelector:
    # -- Input validation --
    @pytest.mark.parametrize(
        ("kw", "exc", "match"),
        [
            ({"base_url": "127.0.0.1:8000"}, ValueError, "`base_url` must start with http"),
            ({"model": ""}, ValueError, "`model` must be a non-empty"),
            ({"temperature": 3.0}, ValueError, r"`temperature` must be in \[0, 2\]"),
            ({"temperature": "0"}, TypeError, "`temperature` must be a number"),
            ({"timeout": 0}, ValueError, "`timeout` must be a finite positive"),
            ({"backoff": -1}, ValueError, "`backoff` must be a finite non-negative"),
            ({"max_retries": -1}, ValueError, "`max_retries` must be a non-negative"),
            ({"n_events": 0}, ValueError, "`n_events` must be at least 1"),
            ({"system_prompt": "no field"}, ValueError, r"`system_prompt` must contain a `\{k\}`"),
            ({"api_key_env": " "}, ValueError, "`api_key_env` must name"),
        ],
    )
    def test_constructor_validation(self, kw, exc, match):
        args = {"base_url": "http://127.0.0.1:1/v1", "model": "m", **kw}
        with pytest.raises(exc, match=match):
            ChatCompletionsSelector(**args)

    def test_context_must_be_texts(self, server):
        with pytest.raises(TypeError, match=r"non-str entries at positions \[1\]"):
            make_client(server).select("q", ["a", 3])
        assert server.requests == []

    # -- Behaviour against the loopback server --
    def test_request_and_parsed_reply(self, server, monkeypatch):
        monkeypatch.setenv("OSUSTAT_TEST_KEY", "sk-test-123")
        server.script.append((200, chat_reply("Sure:\n- Booked HAT123\n- Paid 120 USD\n- Bag"), 0))
        client = make_client(server, api_key_env="OSUSTAT_TEST_KEY", temperature=0.0)
        events = client.select("Cancel my trip", ["user: book HAT123", "tool: ok"], seed=7)
        assert events == ("Booked HAT123", "Paid 120 USD", "Bag")
        assert isinstance(client, Selector)
        (req,) = server.requests
        assert req["path"] == "/v1/chat/completions"
        assert req["headers"]["Authorization"] == "Bearer sk-test-123"
        body = req["body"]
        assert (body["model"], body["temperature"], body["seed"]) == ("test-model", 0.0, 7)
        system, user = body["messages"]
        assert system["role"] == "system" and "exactly 3" in system["content"]
        assert user == {
            "role": "user",
            "content": build_user_prompt("Cancel my trip", ["user: book HAT123", "tool: ok"]),
        }
        assert "sk-test" not in repr(vars(client))  # the key is never stored

    def test_no_key_header_without_env_name(self, server):
        server.script.append((200, chat_reply("- a"), 0))
        make_client(server).select("q", [])
        assert "Authorization" not in server.requests[0]["headers"]
        assert "(nothing retrieved)" in server.requests[0]["body"]["messages"][1]["content"]

    def test_missing_key_variable(self, server, monkeypatch):
        monkeypatch.delenv("OSUSTAT_ABSENT_KEY", raising=False)
        with pytest.raises(SelectorError, match=r"'OSUSTAT_ABSENT_KEY'.* is not set"):
            make_client(server, api_key_env="OSUSTAT_ABSENT_KEY").select("q", ["a"])
        assert server.requests == []

    def test_client_error_not_retried(self, server):
        server.script.append((400, {"error": {"message": "bad model name"}}, 0))
        with pytest.raises(SelectorError, match=r"HTTP 400.*bad model name"):
            make_client(server).select("q", ["a"])
        assert len(server.requests) == 1

    def test_server_error_retried_then_success(self, server):
        waits = []
        server.script += [(503, {"error": "busy"}, 0), (429, {"error": "slow"}, 0)]
        server.script.append((200, chat_reply("- recovered"), 0))
        client = make_client(server, backoff=0.5, sleep=waits.append)
        assert client.select("q", ["a"]) == ("recovered",)
        assert len(server.requests) == 3
        assert waits == [0.5, 1.0]

    def test_retries_exhausted(self, server):
        server.script += [(500, {"error": "down"}, 0)] * 3
        with pytest.raises(SelectorError, match="failed after 3 attempts; last error: HTTP 500"):
            make_client(server, max_retries=2).select("q", ["a"])
        assert len(server.requests) == 3

    @pytest.mark.parametrize(
        ("body", "match"),
        [
            (b"<html>oops</html>", "malformed reply .* choices\\[0\\].message.content"),
            ({"object": "chat.completion"}, "malformed reply"),
            ({"choices": []}, "malformed reply"),
            ({"choices": [{"message": {"content": None}}]}, "content is NoneType"),
            (chat_reply(""), "no listed events"),
        ],
    )
    def test_malformed_reply(self, server, body, match):
        server.script.append((200, body, 0))
        with pytest.raises(SelectorError, match=match):
            make_client(server).select("q", ["a"])
        assert len(server.requests) == 1

    def test_timeout(self, server):
        server.script += [(200, chat_reply("- late"), 0.6)] * 2
        with pytest.raises(SelectorError, match="failed after 2 attempts"):
            make_client(server, timeout=0.1, max_retries=1).select("q", ["a"])

    def test_connection_refused(self):
        holder = ThreadingHTTPServer(("127.0.0.1", 0), _ScriptedHandler)
        port = holder.server_address[1]
        holder.server_close()  # nothing listens on `port` now
        client = ChatCompletionsSelector(
            base_url=f"http://127.0.0.1:{port}/v1",
            model="m",
            api_key_env=None,
            max_retries=1,
            backoff=0.0,
        )
        with pytest.raises(SelectorError, match="failed after 2 attempts"):
            client.select("q", ["a"])


class TestExtractiveSimilaritySelector:
    enc = HashingBagOfWordsEncoder(dim=1024)

    def test_validation(self):
        with pytest.raises(TypeError, match="`encoder` must provide"):
            ExtractiveSimilaritySelector("not an encoder")
        with pytest.raises(ValueError, match="`k` must be at least 1"):
            ExtractiveSimilaritySelector(self.enc, k=0)
        with pytest.raises(TypeError, match="`context` must be a sequence"):
            ExtractiveSimilaritySelector(self.enc).select("q", "one string")

    def test_top_k_by_cosine(self):
        steps = ["weather sunny", "refund issued for HAT123", "refund HAT123", "seat 12A"]
        e = self.enc.encode(["refund HAT123", *steps])
        order = np.argsort(-(e[1:] @ e[0]), kind="stable")
        sel = ExtractiveSimilaritySelector(self.enc, k=2)
        assert sel.select("refund HAT123", steps) == tuple(steps[i] for i in order[:2])
        assert sel.select("refund HAT123", steps)[0] == "refund HAT123"

    def test_ties_keep_retrieval_order_and_k_larger_than_context(self):
        sel = ExtractiveSimilaritySelector(self.enc, k=5)
        assert sel.select("x", ["b a", "a b", "zzz"]) == ("b a", "a b", "zzz")

    def test_empty_context_and_seed_ignored(self):
        sel = ExtractiveSimilaritySelector(self.enc)
        assert sel.select("x", []) == ()
        assert sel.select("a", ["a", "b"], seed=1) == sel.select("a", ["a", "b"], seed=2)

    def test_named_as_not_an_llm(self):
        sel = ExtractiveSimilaritySelector(self.enc)
        assert isinstance(sel, Selector)
        assert "not an LLM" in sel.name and "extractive" in sel.name


# -- Running selectors and records --------------------------------------------------------


class ScriptedSelector:
    """Lists fixed events per (instruction, seed); records calls."""

    name = "scripted"

    def __init__(self, fail_on=None):
        self.calls = []
        self.fail_on = fail_on

    def select(self, instruction, context, *, seed=None):
        self.calls.append((instruction, tuple(context), seed))
        if instruction == self.fail_on:
            raise SelectorError("scripted failure")
        return tuple(context[:1]) + ((f"extra {seed}",) if context else ())


class CountingEncoder(HashingBagOfWordsEncoder):
    def __init__(self):
        super().__init__(dim=256)
        self.seen = []

    def encode(self, texts):
        self.seen.extend(texts)
        return super().encode(texts)


QUERIES = [
    SelectionQuery("e1", "q1", "refund HAT123", ("refund HAT123 issued", "card charged"), "T+E+"),
    SelectionQuery("e1", "q2", "seat change", ("seat 12A assigned",), "T-E-"),
]
CONTEXTS = {
    "osu": {("e1", "q1"): ["refund HAT123 issued", "bag"], ("e1", "q2"): ["seat 12A assigned"]},
    "none": {("e1", "q1"): [], ("e1", "q2"): []},
}


class TestRunEvidenceSelection:
    # -- Input validation --
    def test_context_missing_and_unknown_queries(self):
        bad = {"osu": {("e1", "q1"): [], ("e9", "q9"): []}}
        with pytest.raises(ValueError, match=r"missing \[\('e1', 'q2'\)\], unknown \[\('e9'"):
            run_evidence_selection(QUERIES, bad, ScriptedSelector(), CountingEncoder())

    def test_duplicate_queries(self):
        with pytest.raises(ValueError, match=r"duplicate .* \[\('e1', 'q1'\)\]"):
            run_evidence_selection(
                [QUERIES[0], QUERIES[0]], CONTEXTS, ScriptedSelector(), CountingEncoder()
            )

    def test_mixed_cells(self):
        q = SelectionQuery("e1", "q2", "seat change", ("seat",))
        with pytest.raises(ValueError, match=r"`cell` is missing for queries \[\('e1', 'q2'\)\]"):
            run_evidence_selection([QUERIES[0], q], CONTEXTS, ScriptedSelector(), CountingEncoder())

    def test_seeds_and_protocols(self):
        with pytest.raises(ValueError, match="`seeds` has duplicates"):
            run_evidence_selection(
                QUERIES, CONTEXTS, ScriptedSelector(), CountingEncoder(), seeds=[1, 1]
            )
        with pytest.raises(TypeError, match="`seeds` must be a non-empty sequence of int"):
            run_evidence_selection(
                QUERIES, CONTEXTS, ScriptedSelector(), CountingEncoder(), seeds=[]
            )
        with pytest.raises(TypeError, match="`selector` must implement Selector"):
            run_evidence_selection(QUERIES, CONTEXTS, object(), CountingEncoder())

    def test_query_validation(self):
        with pytest.raises(ValueError, match="must hold at least one str"):
            SelectionQuery("e", "q", "i", ())
        with pytest.raises(
            ValueError, match=r"`cell` of query \('e', 'q'\): Unknown cell label 'T\?E\?'"
        ):
            SelectionQuery("e", "q", "i", ("a",), cell="T?E?")

    def test_selector_failure_names_query_method_seed(self):
        with pytest.raises(SelectorError, match=r"e1/q2, method 'osu', seed 3: scripted failure"):
            run_evidence_selection(
                QUERIES,
                CONTEXTS,
                ScriptedSelector(fail_on="seat change"),
                CountingEncoder(),
                seeds=[3],
            )

    # -- Behaviour --
    def test_outcomes_match_direct_scoring(self):
        enc, sel = CountingEncoder(), ScriptedSelector()
        out = run_evidence_selection(QUERIES, CONTEXTS, sel, enc, seeds=[0, 1])
        assert [(o.seed, o.method, o.query_id) for o in out] == [
            (s, m, q) for s in (0, 1) for m in ("osu", "none") for q in ("q1", "q2")
        ]
        assert [c[2] for c in sel.calls] == [0] * 4 + [1] * 4
        for o in out:
            q = next(q for q in QUERIES if q.query_id == o.query_id)
            expected = score_selection(
                enc.encode(list(q.evidence)),
                enc.encode(list(o.listed)) if o.listed else np.zeros((0, 256)),
            )
            np.testing.assert_allclose(o.max_cosines, expected.max_cosines, atol=1e-6)
            assert o.cell == q.cell
        osu_q1 = out[0]
        assert osu_q1.listed == ("refund HAT123 issued", "extra 0")
        assert osu_q1.max_cosines[0] == pytest.approx(1.0)
        assert [o.soft_recall for o in out if o.method == "none"] == [0.0] * 4

    def test_each_listed_text_encoded_once(self):
        enc = CountingEncoder()
        run_evidence_selection(QUERIES, CONTEXTS, ScriptedSelector(), enc, seeds=[0, 1])
        listed_part = enc.seen[3:]  # after the 3 evidence texts
        assert sorted(listed_part) == sorted(set(listed_part))
        assert "refund HAT123 issued" in listed_part


class TestSelectionRecords:
    def test_schema_and_values(self):
        out = run_evidence_selection(
            QUERIES, CONTEXTS, ScriptedSelector(), CountingEncoder(), seeds=[0, 1]
        )
        recs = selection_records(out, budget=256, thresholds=[0.5, 0.8], benchmark="tau")
        assert len(recs) == len(out) * 3
        assert set(recs["metric"]) == {"soft_recall", "hard_recall@0.5", "hard_recall@0.8"}
        validate_records(recs)
        row = recs[(recs.method == "osu") & (recs.query_id == "q1") & (recs.seed == 0)].set_index(
            "metric"
        )["value"]
        o = out[0]
        assert row["soft_recall"] == pytest.approx(np.mean(o.max_cosines))
        assert row["hard_recall@0.5"] == np.mean(np.array(o.max_cosines) > 0.5)
        assert set(recs["cell"]) == {"T+E+", "T-E-"}
        assert set(recs["benchmark"]) == {"tau"}

    def test_outcome_validation(self):
        with pytest.raises(ValueError, match=r"`max_cosines` \(e/q, method 'm', seed 0\) must lie"):
            SelectionOutcome("e", "q", "m", 0, None, (), (0.2, 1.5))
        with pytest.raises(ValueError, match="one value per evidence step"):
            SelectionOutcome("e", "q", "m", 0, None, (), ())

    def test_validation(self):
        with pytest.raises(ValueError, match="`outcomes` must be a non-empty"):
            selection_records([], budget=256)
        with pytest.raises(TypeError, match="`thresholds` must be a non-empty sequence"):
            selection_records(
                [SelectionOutcome("e", "q", "m", 0, None, (), (0.0,))], budget=1, thresholds=0.5
            )


# -- Statistics ---------------------------------------------------------------------------


def records_from(values, cells=None, metric="soft_recall"):
    """values: {method: (n_queries, n_seeds) array} -> records."""
    rows = []
    for method, mat in values.items():
        for i, per_seed in enumerate(np.asarray(mat)):
            for s, v in enumerate(per_seed):
                rows.append(
                    {
                        "episode_id": f"e{i // 4}",
                        "query_id": f"q{i}",
                        "method": method,
                        "budget": 256,
                        "seed": s,
                        "metric": metric,
                        "value": float(v),
                        "cell": None if cells is None else cells[i],
                    }
                )
    return pd.DataFrame(rows)


def near_duplicate_seeds(n=40, k=3, z=1.6, noise=0.01, rng=0):
    """Per-query effects with a seed-averaged t of about `z`; seeds add tiny noise."""
    gen = np.random.default_rng(rng)
    base = gen.standard_normal(n)
    base = (base - base.mean()) / base.std(ddof=1)
    effect = 0.3 * (base + z / np.sqrt(n))
    treatment = effect[:, None] + noise * gen.standard_normal((n, k))
    return treatment, np.zeros((n, k))


class TestSeedAwareTest:
    # -- Input validation --
    def test_shape_mismatch(self):
        with pytest.raises(ValueError, match=r"same shape .* \(3, 2\) and \(3, 3\)"):
            seed_aware_test(np.zeros((3, 2)), np.zeros((3, 3)))

    def test_nan_rows(self):
        t = np.zeros((3, 2))
        t[1, 0] = np.nan
        with pytest.raises(ValueError, match=r"`treatment` has NaN .* rows \[1\]"):
            seed_aware_test(t, np.zeros((3, 2)))

    def test_too_few_queries(self):
        with pytest.raises(ValueError, match=r"shape \(n_queries >= 2, n_seeds\)"):
            seed_aware_test(np.zeros((1, 3)), np.zeros((1, 3)))

    # -- Reference values --
    def test_matches_osustat_on_averaged_and_flattened_differences(self):
        # 4 queries x 3 seeds: both tests are exact (2**12 <= 10,000), so ordering is moot.
        t = np.array([[0.5, 0.6, 0.4], [0.2, 0.3, 0.1], [0.9, 0.7, 0.8], [0.1, 0.0, 0.35]])
        b = np.array([[0.1, 0.2, 0.3], [0.3, 0.2, 0.2], [0.4, 0.5, 0.45], [0.2, 0.1, 0.05]])
        res = seed_aware_test(t, b, n_resamples=10_000, rng=0)
        avg = paired_signflip_test(t.mean(axis=1), b.mean(axis=1), n_resamples=10_000)
        pooled = paired_signflip_test(t.ravel(), b.ravel(), n_resamples=10_000)
        assert res.per_query.exact and res.pooled.exact
        # Seed-averaged differences (.3, -1/30, .35, 1/30), sum .65: |sum| >= .65 exactly when
        # the two large ones share a sign and the two small ones do not sum below 0:
        # 2 * 3 of the 16 patterns (the tie +1/30 - 1/30 counts), p = 6/16.
        assert res.per_query.pvalue == avg.pvalue == 0.375
        assert res.pooled.pvalue == pytest.approx(pooled.pvalue)
        assert res.effect == pytest.approx(float((t - b).mean()))
        assert (res.n_queries, res.n_seeds, res.pooled.n) == (4, 3, 12)
        assert res.dependence is not None

    def test_single_seed_has_no_dependence_and_equal_tests(self):
        res = seed_aware_test([0.3, 0.5, 0.9, 0.2], [0.1, 0.4, 0.2, 0.3])
        assert res.dependence is None
        assert res.per_query.pvalue == res.pooled.pvalue

    # -- Properties --
    def test_pooling_is_anti_conservative_on_near_duplicate_seeds(self):
        t, b = near_duplicate_seeds()
        res = seed_aware_test(t, b, rng=1)
        assert res.per_query.pvalue > 0.1
        assert res.pooled.pvalue < 0.05
        assert res.dependence.too_dependent
        assert res.dependence.effective_seeds < 1.1

    def test_type_one_error_pooled_vs_averaged(self):
        # Null: per-query differences symmetric about 0; 3 near-duplicate seeds (rho ~ .99).
        gen = np.random.default_rng(2026)
        reps, n, k = 300, 30, 3
        seeds = np.random.SeedSequence(7).spawn(reps)
        rejections = np.zeros(2)
        for r in range(reps):
            base = gen.normal(0, 1, size=(n, 1))
            d = base + 0.1 * gen.normal(size=(n, k))
            res = seed_aware_test(d, np.zeros((n, k)), n_resamples=499, rng=seeds[r])
            rejections += [res.per_query.pvalue <= 0.05, res.pooled.pvalue <= 0.05]
        averaged_rate, pooled_rate = rejections / reps
        # Binomial(300, .05): 99.9% of draws below 30 rejections; pooling at n_eff ~ n gives
        # a z-threshold of 1.96 / sqrt(3): about 27% rejections.
        assert averaged_rate < 0.10
        assert pooled_rate > 0.18


class TestCompareSelection:
    # -- Input validation --
    def test_query_missing_a_seed(self):
        t, b = near_duplicate_seeds(n=6)
        df = records_from({"osu": t, "flat": b})
        df = df[~((df.query_id == "q2") & (df.seed == 1))]
        with pytest.raises(ValueError, match=r"seed 1 lacks queries \['e0/q2'\]"):
            compare_selection(df, "osu", "flat", metric="soft_recall", budget=256)

    def test_unknown_method_from_osustat(self):
        df = records_from({"osu": np.zeros((3, 2)), "flat": np.zeros((3, 2))})
        with pytest.raises(ValueError, match=r"known methods: \['flat', 'osu'\]"):
            compare_selection(df, "osu", "mmr", metric="soft_recall", budget=256)

    @pytest.mark.parametrize(
        ("kw", "exc", "match"),
        [
            ({"correction": "bogus"}, ValueError, "`correction` must be one of"),
            ({"level": 1.5}, ValueError, r"`level` must be a number in \(0, 1\)"),
            ({"by_cell": "yes"}, TypeError, "`by_cell` must be a bool"),
        ],
    )
    def test_argument_validation(self, kw, exc, match):
        df = records_from({"osu": np.zeros((3, 2)), "flat": np.zeros((3, 2))})
        with pytest.raises(exc, match=match):
            compare_selection(df, "osu", "flat", metric="soft_recall", budget=256, **kw)

    # -- Behaviour --
    def test_aggregate_equals_array_level_test(self):
        t, b = near_duplicate_seeds()
        df = records_from({"osu": t, "flat": b})
        res = compare_selection(df, "osu", "flat", metric="soft_recall", budget=256, rng=3)
        # Records are paired in sorted (episode_id, query_id) order; Monte Carlo signs follow it.
        order = sorted(range(len(t)), key=lambda i: (f"e{i // 4}", f"q{i}"))
        direct = seed_aware_test(t[order], b[order], rng=np.random.default_rng(3).spawn(1)[0])
        assert res.seeds == (0, 1, 2)
        assert res.aggregate.per_query.statistic == pytest.approx(direct.per_query.statistic)
        assert res.aggregate.per_query.pvalue == direct.per_query.pvalue
        assert res.aggregate.pooled.pvalue == direct.pooled.pvalue
        assert res.aggregate.pooled.pvalue < 0.05 < res.aggregate.per_query.pvalue
        assert res.cells == () and res.aggregate.pvalue_adjusted is None

    def test_cells_corrected_and_tiny_cell_reported(self):
        t, b = near_duplicate_seeds(n=21)
        cells = ["T+E+"] * 10 + ["T-E-"] * 10 + ["T-E+"]
        df = records_from({"osu": t, "flat": b}, cells=cells)
        res = compare_selection(
            df, "osu", "flat", metric="soft_recall", budget=256, n_resamples=2000, rng=0
        )
        assert [c.scope for c in res.cells] == ["T+E+", "T-E-"]
        assert [c.n_queries for c in res.cells] == [10, 10]
        assert res.skipped_cells == (("T-E+", 1),)
        expected = adjust_pvalues([c.per_query.pvalue for c in res.cells]).pvalues_adjusted
        np.testing.assert_allclose([c.pvalue_adjusted for c in res.cells], expected)
        assert res.aggregate.n_queries == 21
        with pytest.warns(DeprecationWarning, match="`pvalue_corrected` is deprecated"):
            assert [c.pvalue_corrected for c in res.cells] == [c.pvalue_adjusted for c in res.cells]
        frame = res.to_frame()
        assert frame["scope"].tolist() == ["T+E+", "T-E-", "aggregate"]
        assert frame["n"].tolist() == [10, 10, 21]
        assert set(frame["unit"]) == {"query (seed-averaged)"}
        assert (frame["n_pooled_pairs"] == frame["n"] * 3).all()
        assert (frame["ci_low"] <= frame["effect"]).all()
        assert (frame["effect"] <= frame["ci_high"]).all()
        no_cells = compare_selection(
            df, "osu", "flat", metric="soft_recall", budget=256, by_cell=False, n_resamples=200
        )
        assert no_cells.cells == ()

    def test_end_to_end_from_selector_to_comparison(self):
        enc = HashingBagOfWordsEncoder(dim=512)
        queries = [
            SelectionQuery("e", f"q{i}", f"item {i} refund", (f"item {i} refund done",), "T+E+")
            for i in range(6)
        ]
        contexts = {
            "osu": {q.key: [q.evidence[0], "noise step"] for q in queries},
            "flat": {q.key: ["noise step", "other noise"] for q in queries},
        }
        out = run_evidence_selection(
            queries, contexts, ExtractiveSimilaritySelector(enc, k=1), enc, seeds=[0, 1, 2]
        )
        recs = selection_records(out, budget=256)
        res = compare_selection(recs, "osu", "flat", budget=256, rng=0)
        assert res.metric == "hard_recall@0.5"
        assert res.aggregate.effect == pytest.approx(1.0)
        assert res.aggregate.per_query.pvalue == pytest.approx(2 / 2**6)  # exact binomial
        assert res.aggregate.pooled.pvalue < res.aggregate.per_query.pvalue
        assert res.aggregate.dependence.duplicate_fraction == 1.0


def test_docs_example_runs(capsys):
    """The offline example in docs/evidence_selection.md runs and prints the comparison."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "evidence_selection.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)
    (example,) = [b for b in blocks if "run_evidence_selection(" in b]
    exec(compile(example, "docs/evidence_selection.md", "exec"), {})
    out = capsys.readouterr().out
    assert "aggregate" in out and "p_pooled" in out


class TestTrajectoryAdapters:
    def test_texts_follow_the_retrieval_and_the_evidence(self):
        import numpy as np

        from osustat.analyses.evidence_selection.run import query_from_trajectory, retrieved_texts
        from osustat.retrieval import Query, RetrievalResult, Trajectory

        tr = Trajectory.from_steps(np.eye(4), [5] * 4, text=["w", "x", "y", "z"])
        q = Query("q1", np.ones(4), 4, [3, 1])
        sq = query_from_trajectory("e1", q, tr, "find x and z", cell="T+E+")
        assert sq.evidence == ("x", "z") and sq.cell == "T+E+"
        assert retrieved_texts(tr, RetrievalResult(np.array([3, 0]), 10.0)) == ["z", "w"]
        bare = Trajectory.from_steps(np.eye(2), [5, 5])
        with pytest.raises(ValueError, match="no step texts"):
            retrieved_texts(bare, RetrievalResult(np.array([0]), 5.0))
