"""``osustat plan``: how many queries per cell the paired sign-flip test needs.

From a pilot's records (``osustat plan RECORDS --treatment A --baseline B --metric M
--budget K --effect E``: one plan per cell) or from stated inputs (``--sd``, ``--zero-share``,
``--binary``). Every option is checked before any work; bad input is exit 2 naming it.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from typing import Any

from osustat._validation import UsageError, check_option_count
from osustat.cli.common import _input_file, _prob, _split
from osustat.provenance import json_text

__all__ = ["add_plan_parser"]

#: The Python argument names in messages of :func:`osustat.plan`, as the options that set them.
_OPTION_NAMES = {
    "`effect`": "`--effect`",
    "`sd`": "`--sd`",
    "`zero_share`": "`--zero-share`",
    "`magnitude`": "`--magnitude`",
    "`binary=True`": "`--binary`",
    "`binary`": "`--binary`",
    "`power`": "`--power`",
    "`alpha`": "`--alpha`",
    "`n_max`": "`--n-max`",
    "`n_simulations`": "`--simulations`",
    "`family_size`": "`--family-size`",
    "`unit='query'`": "`--unit query`",
    "`differences`": "the pilot's differences",
    "`treatment`": "`--treatment`",
    "`baseline`": "`--baseline`",
    "`metric`": "`--metric`",
    "`budget`": "`--budget`",
    "`cells`": "`--cell`",
    "`benchmark`": "`--benchmark`",
}


def _as_options(message: str) -> str:
    for name, option in _OPTION_NAMES.items():
        message = message.replace(name, option)
    return message


def _finite(value: float | None, option: str, *, positive: bool = False) -> None:
    if value is None:
        return
    if not math.isfinite(value) or (positive and value <= 0):
        need = "a finite number > 0" if positive else "a finite number"
        raise UsageError(f"`{option}` must be {need}; got {value!r}.")


def _two_sided(alternative: str) -> str:
    """`--alternative`: two-sided only (review 55 #4: a one-sided n, 278, where the
    two-sided test needs 348, gave it power .70)."""
    if alternative == "two-sided":
        return alternative
    raise UsageError(
        f"`--alternative {alternative}` plans a one-sided test, which no command runs: "
        "`osustat analyze` and `osustat audit` test two-sided, where the one-sided n has less "
        "power than it states. For a one-sided test you run yourself "
        f"(osustat.paired_signflip_test(..., alternative='{alternative}')), plan it in Python: "
        f"osustat.plan(..., alternative='{alternative}') or osustat.plan_cells(...)."
    )


def _check(args: argparse.Namespace) -> dict[str, Any]:
    """Every option, checked before any input is read; the keyword arguments of plan()."""
    _finite(args.effect, "--effect")
    if args.effect == 0:
        raise UsageError("`--effect` must be a nonzero mean difference; got 0.")
    _finite(args.sd, "--sd", positive=True)
    _finite(args.magnitude, "--magnitude", positive=True)
    if args.zero_share is not None and not (
        math.isfinite(args.zero_share) and 0 <= args.zero_share < 1
    ):
        raise UsageError(f"`--zero-share` must lie in [0, 1); got {args.zero_share!r}.")
    options = {
        "power": _prob(args.power, "--power"),
        "alpha": _prob(args.alpha, "--alpha"),
        "family_size": None
        if args.family_size is None
        else check_option_count(args.family_size, "--family-size", 1, 10_000),
        "alternative": _two_sided(args.alternative),
        "n_max": check_option_count(args.n_max, "--n-max", 6, 1_000_000),
        "n_simulations": check_option_count(args.simulations, "--simulations", 100, 100_000),
        "rng": check_option_count(args.seed, "--seed", 0, 2**63 - 1),
    }
    stated = [
        o
        for o, v in (
            ("--sd", args.sd),
            ("--zero-share", args.zero_share),
            ("--magnitude", args.magnitude),
            ("--binary", args.binary or None),
        )
        if v is not None
    ]
    pilot = [
        o
        for o, v in (
            ("--treatment", args.treatment),
            ("--baseline", args.baseline),
            ("--metric", args.metric),
            ("--budget", args.budget),
            ("--cell", args.cell),
            ("--benchmark", args.benchmark),
        )
        if v is not None
    ]
    if args.records is None:
        if pilot:
            verb = "describes" if len(pilot) == 1 else "describe"
            raise UsageError(f"{', '.join(pilot)} {verb} a pilot: give its records file too.")
        if not stated:
            raise UsageError(
                "give a pilot's records file (RECORDS --treatment --baseline --metric "
                "--budget) or stated inputs (--sd, --zero-share, --binary)."
            )
        return options
    if stated:
        raise UsageError(
            f"{', '.join(stated)} {'states' if len(stated) == 1 else 'state'} the "
            "differences; with a records file they are read from the pilot: give one or the "
            "other."
        )
    for option, value in (
        ("--treatment", args.treatment),
        ("--baseline", args.baseline),
        ("--metric", args.metric),
    ):
        if value is None:
            raise UsageError(f"`{option}` is required with a records file.")
    if args.budget is not None:
        check_option_count(args.budget, "--budget", 1, 2**62)
    if args.cell is not None and not _split(args.cell, "--cell"):
        raise UsageError("`--cell` is empty; give comma-separated cells (e.g. 'T+E+,all').")
    _input_file(args.records, "records")
    return options


def _only_budget(args: argparse.Namespace, df: Any) -> int:
    """The budget of a pilot's records `df` when `--budget` is not given: its one budget (of
    the two methods' rows), else a UsageError listing them."""
    rows = df[df["method"].isin([args.treatment, args.baseline])] if "method" in df else df
    budgets = sorted({int(b) for b in rows.get("budget", [])})
    if len(budgets) != 1:
        raise UsageError(
            f"`--budget` is required: the records of {args.treatment!r} and {args.baseline!r} "
            f"hold {len(budgets)} budgets {budgets}; give one."
        )
    return budgets[0]


