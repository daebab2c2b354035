"""Where datasets live on disk, whether a copy is right, fetching one, and ``--data`` values.

The data folder is ``$OSUSTAT_DATA_DIR`` when set (a local copy laid out like the shared data: one
folder per dataset, the registry's file names), else the user cache folder (``~/.cache/osustat``
on Linux). ``fetch`` downloads with pooch from the upstream URLs at their pinned commits, or from
``$OSUSTAT_DATA_MIRROR/<dataset folder>/<file>`` when that is set — a server's URL, or a folder on
this machine (a path or a ``file://`` URL), whose files are copied (prepared files then come ready
made; hashes are checked all the same). Files are downloaded into a staging folder beside the
target, checked against the registry's SHA-256, and only then moved into place one by one, so a
dataset folder never holds a partial or unverified download; fetched files get the ordinary
permissions of a new file (0644 under the usual umask), not the 0600 of a download's temporary.

Data are also checked where they are used: :func:`resolve_data` (what ``reproduce`` calls)
compares every file of a registered dataset it hands out with the registry's SHA-256 and stops
on a wrong one. Hashes are kept in a small cache keyed by path, size and modification time
(``.sha256-cache.json`` in the user cache folder), so a file is hashed again only after it
changed; ``osustat data verify`` always hashes afresh.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from osustat.data.recipes import build
from osustat.data.registry import DataFile, Dataset, datasets, get_dataset
from osustat.provenance import file_sha256

__all__ = [
    "DataCorruptError",
    "DataFetchError",
    "DataMissingError",
    "FileState",
    "HashMismatchError",
    "data_dir",
    "dataset_dir",
    "fetch",
    "file_states",
    "resolve_data",
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


class DataCorruptError(ValueError):
    """A local file of a registered dataset whose size or SHA-256 is not the registry's."""


class DataFetchError(ValueError):
    """A download that could not be made (no network, no such mirror file, ...)."""


@dataclass(frozen=True)
class FileState:
    """One registered file of a dataset as found on disk: ``ok``, ``missing`` or ``bad``."""

    dataset: str
    file: DataFile
    path: Path
    state: str
    found: str | None = None

    def problem(self) -> str:
        """What is wrong with a ``bad`` file: its size, or the expected and found SHA-256."""
        if self.found and " bytes" in self.found:
            return f"size {self.found}"
        return f"expected SHA-256 {self.file.sha256}, found {self.found}"


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


def _hash_cache_file() -> Path:
    import pooch

    return Path(pooch.os_cache("osustat")) / ".sha256-cache.json"


def _read_hash_cache() -> dict[str, list]:
    try:
        raw = json.loads(_hash_cache_file().read_text("utf-8"))
    except (OSError, ValueError):
        return {}  # none yet, unreadable or damaged: every file is hashed afresh
    return raw if isinstance(raw, dict) else {}


def _write_hash_cache(cache: dict[str, list]) -> None:
    """Replace the cache file atomically; a cache that cannot be written is only slower."""
    target = _hash_cache_file()
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".sha256-cache.", dir=target.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(cache, fh, sort_keys=True)
        _ordinary_permissions(Path(tmp))  # mkstemp's 0600 is for secrets, not a cache
        os.replace(tmp, target)
    except OSError:
        return


def _sha256_cached(paths: Sequence[Path], *, fresh: bool = False) -> dict[Path, str]:
    """SHA-256 of each file, from the cache when path, size and mtime are those it was hashed
    at (`fresh`: hash every file again); new hashes are written back."""
    cache = _read_hash_cache()
    out: dict[Path, str] = {}
    changed = False
    for path in paths:
        st = path.stat()
        key = str(path.resolve())
        hit = cache.get(key)
        if not fresh and isinstance(hit, list) and hit[:2] == [st.st_size, st.st_mtime_ns]:
            out[path] = str(hit[2])
            continue
        out[path] = file_sha256(path)
        cache[key] = [st.st_size, st.st_mtime_ns, out[path]]
        changed = True
    if changed:
        _write_hash_cache(cache)
    return out


