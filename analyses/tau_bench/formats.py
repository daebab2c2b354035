"""τ-bench data, Stage B: both trajectory formats read into episodes of steps.

:mod:`osustat.analyses.tau_bench.data` adds Stages C and D.

Formats (detected from the file's content, never from its name):

- **τ-bench** historical trajectories: a JSON list of records ``{task_id, trial, info: {task:
  {instruction, actions: [{name, kwargs}]}}, traj: [messages]}``; an assistant tool call is
  ``{"function": {"name", "arguments": <JSON string>}}``.
- **τ²-bench** results: a JSON object ``{tasks, simulations, info}``; ``tasks[*].id``,
  ``tasks[*].user_scenario.instructions``, ``tasks[*].evaluation_criteria.actions: [{name,
  arguments}]``; ``simulations[*].messages`` with ``tool_calls: [{name, arguments: {...}}]``
  (arguments already an object; several calls per message possible).

Anything else is an error naming the file (and the record index for a malformed record).

Stage B turns one episode into steps: one step per non-system message, except that a message
holding tool calls gives one step per tool call (its text content, if any, is prefixed to the
first call's step text). Tool signature = the called function's name (tool results and plain
messages carry none); entities = argument values (strings of length 2-80 and numbers, one
level of nesting); subgoal id increments at each user turn; costs ``max(5, min(40,
len(text) // 4))``. Ground-truth actions are matched greedily by name and equal arguments, each
tool call used at most once: ``matching='order-free'`` (default; the paper says "greedy name plus
keyword-argument equality", nothing about order) takes the first unused call anywhere in the
episode, ``matching='in-order'`` the first unused call after the previous match.

The agent of an episode (for clustering and the "sources sharing an agent" count): τ²-bench
``simulations[*].source_agent_info.llm`` if present (a merged file), else ``info.agent_info.llm``;
τ-bench files do not record it, so the file stem stands in.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "MATCHINGS",
    "MAX_GROUP",
    "MIN_GROUP",
    "MIN_MATCHED",
    "MIN_STEPS",
    "SHUFFLE_SEED",
    "Episode",
    "Loaded",
    "Step",
    "TauDataError",
    "detect_format",
    "load_files",
]

MIN_STEPS = 8
MIN_MATCHED = 2
MIN_GROUP, MAX_GROUP = 150, 300
SHUFFLE_SEED = 42
MATCHINGS = ("order-free", "in-order")


class TauDataError(ValueError):
    """A τ-bench input file is malformed (the message names the file and record index)."""


@dataclass(frozen=True)
class Step:
    text: str
    role: str
    tool: str | None
    entities: frozenset[str]
    subgoal: int
    cost: float


@dataclass(frozen=True)
class Episode:
    """One source trajectory after Stage B (before any drop)."""

    source_file: str
    index: int
    task: str
    trial: int
    instruction: str
    steps: tuple[Step, ...]
    matched: tuple[int, ...]  # step indices of matched ground-truth actions
    n_actions: int
    agent: str = ""

    @property
    def episode_key(self) -> str:
        return f"{Path(self.source_file).stem}#{self.index}"


@dataclass
class Loaded:
    episodes: list[Episode]
    formats: dict[str, str]
    drops: list[dict[str, Any]] = field(default_factory=list)


def _err(path: str, where: str, msg: str) -> TauDataError:
    return TauDataError(f"{path}: {where}: {msg}")


def detect_format(data: Any, path: str) -> str:
    """``'tau-bench'`` or ``'tau2-bench'`` from the parsed JSON content."""
    if isinstance(data, list):
        if data and isinstance(data[0], dict) and "traj" in data[0] and "info" in data[0]:
            return "tau-bench"
        if not data:
            raise _err(path, "file", "empty JSON list: no τ-bench records.")
    if isinstance(data, dict) and "simulations" in data and "tasks" in data:
        return "tau2-bench"
    raise _err(
        path,
        "file",
        "unknown format: expected a τ-bench trajectory list (records with 'traj' and "
        "'info') or a τ²-bench results object (with 'tasks' and 'simulations').",
    )


def _entities(args: dict[str, Any]) -> frozenset[str]:
    out: set[str] = set()

    def add(v: Any) -> None:
        if isinstance(v, bool) or v is None:
            return
        if isinstance(v, str):
            if 2 <= len(v) <= 80:
                out.add(v)
        elif isinstance(v, int | float):
            out.add(str(v))

    for v in args.values():
        if isinstance(v, dict):
            for w in v.values():
                add(w)
        elif isinstance(v, list):
            for w in v:
                if isinstance(w, dict):
                    for x in w.values():
                        add(x)
                else:
                    add(w)
        else:
            add(v)
    return frozenset(out)


def _cost(text: str) -> float:
    return float(max(5, min(40, len(text) // 4)))


def _content(m: dict[str, Any]) -> str:
    c = m.get("content")
    if c is None:
        return ""
    if isinstance(c, str):
        return c
    return json.dumps(c, sort_keys=True)


def _build(
    messages: Any,
    parse_call: Any,
    path: str,
    where: str,
) -> tuple[list[Step], list[tuple[str, dict[str, Any]]]]:
    if not isinstance(messages, list):
        raise _err(path, where, "messages must be a list.")
    steps: list[Step] = []
    calls: list[tuple[str, dict[str, Any]]] = []  # per step: (name, args) or ("", {})
    subgoal = 0
    for j, m in enumerate(messages):
        if not isinstance(m, dict) or "role" not in m:
            raise _err(path, f"{where}, message {j}", "not an object with a 'role'.")
        role = m["role"]
        if role == "system":
            continue
        if role not in ("user", "assistant", "tool"):
            raise _err(path, f"{where}, message {j}", f"unknown role {role!r}.")
        if role == "user":
            subgoal += 1
        text = _content(m)
        tcs = m.get("tool_calls")
        if tcs:
            if not isinstance(tcs, list):
                raise _err(path, f"{where}, message {j}", "'tool_calls' must be a list.")
            for k, tc in enumerate(tcs):
                try:
                    name, args = parse_call(tc)
                except (KeyError, TypeError, ValueError, json.JSONDecodeError) as exc:
                    raise _err(
                        path, f"{where}, message {j}, tool call {k}", f"unknown shape ({exc})."
                    ) from None
                head = f"{role}: {text}\n" if (k == 0 and text) else ""
                stext = f"{head}{role} calls {name}({json.dumps(args, sort_keys=True)})"
                steps.append(Step(stext, role, name, _entities(args), subgoal, _cost(stext)))
                calls.append((name, args))
        else:
            label = f"tool {m.get('name')}" if role == "tool" and m.get("name") else role
            stext = f"{label}: {text}"
            steps.append(Step(stext, role, None, frozenset(), subgoal, _cost(stext)))
            calls.append(("", {}))
    return steps, calls


def _match(
    calls: list[tuple[str, dict[str, Any]]],
    actions: list[tuple[str, Any]],
    matching: str = "order-free",
) -> list[int]:
    """Greedy match of ground-truth actions to tool-call steps (name + equal arguments).

    Each action, in the ground truth's order, takes the first call step not yet used with the
    same name and equal arguments: anywhere (``'order-free'``) or after the previous match
    (``'in-order'``). Returns the matched step indices, sorted.
    """
    out: list[int] = []
    used: set[int] = set()
    pos = 0
    for name, args in actions:
        for i in range(pos if matching == "in-order" else 0, len(calls)):
            if i not in used and calls[i][0] == name and calls[i][1] == args:
                out.append(i)
                used.add(i)
                pos = i + 1
                break
    return sorted(out)


def _tau2_call(tc: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """A τ²-bench tool call ``{"name", "arguments"}`` as (name, arguments); the arguments may
    be a JSON string (empty: none)."""
    name = tc["name"]
    args = tc["arguments"]
    if isinstance(args, str):
        args = json.loads(args) if args.strip() else {}
    if not isinstance(name, str) or not isinstance(args, dict):
        raise TypeError("name must be a string and arguments a JSON object")
    return name, args


def _tau1_call(tc: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """A τ-bench tool call: OpenAI's ``{"function": {"name", "arguments"}}`` around the same."""
    return _tau2_call(tc["function"])