def _plan(args: argparse.Namespace) -> int:
    from osustat.planning import plan, plan_cells

    options = _check(args)
    try:
        if args.records is None:
            given = options["family_size"] is not None
            options["family_size"] = options["family_size"] or 1
            result = plan(
                args.effect,
                sd=args.sd,
                zero_share=args.zero_share,
                binary=True if args.binary else None,
                magnitude=args.magnitude,
                **options,
            )
            payload: dict[str, Any] = result.to_dict()
            text = _stated_text(result, given, float(args.alpha))
        else:
            records, notes = _pilot_records(args)
            if args.budget is None:
                args.budget = _only_budget(args, records)
            cells = plan_cells(
                records,
                args.treatment,
                args.baseline,
                metric=args.metric,
                budget=args.budget,
                effect=args.effect,
                cells=_split(args.cell, "--cell") if args.cell else None,
                unit=args.unit,
                benchmark=args.benchmark,
                **options,
            )
            notes += [_as_options(n) for n in cells.notes] + _beyond_the_records(cells)
            for note in cells.notes:
                print(f"osustat plan: warning: {_as_options(note)}", file=sys.stderr)
            payload = cells.to_dict()
            # the command line's words for a refusal, in the JSON as in the table
            payload["refused"] = {c: _as_options(w) for c, w in payload["refused"].items()}
            payload["levels"] = {c: _as_options(w) for c, w in payload["levels"].items()}
            payload["notes"] = notes
            text = _cells_text(cells, args, notes)
    except (ValueError, TypeError) as exc:
        said = str(exc)  # a records file's own columns keep their names (`budget`, not --budget)
        raise type(exc)(said if said.startswith("records file ") else _as_options(said)) from None
    out = json_text(payload) + "\n" if args.json else text
    try:
        sys.stdout.write(out)
        sys.stdout.flush()
    except BrokenPipeError:  # `plan ... | head`: the reader left; not an error of ours
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # no second "Broken pipe" at exit
    if args.records is not None and not payload["plans"]:
        # valid input, no answer: exit 1, as `check-retriever` for a failed contract
        why = "the JSON's `refused` says why" if args.json else "each row says why"
        print(f"osustat plan: no cell could be planned ({why})", file=sys.stderr)
        return 1
    return 0