def file_states(name: str, *, hashes: bool = True, fresh: bool = False) -> list[FileState]:
    """Each registered file of `name`: missing, ok, or bad (wrong size or SHA-256).

    `hashes=False` checks presence and size only; hashes come from the path/size/mtime cache
    unless `fresh`.
    """
    ds = get_dataset(name)
    root = dataset_dir(name)
    out: list[FileState | None] = []
    sized: list[tuple[int, DataFile, Path]] = []
    for f in ds.files:
        path = root / f.path
        if not path.is_file():
            out.append(FileState(ds.name, f, path, "missing"))
        elif path.stat().st_size != f.size:
            found = f"{path.stat().st_size:,} bytes (registered: {f.size:,})"
            out.append(FileState(ds.name, f, path, "bad", found))
        elif not hashes:
            out.append(FileState(ds.name, f, path, "ok"))
        else:
            sized.append((len(out), f, path))
            out.append(None)
    hashed = _sha256_cached([p for _, _, p in sized], fresh=fresh)
    for i, f, path in sized:
        sha = hashed[path]
        out[i] = FileState(ds.name, f, path, "ok" if sha == f.sha256 else "bad", sha)
    return [s for s in out if s is not None]


def _git_blob(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def _download(url: str, dest: Path, progress: bool, dataset: str = "") -> Path:
    """Download `url` to `dest`; a failure (no network, HTTP error) is a
    :class:`DataFetchError` naming the mirror variable and the folder to fill by hand."""
    import pooch

    logger = pooch.get_logger()
    level = logger.level
    logger.setLevel(logging.WARNING)  # pooch logs each download and its hash at INFO
    try:
        got = pooch.retrieve(
            url, known_hash=None, fname=dest.name, path=dest.parent, progressbar=progress
        )
    except (OSError, ValueError) as exc:  # requests' errors are OSErrors
        reason = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
        folder = data_dir() / (get_dataset(dataset).folder if dataset else "<dataset>")
        raise DataFetchError(
            f"could not download {url} ({type(exc).__name__}: {reason}). Without network: "
            f"set {MIRROR_ENV} to a copy of the data folder holding <dataset>/<file> (a local "
            f"folder, or a server's URL), or copy the files into {folder} by hand (`osustat "
            "data list` shows the sources, `osustat data verify` checks the copy)."
        ) from exc
    finally:
        logger.setLevel(level)
    return Path(got)


def _local_mirror(mirror: str | None) -> Path | None:
    """The folder a mirror names on this machine (a path, or a ``file://`` URL), else None: a
    server's URL is downloaded from."""
    if not mirror:
        return None
    if mirror.startswith("file://"):
        from urllib.parse import unquote, urlparse

        return Path(unquote(urlparse(mirror).path))
    if "://" in mirror:
        return None
    return Path(mirror).expanduser()


def _ordinary_permissions(path: Path) -> None:
    """rw for the owner, r for the others as the umask allows (a download's temp is 0600)."""
    mask = os.umask(0)
    os.umask(mask)
    path.chmod(0o666 & ~mask)


def _stage_file(
    ds: Dataset, f: DataFile, staging: Path, mirror: str | None, progress: bool
) -> Path:
    """Download (or build) one file into `staging` and check it; removed if the hash is wrong."""
    dest = staging / f.path
    dest.parent.mkdir(parents=True, exist_ok=True)
    what = f"{ds.name}/{f.path}"
    local = _local_mirror(mirror)
    if local is not None:  # a copy of the data folder on this machine: copied, then checked
        copy = local / ds.folder / f.path
        if not copy.is_file():
            raise DataFetchError(
                f"{MIRROR_ENV} {mirror!r} is a local folder, but it holds no {copy} "
                "(a mirror holds <dataset folder>/<file>, as `osustat data list` names them)."
            )
        origin = str(copy)
        got = dest
        shutil.copyfile(copy, got)
    elif mirror or f.url:
        origin = f"{mirror.rstrip('/')}/{ds.folder}/{f.path}" if mirror else str(f.url)
        got = _download(origin, dest, progress, ds.name)
    else:
        blobs = []
        for k, src in enumerate(f.sources):
            raw = _download(src.url, staging / ".sources" / f"{k}-{dest.name}", progress, ds.name)
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
    found = file_sha256(got)
    if found != f.sha256:
        got.unlink()
        raise HashMismatchError(what, origin, f.sha256, found)
    _ordinary_permissions(got)
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


def _problems(name: str, files: Sequence[str] | None = None) -> tuple[list[str], list[FileState]]:
    """Dataset `name`'s input files that are absent, and every present file (or only those of
    `files`) whose size or SHA-256 is wrong."""
    ds = get_dataset(name)
    states = file_states(name)
    if files is not None:
        states = [s for s in states if s.file.path in files]
    needed = [s for s in states if "." in ds.inputs or s.file.path in ds.inputs]
    missing = [s.file.path for s in needed if s.state == "missing"]
    return missing, [s for s in states if s.state == "bad"]


def _missing_message(name: str, missing: Sequence[str]) -> str:
    shown = ", ".join(missing[:4]) + (f" and {len(missing) - 4} more" if len(missing) > 4 else "")
    return f"dataset {name!r} is not in {dataset_dir(name)} (missing: {shown})"


def _corrupt_error(bad: Sequence[FileState]) -> DataCorruptError:
    lines = [f"{s.path}: {s.problem()}" for s in bad]
    names = " ".join(dict.fromkeys(s.dataset for s in bad))
    return DataCorruptError(
        "the local copy of dataset(s) "
        + ", ".join(repr(n) for n in dict.fromkeys(s.dataset for s in bad))
        + " is not the registered one: "
        + "; ".join(lines)
        + f". Nothing was run. Repair with `osustat data fetch {names}` (it fetches the wrong "
        "files again), or put the right files there by hand."
    )


def _registered_files(path: Path) -> tuple[str, list[str] | None] | None:
    """The dataset whose folder holds `path` and the registered files `path` covers (None: the
    whole dataset), or None when `path` is not inside a registered dataset's folder."""
    try:
        target = path.resolve()
    except OSError:
        return None
    for ds in datasets():
        root = dataset_dir(ds.name).resolve()
        if target == root:
            return ds.name, None
        if target.is_relative_to(root):
            rel = target.relative_to(root).as_posix()
            covered = [f.path for f in ds.files if f.path == rel or f.path.startswith(rel + "/")]
            return (ds.name, covered) if covered else None
    return None


def resolve_data(values: Sequence[str] | None, defaults: Sequence[str] = ()) -> list[Path]:
    """Turn ``--data`` values into paths: existing paths stay, dataset names become their inputs.

    With no values, the dataset names `defaults` (a benchmark's declared ``datasets``; none is a
    ``ValueError``: give ``--data``). Absent datasets raise
    :class:`DataMissingError` naming them, the fetch command and the folder to fill by hand;
    any other value is returned as a path (the pipeline reading it reports it missing).
    Every registered file handed out — a dataset named, or a path inside a dataset's folder of
    the data folder — is checked against the registry (size, SHA-256 through the cache): a wrong
    one raises :class:`DataCorruptError` naming the file, expected and found hash and the repair.
    """
    names = {d.name for d in datasets()}
    if not values:
        if not defaults:
            raise ValueError("no default data; give --data.")
        values = defaults
    out: list[Path] = []
    absent: list[tuple[str, str]] = []
    bad: list[FileState] = []
    for value in values:
        path = Path(value).expanduser()
        if path.exists():
            out.append(path)
            inside = _registered_files(path)
            if inside is not None:
                bad.extend(_problems(*inside)[1])
        elif value in names:
            missing, wrong = _problems(value)
            bad.extend(wrong)
            if missing:
                absent.append((value, _missing_message(value, missing)))
                continue
            root = dataset_dir(value)
            out.extend(root if i == "." else root / i for i in get_dataset(value).inputs)
        else:  # not there: the pipeline that reads it names the missing path
            out.append(path)
    if bad:
        raise _corrupt_error(bad)
    if absent:
        fetch_names = " ".join(n for n, _ in absent)
        raise DataMissingError(
            "; ".join(why for _, why in absent)
            + f". Fetch with `osustat data fetch {fetch_names}`, or put the files in "
            f"{data_dir()}/<dataset>/ by hand (or point {DATA_DIR_ENV} at a folder laid out "
            "like that)."
        )
    return out
