"""The exported-graph paths of all-MiniLM-L6-v2: offline export, a self-check, batched inference.

Used by :class:`~osustat.retrieval.encoder.SentenceTransformerEncoder` with
``backend='onnx'`` (ONNX Runtime) and ``backend='openvino'`` (OpenVINO). The ONNX graph is
exported once, **offline**, from the locally loaded sentence-transformers model (the packaged
weights) with ``torch.onnx.export`` and kept in a folder (file name keyed by a SHA-256 of the
weights and config, so other weights never reuse it). Nothing is downloaded. Both runtimes
read that one file. sentence-transformers' own ONNX/OpenVINO backends are not used: they need
``optimum`` (``optimum-onnx`` pins ``transformers < 4.58``, ``optimum-intel`` pulls another
torch), both incompatible with this environment.

What runs:

- the graph is the BERT encoder plus the mean pooling of sentence-transformers (token vectors
  averaged over the attention mask); rows are l2-normalized afterwards, as the reference does;
- inputs come from the loaded model's own ``preprocess`` (the same tokenizer, truncation to
  256 tokens and padding as the reference path), so the token ids are identical;
- texts are sorted by length (longest first) and cut into small batches (8 by default): less
  padding than the reference's 32; the batches are run by ``workers`` Python threads, each
  runtime call single-threaded (both runtimes release the GIL). A batch's result does not
  depend on which thread runs it, so the output does not depend on ``workers``.
- ONNX Runtime computes in float32. OpenVINO is compiled with the ``bf16`` inference
  precision hint where the CPU supports bfloat16 (:func:`openvino_precision`; else float32):
  its matrix products round their inputs to bfloat16, so its vectors differ from the
  reference more than ONNX Runtime's (``benchmarks/encoder_speed.py --full`` measures every
  text of the shared data sets against the reference).

Every load runs a self-check: a fixed probe of texts (short, long, above 256 tokens, one
alone) is encoded by both paths and the load fails unless every cosine is >= 0.9999 (the
project's equivalence criterion).
"""

from __future__ import annotations

import hashlib
import os
import threading
import uuid
import warnings
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "MIN_COSINE",
    "RUNTIMES",
    "OnnxMiniLM",
    "export_onnx",
    "onnx_file_name",
    "openvino_precision",
]

#: Every text's cosine to the reference embedding must reach this (issue 25's criterion).
MIN_COSINE = 0.9999
_OPSET = 17
#: The runtimes that run the exported graph.
RUNTIMES = ("onnxruntime", "openvino")
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")

_PROBE = [
    "ok",
    "The customer asked to cancel flight HAT123 and get a refund to the original card.",
    "get_reservation_details(reservation_id='ZFA04Y') -> {'flights': [{'origin': 'SFO'}]}",
    " ".join(f"token{i} of a very long tool output" for i in range(120)),  # > 256 tokens
    "Hey Mel! Good to see you! How have you been?",
]


def onnx_file_name(model_dir: Path) -> str:
    """``minilm-<sha256 of the weights and config, 16 hex>-opset17.onnx``."""
    h = hashlib.sha256()
    for name in ("config.json", "model.safetensors", "pytorch_model.bin"):
        path = model_dir / name
        if path.is_file():
            h.update(name.encode())
            with open(path, "rb") as fh:
                for chunk in iter(lambda: fh.read(1 << 20), b""):
                    h.update(chunk)
    return f"minilm-{h.hexdigest()[:16]}-opset{_OPSET}.onnx"


