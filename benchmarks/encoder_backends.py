"""How far the encoder backends' vectors and verdicts differ on τ-bench (issue 38 item 4).

The backend (``--encoder-backend`` / ``--choice encoder-backend=``: torch, the reference;
onnx; openvino) runs the same all-MiniLM-L6-v2 weights, so its vectors differ from torch's
only in the last bits; this script measures what that does downstream, on the default run of
``osustat reproduce tau-bench`` (the shared files, every declared choice at its default):

1. **Vectors**: every distinct text the run encodes (Stage B/C step texts and the focal
   instructions), per backend against torch: cosine distance ``1 - cos`` (max, median, 99th
   percentile) and the texts whose cosine is below 0.9999; then, per default query (noisy mean
   of its evidence, per-coordinate σ = .25, seed 0), the ranking of its group's steps by cosine
   — the share of queries whose top-k (k = 2, 10) **order** differs from torch's, and whose
   top-k **set** differs.
2. **Verdicts**: the full run per backend through the one driver (same seed, resamples and
   choices): the share of record values that change, and per claim of the embedded audit the
   effect, p and verdict — p's moved (max |Δp|, how many cross .05), verdicts changed, and
   the claims reproduced.

Encodings go through the shared embedding cache (each backend has its own key), so a re-run
is cheap; a cold backend encodes every text (minutes). Run niced::

    OSUSTAT_DATA_DIR=/work/shared/data nice -n 10 .venv/bin/python benchmarks/encoder_backends.py \
        [--backends torch onnx openvino] [--resamples 10000] [--jobs 2] \
        [--out benchmarks/results-encoder_backends.md]

The results file holds the tables, the command and the load before and after.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np


def load() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def encoder(backend: str) -> Any:
    from osustat.retrieval.encoder import (
        CachedEncoder,
        SentenceTransformerEncoder,
        default_cache_dir,
    )

    return CachedEncoder(
        SentenceTransformerEncoder(backend=backend, progress=True), default_cache_dir()
    )


def built(backend: str) -> tuple[Any, Any]:
    """Stage B/C of the default run with `backend`'s vectors, and its default queries."""
    from osustat.analyses.driver import resolve_data
    from osustat.analyses.protocol import RunSpec
    from osustat.analyses.tau_bench.benchmark import BENCHMARK
    from osustat.analyses.tau_bench.workspace import Workspace

    choices = BENCHMARK.choices.defaults()
    spec = RunSpec(data=resolve_data("tau-bench", ()), choices=choices, encoder_backend=backend)
    ws = Workspace(spec, encoder=encoder(backend))
    b = ws.built(spec)
    return b, ws.queries(spec, choices["query-kind"], choices["query-noise"])


def vector_rows(backends: list[str]) -> list[dict[str, Any]]:
    ref, ref_q = built("torch")
    rows = []
    for backend in backends:
        if backend == "torch":
            continue
        b, q = built(backend)
        cos = np.concatenate(
            [np.einsum("ij,ij->i", x, y) for x, y in zip(ref.embs, b.embs, strict=True)]
        )
        dist = 1.0 - cos
        row: dict[str, Any] = {
            "backend": backend,
            "steps": int(dist.size),
            "max": float(dist.max()),
            "median": float(np.median(dist)),
            "p99": float(np.quantile(dist, 0.99)),
            "below": int((cos < 0.9999).sum()),
        }
        n_q = 0
        for k in (2, 10):
            order = same_set = 0
            n_q = 0
            for e_ref, e_b, q_ref, q_b in zip(ref.embs, b.embs, ref_q, q, strict=True):
                for j in range(len(q_ref.positions)):
                    top_ref = np.argsort(-(e_ref @ q_ref.embeddings[j]), kind="stable")[:k]
                    top_b = np.argsort(-(e_b @ q_b.embeddings[j]), kind="stable")[:k]
                    n_q += 1
                    order += not np.array_equal(top_ref, top_b)
                    same_set += set(top_ref.tolist()) != set(top_b.tolist())
            row[f"order{k}"] = order
            row[f"set{k}"] = same_set
        row["queries"] = n_q
        rows.append(row)
    return rows


def run_backend(backend: str, out: Path, args: argparse.Namespace) -> Any:
    from osustat.analyses.driver import run

    t0 = time.perf_counter()
    result = run(
        "tau-bench", out / backend, encoder_backend=backend, n_resamples=args.resamples,
        jobs=args.jobs, seed=0, progress=True,
    )  # fmt: skip
    print(f"{backend}: {time.perf_counter() - t0:.0f} s ({load()})", file=sys.stderr)
    return result.run


