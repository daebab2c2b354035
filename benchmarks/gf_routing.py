"""Why OSU-Mem + GF (oracle OSU selection) is far above OSU-Mem on the synthetic benchmark
(issue 38 item 9: ours .577 vs .088 in the paper's Table 9 at B = 256, where the paper has
GF ≈ OSU-Mem): a measurement of the coarse stage.

For each query of the first N generated episodes (default generator, master seed 0, episode i
from child i of ``SeedSequence(0)`` as ``reproduce synthetic``), at budget B:

- K, the OSUs the coarse stage keeps (adaptive K of Section 4.2);
- how many evidence steps lie in the K OSUs OSU-Mem keeps (top-K by centroid cosine) and in
  the K OSUs GF keeps (the OSUs holding the most evidence steps);
- the centroid-cosine rank of the best evidence-holding OSU;
- Hit@2 of both.

Run: ``nice -n 10 .venv/bin/python benchmarks/gf_routing.py [--episodes N] [--budget B]``.
Results: benchmarks/results-gf_routing.md (command, date, load).
"""

from __future__ import annotations

import argparse
import os

import numpy as np


def main() -> None:
    from osustat.analyses.synthetic.generator import generate_episodes
    from osustat.retrieval.osumem import OSUMem, OSUMemGF

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--episodes", type=int, default=40)
    ap.add_argument("--budget", type=int, default=256)
    args = ap.parse_args()
    b = args.budget
    rows = []
    for ep in generate_episodes(args.episodes, 0):
        osu, gf = OSUMem().build(ep.trajectory), OSUMemGF().build(ep.trajectory)
        for q in ep.queries:
            end = q.time
            live = osu._first_member < end
            r = osu.pool_.centroids @ q.embedding
            top = osu._coarse(r, live, b, None)
            top_gf = gf._coarse(r, live, b, q.evidence)
            is_ev = np.zeros(ep.trajectory.n_steps, dtype=bool)
            is_ev[q.evidence] = True
            per_osu = np.bincount(
                osu._member_osu, weights=is_ev[osu._member_step], minlength=osu.pool_.n_osus
            )

            def covered(ids: list[int], osu: OSUMem = osu, ev: np.ndarray = q.evidence) -> int:
                members = np.concatenate(
                    [osu._member_step[osu._member_ptr[i] : osu._member_ptr[i + 1]] for i in ids]
                    or [np.zeros(0, dtype=np.int64)]
                )
                return int(np.isin(ev, members).sum())

            ids = np.flatnonzero(live)
            order = ids[np.argsort(-r[ids], kind="stable")]
            ev_osus = [i for i in order if per_osu[i] > 0]
            rank = int(np.flatnonzero(order == ev_osus[0])[0]) + 1 if ev_osus else -1

            def hit(res: object, ev: np.ndarray = q.evidence) -> int:
                return int(np.isin(ev, res.steps).sum() >= 2)  # type: ignore[attr-defined]

            rows.append(
                (
                    len(top),
                    ids.size,
                    covered(top),
                    covered(top_gf),
                    rank,
                    hit(osu.retrieve(q.embedding, b, time=end)),
                    hit(gf.retrieve(q.embedding, b, time=end, evidence=q.evidence)),
                    len(q.evidence),
                )
            )
    a = np.array(rows, dtype=float)
    k, n_live, cov, cov_gf, rank, h, h_gf, n_ev = a.T
    print(f"{args.episodes} episodes, {len(a)} queries, B = {b}; load {os.getloadavg()[0]:.1f}")
    print(f"K kept: median {np.median(k):.0f} of median {np.median(n_live):.0f} live OSUs")
    print(f"evidence steps per query: median {np.median(n_ev):.0f}")
    print(
        f"evidence steps inside the kept OSUs: OSU-Mem mean {cov.mean():.2f} (>= 2: "
        f"{np.mean(cov >= 2):.3f}), GF mean {cov_gf.mean():.2f} (>= 2: {np.mean(cov_gf >= 2):.3f})"
    )
    ok = rank > 0
    print(
        f"centroid rank of the best evidence OSU: median {np.median(rank[ok]):.0f}, "
        f"within K {np.mean(rank[ok] <= k[ok]):.3f}"
    )
    print(f"Hit@2: OSU-Mem {h.mean():.3f}, OSU-Mem + GF {h_gf.mean():.3f}")


if __name__ == "__main__":
    main()
