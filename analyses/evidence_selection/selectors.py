"""Evidence selectors for the LLM-mediated evidence-selection check (paper §6.6, Appendix F).

A selector reads a query's instruction and the texts of the steps a retriever returned, and
lists the past events it considers relevant. Two selectors share the :class:`Selector`
protocol:

- :class:`ChatCompletionsSelector` -- an LLM behind any OpenAI-compatible
  ``POST {base_url}/chat/completions`` endpoint (OpenAI, vLLM, llama.cpp server, Ollama, ...),
  called with the standard library's ``urllib``. The paper used GPT-4o-mini at ``T = 0``
  asking for exactly three short event descriptions (``output='text'``, the default); the
  constrained variant ``output='ids'`` asks for the numbers of the relevant retrieved steps
  under a JSON-schema ``response_format`` whose items are an enum of the context's step ids,
  and lists those steps verbatim.
- :class:`ExtractiveSimilaritySelector` -- **never an LLM**: it returns, verbatim, the `k`
  retrieved steps whose embeddings are most similar to the instruction's. An offline,
  deterministic baseline for the scoring pipeline (and for runs without an LLM).

Reply format
------------
The prompt asks for one event per line, each starting with ``- ``. :func:`parse_listed_events`
accepts, in order: a JSON array of strings, or a JSON object with an ``"events"`` array (either
possibly inside a Markdown code fence); otherwise one event per non-empty line, with list
markers (``-``, ``*``, ``•``, ``1.``, ``1)``, ``(1)``, ``[1]``, each followed by a space) and
surrounding quotes removed; when some lines carry a list marker, only those lines are kept (so
a preamble such as "Here are the events:" is dropped). The first ``max_events`` events are
kept. A reply with no events is an error.

:meth:`ChatCompletionsSelector.reply` returns a :class:`SelectionReply` that keeps the raw
content and counts what went wrong (a parse failure, ids that are not in the context) instead of
raising, so a run can count every malformed reply; :meth:`~ChatCompletionsSelector.select` raises
on a parse failure.
"""

from __future__ import annotations

import http.client
import json
import math
import os
import re
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np

from osustat._validation import check_positive_int
from osustat.retrieval.encoder import TextEncoder

__all__ = [
    "DEFAULT_SYSTEM_PROMPT",
    "IDS_SYSTEM_PROMPT",
    "ChatCompletionsSelector",
    "ExtractiveSimilaritySelector",
    "SelectionReply",
    "Selector",
    "SelectorError",
    "build_user_prompt",
    "ids_response_format",
    "parse_listed_events",
    "parse_listed_ids",
]

DEFAULT_SYSTEM_PROMPT = (
    "You are the memory component of an assistant. You are given the user's instruction and "
    "excerpts retrieved from the assistant's past interaction history. List exactly {k} short "
    "descriptions of the past events most relevant to the instruction. Each description must "
    "be a concrete factual summary of something that happened or was stated in the history. "
    "Write one description per line, each line starting with '- ', and nothing else."
)

#: The constrained variant's system prompt (``output='ids'``): the same task, answered with the
#: numbers of the retrieved steps; the server's JSON schema allows only those numbers.
IDS_SYSTEM_PROMPT = (
    "You are the memory component of an assistant. You are given the user's instruction and "
    "excerpts retrieved from the assistant's past interaction history, numbered [1], [2], and "
    "so on. Choose the {k} excerpts that record the past events most relevant to the "
    'instruction. Answer with their numbers as JSON, for example {"ids": [2, 5, 1]}, and '
    "nothing else."
)
OUTPUTS = ("text", "ids")

_MARKER = re.compile(r"^\s*(?:[-*•·]|\(?\d{1,3}[.)]|\[\d{1,3}\])\s+")
_FENCE = re.compile(r"^\s*```[A-Za-z0-9_-]*\s*\n(.*?)\n?\s*```\s*$", re.DOTALL)
_LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})
_RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})


