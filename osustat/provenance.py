"""Provenance of every report, and atomic output folders.

:class:`Provenance` records what a report was made from: the osustat version, the versions of
the numerical stack, the command line, seeds, resample counts, the SHA-256 of each input file
and every exclusion with its reason and count. Reports print it (:meth:`Provenance.markdown`)
and JSON outputs embed it (:meth:`Provenance.to_dict`); each output folder also holds it as
``provenance.json``.

:func:`atomic_output` writes a command's outputs into a temporary folder beside the target
and renames it into place only when everything was written, so a failed run leaves no new
files; it refuses to replace a folder made from different inputs unless ``force=True``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import platform
import shutil
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any, NamedTuple

__all__ = [
    "PROVENANCE_FILE",
    "OutputError",
    "Provenance",
    "atomic_output",
    "file_sha256",
    "package_versions",
]

#: The file every output folder carries; :func:`atomic_output` compares its ``inputs_digest``.
PROVENANCE_FILE = "provenance.json"

_PACKAGES = ("osustat", "numpy", "scipy", "statsmodels", "pandas", "sentence-transformers")


class OutputError(ValueError):
    """An output folder cannot be written (exists with other inputs, not a folder, ...)."""


def file_sha256(path: str | Path) -> str:
    """SHA-256 (hex) of a file's bytes, read in 1 MiB chunks."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def package_versions() -> dict[str, str]:
    """Installed versions of osustat and its numerical stack (``'not installed'`` if absent),
    the encoder's stack (torch, sentence-transformers, onnx, onnxruntime, openvino) where
    installed, the Python version and the platform."""
    out = {}
    for name in _PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    if out["osustat"] == "not installed":  # running from a source tree without install
        from ._version import __version__

        out["osustat"] = __version__
    # the encoder's stack when installed: each backend's vectors differ in the last bits
    # (--encoder-backend), so a report names the runtime that made them
    for name in ("torch", "sentence-transformers", "onnx", "onnxruntime", "openvino"):
        with contextlib.suppress(metadata.PackageNotFoundError):
            out[name] = metadata.version(name)
    out["python"] = platform.python_version()
    out["platform"] = platform.platform()
    return out