def _domain_from_name(path: str) -> str:
    """τ-bench records do not name their domain: take it from the file name."""
    stem = Path(path).stem.lower()
    for domain in ("airline", "retail"):
        if domain in stem:
            return domain
    return Path(path).stem


def _load_tau1(data: list[Any], path: str, matching: str) -> list[Episode]:
    eps = []
    for i, r in enumerate(data):
        where = f"record {i}"
        try:
            task = r["info"]["task"]
            actions = [(a["name"], a["kwargs"]) for a in task["actions"]]
            instruction = str(task.get("instruction", ""))
            task_id = r["task_id"]
            traj = r["traj"]
        except (KeyError, TypeError) as exc:
            raise _err(path, where, f"missing or malformed field {exc}.") from None
        steps, calls = _build(traj, _tau1_call, path, where)
        eps.append(
            Episode(
                path,
                i,
                f"{_domain_from_name(path)}/{task_id}",
                int(r.get("trial", 0)),
                instruction,
                tuple(steps),
                tuple(_match(calls, actions, matching)),
                len(actions),
                Path(path).stem,
            )
        )
    return eps


def _instruction_text(ins: Any) -> str:
    if isinstance(ins, str):
        return ins
    if isinstance(ins, dict):
        keys = ("reason_for_call", "known_info", "unknown_info", "task_instructions")
        return "\n".join(str(ins[k]) for k in keys if ins.get(k))
    return ""