class SelectorError(RuntimeError):
    """A selector could not produce events (HTTP error, timeout, malformed reply)."""


@dataclass(frozen=True)
class SelectionReply:
    """What a model answered for one query, parsed, with what could not be used.

    Attributes
    ----------
    events : tuple of str
        The listed events (for ``output='ids'``: the listed steps' texts, each once, in the
        order first listed). Empty on a parse failure or for an empty context.
    raw : str
        The message content as received ('' when no request was made).
    failure : str or None
        Why no event could be read (non-JSON, no list, empty), or None.
    ids : tuple of int or None
        ``output='ids'``: the 1-based context positions listed that exist in the context, in
        the model's order, repeats kept. None for free text.
    invalid_ids : tuple
        ``output='ids'``: listed items that are not a position of the context (invented).
    """

    events: tuple[str, ...]
    raw: str
    failure: str | None = None
    ids: tuple[int, ...] | None = None
    invalid_ids: tuple[Any, ...] = ()


@runtime_checkable
class Selector(Protocol):
    """Lists the past events relevant to an instruction, given the retrieved steps.

    Attributes
    ----------
    name : str
        Describes the selector (model and settings); goes into the run's metadata.
    """

    name: str

    def select(
        self, instruction: str, context: Sequence[str], *, seed: int | None = None
    ) -> tuple[str, ...]:
        """Return the listed events (may be empty only when `context` is empty)."""
        ...


def _str_iv(value: Any, name: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"`{name}` must be a str; got {type(value).__name__}.")
    return value


def _context_iv(context: Any) -> list[str]:
    if isinstance(context, str | bytes) or not isinstance(context, Sequence):
        raise TypeError(
            f"`context` must be a sequence of step texts; got {type(context).__name__}."
        )
    bad = [i for i, t in enumerate(context) if not isinstance(t, str)]
    if bad:
        raise TypeError(f"`context` must hold only str; non-str entries at positions {bad[:10]}.")
    return list(context)


def parse_listed_events(content: str, *, max_events: int = 3) -> tuple[str, ...]:
    """Extract the listed events from an LLM reply (format in the module docstring).

    Parameters
    ----------
    content : str
        The assistant message's content.
    max_events : int
        Keep at most this many events (the first ones).

    Returns
    -------
    tuple of str

    Raises
    ------
    SelectorError
        No event could be read from `content`.

    Examples
    --------
    >>> from osustat.analyses.evidence_selection.selectors import parse_listed_events
    >>> reply = "Here they are:\\n- Booked HAT123.\\n2) Paid by card\\n\\n* Asked for a refund"
    >>> parse_listed_events(reply)
    ('Booked HAT123.', 'Paid by card', 'Asked for a refund')
    >>> parse_listed_events('```json\\n{"events": ["a", "b"]}\\n```')
    ('a', 'b')
    """
    _str_iv(content, "content")
    max_events = check_positive_int(max_events, "max_events")
    text = content.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1).strip()
    events: list[str] | None = None
    if text[:1] in "[{":
        try:
            parsed = json.loads(text)
        except json.JSONDecodeError:
            parsed = None
        if isinstance(parsed, dict):
            parsed = parsed.get("events")
        if isinstance(parsed, list) and all(isinstance(e, str) for e in parsed):
            events = [e.strip() for e in parsed]
    if events is None:
        lines = [line for line in text.splitlines() if line.strip()]
        marked = [line for line in lines if _MARKER.match(line)]
        # A preamble ("Here are the events:") is unmarked; keep only list items when any exist.
        events = [
            _MARKER.sub("", line, count=1).strip().strip("\"'").strip()
            for line in (marked or lines)
        ]
    events = [e for e in events if e]
    if not events:
        raise SelectorError(f"malformed reply: no listed events in {content[:200]!r}.")
    return tuple(events[:max_events])