@dataclass(frozen=True)
class Provenance:
    """What one report was made from.

    Attributes
    ----------
    command : str
        The command line (``'python API'`` when called from Python).
    inputs : tuple of (role, path, sha256)
    seeds : dict
        Named seeds (e.g. ``{'master': 0}``).
    resamples : dict
        Named resample counts (e.g. ``{'sign-flip': 10000, 'bootstrap': 2000}``).
    exclusions : tuple of (reason, count)
        Every unit left out, with why; empty when nothing was excluded.
    versions : dict
        :func:`package_versions` at the time of the run.
    options : dict
        What determines the run beside its inputs (a saved analysis's alpha, family,
        correction, metrics, budgets, seed, resamples, unit, ...), compared by
        :func:`check_target` before a folder is replaced; empty when not recorded.
    arguments : dict
        The command line as parsed: every argument that decides what is computed (not
        ``--jobs``, ``--force``, ...: :func:`run_arguments`), defaults filled in, by its
        option string (``'--alpha'``) or positional name; compared by
        :func:`check_target` instead of the command line's words, so an option given at its
        default, written ``--alpha=.05`` or in another order is the same run. Empty from
        Python and in reports written before it was recorded.
    """

    command: str
    inputs: tuple[tuple[str, str, str], ...] = ()
    seeds: Mapping[str, Any] = field(default_factory=dict)
    resamples: Mapping[str, int] = field(default_factory=dict)
    exclusions: tuple[tuple[str, int], ...] = ()
    versions: Mapping[str, str] = field(default_factory=package_versions)
    exclusions_note: str = ""
    options: Mapping[str, Any] = field(default_factory=dict)
    arguments: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def for_files(
        cls,
        files: Sequence[tuple[str, str | Path]],
        *,
        command: str | None = None,
        **kwargs: Any,
    ) -> Provenance:
        """Provenance hashing each ``(role, path)`` input file."""
        inputs = tuple((role, str(p), file_sha256(p)) for role, p in files)
        return cls(command=command or command_line(), inputs=inputs, **kwargs)

    @property
    def inputs_digest(self) -> str:
        """One SHA-256 over the inputs' roles and hashes (not their paths)."""
        h = hashlib.sha256()
        for role, _, sha in sorted(self.inputs):
            h.update(f"{role}\0{sha}\n".encode())
        return h.hexdigest()

    def atomic_output(self, target: str | Path, *, force: bool = False) -> Any:
        """:func:`atomic_output` for a report of this run (its inputs, command line and
        options)."""
        return atomic_output(
            target,
            inputs_digest=self.inputs_digest,
            force=force,
            command=self.command,
            options=self.options or None,
            arguments=self.arguments or None,
            keep=self.input_files(),
        )

    def input_files(self) -> list[tuple[str, str]]:
        """``(role, path)`` of each input that is a file or folder (not the settings text
        some runs hash beside them): what :func:`check_target` must never delete."""
        return [(role, path) for role, path, _ in self.inputs if os.path.exists(path)]

    def to_dict(self) -> dict[str, Any]:
        return {
            "versions": dict(self.versions),
            "command": self.command,
            "inputs": [{"role": r, "path": p, "sha256": s} for r, p, s in self.inputs],
            "inputs_digest": self.inputs_digest,
            "seeds": dict(self.seeds),
            "resamples": dict(self.resamples),
            "exclusions": [{"reason": r, "count": c} for r, c in self.exclusions],
            **({"exclusions_note": self.exclusions_note} if self.exclusions_note else {}),
            **({"options": json.loads(json_text(self.options))} if self.options else {}),
            **({"arguments": json.loads(json_text(self.arguments))} if self.arguments else {}),
        }

    def markdown(self) -> list[str]:
        """A ``## Provenance`` section."""
        v = ", ".join(f"{k} {val}" for k, val in self.versions.items())
        lines = ["## Provenance", "", f"- Versions: {v}.", f"- Command: `{self.command}`."]
        for role, path, sha in self.inputs:
            lines.append(f"- Input ({role}): `{path}`, SHA-256 `{sha}`.")
        if self.seeds:
            lines.append("- Seeds: " + ", ".join(f"{k} = {s}" for k, s in self.seeds.items()))
        if self.resamples:
            lines.append(
                "- Resamples: " + ", ".join(f"{k} {n:,}" for k, n in self.resamples.items())
            )
        if self.exclusions:
            for reason, count in self.exclusions:
                lines.append(f"- Excluded: {count} {reason}.")
        elif self.exclusions_note:
            lines.append(f"- Excluded: {self.exclusions_note}")
        else:
            lines.append("- Excluded: nothing.")
        return lines


def command_line() -> str:
    """The running command line, program name shortened to ``osustat``."""
    argv = list(sys.argv)
    if not argv or not argv[0] or argv[0] == "-c":  # `python`, `python -c`: Python code
        return "python API"
    prog = Path(argv[0]).name
    if prog in ("osustat", "__main__.py"):
        argv[0] = "osustat"
    elif prog.startswith("pytest") or (prog.endswith(".py") and prog != "osustat"):
        return "python API"
    return " ".join(argv)


class _Recorded(NamedTuple):
    """What the report in a folder recorded of its run (None where absent)."""

    digest: str | None = None
    command: str | None = None
    options: dict[str, Any] | None = None
    arguments: dict[str, Any] | None = None
    files: dict[str, str] | None = None  # each input file's path as recorded -> its SHA-256