def _agent(info: Any) -> str | None:
    llm = info.get("llm") if isinstance(info, dict) else None
    return str(llm) if llm else None


def _load_tau2(data: dict[str, Any], path: str, matching: str) -> list[Episode]:
    domain = "default"
    try:
        domain = str(data["info"]["environment_info"]["domain_name"])
    except (KeyError, TypeError):
        pass
    info: dict[str, Any] = data["info"] if isinstance(data.get("info"), dict) else {}
    file_agent = _agent(info.get("agent_info")) or Path(path).stem
    tasks: dict[str, tuple[str, list[tuple[str, Any]]]] = {}
    for i, t in enumerate(data["tasks"]):
        try:
            crit = t.get("evaluation_criteria") or {}
            acts = [(a["name"], a["arguments"]) for a in (crit.get("actions") or [])]
            ins = _instruction_text((t.get("user_scenario") or {}).get("instructions"))
            tasks[str(t["id"])] = (ins, acts)
        except (KeyError, TypeError, AttributeError) as exc:
            raise _err(path, f"task {i}", f"missing or malformed field {exc}.") from None
    eps = []
    for i, s in enumerate(data["simulations"]):
        where = f"simulation {i}"
        try:
            tid = str(s["task_id"])
            msgs = s["messages"]
        except (KeyError, TypeError) as exc:
            raise _err(path, where, f"missing or malformed field {exc}.") from None
        if tid not in tasks:
            raise _err(path, where, f"task_id {tid!r} is not among the file's tasks.")
        ins, acts = tasks[tid]
        steps, calls = _build(msgs, _tau2_call, path, where)
        eps.append(
            Episode(
                path,
                i,
                f"{domain}/{tid}",
                int(s.get("trial", 0) or 0),
                ins,
                tuple(steps),
                tuple(_match(calls, acts, matching)),
                len(acts),
                _agent(s.get("source_agent_info")) or file_agent,
            )
        )
    return eps


def load_files(paths: Sequence[str | Path], *, matching: str = "order-free") -> Loaded:
    """Read every file (format detected per file) into Stage-B episodes (nothing dropped yet).

    `matching` is the ground-truth matching rule, ``'order-free'`` (default) or ``'in-order'``.
    """
    if matching not in MATCHINGS:
        raise ValueError(f"`matching` must be one of {list(MATCHINGS)}; got {matching!r}.")
    if not paths:
        raise TauDataError("no data files given.")
    episodes: list[Episode] = []
    formats: dict[str, str] = {}
    for p in paths:
        path = str(p)
        try:
            text = Path(path).read_text(encoding="utf-8")
        except FileNotFoundError:
            raise FileNotFoundError(f"{path}: no such file.") from None
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise _err(path, "file", f"not valid JSON ({exc}).") from None
        fmt = detect_format(data, path)
        formats[path] = fmt
        load = _load_tau1 if fmt == "tau-bench" else _load_tau2
        episodes.extend(load(data, path, matching))
    return Loaded(episodes, formats)
