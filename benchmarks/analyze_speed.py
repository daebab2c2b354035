"""Wall time of `osustat analyze` on 100 topics x 2 runs x 4 metrics x 2 depths (issue 8).

Writes a simulated TREC run pair (100 topics, 1,000 documents per topic and run, graded
qrels with 5-40 relevant documents per topic; no real system's output) into a temporary
folder and times, in a fresh process each (imports count), `osustat analyze` on it:

- ``osustat``: metrics recall, hit@2 (osustat's own) at depths 10 and 100;
- ``+ir``: metrics recall, ndcg@10, ap, p@10 (three through ir_measures) at depths 10, 100.

Each writes the full report (markdown, JSON, figures) with --out. Repeats each run and
reports the median.

    .venv/bin/python benchmarks/analyze_speed.py [--repeats 3]

Goal (issue 8): at most 10 s wall on this 2-core machine.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def write_inputs(folder: Path, seed: int = 0) -> tuple[Path, Path, Path]:
    rng = np.random.default_rng(seed)
    qrels, runs = [], {"bm25": [], "rm3": []}
    for t in range(100):
        qid = str(301 + t)
        docs = [f"D{t:03d}-{i:05d}" for i in range(3000)]
        n_rel = int(rng.integers(5, 41))
        for i in range(200):
            grade = int(rng.integers(1, 3)) if i < n_rel else 0
            qrels.append(f"{qid} 0 {docs[i]} {grade}")
        for tag, boost in (("bm25", 1.0), ("rm3", 1.2)):
            score = rng.normal(0, 1, size=3000)
            score[:n_rel] += boost
            top = np.argsort(-score, kind="stable")[:1000]
            runs[tag] += [
                f"{qid} Q0 {docs[i]} {r} {score[i]:.4f} {tag}" for r, i in enumerate(top, 1)
            ]
    (folder / "qrels.txt").write_text("\n".join(qrels) + "\n")
    for tag, lines in runs.items():
        (folder / f"{tag}.run").write_text("\n".join(lines) + "\n")
    return folder / "bm25.run", folder / "rm3.run", folder / "qrels.txt"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    exe = str(Path(sys.executable).with_name("osustat"))
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        bm25, rm3, qrels = write_inputs(folder)
        common = [exe, "analyze", "--run", f"bm25={bm25}", "--run", f"rm3={rm3}"]
        common += ["--qrels", str(qrels), "--depth", "10,100", "--treatment", "rm3"]
        common += ["--baseline", "bm25", "--force"]
        setups = {
            "osustat (recall, hit@2)": ["--metric", "recall,hit@2"],
            "+ir (recall, ndcg@10, ap, p@10)": [
                "--measure",
                "nDCG@10,AP,P@10",
                "--metric",
                "recall,ndcg@10,ap,p@10",
            ],
        }
        print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
        print("| setup | comparisons | median wall s | median CPU s (user+sys) | runs wall (s) |")
        print("|---|---|---|---|---|")
        for name, extra in setups.items():
            times, cpu = [], []
            for k in range(args.repeats):
                out = folder / f"out{k}"
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                start = time.perf_counter()
                subprocess.run(
                    [*common, *extra, "--out", str(out)], check=True, capture_output=True
                )
                times.append(time.perf_counter() - start)
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
            n = 2 * len(extra[-1].split(","))
            shown = ", ".join(f"{t:.2f}" for t in times)
            print(
                f"| {name} | {n} | {statistics.median(times):.2f} | "
                f"{statistics.median(cpu):.2f} | {shown} |"
            )


if __name__ == "__main__":
    main()