def export_onnx(model: Any, path: Path) -> None:
    """Export the loaded sentence-transformers `model` (encoder + mean pooling) to `path`.

    Written to a temporary file first, then renamed: a concurrent reader never sees half a file.
    """
    import torch

    bert = model[0].auto_model.eval()

    class _MeanPooled(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.bert = bert

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            out = self.bert(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(out.dtype)
            return (out * mask).sum(1) / mask.sum(1).clamp(min=1e-9)

    feats = model.preprocess(["a short text", "and a somewhat longer second text here"])
    args = tuple(feats[k] for k in _INPUTS)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f".tmp-{uuid.uuid4().hex}-{path.name}"
    axes = {k: {0: "batch", 1: "tokens"} for k in _INPUTS} | {"embedding": {0: "batch"}}
    try:
        # the tracer warns about Python conditions on shapes in transformers' mask code;
        # the graph is checked against the reference at every load (`_self_check`)
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(
                _MeanPooled().eval(),
                args,
                str(tmp),
                input_names=list(_INPUTS),
                output_names=["embedding"],
                dynamic_axes=axes,
                opset_version=_OPSET,
                dynamo=False,
            )
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def openvino_precision() -> str:
    """``'bf16'`` where OpenVINO's CPU plugin reports bfloat16 support, else ``'f32'``.

    The precision the ``openvino`` backend computes in; it is part of that backend's cache key,
    so vectors of the two precisions never mix.
    """
    try:
        import openvino as ov
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            "backend='openvino' needs OpenVINO: pip install 'osustat[openvino]'."
        ) from exc
    caps = ov.Core().get_property("CPU", "OPTIMIZATION_CAPABILITIES")
    return "bf16" if "BF16" in caps else "f32"


def _onnxruntime_runner(onnx_path: Path, workers: int) -> Any:
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    opts.log_severity_level = 3
    session = ort.InferenceSession(str(onnx_path), opts, providers=["CPUExecutionProvider"])
    return lambda feed: session.run(None, feed)[0]


def _openvino_runner(onnx_path: Path, workers: int) -> Any:
    import openvino as ov

    # one stream of one thread per worker: each batch runs single-threaded, as with ONNX
    # Runtime, so a text's vector does not depend on `workers`
    compiled = ov.Core().compile_model(
        str(onnx_path),
        "CPU",
        {
            "INFERENCE_PRECISION_HINT": openvino_precision(),
            "NUM_STREAMS": workers,
            "INFERENCE_NUM_THREADS": workers,
        },
    )
    local = threading.local()  # an infer request per thread

    def run(feed: dict[str, NDArray[np.int64]]) -> Any:
        if not hasattr(local, "request"):
            local.request = compiled.create_infer_request()
        return local.request.infer(feed)[0]

    return run


class OnnxMiniLM:
    """An exported model run by ONNX Runtime or OpenVINO, fed by the reference's tokenizer.

    Parameters
    ----------
    model : SentenceTransformer
        The loaded reference model (its ``preprocess`` tokenizes; it is also the self-check's
        reference).
    onnx_path : Path
        Where the exported graph is (exported there first if missing).
    dim : int
        Embedding dimension.
    batch_size, workers : int
        Texts per runtime call, and threads running calls side by side.
    runtime : {'onnxruntime', 'openvino'}
        What runs the graph (:data:`RUNTIMES`).
    """

    def __init__(
        self,
        model: Any,
        onnx_path: Path,
        *,
        dim: int,
        batch_size: int,
        workers: int,
        runtime: str = "onnxruntime",
    ) -> None:
        if runtime not in RUNTIMES:
            raise ValueError(f"`runtime` must be one of {list(RUNTIMES)}; got {runtime!r}.")
        if not onnx_path.is_file():
            export_onnx(model, onnx_path)
        make = _onnxruntime_runner if runtime == "onnxruntime" else _openvino_runner
        self._infer = make(onnx_path, workers)
        self._model = model
        self.dim = dim
        self.batch_size = batch_size
        self.workers = workers
        self.runtime = runtime
        self.onnx_path = onnx_path
        self._self_check()

    def _self_check(self) -> None:
        ref = np.asarray(
            self._model.encode(_PROBE, convert_to_numpy=True, normalize_embeddings=True)
        )
        got = np.vstack([self.encode(_PROBE), self.encode(_PROBE[1:2])])
        ref = np.vstack([ref, ref[1:2]])
        cos = np.sum(_unit(ref) * got, axis=1)
        if float(cos.min()) < MIN_COSINE:
            raise RuntimeError(
                f"the ONNX model {str(self.onnx_path)!r} run by {self.runtime} disagrees with "
                f"the reference encoder (minimum cosine {float(cos.min()):.6f} < {MIN_COSINE});"
                " delete it to re-export, or use backend='torch'."
            )

    def _run(self, texts: Sequence[str]) -> NDArray[np.float32]:
        feats = self._model.preprocess(list(texts))
        feed = {k: np.ascontiguousarray(feats[k].numpy(), dtype=np.int64) for k in _INPUTS}
        return np.asarray(self._infer(feed), dtype=np.float32)

    def encode(self, texts: Sequence[str], *, progress: bool = False) -> NDArray[np.float32]:
        """``(n, dim)`` unit rows; texts sorted by length and batched (see the module doc).
        `progress`: a bar on stderr counting texts done (rate, ETA); the vectors do not
        depend on it."""
        from tqdm.auto import tqdm

        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        chunks = [order[i : i + self.batch_size] for i in range(0, len(order), self.batch_size)]
        out = np.empty((len(texts), self.dim), dtype=np.float32)

        def one(idx: list[int]) -> tuple[list[int], NDArray[np.float32]]:
            return idx, self._run([texts[i] for i in idx])

        with tqdm(total=len(texts), desc="encoding", unit="text", disable=not progress) as bar:
            if self.workers == 1 or len(chunks) == 1:
                for idx, vecs in map(one, chunks):
                    out[idx] = vecs
                    bar.update(len(idx))
            else:
                with ThreadPoolExecutor(self.workers) as pool:
                    for idx, vecs in pool.map(one, chunks):
                        out[idx] = vecs
                        bar.update(len(idx))
        return _unit(out)


def _unit(x: NDArray[Any]) -> NDArray[np.float32]:
    x = np.asarray(x, dtype=np.float32)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return (x / np.where(norms > 0, norms, 1.0)).astype(np.float32)
