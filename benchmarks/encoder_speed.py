"""Encoder throughput on real step texts: the reference path against the faster backends.

Sample: step texts of the shared τ-bench files (the seven files of ``tau_bench_speed.py``,
after the pipeline's Stage B/C: distinct texts) and LoCoMo turns, drawn at random (seed 0) in
the proportions of the two corpora. Every configuration encodes the same sample; the
configurations are run one after the other in each round (interleaved, so machine load hits
them alike), and the best round of each is reported with its ratio to the reference (wall
clock, and CPU seconds of the process). The reference is what the pipelines run by default:
sentence-transformers on torch, batch size 32, torch's default threads.

Also printed: the token-length distribution (what batching and padding can save), and the
minimum cosine of each configuration's embeddings to the reference's over the sample (the
equivalence criterion: >= 0.9999 per text).

    .venv/bin/python benchmarks/encoder_speed.py [--sample 600] [--rounds 2]

``--full CACHE_DIR ...`` instead checks every distinct text of the two corpora (all 7 τ-bench
files and every LoCoMo turn) against the reference vectors a cold run of the pipelines left in
its embedding cache(s) (read, never written; texts missing from the caches are counted and
left out): per-text cosine of each ``--backends`` backend, minimum, the
count below 0.9999 and the lowest texts.

    .venv/bin/python benchmarks/encoder_speed.py --full TAU_CACHE LOCOMO_CACHE \
        [--backends openvino onnx]
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
    """The texts the LoCoMo pipeline encodes (default choices): ``"speaker: text"`` with
    ``" [image: caption]"`` on image turns (``analyses/locomo/build.py``), and the questions."""
    data = json.loads(Path(LOCOMO).read_text(encoding="utf-8"))
    out = set()
    for conv in data:
        for key, turns in conv["conversation"].items():
            if key.startswith("session_") and isinstance(turns, list):
                for t in turns:
                    text = f"{t['speaker']}: {t['text']}"
                    if t.get("blip_caption"):
                        text += f" [image: {t['blip_caption']}]"
                    out.add(text)
        out.update(q["question"] for q in conv.get("qa", []) if isinstance(q.get("question"), str))
    return sorted(out)


def load() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=int, default=600)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--full", nargs="+", default=None, metavar="CACHE_DIR")
    parser.add_argument("--backends", nargs="+", default=["openvino", "onnx"])
    args = parser.parse_args()
    if args.full:
        full_check(args.full, args.backends)
        return
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
    vino = SentenceTransformerEncoder(backend="openvino", onnx_dir=tmp)
    t0 = time.perf_counter()
    vino.encode(["warm-up"])
    print(f"OpenVINO compile + load + self-check: {time.perf_counter() - t0:.1f} s ({vino.name})")
    configs: dict[str, Callable[[list[str]], np.ndarray]] = {
        f"reference: torch, {threads} threads, batch 32": torch_run(threads, 32),
        "torch, 1 thread, batch 32": torch_run(1, 32),
        f"onnx backend ({onnx.workers} workers, batch 8)": onnx.encode,
        f"openvino backend ({vino.workers} workers, batch 8, {vino.name[-5:-1]})": vino.encode,
    }
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
    base_cpu = cpu[next(iter(configs))]
    print(
        "| configuration | texts/s (best of rounds) | × reference (wall) | CPU s | "
        "× reference (CPU) | min cosine |"
    )
    print("|---|---|---|---|---|---|")
    for name in configs:
        print(
            f"| {name} | {len(sample) / best[name]:.1f} | {base / best[name]:.2f} | "
            f"{cpu[name]:.1f} | {base_cpu / cpu[name]:.2f} | {cosine[name]:.7f} |"
        )


def cached_vectors(directories: list[str]) -> dict[str, np.ndarray]:
    """Every reference vector in the caches' torch-backend folders (read only)."""
    from osustat.retrieval.encoder import MINILM_NAME, _model_key

    out: dict[str, np.ndarray] = {}
    for d in directories:
        for shard in sorted((Path(d) / _model_key(MINILM_NAME)).glob("shard-*.npz")):
            with np.load(shard, allow_pickle=False) as data:
                for key, vec in zip(data["keys"].tolist(), data["vectors"], strict=True):
                    out.setdefault(str(key), vec)
    return out


def full_check(directories: list[str], backends: list[str]) -> None:
    """Per-text cosine of each backend against the cached reference, on every text."""
    from osustat.retrieval.encoder import SentenceTransformerEncoder, text_key

    every = sorted(set(tau_texts()) | set(locomo_texts()))
    cached = cached_vectors(directories)
    texts = [t for t in every if text_key(t) in cached]
    print(
        f"texts: {len(every):,} distinct (7 τ-bench files: step texts; LoCoMo: turns as the "
        f"pipeline writes them, and questions); with a reference vector in the caches: "
        f"{len(texts):,} (checked); without: {len(every) - len(texts):,} (not checked)"
    )
    print(f"load before: {load()}")
    ref = np.stack([cached[text_key(t)] for t in texts]).astype(np.float64)
    ref = ref / np.linalg.norm(ref, axis=1, keepdims=True)
    tmp = tempfile.mkdtemp(prefix="osustat-onnx-")
    print("\n| backend | texts | wall s | CPU s | min cosine | below 0.9999 | p0.1 cosine |")
    print("|---|---|---|---|---|---|---|")
    lowest: dict[str, list[tuple[float, str]]] = {}
    for backend in backends:
        enc = SentenceTransformerEncoder(backend=backend, onnx_dir=tmp)
        enc.encode(["warm-up"])
        w0, c0 = time.perf_counter(), time.process_time()
        got = enc.encode(texts)
        wall, cpu = time.perf_counter() - w0, time.process_time() - c0
        cos = np.sum(got * ref, axis=1)
        lowest[enc.name] = [(float(cos[i]), texts[i][:70]) for i in np.argsort(cos)[:3]]
        print(
            f"| {enc.name} | {len(texts):,} | {wall:.0f} | {cpu:.0f} | {cos.min():.7f} | "
            f"{int(np.sum(cos < 0.9999))} | {np.quantile(cos, 0.001):.7f} |",
            flush=True,
        )
    shutil.rmtree(tmp, ignore_errors=True)
    for name, rows in lowest.items():
        print(f"\nlowest cosines, {name}: " + "; ".join(f"{c:.7f} {t!r}" for c, t in rows))
    print(f"\nload after: {load()}")


if __name__ == "__main__":
    main()