def verdict_rows(backends: list[str], args: argparse.Namespace) -> tuple[list[Any], list[Any]]:
    with tempfile.TemporaryDirectory() as tmp:
        runs = {b: run_backend(b, Path(tmp), args) for b in backends}
    ref = runs["torch"]
    keys = [c for c in ref.records.columns if c != "value"]
    checks = {b: {c.claim.id: c for c in r.state["claims_audit"].checks} for b, r in runs.items()}
    value_rows, claim_rows = [], []
    for backend in backends:
        r = runs[backend]
        m = ref.records.merge(r.records, on=keys, suffixes=("_t", "_b"), validate="1:1")
        if len(m) != len(ref.records) or len(m) != len(r.records):
            raise SystemExit(f"{backend}: the records do not pair with torch's one to one")
        changed = int((~np.isclose(m["value_t"], m["value_b"], atol=1e-12)).sum())
        reproduced = sum(c.verdict == "reproduced" for c in checks[backend].values())
        dp, crossed, moved = [], 0, []
        for cid, c0 in checks["torch"].items():
            c1 = checks[backend][cid]
            if c0.test is not None and c1.test is not None:
                p0, p1 = float(c0.test.pvalue), float(c1.test.pvalue)
                dp.append(abs(p1 - p0))
                crossed += (p0 <= 0.05) != (p1 <= 0.05)
            if c0.verdict != c1.verdict:
                moved.append((cid, c0, c1))
        value_rows.append(
            {
                "backend": backend, "values": len(m), "changed": changed,
                "claims": len(checks[backend]), "reproduced": reproduced,
                "tested": len(dp), "max_dp": max(dp, default=0.0),
                "median_dp": float(np.median(dp)) if dp else 0.0, "crossed": crossed,
                "verdicts_changed": len(moved),
            }
        )  # fmt: skip
        for cid, c0, c1 in moved:
            claim_rows.append((backend, cid, c0, c1))
    return value_rows, claim_rows


def _p(c: Any) -> str:
    return "—" if c.test is None else f"{float(c.test.pvalue):.3f}"


def _e(c: Any) -> str:
    return "—" if c.effect is None else f"{float(c.effect):+.3f}"


def render(vec: list[Any], val: list[Any], moved: list[Any], command: str, loads: str) -> str:
    lines = [
        "# Encoder backends on τ-bench: vectors and verdicts against torch",
        "",
        f"`{command}`",
        "",
        loads,
        "",
        "## Vectors (every step text of the default run's groups; default queries)",
        "",
        "| backend | steps | max 1−cos | median 1−cos | 99th pct | steps cos < .9999 | "
        "queries | top-2 order changed | top-10 order changed | top-10 set changed |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in vec:
        lines.append(
            f"| {r['backend']} | {r['steps']:,} | {r['max']:.2e} | {r['median']:.2e} | "
            f"{r['p99']:.2e} | {r['below']:,} | {r['queries']:,} | "
            f"{r['order2']} ({r['order2'] / r['queries']:.1%}) | "
            f"{r['order10']} ({r['order10'] / r['queries']:.1%}) | "
            f"{r['set10']} ({r['set10'] / r['queries']:.1%}) |"
        )
    lines += [
        "",
        "## Verdicts (the full default run per backend, same seed and resamples)",
        "",
        "| backend | record values | changed | claims | reproduced | p's compared | "
        "max abs Δp | median abs Δp | p's crossing .05 | verdicts changed |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in val:
        lines.append(
            f"| {r['backend']} | {r['values']:,} | {r['changed']:,} "
            f"({r['changed'] / r['values']:.1%}) | {r['claims']} | {r['reproduced']} | "
            f"{r['tested']} | {r['max_dp']:.3f} | {r['median_dp']:.3f} | {r['crossed']} | "
            f"{r['verdicts_changed']} |"
        )
    if moved:
        lines += [
            "",
            "Claims whose verdict changes:",
            "",
            "| backend | claim | torch effect, p, verdict | backend effect, p, verdict |",
            "|---|---|---|---|",
        ]
        for backend, cid, c0, c1 in moved:
            lines.append(
                f"| {backend} | `{cid}` | {_e(c0)}, {_p(c0)}, {c0.verdict} | "
                f"{_e(c1)}, {_p(c1)}, {c1.verdict} |"
            )
    return "\n".join(lines) + "\n"


def preload() -> None:
    """Import every osustat module now, so that a long run uses the code as it was at its
    start even if the working tree changes meanwhile (modules are otherwise imported lazily)."""
    import importlib
    import pkgutil

    import osustat

    for info in pkgutil.walk_packages(osustat.__path__, "osustat."):
        if info.name.endswith("__main__"):
            continue
        try:
            importlib.import_module(info.name)
        except Exception:  # an optional extra that is not installed: not used here
            pass


def main() -> None:
    preload()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backends", nargs="+", default=["torch", "onnx", "openvino"])
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--skip-verdicts", action="store_true")
    parser.add_argument("--out", default="benchmarks/results-encoder_backends.md")
    args = parser.parse_args()
    backends = ["torch", *(b for b in args.backends if b != "torch")]
    before = load()
    start = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    vec = vector_rows(backends)
    val, moved = ([], []) if args.skip_verdicts else verdict_rows(backends, args)
    loads = f"Started {start}; load before: `{before}`; after: `{load()}`."
    command = "nice -n 10 .venv/bin/python benchmarks/encoder_backends.py " + " ".join(sys.argv[1:])
    text = render(vec, val, moved, command.strip(), loads)
    Path(args.out).write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