def parse_listed_ids(
    content: str, context: Sequence[str], *, max_events: int = 3
) -> SelectionReply:
    """Read a constrained reply ``{"ids": [...]}`` against the `context` it numbered.

    Items that are integers in ``1..len(context)`` are kept (first `max_events` items); any
    other item is an invalid (invented) id, counted in ``invalid_ids``; a reply that is not
    such an object, or lists no valid id, is a failure (``failure`` says why). Never raises on
    the model's output.

    Examples
    --------
    >>> from osustat.analyses.evidence_selection.selectors import parse_listed_ids
    >>> r = parse_listed_ids('{"ids": [2, 7, 2]}', ["a", "b", "c"])
    >>> r.events, r.ids, r.invalid_ids, r.failure
    (('b',), (2, 2), (7,), None)
    >>> parse_listed_ids("the second one", ["a", "b"]).failure
    'not JSON'
    """
    _str_iv(content, "content")
    steps = _context_iv(context)
    max_events = check_positive_int(max_events, "max_events")
    text = content.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1).strip()
    try:
        parsed = json.loads(text)
    except json.JSONDecodeError:
        return SelectionReply((), content, "not JSON", ids=())
    items = parsed.get("ids") if isinstance(parsed, dict) else parsed
    if not isinstance(items, list):
        return SelectionReply((), content, 'no "ids" list', ids=())
    valid: list[int] = []
    invalid: list[Any] = []
    for item in items[:max_events]:
        ok = isinstance(item, int) and not isinstance(item, bool) and 1 <= item <= len(steps)
        (valid if ok else invalid).append(item)
    events = tuple(dict.fromkeys(steps[i - 1] for i in valid))
    failure = None if valid else ("empty list" if not items else "no id in the context")
    return SelectionReply(events, content, failure, ids=tuple(valid), invalid_ids=tuple(invalid))


def ids_response_format(n_steps: int, k: int) -> dict[str, Any]:
    """The JSON-schema ``response_format`` of the constrained variant: 1 to `k` ids in 1..n.

    Examples
    --------
    >>> from osustat.analyses.evidence_selection.selectors import ids_response_format
    >>> ids_response_format(3, 2)["json_schema"]["schema"]["properties"]["ids"]
    {'type': 'array', 'items': {'type': 'integer', 'enum': [1, 2, 3]}, 'minItems': 1, 'maxItems': 2}
    """
    ids = {
        "type": "array",
        "items": {"type": "integer", "enum": list(range(1, n_steps + 1))},
        "minItems": 1,
        "maxItems": min(k, n_steps),
    }
    schema = {
        "type": "object",
        "properties": {"ids": ids},
        "required": ["ids"],
        "additionalProperties": False,
    }
    return {"type": "json_schema", "json_schema": {"name": "listed_steps", "schema": schema}}


def build_user_prompt(instruction: str, context: Sequence[str]) -> str:
    """The user message: the instruction, then the retrieved steps numbered ``[1]``, ``[2]``...

    Examples
    --------
    >>> from osustat.analyses.evidence_selection.selectors import build_user_prompt
    >>> print(build_user_prompt("Cancel my trip", ["user: book HAT123", "tool: booked"]))
    Instruction: Cancel my trip
    <BLANKLINE>
    Retrieved history:
    [1] user: book HAT123
    [2] tool: booked
    """
    steps = "\n".join(f"[{i}] {t}" for i, t in enumerate(context, start=1))
    return f"Instruction: {instruction}\n\nRetrieved history:\n{steps or '(nothing retrieved)'}"