def _existing(target: Path) -> _Recorded:
    """The inputs digest, command, options, arguments and input files of the report in
    `target`."""
    try:
        data = json.loads((target / PROVENANCE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return _Recorded()
    if not isinstance(data, dict):
        return _Recorded()
    digest, command = data.get("inputs_digest"), data.get("command")
    options, arguments = data.get("options"), data.get("arguments")
    inputs = data.get("inputs")
    files: dict[str, str] = {}
    for row in inputs if isinstance(inputs, list) else []:
        path, sha = (row.get("path"), row.get("sha256")) if isinstance(row, dict) else (0, 0)
        if isinstance(path, str) and path and isinstance(sha, str):
            files[os.path.normpath(path)] = sha  # looked up in this form (`_same_file`)
    return _Recorded(
        digest if isinstance(digest, str) else None,
        command if isinstance(command, str) else None,
        options if isinstance(options, dict) else None,
        arguments if isinstance(arguments, dict) else None,
        files,
    )


def _differing_options(before: Mapping[str, Any], now: Mapping[str, Any]) -> list[str]:
    """``'alpha: 0.05 there, 0.1 here'`` for each option on which two runs differ (an
    option left at its default, None, as ``not given``)."""
    now = json.loads(json_text(now))  # as the other side was read back: lists, plain numbers

    def shown(value: Any) -> str:
        return "not given" if value is None else repr(value)

    return [
        f"{key}: {shown(before.get(key))} there, {shown(now.get(key))} here"
        for key in sorted({*before, *now})
        if before.get(key) != now.get(key)
    ]


#: The command recorded for calls from Python (options are not a command line there).
API_COMMAND = "python API"


#: The options of a command line that say how a run is carried out, not what it computes:
#: two runs that differ only in them are the same run (:func:`_run_options`), so either may
#: replace the other's folder. Each maps to whether it takes a value. The commands that check
#: a command line (``analyze``, ``audit``, ``reproduce``) have no other such option and no
#: ``--resume`` (resuming is automatic, ``docs/scaling.md``).
_NOT_RESULTS = {
    # analyze, audit, reproduce: whether to replace the folder, not what is in it
    "--force": False,
    # analyze, reproduce: worker processes; results are returned in task order, so the
    # records and the report do not depend on their number (tested)
    "--jobs": True,
    # analyze, reproduce: a Dask cluster instead of --jobs; the same records and report
    "--scheduler": True,
    # reproduce: the progress bar on stderr only
    "--no-progress": False,
    # reproduce: where embeddings are cached; vectors are keyed by model and text, so a cold
    # and a warm cache, or two folders, give the same records
    "--cache": True,
}

#: Options that name where further copies of a run's results go, as ``--out`` names its
#: folder: the same run with or without them (``analyze --json FILE``, ``--records-out FILE``;
#: ``audit --json`` prints the JSON when there is no ``--out``). Left out of the parsed
#: arguments only: in a command line's words ``audit --json`` takes no value.
_ELSEWHERE = frozenset({"--json", "--records-out"})


#: The comma-separated list options of the commands compared by their arguments (``analyze``;
#: ``audit`` has none) and how their items are read: names as written, metric names in the
#: records' spelling, integers as numbers write them.
_LISTS = {
    "--treatment": "names",
    "--baseline": "names",
    "--measure": "names",
    "--metric": "metrics",
    "--budget": "integers",
    "--depth": "integers",
    "--hit-k": "integers",
}


def run_arguments(arguments: Mapping[str, Any]) -> dict[str, Any]:
    """Parsed arguments (:attr:`Provenance.arguments`) without those of :data:`_NOT_RESULTS`
    (how a run is carried out: the same run with ``--jobs 1`` or ``2``) and of
    :data:`_ELSEWHERE` (where further copies go), list options as the command reads them
    (:func:`_listed`). Both sides of a comparison pass through it, so a report written before
    the lists were read this way compares the same."""
    return {
        key: _listed(key, value) if key in _LISTS else value
        for key, value in arguments.items()
        if key not in _NOT_RESULTS and key not in _ELSEWHERE
    }


def _listed(option: str, value: Any) -> Any:
    """A comma-separated list option's value as the command reads it: items without the
    spaces around them, metric names in the records' spelling, integers as numbers write them
    (``--metric 'HIT@2, recall'`` is ``hit@2,recall``, ``--budget 0256`` is ``256``; a method
    ``007`` stays ``007``). The order stays: it is the report's. Still a string, as the
    arguments are recorded; an item the command refuses stays as typed."""
    if not isinstance(value, str):
        return value
    items = [item.strip() for item in value.split(",")]
    if _LISTS[option] == "metrics":
        from osustat._analysis_options import metric_key

        items = [metric_key(item) for item in items]
    elif _LISTS[option] == "integers":
        items = [_integer(item) for item in items]
    return ",".join(items)


def _integer(item: str) -> str:
    """``'0256'`` as ``'256'`` (read as ``int`` reads it, as the command does); an item that
    is not an integer as it is."""
    try:
        return str(int(item))
    except ValueError:
        return item


def _differing_arguments(
    before: Mapping[str, Any], now: Mapping[str, Any], files: Mapping[str, str] | None = None
) -> list[str]:
    """:func:`_differing_options` over the arguments both runs have: one that a later
    version added (or removed) is not a difference, else every report written before it
    would be another run after an upgrade. An argument naming input files (`files`: the
    earlier run's recorded paths and their SHA-256) is the same where it names files of the
    same content now, however spelled (``records.csv`` and ``/home/me/records.csv``): the
    inputs digest already compared them by content."""
    before, now = run_arguments(before), run_arguments(now)
    both = {k for k in before.keys() & now.keys() if not _same_files(before[k], now[k], files)}
    return _differing_options(
        {k: before[k] for k in both}, {k: v for k, v in now.items() if k in both}
    )


def _same_files(before: Any, now: Any, files: Mapping[str, str] | None) -> bool:
    """Whether two spellings of an argument name the same input files, one by one: each
    earlier path among the earlier run's hashed inputs, each present one an existing file
    of that content. Hashes only where the spellings differ."""
    if before == now or not files:
        return False  # equal values need no files; the comparison says they are equal
    was, is_ = (before, now) if isinstance(before, list) else ([before], [now])
    if not isinstance(is_, list) or len(was) != len(is_):
        return False
    return all(a == b or _same_file(a, b, files) for a, b in zip(was, is_, strict=True))


def _same_file(was: Any, is_: Any, files: Mapping[str, str]) -> bool:
    """One value of :func:`_same_files`: a path, or ``NAME=PATH`` (``--run bm25=a.run``)
    with the same name."""
    if not (isinstance(was, str) and isinstance(is_, str)):
        return False
    if os.path.normpath(was) not in files and "=" in was and "=" in is_:
        (name, was), (other, is_) = was.split("=", 1), is_.split("=", 1)
        if name != other:
            return False
    want = files.get(os.path.normpath(was))  # recorded paths are keyed in their normal form
    return want is not None and os.path.isfile(is_) and file_sha256(is_) == want


def _run_options(command: str) -> list[str]:
    """A recorded command line without the options that do not change what is computed
    (:data:`_NOT_RESULTS`: ``--force``, ``--jobs``, ``--scheduler``, ``--no-progress``,
    ``--cache``, as ``--jobs 2`` or ``--jobs=2``)."""
    import shlex

    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    kept: list[str] = []
    skip = False
    for word in words:
        if skip:
            skip = False
        elif word in _NOT_RESULTS:
            skip = _NOT_RESULTS[word]
        elif word.partition("=")[0] not in _NOT_RESULTS:
            kept.append(word)
    return kept


def check_target(
    target: str | Path,
    inputs_digest: str | None,
    *,
    force: bool = False,
    command: str | None = None,
    options: Mapping[str, Any] | None = None,
    arguments: Mapping[str, Any] | None = None,
    python: bool | None = None,
    keep: Sequence[tuple[str, str | Path | None]] = (),
) -> Path:
    """Refuse an output path that cannot or must not be replaced; call before any work.

    The messages name the caller's own words: ``out`` and ``force=True`` for Python
    (`python`, else when `command` is the API's), ``--out`` and ``--force`` otherwise.

    Leftovers of an interrupted replacement beside `target` are cleaned first, and said
    (:func:`clean_leftovers`).

    `keep` names the files the run reads or writes elsewhere, ``(role, path)`` (its inputs,
    ``--records-out``, ``--json``): a `target` that is or holds one of them is refused even
    with `force`, since replacing the folder would delete it.

    Raises
    ------
    OutputError
        `target` is a symbolic link, or is or holds a file of `keep`; or (unless `force`:
        then a ``UserWarning``) holds files its report did not write (:data:`OUTPUTS_KEY`);
        or `target` is a file; or a non-empty folder that is not an osustat output, or holds
        a different run -- other inputs, or (given `options`) other recorded options, or
        (given `command`, two command lines) another command line -- unless `force`; or its
        parent cannot be created. Options are compared whoever saved either report (the CLI
        or the Python API), command lines only between two of the CLI's: their parsed
        `arguments` where both runs recorded them (an option at its default is the same run),
        else their words.
    """
    target = Path(target)
    # a Python caller (`save(out, force=...)`, `osustat.reproduce`) is told its arguments
    out, force_it = _words(command, python)
    here = Path.cwd().resolve()
    if target.resolve() == here or target.resolve() in here.parents:
        raise OutputError(
            f"{out} {str(target)!r} is the current folder or holds it; a report replaces "
            "its whole folder, so give it a folder of its own (e.g. 'report')."
        )
    if target.is_symlink():
        raise OutputError(
            f"{out} {str(target)!r} is a symbolic link (to {os.readlink(target)!r}): a report "
            "replaces its folder by renaming, which would replace the link, not what it "
            "points to; give the folder itself."
        )
    _refuse_holding(target, keep, out)
    clean_leftovers(target)
    if target.exists() and not target.is_dir():
        raise OutputError(f"{out} {str(target)!r} is an existing file, not a folder.")
    if target.is_dir() and any(target.iterdir()) and not force:
        _refuse_another_run(target, inputs_digest, command, options, arguments, (out, force_it))
    if target.is_dir() and not force:  # with force: said where it is replaced (atomic_output)
        _refuse_foreign_files(target, _foreign_files(target), force, (out, force_it))
    parent = target.parent
    if parent.exists() and not parent.is_dir():
        raise OutputError(f"{out} {str(target)!r}: {str(parent)!r} is not a folder.")
    return target


def _words(command: str | None, python: bool | None) -> tuple[str, str]:
    """How the caller names the output and the force: ``out`` and ``force=True`` for Python
    (`python`, else when `command` is the API's), ``--out`` and ``--force`` otherwise."""
    api = command == API_COMMAND if python is None else python
    return ("`out`", "force=True") if api else ("`--out`", "--force")


def _refuse_holding(target: Path, keep: Sequence[tuple[str, str | Path | None]], out: str) -> None:
    """:func:`check_target`'s refusal of a `target` that is or holds a file of `keep`."""
    where = target.resolve()
    for role, path in keep:
        if path is None or str(path) in ("", "-"):
            continue
        resolved = Path(path).resolve()
        if resolved == where or where in resolved.parents:
            read = os.path.exists(path)  # an input (or a cache) there now; else a file to write
            raise OutputError(
                f"{out} {str(target)!r} holds the {role} {str(path)!r}: a report replaces its "
                + (
                    "whole folder, so writing it there would delete it; write the report to a "
                    "folder of its own."
                    if read
                    else "whole folder, so the next report written there would delete it; "
                    f"write the {role} beside the folder."
                )
            )


#: Files a desktop's file browser leaves in a folder it showed: no one's work, replaced with
#: the folder without a word.
_DESKTOP_FILES = frozenset({".DS_Store", "Thumbs.db", "desktop.ini", ".directory"})

#: The key of ``provenance.json`` under which :func:`atomic_output` lists the files the report
#: wrote (paths relative to its folder), so a later replacement tells them from a user's own.
OUTPUTS_KEY = "outputs"


def _files(folder: Path) -> list[str]:
    """Every file under `folder` (relative, ``/``-separated), a symbolic link as one file (a
    link to a user's data folder is theirs), a file browser's left out."""
    return sorted(
        p.relative_to(folder).as_posix()
        for p in folder.rglob("*")
        if (p.is_symlink() or not p.is_dir()) and p.name not in _DESKTOP_FILES
    )


def _foreign_files(target: Path) -> list[str] | None:
    """The files of an existing folder that its report did not write (a user's notes, a copy
    of an input, a cache): every file but those its ``provenance.json`` lists under
    :data:`OUTPUTS_KEY` and itself. None where no report listed its files (a report written
    before they were listed, a folder that is no report): :func:`atomic_output` then
    compares the folder with the new report, once it is written."""
    try:
        data = json.loads((target / PROVENANCE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    written = data.get(OUTPUTS_KEY) if isinstance(data, dict) else None
    if not isinstance(written, list):
        return None
    known = {*map(str, written), PROVENANCE_FILE}
    return [rel for rel in _files(target) if rel not in known]


def _refuse_foreign_files(
    target: Path, gone: list[str] | None, force: bool, words: tuple[str, str]
) -> None:
    """The refusal (without `force`; with it, a ``UserWarning``) of a report
    folder `target` holding files its report did not write, `gone` (:func:`_foreign_files`):
    replacing it would delete them."""
    if not gone:
        return
    out, force_it = words
    shown = ", ".join(map(repr, gone[:5])) + (f" and {len(gone) - 5} more" if len(gone) > 5 else "")
    if not force:
        raise OutputError(
            f"{out} {str(target)!r} holds {len(gone)} file(s) its report did not write "
            f"({shown}); replacing the folder would delete them: move them out, or pass "
            f"{force_it} to delete them."
        )
    import warnings

    warnings.warn(
        f"replacing {str(target)!r} deletes {len(gone)} file(s) its report did not write "
        f"({shown}).",
        UserWarning,
        stacklevel=_callers_level(),
    )


def _callers_level() -> int:
    """The ``stacklevel`` of a warning made here that names the first caller outside osustat
    and the ``contextlib`` of its ``with`` blocks: a Python user's ``result.save(...)`` line,
    however deep in osustat the warning is made (a fixed level named a line of osustat's)."""
    frame = sys._getframe(1)  # the function that warns: level 1
    level = 1
    while frame.f_back is not None and _ours(frame.f_globals.get("__name__", "")):
        frame, level = frame.f_back, level + 1
    return level


def _ours(module: str) -> bool:
    """Whether a frame's module is osustat's or ``contextlib``'s, by name: osustat's benchmarks
    live outside its folder in a source tree (``analyses/``), so a path would not tell."""
    return module in ("osustat", "contextlib") or module.startswith("osustat.")


def _record_outputs(tmp: Path) -> None:
    """List the files of the finished report in `tmp` in its ``provenance.json`` (when it
    has one) under :data:`OUTPUTS_KEY`."""
    path = tmp / PROVENANCE_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    if not isinstance(data, dict):
        return
    # as :func:`_foreign_files` reads them: a sub-folder's own provenance.json is listed
    data[OUTPUTS_KEY] = [rel for rel in _files(tmp) if rel != PROVENANCE_FILE]
    write_json(path, data)


def _differ(out: str, target: Path, force_it: str, what: str) -> OutputError:
    return OutputError(
        f"{out} {str(target)!r} holds a report {what}; choose a new folder or pass {force_it} "
        "to replace it."
    )


def _refuse_another_run(
    target: Path,
    inputs_digest: str | None,
    command: str | None,
    options: Mapping[str, Any] | None,
    arguments: Mapping[str, Any] | None,
    words: tuple[str, str],
) -> None:
    """:func:`check_target`'s refusal of a non-empty `target` that does not hold this run
    (`words`: how the caller names the output and the force)."""
    out, force_it = words
    recorded = _existing(target)
    if recorded.digest is None:
        raise OutputError(
            f"{out} {str(target)!r} is a non-empty folder without an osustat "
            f"{PROVENANCE_FILE}; choose a new folder or pass {force_it} to replace it."
        )
    if inputs_digest is not None and recorded.digest != inputs_digest:
        # the options that differ too, where both recorded them (a reproduce's settings)
        also = _differing_options(recorded.options, options) if recorded.options and options else []
        said = f"; differing settings: {'; '.join(also[:4])}" if also else ""
        raise _differ(out, target, force_it, f"made from different inputs{said}")
    differ = _differing_options(recorded.options, options) if recorded.options and options else []
    before = recorded.command
    # command lines are compared between two of the CLI's only: parsed where both recorded
    # their arguments, else word for word
    cli = command is not None and before is not None and API_COMMAND not in (command, before)
    if not differ and cli and recorded.arguments and arguments:
        differ = _differing_arguments(recorded.arguments, arguments, recorded.files)
    elif not differ and cli and _run_options(str(command)) != _run_options(str(before)):
        raise _differ(out, target, force_it, f"of a different run ({before!r})")
    if differ:
        shown = "; ".join(differ[:4])
        more = f"; and {len(differ) - 4} more" if len(differ) > 4 else ""
        raise _differ(out, target, force_it, f"of a different run ({shown}{more})")


def clean_leftovers(target: str | Path) -> list[str]:
    """Clean what an interrupted replacement of `target` left beside it, and say so.

    A run killed while writing leaves a hidden ``.NAME.tmp-*`` folder (never a report: only
    a finished one is renamed to NAME); one killed between the two renames of a replacement
    leaves the previous report as ``.NAME.old-*`` and no NAME: it is renamed back. Each
    action is a ``UserWarning`` (the CLI prints it) and returned as a sentence.
    """
    import warnings

    target = Path(target)
    said: list[str] = []
    parent = target.parent
    if not parent.is_dir():
        return said
    for old in sorted(parent.glob(f".{target.name}.old-*")):
        if not target.exists():
            old.rename(target)
            said.append(f"restored {str(target)!r} from {old.name}, left by an interrupted run")
        else:
            shutil.rmtree(old, ignore_errors=True)
            said.append(f"removed {old.name}, a replaced report left by an interrupted run")
    stale = sorted(parent.glob(f".{target.name}.tmp-*"))
    for tmp in stale:
        shutil.rmtree(tmp, ignore_errors=True)
    if stale:
        said.append(
            f"removed {len(stale)} unfinished output folder(s) of interrupted runs beside "
            f"{str(target)!r} ({', '.join(p.name for p in stale)})"
        )
    for sentence in said:
        warnings.warn(sentence, UserWarning, stacklevel=_callers_level())
    return said


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """SIGINT and SIGTERM held back while the block runs, then delivered: their handlers
    are swapped for ones that only note the signal (Python runs handlers on the main thread
    whichever thread the kernel picks, so a thread mask would not do), so the two renames
    that replace a report happen both or neither. A no-op off the main thread."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pending: list[int] = []

    def note(signum: int, frame: Any) -> None:
        pending.append(signum)

    previous = {sig: signal.signal(sig, note) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        for signum in dict.fromkeys(pending):
            signal.raise_signal(signum)  # now, under the handler that was in place


@contextmanager
def atomic_output(
    target: str | Path,
    *,
    inputs_digest: str | None = None,
    force: bool = False,
    command: str | None = None,
    options: Mapping[str, Any] | None = None,
    arguments: Mapping[str, Any] | None = None,
    keep: Sequence[tuple[str, str | Path | None]] = (),
    python: bool | None = None,
) -> Iterator[Path]:
    """Yield a temporary folder beside `target`; on success rename it to `target`.

    On any exception (SIGTERM too, where the CLI turns it into one) the temporary folder (and
    any parent folder created for it) is removed and `target` is left as it was; a folder
    that cannot be created is an ``OSError`` naming `target`. The two renames that replace
    an existing report run with SIGINT and SIGTERM held back, so the old or the new report
    is complete whatever signal arrives; what a SIGKILL leaves is cleaned (and said) by the
    next run (:func:`clean_leftovers`). An existing `target` is replaced only when it holds
    the same run (same ``inputs_digest``, given `options` the same recorded options, and,
    given `command`, the same command line but for ``--force``, ``--jobs``, ``--scheduler``,
    ``--no-progress`` and ``--cache``: its parsed `arguments` where both runs recorded them)
    or when `force` is true; never when it holds a file of `keep` (:func:`check_target`).
    The finished report's files are listed in its ``provenance.json`` (``outputs``), so a
    later replacement tells them from files a user put there: those are never deleted
    silently -- refused before any work without `force` (naming them), each deletion a
    ``UserWarning`` with it (:func:`check_target`).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from osustat.provenance import atomic_output
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "report"
    >>> with atomic_output(out) as tmp:
    ...     _ = (tmp / "report.md").write_text("# hi\\n")
    >>> sorted(p.name for p in out.iterdir())
    ['report.md']
    """
    target = check_target(
        target,
        inputs_digest,
        force=force,
        command=command,
        options=options,
        arguments=arguments,
        keep=keep,
        python=python,
    )
    words = _words(command, python)
    listed = _foreign_files(target) if target.is_dir() else []  # None: no list to go by
    _refuse_foreign_files(target, listed, force, words)  # with force: said, once
    created = [p for p in target.parents if not p.exists()]  # deepest first
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.tmp-", dir=target.parent))
    except OSError as exc:
        _remove_empty(created)
        raise OSError(
            exc.errno, f"cannot create the output folder ({exc.strerror or exc})", str(target)
        ) from exc
    try:
        yield tmp
        os.chmod(tmp, 0o777 & ~_umask())
        if listed is None:  # no list of its report's files: what the new report does not write
            new_files = set(_files(tmp))
            gone = [rel for rel in _files(target) if rel not in new_files]
            _refuse_foreign_files(target, gone, force, words)
        _record_outputs(tmp)
        with _signals_held():  # old or new report complete, whatever signal arrives
            if target.exists():
                old = Path(tempfile.mkdtemp(prefix=f".{target.name}.old-", dir=target.parent))
                old.rmdir()
                target.rename(old)
                try:
                    tmp.rename(target)
                except OSError:
                    old.rename(target)
                    raise
                shutil.rmtree(old, ignore_errors=True)  # a SIGKILL here: the next run cleans
            else:
                tmp.rename(target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        _remove_empty(created)
        raise


def _remove_empty(folders: list[Path]) -> None:
    """Remove the folders a failed run created for its output (deepest first)."""
    for folder in folders:
        try:
            folder.rmdir()
        except OSError:
            return


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def json_text(payload: Any, *, indent: int = 2, sort_keys: bool = False) -> str:
    """`payload` as indented JSON text: the one JSON form of every file osustat writes.

    JSON has no infinity and no NaN: NaN, inf and -inf become null (never the invalid
    ``Infinity`` / ``NaN`` tokens); numpy scalars become plain numbers; keys become strings.
    """
    return json.dumps(_clean(payload), indent=indent, sort_keys=sort_keys)


def write_json(path: Path, payload: Any, *, indent: int = 2, sort_keys: bool = False) -> None:
    """Write `payload` as indented JSON (:func:`json_text`), newline-terminated."""
    path.write_text(json_text(payload, indent=indent, sort_keys=sort_keys) + "\n", encoding="utf-8")


def _clean(x: Any) -> Any:
    import math

    if isinstance(x, dict):
        return {str(k): _clean(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_clean(v) for v in x]
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    if hasattr(x, "item") and callable(x.item):  # numpy scalars
        return _clean(x.item())
    return x
