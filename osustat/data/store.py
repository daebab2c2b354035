"""Where datasets live on disk, whether a copy is right, fetching one, and ``--data`` values.

The data folder is ``$OSUSTAT_DATA_DIR`` when set (a local copy laid out like the shared data: one
folder per dataset, the registry's file names), else the user cache folder (``~/.cache/osustat``
on Linux). ``fetch`` downloads with pooch from the upstream URLs at their pinned commits, or from
``$OSUSTAT_DATA_MIRROR/<dataset folder>/<file>`` when that is set (prepared files then come ready
made; hashes are checked all the same). Files are downloaded into a staging folder beside the
target, checked against the registry's SHA-256, and only then moved into place one by one, so a
dataset folder never holds a partial or unverified download.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from osustat.data.recipes import build
from osustat.data.registry import DataFile, Dataset, datasets, get_dataset

__all__ = [
    "DataMissingError",
    "FileState",
    "HashMismatchError",
    "data_dir",
    "dataset_dir",
    "fetch",
    "file_states",
    "resolve_data",
    "sha256_of",
]

DATA_DIR_ENV = "OSUSTAT_DATA_DIR"
MIRROR_ENV = "OSUSTAT_DATA_MIRROR"


class HashMismatchError(ValueError):
    """A downloaded (or built) file whose SHA-256 is not the registry's; it was removed."""

    def __init__(self, what: str, origin: str, expected: str, found: str) -> None:
        self.expected, self.found = expected, found
        super().__init__(
            f"{what}: SHA-256 mismatch for the file from {origin}: expected {expected}, "
            f"found {found}. The file was removed; nothing of it was written."
        )


class DataMissingError(FileNotFoundError):
    """A dataset asked for by name that is not (completely) in the data folder."""


@dataclass(frozen=True)
class FileState:
    """One registered file of a dataset as found on disk: ``ok``, ``missing`` or ``bad``."""

    dataset: str
    file: DataFile
    path: Path
    state: str
    found: str | None = None


def data_dir() -> Path:
    """The folder holding one sub-folder per dataset ($OSUSTAT_DATA_DIR, else the user cache)."""
    env = os.environ.get(DATA_DIR_ENV)
    if env:
        return Path(env).expanduser()
    import pooch

    return Path(pooch.os_cache("osustat"))


def dataset_dir(name: str) -> Path:
    """The folder of dataset `name` inside :func:`data_dir` (whether or not it exists)."""
    return data_dir() / get_dataset(name).folder


def sha256_of(path: Path) -> str:
    """SHA-256 (hex) of a file, through pooch's hashing."""
    import pooch

    return str(pooch.file_hash(str(path), alg="sha256"))


def file_states(name: str, *, hashes: bool = True) -> list[FileState]:
    """Each registered file of `name`: missing, ok, or bad (wrong size or SHA-256)."""
    ds = get_dataset(name)
    root = dataset_dir(name)
    out = []
    for f in ds.files:
        path = root / f.path
        if not path.is_file():
            out.append(FileState(ds.name, f, path, "missing"))
            continue
        if path.stat().st_size != f.size:
            out.append(FileState(ds.name, f, path, "bad", f"{path.stat().st_size} bytes"))
            continue
        found = sha256_of(path) if hashes else f.sha256
        out.append(FileState(ds.name, f, path, "ok" if found == f.sha256 else "bad", found))
    return out


