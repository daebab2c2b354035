"""Encoder throughput on real step texts: the reference path against the faster settings.

Sample: step texts of the shared τ-bench files (the seven files of ``tau_bench_speed.py``,
after the pipeline's Stage B/C: distinct texts) and LoCoMo turns, drawn at random (seed 0) in
the proportions of the two corpora. Every configuration encodes the same sample; the
configurations are run one after the other in each round (interleaved, so machine load hits
them alike), and the best round of each is reported with its ratio to the reference. The
reference is what the pipelines ran before issue 25: sentence-transformers on torch,
batch size 32, torch's default threads.

Also printed: the token-length distribution (what batching and padding can save), and the
minimum cosine of each configuration's embeddings to the reference's over the whole sample
(the equivalence criterion: >= 0.9999 per text).

    .venv/bin/python benchmarks/encoder_speed.py [--sample 600] [--rounds 2] [--openvino]

``--openvino`` adds OpenVINO runs (fp32 and its bf16 inference hint) for comparison only; they
are not an encoder backend of osustat.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

TAU = [
    "/work/shared/data/tau-bench/gpt-4o-airline.json",
    *sorted(glob.glob("/work/shared/data/tau2-bench/airline-*.json")),
]
LOCOMO = "/work/shared/data/locomo/locomo10.json"


def tau_texts() -> list[str]:
    from osustat.analyses.tau_bench.data import concatenate
    from osustat.analyses.tau_bench.formats import load_files

    groups, _ = concatenate(load_files(TAU).episodes, prefix=True)
    return sorted({t for g in groups for t in g.texts})


def locomo_texts() -> list[str]:
    data = json.loads(Path(LOCOMO).read_text(encoding="utf-8"))
    out = set()
    for conv in data:
        for key, turns in conv["conversation"].items():
            if key.startswith("session_") and isinstance(turns, list):
                out.update(t["text"] for t in turns)
    return sorted(out)


def load() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=int, default=600)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--openvino", action="store_true")
    args = parser.parse_args()
    import torch

    from osustat.retrieval.encoder import SentenceTransformerEncoder

    tau, loc = tau_texts(), locomo_texts()
    rng = np.random.default_rng(0)
    n_tau = round(args.sample * len(tau) / (len(tau) + len(loc)))
    sample = [tau[i] for i in rng.choice(len(tau), n_tau, replace=False)] + [
        loc[i] for i in rng.choice(len(loc), args.sample - n_tau, replace=False)
    ]
    print(f"machine: {os.cpu_count()} cores; torch {torch.__version__}; python {sys.version[:6]}")
    print(f"texts: {len(tau):,} τ-bench (7 files), {len(loc):,} LoCoMo; sample {len(sample)}")
    ref_enc = SentenceTransformerEncoder()
    ref_enc.encode(["warm-up"])
    model = ref_enc._load()
    ids = model.tokenizer(sample, truncation=False)["input_ids"]
    lengths = np.array([len(x) for x in ids])
    capped = np.minimum(lengths, model.max_seq_length)
    print(
        "tokens per text (untruncated) p10/p50/p90/p99/max: "
        + "/".join(str(int(v)) for v in np.percentile(lengths, [10, 50, 90, 99, 100]))
        + f"; above {model.max_seq_length} (truncated): {np.mean(lengths > 256):.1%}"
    )
    for bs in (32, 8):
        order = np.argsort(-capped, kind="stable")
        padded = sum(
            int(capped[order[i : i + bs]].max()) * len(order[i : i + bs])
            for i in range(0, len(order), bs)
        )
        print(f"padding waste, length-sorted batches of {bs}: {1 - capped.sum() / padded:.1%}")
    threads = torch.get_num_threads()

    def torch_run(n_threads: int, bs: int) -> Callable[[list[str]], np.ndarray]:
        def run(texts: list[str]) -> np.ndarray:
            torch.set_num_threads(n_threads)
            try:
                return np.asarray(model.encode(texts, batch_size=bs, normalize_embeddings=True))
            finally:
                torch.set_num_threads(threads)

        return run

    tmp = tempfile.mkdtemp(prefix="osustat-onnx-")
    onnx = SentenceTransformerEncoder(backend="onnx", onnx_dir=tmp)
    t0 = time.perf_counter()
    onnx.encode(["warm-up"])
    print(f"ONNX export + load + self-check: {time.perf_counter() - t0:.1f} s (once per machine)")
    onnx1 = SentenceTransformerEncoder(backend="onnx", onnx_dir=tmp, workers=1)
    configs: dict[str, Callable[[list[str]], np.ndarray]] = {
        f"reference: torch, {threads} threads, batch 32": torch_run(threads, 32),
        "torch, 1 thread, batch 32": torch_run(1, 32),
        f"torch, {threads} threads, batch 8": torch_run(threads, 8),
        "onnx backend, 1 worker, batch 8": onnx1.encode,
        f"onnx backend (default: {onnx.workers} workers, batch 8)": onnx.encode,
    }
    if args.openvino:
        configs.update(openvino_configs(model, onnx._onnx.onnx_path, threads))
    print(f"\nload before: {load()}")
    ref = configs[next(iter(configs))](sample)
    best = dict.fromkeys(configs, np.inf)
    cpu = dict.fromkeys(configs, np.inf)
    cosine = {}
    for _ in range(args.rounds):
        for name, fn in configs.items():
            w0, c0 = time.perf_counter(), time.process_time()
            out = fn(sample)
            best[name] = min(best[name], time.perf_counter() - w0)
            cpu[name] = min(cpu[name], time.process_time() - c0)
            cosine[name] = float(np.min(np.sum(out * ref, axis=1)))
    print(f"load after: {load()}\n")
    shutil.rmtree(tmp, ignore_errors=True)  # the exported graph (90 MB)
    base = best[next(iter(configs))]
    print("| configuration | texts/s (best of rounds) | × reference | CPU s | min cosine |")
    print("|---|---|---|---|---|")
    for name in configs:
        print(
            f"| {name} | {len(sample) / best[name]:.1f} | {base / best[name]:.2f} | "
            f"{cpu[name]:.1f} | {cosine[name]:.7f} |"
        )


def openvino_configs(
    model: object, onnx_path: Path, threads: int
) -> dict[str, Callable[[list[str]], np.ndarray]]:
    import openvino as ov

    core = ov.Core()
    out = {}
    for prec in ("f32", "bf16"):
        compiled = core.compile_model(
            str(onnx_path),
            "CPU",
            {"INFERENCE_NUM_THREADS": threads, "INFERENCE_PRECISION_HINT": prec},
        )
        request = compiled.create_infer_request()

        def run(texts: list[str], request: object = request) -> np.ndarray:
            res = np.empty((len(texts), 384), dtype=np.float32)
            order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
            for i in range(0, len(order), 8):
                idx = order[i : i + 8]
                f = model.preprocess([texts[j] for j in idx])  # type: ignore[attr-defined]
                feed = {k: f[k].numpy() for k in ("input_ids", "attention_mask", "token_type_ids")}
                res[idx] = request.infer(feed)[0]  # type: ignore[attr-defined]
            return res / np.linalg.norm(res, axis=1, keepdims=True)

        out[f"openvino {prec} (comparison only), batch 8"] = run
    return out


if __name__ == "__main__":
    main()