def _pilot_records(args: argparse.Namespace) -> tuple[Any, list[str]]:
    """The pilot's records, the unit (`--unit`, else the one ``osustat analyze`` takes:
    the records' benchmark's declared unit) in `args.unit`, and what is said of the unit
    (also on stderr, as analyze says it)."""
    from osustat.cli.inputs import default_unit, query_unit_note
    from osustat.io.reading import load_records

    records = load_records(args.records)
    if args.unit is None:
        args.unit, why = default_unit(records)
    elif args.unit == "query" and (why := query_unit_note(records)) is not None:
        why += (
            "; `osustat analyze` tests episodes unless given --unit query (give it --unit "
            "query to run the tests planned here)"
        )
    else:
        why = None
    if why is None:
        return records, []
    print(f"osustat plan: unit: {why}", file=sys.stderr)
    return records, [f"Unit: {why}."]


def _stated_text(p: Any, family_given: bool, alpha: float) -> str:
    lines = [p.summary(), "Assumed:"]
    lines += [f"- {a}" for a in p.assumptions]
    if not family_given:
        lines.append(
            "- no family: `osustat analyze` corrects a table's cells by Holm over them (4 "
            f"cells: alpha / 4 = {alpha / 4:g} at its first step; 4 per compared pair when "
            "several treatments are analysed together) and tests the aggregate at alpha; to "
            "plan a cell, give --family-size with the number of cells"
        )
    return "\n".join(lines) + "\n"


def _levels_line(cells: Any) -> str:
    """Each row's level and why, rows of one level together (the cells, then 'all')."""
    rows: dict[str, list[str]] = {}
    for cell, why in cells.levels.items():
        rows.setdefault(_as_options(why), []).append(cell)
    said = [f"{', '.join(cs)} at {why}" for why, cs in rows.items()]
    return "Levels (two-sided): " + "; ".join(said) + "."


def _budget_words(cells: Any) -> str:
    """', budget 256'; nothing for answer-level records (every budget the placeholder 1, as
    `osustat import` writes a system's graded answers and `analyze` reads them)."""
    from osustat.io.join import ANSWER_BUDGET

    return "" if cells.budget == ANSWER_BUDGET else f", budget {cells.budget}"


def _cells_text(cells: Any, args: argparse.Namespace, notes: list[str]) -> str:
    from osustat.power import MDE_MIN_DIFFERENCES

    episodes = cells.unit == "episode"
    unit = "the episode unit (an episode's value: the mean of its queries)"
    lines = [
        f"{'Episodes' if episodes else 'Queries'} per cell to detect {cells.metric} "
        f"{args.effect:+g} ({cells.treatment} - {cells.baseline}{_budget_words(cells)}) with "
        f"power {args.power:g}: paired sign-flip test at "
        f"{unit if episodes else 'the query unit'}, from the pilot's differences per cell.",
        "",
        _levels_line(cells),
        *[f"\n{n}" for n in notes],
        "",
        "| cell | pilot n | n needed | level | power at n | method | share of ties | "
        "sd at the effect | sd planned |",
        "|---|---:|---:|---|---:|---|---:|---:|---:|",
    ]
    for cell, size in cells.pilot_sizes.items():
        p = cells.plans.get(cell)
        if p is None:
            why = _as_options(cells.refused[cell]).replace("|", "\\|")  # a table cell
            lines.append(f"| {cell} | {size} | — | — | — | not planned: {why} | | | |")
            continue
        power = f"{p.achieved_power:.3f}" + (
            f" ± {p.monte_carlo_se:.3f}" if p.n_simulations else ""
        )
        level = cells.levels[cell].split(":")[0]
        planned = "—" if p.sd_planned is None else f"{p.sd_planned:.4g}"
        lines.append(
            f"| {cell} | {size} | {p.n_text()} | {level} | {power} | {p.method} | "
            f"{p.zero_share:.3f} | {p.sd:.4g} | {planned} |"
        )
    lines += [
        "",
        "sd at the effect: of the differences the row's model gives at --effect (for a "
        "pilot's differences of several sizes with n − 1 in the denominator; of 0/1-type "
        "differences, that of their law at the effect); with ties, which stay 0 while the "
        "others move, it is not the pilot's own sd. sd planned: the sd of the model the n was "
        "planned with; for a row of method normal, `osustat plan --sd` with it gives the "
        "row's n (the conservative end of a range).",
    ]
    ranged = [c for c, p in cells.plans.items() if p.n_range is not None]
    if ranged:
        lines += [
            "",
            f"Planned over the 80% interval of what the cell's differences estimate "
            f"({', '.join(ranged)}: fewer than {MDE_MIN_DIFFERENCES} differences or nonzero "
            "ones of several sizes, or differences not normal-shaped): n needed at its two "
            "ends (one n where both give the same); power at n is at the conservative end.",
        ]
        lines += [f"- {c}: {cells.plans[c].range_basis}" for c in ranged]
    return "\n".join(lines + _assumed_lines(cells.plans) + _limit_lines(cells.plans)) + "\n"