class ChatCompletionsSelector:
    """An LLM selector behind an OpenAI-compatible chat-completions endpoint.

    Sends ``POST {base_url}/chat/completions`` with ``model``, ``temperature``, ``seed`` (when
    given) and two messages (the system prompt with ``{k}`` filled in, then
    :func:`build_user_prompt`), and parses ``choices[0].message.content`` with
    :func:`parse_listed_events`. HTTP 408/409/425/429/5xx, connection errors and timeouts are
    retried up to `max_retries` times with exponential backoff; any other HTTP error, or a
    reply that is not the expected JSON, raises :class:`SelectorError` at once. Requests to a
    loopback host (``127.0.0.1``, ``localhost``, ``::1``) bypass any proxy set in the
    environment; others follow the usual ``https_proxy``/``no_proxy`` variables.

    Parameters
    ----------
    base_url : str
        e.g. ``'https://api.openai.com/v1'`` or ``'http://127.0.0.1:8000/v1'``.
    model : str
        e.g. ``'gpt-4o-mini'`` (the paper's model).
    temperature : float
        Sampling temperature, 0 (the paper's setting) to 2.
    n_events : int
        Events asked for and kept (the paper: 3).
    api_key_env : str or None
        Name of the environment variable holding the API key, read at each request and sent
        as ``Authorization: Bearer ...``. None sends no key (local servers). The key itself is
        never stored on the object.
    timeout : float
        Seconds per HTTP request.
    max_retries : int
        Retries after the first attempt (0 disables retrying).
    backoff : float
        Seconds before the first retry; doubled after each.
    system_prompt : str
        Template with a ``{k}`` field.
    max_tokens : int, optional
    sleep : callable
        Used to wait between retries (tests pass a no-op).
    output : {'text', 'ids'}
        ``'text'`` (default, the paper's): free-text events parsed by
        :func:`parse_listed_events`. ``'ids'``: the numbers of the relevant steps under
        :func:`ids_response_format` (system prompt :data:`IDS_SYSTEM_PROMPT` unless
        `system_prompt` is given), read by :func:`parse_listed_ids`; an empty context lists
        nothing without a request.
    extra_body : mapping, optional
        More JSON fields for every request (e.g. ``{"cache_prompt": False}`` for llama.cpp).

    Examples
    --------
    >>> from osustat.analyses.evidence_selection.selectors import ChatCompletionsSelector
    >>> sel = ChatCompletionsSelector(base_url="http://127.0.0.1:8000/v1/", model="m",
    ...                               api_key_env=None)
    >>> sel.endpoint, sel.name
    ('http://127.0.0.1:8000/v1/chat/completions', 'chat:m@http://127.0.0.1:8000/v1 (T=0)')
    """

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        temperature: float = 0.0,
        n_events: int = 3,
        api_key_env: str | None = "OPENAI_API_KEY",
        timeout: float = 60.0,
        max_retries: int = 3,
        backoff: float = 1.0,
        system_prompt: str | None = None,
        max_tokens: int | None = None,
        sleep: Callable[[float], None] = time.sleep,
        output: str = "text",
        extra_body: Mapping[str, Any] | None = None,
    ) -> None:
        if output not in OUTPUTS:
            raise ValueError(f"`output` must be one of {OUTPUTS}; got {output!r}.")
        if system_prompt is None:
            system_prompt = IDS_SYSTEM_PROMPT if output == "ids" else DEFAULT_SYSTEM_PROMPT
        if extra_body is not None and not isinstance(extra_body, Mapping):
            raise TypeError(f"`extra_body` must be a mapping; got {type(extra_body).__name__}.")
        base_url = _str_iv(base_url, "base_url").strip()
        if not re.match(r"^https?://[^/\s]+", base_url):
            raise ValueError(f"`base_url` must start with http:// or https://; got {base_url!r}.")
        if not _str_iv(model, "model").strip():
            raise ValueError("`model` must be a non-empty str.")
        if isinstance(temperature, bool) or not isinstance(temperature, int | float):
            raise TypeError(f"`temperature` must be a number; got {type(temperature).__name__}.")
        if not 0.0 <= float(temperature) <= 2.0:
            raise ValueError(f"`temperature` must be in [0, 2]; got {temperature}.")
        if api_key_env is not None and not _str_iv(api_key_env, "api_key_env").strip():
            raise ValueError("`api_key_env` must name an environment variable, or be None.")
        for arg, value, least in (("timeout", timeout, "positive"), ("backoff", backoff, "")):
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise TypeError(f"`{arg}` must be a number; got {type(value).__name__}.")
            if not math.isfinite(value) or value < 0 or (least and value == 0):
                raise ValueError(
                    f"`{arg}` must be a finite {least or 'non-negative'} number; got {value}."
                )
        if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
            raise ValueError(f"`max_retries` must be a non-negative integer; got {max_retries!r}.")
        if "{k}" not in _str_iv(system_prompt, "system_prompt"):
            raise ValueError("`system_prompt` must contain a `{k}` field for the event count.")
        self.base_url = base_url.rstrip("/")
        self.endpoint = f"{self.base_url}/chat/completions"
        self.model = model
        self.temperature = float(temperature)
        self.n_events = check_positive_int(n_events, "n_events")
        self.api_key_env = api_key_env
        self.timeout = float(timeout)
        self.max_retries = max_retries
        self.backoff = float(backoff)
        self.system_prompt = system_prompt
        self.max_tokens = (
            None if max_tokens is None else check_positive_int(max_tokens, "max_tokens")
        )
        self._sleep = sleep
        self.output = output
        self.extra_body = dict(extra_body or {})
        # Never send loopback traffic through an HTTP proxy from the environment.
        loopback = urllib.parse.urlsplit(self.base_url).hostname in _LOOPBACK
        handlers = [urllib.request.ProxyHandler({})] if loopback else []
        self._opener = urllib.request.build_opener(*handlers)
        variant = ", constrained ids" if output == "ids" else ""
        self.name = f"chat:{model}@{self.base_url} (T={self.temperature:g}{variant})"

    def payload(
        self, instruction: str, context: Sequence[str], *, seed: int | None = None
    ) -> dict[str, Any]:
        """The JSON body sent for one query."""
        body: dict[str, Any] = {
            "model": self.model,
            "temperature": self.temperature,
            "messages": [
                {
                    "role": "system",
                    "content": self.system_prompt.replace("{k}", str(self.n_events)),
                },
                {"role": "user", "content": build_user_prompt(instruction, context)},
            ],
        }
        if seed is not None:
            body["seed"] = int(seed)
        if self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens
        if self.output == "ids":
            body["response_format"] = ids_response_format(len(context), self.n_events)
        body.update(self.extra_body)
        return body

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key_env is not None:
            key = os.environ.get(self.api_key_env, "")
            if not key:
                raise SelectorError(
                    f"the environment variable named by `api_key_env` ({self.api_key_env!r}) is "
                    "not set; set it, or pass api_key_env=None for a server without keys."
                )
            headers["Authorization"] = f"Bearer {key}"
        return headers

    def _post(self, body: dict[str, Any]) -> bytes:
        data = json.dumps(body).encode("utf-8")
        headers = self._headers()
        last = ""
        for attempt in range(self.max_retries + 1):
            if attempt:
                self._sleep(self.backoff * 2 ** (attempt - 1))
            request = urllib.request.Request(self.endpoint, data=data, headers=headers)
            try:
                with self._opener.open(request, timeout=self.timeout) as response:
                    return bytes(response.read())
            except urllib.error.HTTPError as exc:
                detail = exc.read()[:300].decode("utf-8", "replace")
                last = f"HTTP {exc.code} {exc.reason}: {detail}"
                if exc.code not in _RETRY_STATUS:
                    raise SelectorError(f"{self.endpoint} answered {last}") from None
            except (
                urllib.error.URLError,
                http.client.HTTPException,
                TimeoutError,
                ConnectionError,
            ) as exc:
                last = f"{type(exc).__name__}: {getattr(exc, 'reason', exc)}"
        raise SelectorError(
            f"{self.endpoint} failed after {self.max_retries + 1} attempts; last error: {last}"
        )

    def reply(
        self, instruction: str, context: Sequence[str], *, seed: int | None = None
    ) -> SelectionReply:
        """Ask the model; the parsed reply, with a parse failure reported, not raised.

        Transport errors and a reply that is not a chat completion still raise
        :class:`SelectorError` (class docstring): those are the server's failures, not the
        model's.
        """
        _str_iv(instruction, "instruction")
        steps = _context_iv(context)
        if self.output == "ids" and not steps:
            return SelectionReply((), "", None, ids=())
        raw = self._post(self.payload(instruction, steps, seed=seed))
        try:
            reply = json.loads(raw.decode("utf-8"))
            content = reply["choices"][0]["message"]["content"]
        except (UnicodeDecodeError, json.JSONDecodeError, KeyError, IndexError, TypeError):
            raise SelectorError(
                f"malformed reply from {self.endpoint}: expected JSON with "
                f"choices[0].message.content; got {raw[:200]!r}."
            ) from None
        if not isinstance(content, str):
            raise SelectorError(
                f"malformed reply from {self.endpoint}: message content is "
                f"{type(content).__name__}, not str."
            )
        if self.output == "ids":
            return parse_listed_ids(content, steps, max_events=self.n_events)
        try:
            return SelectionReply(parse_listed_events(content, max_events=self.n_events), content)
        except SelectorError as exc:
            return SelectionReply((), content, str(exc))

    def select(
        self, instruction: str, context: Sequence[str], *, seed: int | None = None
    ) -> tuple[str, ...]:
        """Ask the model for `n_events` events; a reply with none raises :class:`SelectorError`."""
        got = self.reply(instruction, context, seed=seed)
        if got.failure is not None:
            raise SelectorError(f"malformed reply: {got.failure} in {got.raw[:200]!r}.")
        return got.events

    def __repr__(self) -> str:
        return f"ChatCompletionsSelector(endpoint={self.endpoint!r}, model={self.model!r})"