def _git_blob(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def _download(url: str, dest: Path, progress: bool) -> Path:
    import pooch

    logger = pooch.get_logger()
    level = logger.level
    logger.setLevel(logging.WARNING)  # pooch logs each download and its hash at INFO
    try:
        got = pooch.retrieve(
            url, known_hash=None, fname=dest.name, path=dest.parent, progressbar=progress
        )
    finally:
        logger.setLevel(level)
    return Path(got)


def _stage_file(
    ds: Dataset, f: DataFile, staging: Path, mirror: str | None, progress: bool
) -> Path:
    """Download (or build) one file into `staging` and check it; removed if the hash is wrong."""
    dest = staging / f.path
    dest.parent.mkdir(parents=True, exist_ok=True)
    what = f"{ds.name}/{f.path}"
    if mirror or f.url:
        origin = f"{mirror.rstrip('/')}/{ds.folder}/{f.path}" if mirror else str(f.url)
        got = _download(origin, dest, progress)
    else:
        blobs = []
        for k, src in enumerate(f.sources):
            raw = _download(src.url, staging / ".sources" / f"{k}-{dest.name}", progress)
            data = raw.read_bytes()
            if not _git_blob(data).startswith(src.git_blob):
                raise HashMismatchError(
                    f"{what} (recipe {f.recipe} source {k})",
                    src.url,
                    f"git blob {src.git_blob}…",
                    f"git blob {_git_blob(data)}",
                )
            blobs.append(data)
        origin = f"recipe {f.recipe} ({len(blobs)} upstream blobs)"
        got = dest
        got.write_bytes(build(str(f.recipe), blobs, f.sources))
    found = sha256_of(got)
    if found != f.sha256:
        got.unlink()
        raise HashMismatchError(what, origin, f.sha256, found)
    return got


def fetch(
    name: str,
    *,
    mirror: str | None = None,
    progress: bool = False,
    report: Callable[[str], None] = lambda msg: None,
) -> Path:
    """Fetch dataset `name` into :func:`data_dir` unless it is there and verified; its folder.

    `mirror` defaults to ``$OSUSTAT_DATA_MIRROR``. Files already present with the right hash are
    kept; the others are downloaded (or built) into a staging folder, all checked, then moved in.
    A wrong hash raises :class:`HashMismatchError` and leaves the dataset folder as it was.
    """
    ds = get_dataset(name)
    mirror = mirror if mirror is not None else (os.environ.get(MIRROR_ENV) or None)
    target = dataset_dir(name)
    todo = [s for s in file_states(name) if s.state != "ok"]
    if not todo:
        report(f"{name}: all {len(ds.files)} files present and verified in {target}")
        return target
    for s in todo:
        if s.state == "bad":
            report(f"{name}/{s.file.path}: present but wrong ({s.found}); fetching it again")
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{ds.folder}.", suffix=".partial", dir=target.parent))
    try:
        staged = [(s, _stage_file(ds, s.file, staging, mirror, progress)) for s in todo]
        for s, got in staged:
            s.path.parent.mkdir(parents=True, exist_ok=True)
            os.replace(got, s.path)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    origin = f"mirror {mirror}" if mirror else "upstream"
    report(f"{name}: {len(todo)} of {len(ds.files)} files fetched from {origin} into {target}")
    return target


def _missing(name: str) -> str | None:
    """Why dataset `name` cannot be used as input now (its input files absent), or None."""
    ds = get_dataset(name)
    states = file_states(name, hashes=False)
    needed = [s for s in states if "." in ds.inputs or s.file.path in ds.inputs]
    missing = [s.file.path for s in needed if s.state != "ok"]
    if not missing:
        return None
    shown = ", ".join(missing[:4]) + (f" and {len(missing) - 4} more" if len(missing) > 4 else "")
    return f"dataset {name!r} is not in {dataset_dir(name)} (missing: {shown})"


def resolve_data(values: Sequence[str] | None, defaults: Sequence[str] = ()) -> list[Path]:
    """Turn ``--data`` values into paths: existing paths stay, dataset names become their inputs.

    With no values, the dataset names `defaults` (a benchmark's declared ``datasets``; none is a
    ``ValueError``: give ``--data``). Absent datasets raise
    :class:`DataMissingError` naming them, the fetch command and the folder to fill by hand;
    any other value is returned as a path (the pipeline reading it reports it missing).
    """
    names = {d.name for d in datasets()}
    if not values:
        if not defaults:
            raise ValueError("no default data; give --data.")
        values = defaults
    out: list[Path] = []
    absent: list[tuple[str, str]] = []
    for value in values:
        path = Path(value).expanduser()
        if path.exists():
            out.append(path)
        elif value in names:
            why = _missing(value)
            if why:
                absent.append((value, why))
                continue
            root = dataset_dir(value)
            out.extend(root if i == "." else root / i for i in get_dataset(value).inputs)
        else:  # not there: the pipeline that reads it names the missing path
            out.append(path)
    if absent:
        fetch_names = " ".join(n for n, _ in absent)
        raise DataMissingError(
            "; ".join(why for _, why in absent)
            + f". Fetch with `osustat data fetch {fetch_names}`, or put the files in "
            f"{data_dir()}/<dataset>/ by hand (or point {DATA_DIR_ENV} at a folder laid out "
            "like that)."
        )
    return out
