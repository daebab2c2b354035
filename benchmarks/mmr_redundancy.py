"""Why Flat + MMR scores Hit@2 near 0 on τ-bench (issue 38 item 8): a measurement.

MMR (λ = .7, the paper's Table 8 value, not tuned) picks greedily by
``λ·cos(q, h) − (1 − λ)·max_{j∈S} cos(h, h_j)``. τ-bench's evidence steps of one query are the
focal episode's matched tool calls; this script measures, per query of the unaugmented sweep
(default choices, noisy-mean queries, seed 0) at budget B:

- the cosine between the query's evidence steps (pairwise), and the cosine of each evidence step
  with the query;
- for Flat + MMR: how many evidence steps it retrieves, and — when it retrieved the first —
  the MMR score the best remaining evidence step has right after the first was chosen, against
  the score of the step MMR chose instead (the margin by which redundancy pushes it out);
- Hit@2 of Flat + MMR and Flat Vector (the records' definition: >= 2 evidence steps).

Run (the real encoder through the embedding cache; a cold cache encodes every step text):

    nice -n 10 .venv/bin/python benchmarks/mmr_redundancy.py [--files F ...] [--groups N]

Results: benchmarks/results-mmr_redundancy.md (with the command, date and load).
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np


def main() -> None:
    from osustat.analyses.driver import resolve_data
    from osustat.analyses.protocol import RunSpec
    from osustat.analyses.tau_bench.benchmark import BENCHMARK
    from osustat.analyses.tau_bench.data import augment_group
    from osustat.analyses.tau_bench.run import _trajectory
    from osustat.analyses.tau_bench.workspace import Workspace
    from osustat.retrieval.baselines import FlatMMR, FlatVector

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", nargs="*", default=None, help="default: reproduce's data")
    ap.add_argument("--groups", type=int, default=None, help="first N groups only")
    ap.add_argument("--budget", type=int, default=256)
    ap.add_argument(
        "--augmented",
        action="store_true",
        help="the Stage-D cache (3 near-duplicate copies per evidence step; copies drawn from "
        "default_rng([seed, group]), not the pipeline's own stream)",
    )
    ap.add_argument(
        "--choice", action="append", default=[], metavar="NAME=VALUE", help="a declared choice"
    )
    args = ap.parse_args()
    files = tuple(Path(f) for f in args.files) if args.files else resolve_data("tau-bench", ())
    spec = RunSpec(data=files, choices=BENCHMARK.choices.resolve(args.choice))
    t0 = time.perf_counter()
    ws = Workspace(spec)
    built = ws.built(spec)
    c = spec.choices
    queries = ws.queries(spec, c["query-kind"], c["query-noise"])
    print(f"built + encoded in {time.perf_counter() - t0:.1f} s; load {os.getloadavg()[0]:.1f}")
    groups = list(zip(built.groups, built.embs, queries, strict=True))[: args.groups]
    pair_cos, q_cos, n_ev, n_mmr, n_flat, margins, n_q = [], [], [], [], [], [], 0
    for g, (group, emb, gq) in enumerate(groups):
        evidence = list(gq.evidence)
        order = None
        if args.augmented:
            aug = augment_group(group, emb, np.random.default_rng([spec.seed, g]))
            order, emb = aug.order, aug.embeddings
            evidence = [aug.evidence[p] for p in gq.positions]
        traj = _trajectory(group, emb, order)
        mmr, flat = FlatMMR().build(traj), FlatVector().build(traj)
        for q, ev in zip(gq.embeddings, evidence, strict=True):
            n_q += 1
            e = emb[ev]
            g = e @ e.T
            iu = np.triu_indices(len(ev), 1)
            pair_cos.extend(g[iu].tolist())
            q_cos.extend((e @ q).tolist())
            n_ev.append(len(ev))
            got = set(mmr.retrieve(q, args.budget, time=traj.n_steps).steps.tolist())
            n_mmr.append(len(got & set(ev.tolist())))
            n_flat.append(
                len(
                    set(flat.retrieve(q, args.budget, time=traj.n_steps).steps.tolist())
                    & set(ev.tolist())
                )
            )
            # MMR's state right after its first evidence step: the best remaining evidence
            # step's score vs. the score of the step chosen next instead.
            sims = emb @ q
            first = int(ev[np.argmax(e @ q)])
            red = emb @ emb[first]
            score = 0.7 * sims - 0.3 * red
            rest = [int(i) for i in ev if int(i) != first]
            if rest:
                others = np.setdiff1d(np.arange(len(sims)), ev)
                margins.append(float(score[rest].max() - score[others].max()))
    pc, qc = np.array(pair_cos), np.array(q_cos)
    hit_mmr = np.mean(np.array(n_mmr) >= 2)
    hit_flat = np.mean(np.array(n_flat) >= 2)
    m = np.array(margins)
    print(f"queries {n_q}, evidence steps per query median {np.median(n_ev):.0f}")
    print(
        f"cos(evidence, evidence): median {np.median(pc):.3f}, IQR "
        f"[{np.quantile(pc, 0.25):.3f}, {np.quantile(pc, 0.75):.3f}], "
        f"share >= .9 {np.mean(pc >= 0.9):.3f}"
    )
    print(f"cos(query, evidence): median {np.median(qc):.3f}")
    print("cache:", "Stage-D augmented" if args.augmented else "unaugmented", args.choice)
    print(f"B = {args.budget}: Hit@2 Flat + MMR {hit_mmr:.3f}, Flat Vector {hit_flat:.3f}")
    print(
        f"evidence steps retrieved, mean: Flat + MMR {np.mean(n_mmr):.2f}, "
        f"Flat Vector {np.mean(n_flat):.2f}"
    )
    print(
        "after the first evidence step: best remaining evidence score − best non-evidence "
        f"score, median {np.median(m):+.3f}; share < 0 (evidence loses) {np.mean(m < 0):.3f}"
    )


if __name__ == "__main__":
    main()