class ExtractiveSimilaritySelector:
    """Lists the `k` retrieved steps most similar to the instruction -- **never an LLM**.

    Cosine similarity between the instruction's and each step's embedding (same encoder as
    the scoring); the top `k` steps are returned verbatim, most similar first, ties broken by
    retrieval order. Deterministic: `seed` is accepted for the protocol and ignored. An empty
    context gives no events.

    Parameters
    ----------
    encoder : TextEncoder
    k : int
        Number of steps listed (the paper's LLM listed 3).

    Examples
    --------
    >>> from osustat.retrieval.encoder import HashingBagOfWordsEncoder
    >>> from osustat.analyses.evidence_selection.selectors import ExtractiveSimilaritySelector
    >>> sel = ExtractiveSimilaritySelector(HashingBagOfWordsEncoder(dim=128), k=1)
    >>> sel.select("refund for flight HAT123", ["weather is nice", "refund HAT123 issued"])
    ('refund HAT123 issued',)
    """

    def __init__(self, encoder: TextEncoder, *, k: int = 3) -> None:
        if not isinstance(encoder, TextEncoder):
            raise TypeError(
                f"`encoder` must provide `name`, `dim` and `encode`; got {type(encoder).__name__}."
            )
        self.encoder = encoder
        self.k = check_positive_int(k, "k")
        self.name = f"extractive-similarity top-{self.k} ({encoder.name}; not an LLM)"

    def select(
        self, instruction: str, context: Sequence[str], *, seed: int | None = None
    ) -> tuple[str, ...]:
        """Return the `k` steps of `context` closest to `instruction`."""
        _str_iv(instruction, "instruction")
        steps = _context_iv(context)
        if not steps:
            return ()
        emb = self.encoder.encode([instruction, *steps])
        sims = emb[1:] @ emb[0]
        order = np.argsort(-sims, kind="stable")[: self.k]
        return tuple(steps[i] for i in order)

    def __repr__(self) -> str:
        return f"ExtractiveSimilaritySelector({self.encoder!r}, k={self.k})"
