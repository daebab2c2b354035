"""``osustat audit CLAIMS --records RECORDS``: check significance claims against records."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from osustat._validation import check_option_count
from osustat.cli.common import _check_out, _input_file, _prob, name_pairs
from osustat.cli.inputs import input_notes, read_input
from osustat.provenance import json_text

__all__ = ["audit_command"]

# -- audit --------------------------------------------------------------------------------


def _aliases(pairs: Sequence[str]) -> dict[str, str]:
    """``--alias OLD=NEW`` as a dict; an OLD given twice is an error, as for `--choice` and
    `--reader` (the last one silently won)."""
    return name_pairs(pairs, "--alias", "RECORDS_NAME=CLAIMS_NAME")


def _apply_aliases(raw: Any, aliases: dict[str, str]) -> tuple[Any, list[str]]:
    """The records with `aliases` applied to their methods and benchmarks, and the aliases
    that matched no method or benchmark of them (each warned on stderr: a typo in an alias
    was reported as applied and showed only as claims "not checkable")."""
    cols = [c for c in ("method", "benchmark") if c in raw.columns]
    present = {c: set(raw[c].astype(str).unique()) for c in cols}
    unmatched = [old for old in aliases if not any(old in present[c] for c in cols)]
    for old in unmatched:
        known = "; ".join(f"{c}s {sorted(present[c])}" for c in cols)
        print(
            f"osustat audit: warning: `--alias {old}={aliases[old]}` matches no method or "
            f"benchmark of the records ({known}); it renames nothing.",
            file=sys.stderr,
        )
    raw = raw.copy()
    for col in cols:
        raw[col] = raw[col].replace(aliases)
    return raw, unmatched


def _merging_aliases(raw: Any, aliases: dict[str, str]) -> list[str]:
    """``OLD=NEW`` for each alias whose NEW is already a name in the records (or the target of
    another matched alias): rows of two methods (or benchmarks) then share one name."""
    out = []
    for col in ("method", "benchmark"):
        if col not in raw.columns:
            continue
        names = set(raw[col].astype(str).unique())
        matched = {old: new for old, new in aliases.items() if old in names}
        targets = list(matched.values())
        for old, new in matched.items():
            if (new in names and new not in matched) or targets.count(new) > 1:
                out.append(f"{old}={new}")
    return out


def _claims_input(value: str, option: str) -> Path:
    """A claims file: `value` as a path, or — when no file of that name is here — the name of
    one shipped with osustat (``paper``, ``paper_checks``, or a benchmark's name for its own
    claims file, e.g. ``locomo``: package data of ``osustat.analyses``, so an installed wheel
    has them too)."""
    from osustat.analyses.claims_audit import claims_file, shipped_claims, shown_path

    if not Path(value).exists() and value in shipped_claims():
        return claims_file(value)
    if not Path(value).exists():
        shipped = ", ".join(f"{n} ({shown_path(claims_file(n))})" for n in shipped_claims())
        raise ValueError(
            f"`{option}` {value!r}: no such file, and not the name of a shipped claims file; "
            f"shipped by name: {shipped}."
        )
    path = _input_file(value, option)
    assert path is not None  # given, so checked
    return path


def _paper_checks_only(args: argparse.Namespace) -> int:
    """``osustat audit CLAIMS --check-paper FILE`` without records: the paper's numbers only."""
    from osustat.audit.paper_checks import check_paper, load_paper_checks
    from osustat.reports.audit import render_paper_checks

    if args.out or args.json:
        raise ValueError("`--out` and `--json` need `--records`; --check-paper alone prints.")
    path = _claims_input(args.check_paper, "check-paper")
    text = render_paper_checks(check_paper(load_paper_checks(path), rng=args.seed))
    print(text)
    return 0


def _warn_unchecked(result: Any, unchecked: int) -> None:
    """On stderr: how many claims the records cannot check, and the first one's reason (an
    audit of which nothing was checked exits 0, so the report alone could go unread)."""
    if not unchecked:
        return
    from osustat.reports._audit_words import headline_reason

    first = next(c for c in result.checks if not c.checkable)
    total = len(result.checks)
    none = " (none is checkable: nothing was tested)" if unchecked == total else ""
    print(
        f"osustat audit: warning: {unchecked} of {total} claims not checkable against these "
        f"records{none}; the first, {first.claim.id!r}: {headline_reason(first).rstrip('.')}.",
        file=sys.stderr,
    )


