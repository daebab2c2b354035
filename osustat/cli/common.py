"""Helpers shared by the ``osustat`` commands: option checks that fail before any work.

Every check raises :class:`UsageError` (a ``ValueError``; the CLI reports it with exit code 2)
naming the option and the value it refused.
"""

from __future__ import annotations

import argparse
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from osustat._validation import UsageError, unique_items

__all__ = ["DeferredParser", "name_pairs"]


class DeferredParser(argparse.ArgumentParser):
    """A sub-command's parser whose costly arguments are added only when it parses — when its
    sub-command is asked for, ``osustat reproduce --help`` included — never for ``osustat
    --help`` or another sub-command (``reproduce``'s benchmark options import every
    benchmark; docs/performance.md, "Imports on demand")."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # an abbreviation is an error, not a guess: `--treat` is not taken for `--treatment`
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)
        self.deferred: list[Any] = []  # callables adding arguments to this parser
        #: ``help_for(parser, namespace)``: a parser whose help fits what was parsed before
        #: ``--help`` (``reproduce synthetic --help``: synthetic's options only), or None
        self.help_for: Any = None
        self._parsed = argparse.Namespace()

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        while self.deferred:
            self.deferred.pop(0)(self)
        # argparse fills this namespace as it goes, so `--help` can see the arguments before it
        self._parsed = argparse.Namespace() if namespace is None else namespace
        return super().parse_known_args(args, self._parsed)

    def print_help(self, file: Any = None) -> None:
        shown = self.help_for(self, self._parsed) if self.help_for is not None else None
        if shown is None:
            super().print_help(file)
        else:
            shown.print_help(file)


def _split(values: str, option: str, key: Any = None) -> list[str]:
    """The comma-separated items of `option`; a repeat (after `key`) is refused, naming it
    (one rule for every list option: :func:`osustat._validation.unique_items`)."""
    items = [v.strip() for v in values.split(",")]
    if any(items) and not all(items):  # "hit@2," or "a,,b": a stray comma, or a lost item
        raise UsageError(f"`{option}` has an empty item in {values!r} (a stray comma?).")
    try:
        return unique_items((v for v in items if v), option, key)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _ints(values: str, option: str, *, low: int = 1) -> list[int]:
    out = []
    for item in _split(values, option, _int_key):
        try:
            x = int(item)
        except ValueError:
            raise UsageError(
                f"`{option}` must be comma-separated integers; got {values!r}."
            ) from None
        if x < low:
            raise UsageError(f"`{option}` values must be >= {low}; got {x} in {values!r}.")
        out.append(x)
    if not out:
        raise UsageError(f"`{option}` is empty; give comma-separated integers.")
    return out


def _int_key(text: str) -> Any:
    try:
        return int(text)
    except ValueError:
        return text  # refused as a non-integer by the caller


def _prob(value: float, option: str) -> float:
    if not (math.isfinite(value) and 0 < value < 1):
        raise UsageError(f"`{option}` must lie strictly between 0 and 1; got {value!r}.")
    return value


def _input_file(path: str | None, option: str) -> Path | None:
    if path is None:
        return None
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"{option} file {str(p)!r} does not exist.")
    if p.is_dir():
        raise UsageError(f"{option} {str(p)!r} is a folder, not a file.")
    return p


def name_pairs(items: Sequence[str], option: str, shape: str = "NAME=VALUE") -> dict[str, str]:
    """``NAME=VALUE`` items of a repeatable option as a dict; an item of another shape or a
    name given twice is a :class:`UsageError` naming `option`."""
    out: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip() or not value.strip():
            raise UsageError(f"`{option}` must look like {shape}; got {item!r}.")
        if name.strip() in out:
            raise UsageError(f"`{option}` name {name.strip()!r} is given twice.")
        out[name.strip()] = value.strip()
    return out


def _runs(pairs: Sequence[str]) -> dict[str, Path]:
    out: dict[str, Path] = {}
    for name, file in name_pairs(pairs, "--run", "NAME=FILE").items():
        p = _input_file(file, f"--run {name}")
        assert p is not None
        out[name] = p
    return out


def _family(text: str) -> Any:
    from osustat._analysis_options import FAMILIES

    if text in FAMILIES:
        return text
    groups = []
    for g in text.split(";"):
        members = []
        for item in _split(g, "--family"):
            # METRIC:BUDGET (every method pair's table) or TREATMENT:BASELINE:METRIC:BUDGET
            parts = item.split(":")
            try:
                if len(parts) not in (2, 4) or not all(parts):
                    raise ValueError
                members.append((*parts[:-1], int(parts[-1])))
            except ValueError:
                raise UsageError(
                    f"`--family` must be one of {list(FAMILIES)} or groups like "
                    f"'hit@2:256,hit@2:512;recall:256' (METRIC:BUDGET, or "
                    f"TREATMENT:BASELINE:METRIC:BUDGET for one method pair; ';' between "
                    f"groups); got {text!r}."
                ) from None
        if members:
            groups.append(members)
    if not groups:
        raise UsageError(f"`--family` is empty; got {text!r}.")
    return groups


def _check_out(args: argparse.Namespace, digest: str | None = None) -> None:
    from osustat.provenance import check_target

    if getattr(args, "out", None):
        # the options are compared once the inputs are known: other inputs say so first
        command = args.command_line if digest is not None else None
        arguments = args.arguments if digest is not None else None
        check_target(
            args.out,
            digest,
            force=args.force,
            command=command,
            arguments=arguments,
            keep=_files_of(args),
        )


def _files_of(args: argparse.Namespace) -> list[tuple[str, str]]:
    """The files a command's arguments name, ``(argument, path)``: those it reads (any
    argument naming an existing file, not a folder: a method named like the output folder
    is no input) and those it writes beside ``--out`` (``--records-out``, ``--json`` FILE) --
    none may lie in the folder ``--out`` replaces."""
    read = [
        (key, path)
        for key, value in getattr(args, "arguments", {}).items()
        for item in (value if isinstance(value, list) else [value])
        if isinstance(item, str)
        for path in dict.fromkeys((item, item.partition("=")[2]))  # NAME=PATH: its path
        if path and os.path.isfile(path)
    ]
    written = [
        (flag, value)
        for flag, value in (
            ("--records-out", getattr(args, "records_out", None)),
            ("--json", getattr(args, "json", None)),
        )
        if isinstance(value, str) and value not in ("", "-")
    ]
    return read + written
