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

``--after-import`` measures the README's command (``--metric hit@2``; with ``--all-metrics``
the same command without ``--metric``: hit@2 and recall at both budgets, 4 forest and 2
budget figures) both ways issue 37 asks, for this code and ``--compare-ref``'s, interleaved
(each code's runs in turn, so both see the same load): **in one process after imports**
(the command run once to import and warm everything it uses, then the CPU of a second run:
median of the repeats), and **a fresh process minus its imports** (the command's CPU in a
fresh process minus that of a fresh process importing every module the command had loaded).
"""

from __future__ import annotations

import argparse
import json
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

#: Run in a child: the README command in one process, CPU of each run (JSON on stdout), and
#: the modules it loaded (for the import-only process).
_IN_PROCESS = """
import contextlib, io, json, sys, time
import osustat.analysis, osustat.reports.cellwise
from osustat.cli.main import main
argv = json.loads(sys.argv[1])
part = {}
def timed(mod, name):
    func = getattr(mod, name)
    def run(*args, **kwargs):
        start = time.process_time()
        try:
            return func(*args, **kwargs)
        finally:
            part[name] = part.get(name, 0.0) + time.process_time() - start
    setattr(mod, name, run)
timed(osustat.analysis, "analyze")
timed(osustat.reports.cellwise, "write_figures")
timed(osustat.analysis, "paired")
import osustat.cellwise
for name in ("minimum_detectable_effect", "bootstrap_ci", "interaction_test", "signflip_tests"):
    timed(osustat.cellwise, name)
cpu, parts = [], []
for k in range(int(sys.argv[2])):
    part.clear()
    start = time.process_time()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        main(argv)
    cpu.append(time.process_time() - start)
    parts.append(dict(part))
print(json.dumps({"cpu": cpu, "parts": parts, "modules": sorted(sys.modules),
                  "where": osustat.reports.cellwise.__file__}))
"""

#: The in-process run's parts (CPU s each): `analyze` (which holds the next five: pairing,
#: the MDE searches, bootstrap intervals, interaction and sign-flip tests) and the figures.
PARTS = (
    "analyze",
    "paired",
    "minimum_detectable_effect",
    "bootstrap_ci",
    "interaction_test",
    "signflip_tests",
    "write_figures",
)

_IMPORT_ONLY = """
import importlib, json, sys
for name in json.loads(sys.argv[1]):
    try:
        importlib.import_module(name)
    except Exception:
        pass
"""


def after_import(
    codes: dict[str, dict[str, str] | None],
    example: Path,
    folder: Path,
    repeats: int,
    *,
    all_metrics: bool = False,
) -> None:
    """The README command's CPU after imports, both ways, per code (see the docstring); the
    codes take turns, so each repeat sees both under the same load."""
    argv = ["analyze", str(example), "--treatment", "osu-mem", "--baseline", "flat-vector"]
    argv += [] if all_metrics else ["--metric", "hit@2"]
    argv += ["--out", str(folder / "after-import"), "--force"]
    print(f"command: osustat {' '.join(argv[:-3])} --out DIR --force")
    print("| code | in one process after imports: CPU s per run | of which " + " / ".join(
          f"`{name}`" for name in PARTS) + " (medians) | fresh process CPU s | import-only CPU "
          "s | fresh minus imports s |")  # fmt: skip
    print("|---|---|---|---|---|---|")
    got = {code: ([], [], [], []) for code in codes}  # fresh, import-only, runs, their parts
    for _ in range(repeats):
        for code, env in codes.items():
            fresh_cpu, import_cpu, runs, parts = got[code]
            child = [sys.executable, "-c", _IN_PROCESS, json.dumps(argv), "1"]
            fresh_cpu.append(timed_output(child, env)[1])
            child[-1] = str(repeats + 1)
            out = json.loads(timed_output(child, env)[0])
            _check_code(code, env, out["where"])
            runs.extend(out["cpu"][1:])
            parts.extend(out["parts"][1:])
            mods = json.dumps([m for m in out["modules"] if not m.startswith("__")])
            import_cpu.append(timed_output([sys.executable, "-c", _IMPORT_ONLY, mods], env)[1])
    for code, (fresh_cpu, import_cpu, runs, parts) in got.items():
        f, i = statistics.median(fresh_cpu), statistics.median(import_cpu)
        shown = ", ".join(f"{c:.2f}" for c in runs)
        split = " / ".join(
            f"{statistics.median(p.get(name, 0.0) for p in parts):.2f}" for name in PARTS
        )
        print(f"| {code} | {statistics.median(runs):.2f} ({shown}) | {split} | {f:.2f} | "
              f"{i:.2f} | {f - i:.2f} |")  # fmt: skip


def _check_code(code: str, env: dict[str, str] | None, where: str) -> None:
    """Stop unless the child ran the code it was meant to: REF's checkout for REF, else not
    a checkout (a child started in the clone's folder imported the clone's `osustat` ahead of
    PYTHONPATH, so both codes were this one)."""
    root = None if env is None else env["PYTHONPATH"]
    if (root is not None) != (root is not None and where.startswith(root)):
        raise SystemExit(f"{code}: the child imported {where}, not the code in {root}")


def timed_output(cmd: list[str], env: dict[str, str] | None) -> tuple[str, float]:
    """(stdout, CPU s of the child) of one run, started outside the clone (so PYTHONPATH,
    not the clone's folder, decides which `osustat` it imports)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tempfile.gettempdir())
    if done.returncode:
        raise SystemExit(f"{cmd[:3]} failed ({done.returncode}): {done.stderr[-2000:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return done.stdout, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


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
    parser.add_argument(
        "--after-import",
        action="store_true",
        help="time the README command after imports (in one process, and a fresh process "
        "minus its imports) instead of the setups",
    )
    parser.add_argument(
        "--all-metrics",
        action="store_true",
        help="with --after-import: the command without --metric (all metrics and budgets)",
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
        if args.after_import:
            after_import(codes, example, folder, args.repeats, all_metrics=args.all_metrics)
            print(f"load average after: {os.getloadavg()[0]:.1f}")
            return
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