def _beyond_the_records(cells: Any) -> list[str]:
    """Each row whose n goes beyond the units the pilot's records hold for it, said (a
    benchmark's conversations and a cell's questions are few: LoCoMo holds 10 conversations
    and 17 T+E+ questions, and 150 or 169 of them may not exist)."""
    unit = "episodes" if cells.unit == "episode" else "queries"
    said = []
    for cell, p in cells.plans.items():
        held = cells.pilot_sizes.get(cell)
        top = p.n_range[1] if p.n_range is not None else p.n
        if held is None or top <= held:
            continue
        needs = "up to " if p.n_range is not None and p.n_range[0] != p.n_range[1] else ""
        said.append(f"{cell} needs {needs}{top:,} {unit}, these records hold {held:,}")
    if not said:
        return []
    return [
        "Beyond the records: "
        + "; ".join(said)
        + " — a study needs more of them than the pilot's benchmark has (new episodes, or more "
        "runs of the systems), or a larger effect."
    ]


def _limit_lines(plans: dict[str, Any]) -> list[str]:
    """The measured limit of planning from a pilot's continuous differences (issue 35: a
    limit is said where the number is printed); 0/1 cells are planned exactly."""
    if not any(p.source == "pilot" and not p.binary for p in plans.values()):
        return []
    return [
        "",
        "Measured limit (docs/validation.md, rules P and P2): a heavy-tailed or skewed "
        "pilot's few values mostly lack its law's rare large ones, so the n planned from "
        "them is optimistic there: of pilots of 20 drawn from a t law with 3 df, .25–.33 "
        "plan an n whose true power is below .6; of lognormal pilots of 6 and 10, "
        ".23–.35. Where the metric can have such tails (latencies, token counts), plan "
        "from a larger pilot or take the range's upper end with room to spare.",
        "The n is planned for an effect that moves every unit alike (docs/validation.md, "
        "“An effect carried by some units”). One carried by some units only needs more: "
        "for an effect on a random quarter of the units (n = 50 needed), pilots of 20 and 50 "
        "that show no effect plan a median n of 29, whose true power is .55 (on half of "
        "the units, n = 50 needed too: 41, .74); pilots that carry such an effect plan an n "
        "of true power .79–.85. Where the effect may sit in one kind of query, plan for that "
        "kind's cell on its own.",
    ]


def _stands_for(p: Any) -> str:
    """What a cell's pilot stands for, in words: the general form of its first assumption
    (which names the cell's own size). A cell planned over a range (rules P, P2) stands for
    the study only within it: its basis is printed below the table."""
    if p.n_range is not None:
        return (
            "the pilot's differences stand for the study's only within the 80% interval of "
            "what they estimate (each range's basis above)"
        )
    if p.tilted is not None:
        return (
            "the pilot's differences stand for the study's: each cell's count ratios are "
            "kept, how often each occurs is tilted until its mean is the effect"
        )
    return (
        "the pilot's differences stand for the study's: each cell's share of ties and its "
        "magnitudes are kept, its own mean is replaced by the effect"
    )


