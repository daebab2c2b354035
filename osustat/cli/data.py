"""``osustat data list|fetch|verify|path``: the registry's datasets on this machine.

``list`` shows each dataset (what it is, source and commit, license, size, folder, present and
verified); ``fetch NAME...`` downloads and checks (exit 2 on a hash mismatch, the file removed);
``verify [NAME...]`` re-hashes the local copies (exit 2 on a mismatch, 1 when files are missing
or nothing is fetched); ``path NAME`` prints the dataset's folder (exit 1 when it is not there or
incomplete, 2 when a file is wrong).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

__all__ = ["add_data_parser"]


def _names(args: argparse.Namespace) -> list[str]:
    from osustat.data.registry import datasets, get_dataset

    names = list(args.names) or [d.name for d in datasets()]
    for n in names:
        get_dataset(n)  # unknown name: ValueError before any work
    return names


def _list(args: argparse.Namespace) -> int:
    from osustat.data.registry import datasets
    from osustat.data.store import data_dir, file_states

    print(f"data folder: {data_dir()}")
    for ds in datasets():
        states = file_states(ds.name)
        ok = sum(s.state == "ok" for s in states)
        bad = sum(s.state == "bad" for s in states)
        if ok == len(states):
            status = "present, verified"
        elif ok + bad == 0:
            status = "not fetched"
        else:
            status = f"{ok} of {len(states)} files verified" + (f", {bad} wrong" if bad else "")
        lic = ds.license + (" (restricted: see below)" if ds.restricted else "")
        print(f"\n{ds.name}: {ds.title}")
        print(f"  source:  {ds.source}")
        print(f"  license: {lic}")
        if ds.license_note:
            print(f"           {ds.license_note}")
        print(f"  size:    {ds.size / 1e6:.1f} MB in {len(ds.files)} files")
        print(f"  folder:  {data_dir() / ds.folder}")
        print(f"  status:  {status}")
    return 0


def _fetch(args: argparse.Namespace) -> int:
    from osustat.data.registry import get_dataset
    from osustat.data.store import fetch

    names = _names(args)
    for name in names:
        ds = get_dataset(name)
        if ds.restricted:
            print(
                f"osustat data: {name} is licensed {ds.license}, not for every use: "
                f"{ds.license_note}",
                file=sys.stderr,
            )
        fetch(
            name,
            progress=not args.no_progress and sys.stderr.isatty(),
            report=lambda msg: print(f"osustat data: {msg}", file=sys.stderr),
        )
    return 0


def _verify(args: argparse.Namespace) -> int:
    from osustat.data.store import data_dir, dataset_dir, file_states

    names = _names(args)
    worst = 0
    checked = 0
    for name in names:
        states = file_states(name, fresh=True)
        if not args.names and all(s.state == "missing" for s in states):
            print(f"{name}: not fetched (skipped)")
            continue
        checked += 1
        for s in states:
            if s.state == "bad":
                print(f"{name}/{s.file.path}: WRONG: {s.problem()}")
                worst = 2
            elif s.state == "missing":
                print(f"{name}/{s.file.path}: missing")
                worst = max(worst, 1)
        ok = sum(s.state == "ok" for s in states)
        print(f"{name}: {ok} of {len(states)} files verified in {dataset_dir(name)}")
    if not checked:
        print(
            f"nothing to verify: no dataset is fetched in {data_dir()} "
            f"(`osustat data fetch NAME`, or set OSUSTAT_DATA_DIR to a copy)",
            file=sys.stderr,
        )
        return 1
    if worst == 2:
        print(
            "osustat data: wrong files: `osustat data fetch NAME` fetches them again",
            file=sys.stderr,
        )
    return worst


def _path(args: argparse.Namespace) -> int:
    from osustat.data.store import dataset_dir, file_states

    folder = dataset_dir(args.name)
    print(folder)
    if not folder.is_dir():
        print(
            f"osustat data: {args.name} is not fetched (osustat data fetch {args.name})",
            file=sys.stderr,
        )
        return 1
    states = file_states(args.name)
    bad = [s.file.path for s in states if s.state == "bad"]
    missing = [s.file.path for s in states if s.state == "missing"]
    if bad or missing:
        what = "; ".join(
            x
            for x in (
                f"{len(bad)} wrong file(s): {', '.join(bad)}" if bad else "",
                f"{len(missing)} missing: {', '.join(missing)}" if missing else "",
            )
            if x
        )
        print(
            f"osustat data: {args.name} is not the registered copy ({what}); "
            f"`osustat data verify {args.name}` shows the hashes, "
            f"`osustat data fetch {args.name}` repairs it",
            file=sys.stderr,
        )
        return 2 if bad else 1
    return 0


def add_data_parser(sub: Any) -> None:
    """The ``data`` sub-command and its four actions."""
    dp = sub.add_parser(
        "data",
        help="list, fetch and verify the datasets of the real-data pipelines",
        description="Datasets live in $OSUSTAT_DATA_DIR (a folder per dataset) or the user "
        "cache; `fetch` downloads from the pinned upstream URLs, or from "
        "$OSUSTAT_DATA_MIRROR/<dataset>/<file> when set (a server's URL, or a local folder "
        "copied from), and checks every SHA-256.",
    )
    acts = dp.add_subparsers(dest="action", required=True, help="list, fetch, verify or path")
    acts.add_parser(
        "list", help="each dataset: source, license, size, folder, status"
    ).set_defaults(func=_list)
    fe = acts.add_parser("fetch", help="download and verify datasets (default: all)")
    fe.add_argument("names", nargs="*", metavar="NAME", help="dataset names (osustat data list)")
    fe.add_argument("--no-progress", action="store_true", help="no progress bar")
    fe.set_defaults(func=_fetch)
    ve = acts.add_parser("verify", help="check local copies against the registry's SHA-256")
    ve.add_argument(
        "names", nargs="*", metavar="NAME", help="dataset names (default: present ones)"
    )
    ve.set_defaults(func=_verify)
    pa = acts.add_parser("path", help="print a dataset's folder")
    pa.add_argument("name", metavar="NAME")
    pa.set_defaults(func=_path)