def audit_command(args: argparse.Namespace) -> int:
    if args.records is None and not args.run:
        if args.check_paper is None:
            raise ValueError(
                "`--records` is required (or TREC runs as --run NAME=FILE with --qrels, or "
                "`--check-paper` alone)."
            )
        check_option_count(args.seed, "--seed", 0, 2**63 - 1)
        return _paper_checks_only(args)
    from osustat.analyses.registry import episode_unit_benchmarks
    from osustat.audit.claims import load_claims
    from osustat.audit.run import audit
    from osustat.provenance import Provenance, write_json
    from osustat.reports.audit import render_markdown
    from osustat.reports.audit_json import to_json

    check_option_count(args.resamples, "--resamples")
    check_option_count(args.bootstrap_resamples, "--bootstrap-resamples", 2)
    _prob(args.level, "--level")
    check_option_count(args.seed, "--seed", 0, 2**63 - 1)
    aliases = _aliases(args.alias)
    # a mapping (an OLD given once): the same run whatever the order of its pairs
    args.arguments = {**args.arguments, "--alias": [f"{k}={v}" for k, v in sorted(aliases.items())]}
    claims_path = _claims_input(args.claims, "claims")
    paper_path = None
    if args.check_paper is not None:  # checked before any work, like the claims file
        paper_path = _claims_input(args.check_paper, "check-paper")
    _check_out(args)
    claims = load_claims(claims_path)
    raw, files, loaded = read_input(args)
    files = [("claims", claims_path), *files]
    notes, exclusions = input_notes(loaded, f"`{files[1][1]}`", len(raw), files[1][1])
    input_lines = [f"- {n}" for n in notes]
    records, unmatched = _aliased_records(raw, aliases)
    result = audit(
        claims,
        records,
        n_resamples=args.resamples,
        bootstrap_resamples=args.bootstrap_resamples,
        level=args.level,
        rng=args.seed,
        episode_benchmarks=episode_unit_benchmarks(records),
    )
    unchecked = result.counts()["not checkable"]
    _warn_unchecked(result, unchecked)
    preamble = _preamble(args, input_lines, records, unchecked, aliases, unmatched)
    checks = [("paper checks", paper_path)] if paper_path is not None else []
    prov = Provenance.for_files(
        [*((r, p) for r, p in files), *checks],  # an edited checks file: another run
        command=args.command_line,
        arguments=args.arguments,
        seeds={"master": args.seed},
        resamples={"sign-flip": args.resamples, "bootstrap": args.bootstrap_resamples},
        exclusions=(*exclusions, *((("claims not checkable", unchecked),) if unchecked else ())),
    )
    text = render_markdown(result, preamble=preamble)
    if paper_path is not None:
        from osustat.audit.paper_checks import check_paper, load_paper_checks
        from osustat.reports.audit import render_paper_checks

        text += "\n\n" + render_paper_checks(
            check_paper(load_paper_checks(paper_path), rng=args.seed)
        )
    text += "\n\n" + "\n".join(prov.markdown())
    payload = to_json(result)
    if isinstance(payload, dict):
        payload["provenance"] = prov.to_dict()
    if args.out:
        with prov.atomic_output(args.out, force=args.force) as tmp:
            (tmp / "report.md").write_text(text + "\n", encoding="utf-8")
            write_json(tmp / "audit.json", payload)
            write_json(tmp / "provenance.json", prov.to_dict())
        print(f"wrote {Path(args.out) / 'report.md'}", file=sys.stderr)
    if args.json and not args.out:
        print(json_text(payload))
    else:
        print(text)
    return 0


def _aliased_records(raw: Any, aliases: dict[str, str]) -> tuple[Any, list[str]]:
    """The records validated after `--alias` renamed their methods and benchmarks, and the
    aliases that matched nothing; an alias onto a name the records hold is named as the cause
    of the duplicate keys it makes."""
    from osustat import validate_records

    unmatched: list[str] = []
    named = raw
    if aliases:
        raw, unmatched = _apply_aliases(raw, aliases)
    try:
        return validate_records(raw), unmatched
    except ValueError as exc:
        merging = _merging_aliases(named, aliases) if aliases else []
        if not merging or "duplicate record keys" not in str(exc):
            raise
        raise ValueError(
            f"`--alias` {', '.join(merging)} renames to a name the records already hold, so "
            f"two methods' (or benchmarks') rows share their keys: {exc}"
        ) from None


def _preamble(
    args: argparse.Namespace,
    input_lines: list[str],
    records: Any,
    unchecked: int,
    aliases: dict[str, str],
    unmatched: list[str],
) -> list[str]:
    """The report's opening lines: the claims file, the inputs, what the records hold, the
    claims left out, the seed and the aliases (applied, and matching nothing)."""
    preamble = [
        f"- Claims file: `{args.claims}`.",
        *input_lines,
        f"- Records hold methods {sorted(records['method'].unique().tolist())}, benchmarks "
        f"{sorted(records['benchmark'].unique().tolist())}.",
        f"- Excluded claims: {unchecked} not checkable against these records (listed below "
        "with the reason); they are left out of their family's correction.",
        f"- Master seed {args.seed}: the same seed, claims and records give the same report.",
    ]
    applied = {a: b for a, b in aliases.items() if a not in unmatched}
    if applied:
        preamble.append(
            "- Aliases applied to the records: "
            + ", ".join(f"`{a}` → `{b}`" for a, b in applied.items())
            + "."
        )
    if unmatched:
        preamble.append(
            "- Aliases that matched no method or benchmark of the records (they renamed "
            "nothing): " + ", ".join(f"`{a}` → `{aliases[a]}`" for a in unmatched) + "."
        )
    return preamble