def _assumed_lines(plans: dict[str, Any]) -> list[str]:
    """The planned cells' assumptions: those of every cell once, the others with the cells
    that make them (cells may be planned by different models: 0/1, tilted, shifted)."""
    made: dict[str, list[str]] = {}  # assumption -> the cells that make it, in order
    for cell, p in plans.items():
        # the level (`plan_cells`' last assumption) is said once, above the table
        said = [a for a in p.assumptions[1:] if not a.startswith("planned at ")]
        for a in (*said, _stands_for(p)):
            made.setdefault(a, []).append(cell)
    every = [a for a, cs in made.items() if len(cs) == len(plans)]
    some = [(a, cs) for a, cs in made.items() if len(cs) < len(plans)]
    lines = ["", "Assumed in every cell:", *[f"- {a}" for a in every]] if every else []
    if some:
        lines += ["", "Assumed in some cells:", *[f"- {', '.join(cs)}: {a}" for a, cs in some]]
    return lines


def add_plan_parser(sub: Any) -> None:
    pl = sub.add_parser(
        "plan",
        help="queries (or episodes) per cell needed for a target power (sample-size design)",
        description="Units per cell (queries, or episodes at the episode unit) the paired "
        "sign-flip test needs to detect --effect with "
        "--power (osustat.plan / osustat.plan_cells): from a pilot's records, one plan per "
        "cell, or from stated --sd / --zero-share / --binary. From records the plan is for the "
        "test `osustat analyze` runs by default: at its unit (the records' declared one) and "
        "level (each of m cells at alpha / m, Holm's first step over the cells; the aggregate "
        "at alpha), two-sided; the output says each row's level and why.",
    )
    pl.add_argument(
        "records", nargs="?", default=None, help="a pilot's records file (long schema; optional)"
    )
    pl.add_argument("--effect", type=float, required=True, help="mean difference to detect")
    pl.add_argument("--treatment", default=None, help="treatment method (with RECORDS)")
    pl.add_argument("--baseline", default=None, help="baseline method (with RECORDS)")
    pl.add_argument("--metric", default=None, help="metric (with RECORDS), e.g. hit@2")
    pl.add_argument(
        "--budget",
        type=int,
        default=None,
        help="budget (with RECORDS; default: the records' budget when they hold only one)",
    )
    pl.add_argument(
        "--cell",
        default=None,
        metavar="C[,C...]",
        help="cells to plan (default: every cell and 'all', the aggregate)",
    )
    pl.add_argument(
        "--unit",
        choices=("query", "episode"),
        default=None,
        help="unit of the paired test, as `osustat analyze` takes it (default: the records' "
        "benchmark's declared unit, LoCoMo: episode, its conversation, else query; episode "
        "averages an episode's queries first and plans no cells)",
    )
    pl.add_argument("--benchmark", default=None, help="needed when records hold several")
    pl.add_argument("--sd", type=float, default=None, help="sd of the differences (no pilot)")
    pl.add_argument(
        "--zero-share", type=float, default=None, help="share of exact-zero differences (ties)"
    )
    pl.add_argument(
        "--binary", action="store_true", help="0/1 metric (Hit@k): differences in {-c, 0, c}"
    )
    pl.add_argument("--magnitude", type=float, default=None, help="c for --binary (default 1)")
    pl.add_argument("--power", type=float, default=0.8, help="target power (default 0.8)")
    pl.add_argument("--alpha", type=float, default=0.05, help="family level (default 0.05)")
    pl.add_argument(
        "--family-size",
        type=int,
        default=None,
        metavar="M",
        help="tests in the cells' family, each cell planned at alpha / M (default, as `osustat "
        "analyze` corrects one pair's table by default: M = the 4 cells of a T±E± table, "
        "Holm's first step; with k treatments analysed together give 4k; the aggregate 'all' "
        "at alpha, "
        "outside every family, unless no cell is tested); without records: one test unless "
        "given",
    )
    pl.add_argument(
        "--alternative",
        choices=("two-sided", "greater", "less"),
        default="two-sided",
        help="two-sided only, the test `osustat analyze` and `osustat audit` run; greater and "
        "less are refused (plan a one-sided test in Python: osustat.plan(alternative=...))",
    )
    pl.add_argument("--n-max", type=int, default=10_000, help="largest n searched")
    pl.add_argument("--simulations", type=int, default=5_000, help="data sets per simulated power")
    pl.add_argument("--seed", type=int, default=0, help="seed of the simulations (default 0)")
    pl.add_argument("--json", action="store_true", help="print the plan(s) as JSON")
    pl.set_defaults(func=_plan)
