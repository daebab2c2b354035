"""A fingerprint of the three ``osustat reproduce`` pipelines: run it at two revisions, compare.

Runs small versions of ``reproduce synthetic`` (with a user retriever), ``reproduce tau-bench``
(on shared τ²-bench files) and ``reproduce toolbench`` (one seed, few episodes) in fresh
processes and prints a SHA-256 per written file (records, structure, membership, episodes,
report). A refactoring that changes no behaviour must leave every line unchanged:

    .venv/bin/python benchmarks/pipeline_identity.py --cache DIR > before.txt
    ... change ...
    .venv/bin/python benchmarks/pipeline_identity.py --cache DIR > after.txt
    diff before.txt after.txt

``report.md`` lines carrying wall time or a path are dropped before hashing (they differ
between any two runs); every other byte counts. Figures (PNG) are hashed as written. Use a
private embedding cache (``--cache``): the first run encodes the τ-bench steps (~60 texts/s).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

DATA = "/work/shared/data"
ROOT = Path(__file__).resolve().parent.parent
VOLATILE = re.compile(r"(\d+(\.\d+)?\s*s\b|seconds|wall|/tmp/|elapsed|python|platform|torch)", re.I)


def _runs(cache: str) -> dict[str, list[str]]:
    common = ["--no-progress", "--resamples", "200"]
    return {
        "synthetic": [
            "synthetic",
            "--episodes",
            "8",
            "--seed",
            "3",
            "--retriever",
            "examples.my_retriever:RecencyCosine",
            *common,
        ],
        "tau-bench": [
            "tau-bench",
            "--data",
            f"{DATA}/tau2-bench/airline-gpt-5.4.json",
            f"{DATA}/tau2-bench/airline-claude-opus-4-6.json",
            "--cache",
            cache,
            "--seed",
            "1",
            *common,
        ],
        "toolbench": [
            "toolbench",
            "--data",
            f"{DATA}/toolbench",
            "--cache",
            cache,
            "--seeds",
            "42",
            "--episodes",
            "20",
            *common,
        ],
    }


def _digest(path: Path) -> str:
    if path.name == "report.md" or path.name == "provenance.json":
        keep = [
            line
            for line in path.read_text(encoding="utf-8").splitlines()
            if not VOLATILE.search(line)
        ]
        return hashlib.sha256("\n".join(keep).encode()).hexdigest()
    return hashlib.sha256(path.read_bytes()).hexdigest()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", required=True, help="embedding cache directory")
    parser.add_argument("--only", default=None, help="one of synthetic, tau-bench, toolbench")
    args = parser.parse_args()
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    for name, argv in _runs(args.cache).items():
        if args.only and name != args.only:
            continue
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "out"
            cmd = [sys.executable, "-m", "osustat", "reproduce", *argv, "--out", str(out)]
            proc = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=ROOT)
            print(f"{name}: exit {proc.returncode}")
            if proc.returncode:
                print("  " + proc.stderr.strip().splitlines()[-1] if proc.stderr else "")
            for path in sorted(out.rglob("*")) if out.exists() else []:
                if path.is_file():
                    print(f"  {path.relative_to(out)} {_digest(path)}")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
