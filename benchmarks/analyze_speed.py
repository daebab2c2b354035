"""Wall time of `osustat analyze` on 100 topics x 2 runs x 4 metrics x 2 depths (issue 8).

Writes a simulated TREC run pair (100 topics, 1,000 documents per topic and run, graded
qrels with 5-40 relevant documents per topic; no real system's output) into a temporary
folder and times, in a fresh process each (imports count), `osustat analyze` on it:

- ``osustat``: metrics recall, hit@2 (osustat's own) at depths 10 and 100;
- ``+ir``: metrics recall, ndcg@10, ap@k, p@10 (three through ir_measures) at depths 10, 100.

Each writes the full report (markdown, JSON, figures) with --out. Repeats each run and
reports the median.

    .venv/bin/python benchmarks/analyze_speed.py [--repeats 3] [--compare-ref b7517fc]

- ``example``: ``osustat analyze examples/records.csv`` (recall and hit@2 at two budgets, four
  cells: the MDE of every cell at two levels). With ``--compare-ref REF`` every setup also
  runs on git REF's code (same interpreter, interleaved), and the CPU ratio is printed
  (issue 23 item 3: the MDE cost).

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


IR_METRICS = "recall,ndcg@10,ap@10,ap@100,p@10"


def checkout(ref: str, folder: Path) -> Path:
    """The code of git `ref` laid out as the installed package (retrieval/, analyses/ and
    reports/ inside osustat/), for PYTHONPATH: the same interpreter and dependencies run it."""
    root = folder / "ref"
    root.mkdir()
    archive = subprocess.run(["git", "archive", ref], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(root)], input=archive, check=True)
    for sub in ("retrieval", "analyses", "reports"):
        (root / "osustat" / sub).symlink_to(root / sub)
    return root


def timed(cmd: list[str], env: dict[str, str] | None) -> tuple[float, float]:
    """(wall s, CPU s of the child: user + sys) of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tempfile.gettempdir())
    if done.returncode:
        raise SystemExit(f"{' '.join(cmd)} failed ({done.returncode}): {done.stderr[-2000:]}")
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--compare-ref",
        default=None,
        metavar="REF",
        help="also time git REF's code (e.g. b7517fc) in the same run, interleaved, and "
        "print the CPU ratio",
    )
    args = parser.parse_args()
    exe = str(Path(sys.executable).with_name("osustat"))
    example = Path(__file__).resolve().parents[1] / "examples" / "records.csv"
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        bm25, rm3, qrels = write_inputs(folder)
        common = [exe, "analyze", "--run", f"bm25={bm25}", "--run", f"rm3={rm3}"]
        common += ["--qrels", str(qrels), "--depth", "10,100", "--treatment", "rm3"]
        common += ["--baseline", "bm25", "--force"]
        ex = [exe, "analyze", str(example), "--treatment", "osu-mem", "--force"]
        setups = {
            "osustat (recall, hit@2)": (4, [*common, "--metric", "recall,hit@2"]),
            # AP at a depth is ap@k (issue 24), and measures with their own cut-off are
            # computed once: recall at 2 depths, nDCG@10, AP@10, AP@100, P@10
            "+ir (recall, ndcg@10, ap@k, p@10)": (
                6,
                [*common, "--measure", "nDCG@10,AP,P@10", "--metric", IR_METRICS],
            ),
            "example (examples/records.csv)": (
                4,
                [*ex, "--baseline", "flat-vector"],
            ),
        }
        codes: dict[str, dict[str, str] | None] = {"this": None}
        if args.compare_ref:
            codes[args.compare_ref] = {
                **os.environ,
                "PYTHONPATH": str(checkout(args.compare_ref, folder)),
            }
        print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
        print("| setup | code | comparisons | median wall s | median CPU s (user+sys) | runs "
              "wall (s) |")  # fmt: skip
        print("|---|---|---|---|---|---|")
        cpu_of: dict[tuple[str, str], float] = {}
        for name, (n, cmd) in setups.items():
            got: dict[str, list[tuple[float, float]]] = {code: [] for code in codes}
            for k in range(args.repeats):
                for code, env in codes.items():  # interleaved: the same load for both
                    out = folder / f"out{k}"
                    got[code].append(timed([*cmd, "--out", str(out)], env))
            for code, runs in got.items():
                wall = statistics.median(w for w, _ in runs)
                cpu = statistics.median(c for _, c in runs)
                cpu_of[name, code] = cpu
                shown = ", ".join(f"{w:.2f}" for w, _ in runs)
                print(f"| {name} | {code} | {n} | {wall:.2f} | {cpu:.2f} | {shown} |")
        if args.compare_ref:
            print()
            for name in setups:
                ratio = cpu_of[name, args.compare_ref] / cpu_of[name, "this"]
                print(f"- {name}: CPU {args.compare_ref} / this = {ratio:.2f}")
        print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
