"""Load ToolBench answer trajectories into tool-call steps (paper Appendix G.1).

Three sources under the data directory (``shared/data/toolbench/README.md``):

- ``data_example/answer/G*_answer/*.json`` and
  ``stabletoolbench/data_example/answer/*/*/*.json``: DFS/CoT answer files whose
  ``answer_generation.train_messages[-1]`` is the final message chain (full arguments).
- ``tooleval_default_evalset_gpt-3.5-turbo_CoT/*.json``: 600 gpt-3.5 ReAct runs whose tool
  messages are cut at 100 characters. The tool name always survives; the arguments survive
  only when the cut falls after them. Steps whose arguments were cut are marked
  ``truncated`` and keep only the ``"key": value`` pairs whose value ended before the cut.

G.1 rules: the step action is the function name; entities are the string values of length
2-80 and the numbers among the argument values, one level deep (values of a nested dict or
list are taken, deeper ones are not); tool signature ``name.split("_for_")[-1]`` if
``_for_`` is in the name else ``name.split("_")[0]``; subgoal = call index in the trajectory;
cost ``max(5, min(40, |content| // 4))``. The step content is the preceding assistant text
(if any) followed by the tool's response, as far as the file has it.

Every file or entry that cannot be used is counted with its reason (``exclusions``); a file
that cannot be read or parsed at all raises ``ValueError`` naming the file and entry.
"""

from __future__ import annotations

import ast
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "SPLITS",
    "ToolStep",
    "ToolTrajectory",
    "ToolbenchData",
    "entities_of",
    "load_toolbench",
    "step_cost",
    "tool_signature",
]

COT_DIR = "tooleval_default_evalset_gpt-3.5-turbo_CoT"

#: Which ToolBench splits are loaded, a declared choice: ``'G1-G2'`` (default; Section 5.1
#: and G.1 load "the G1 (single-tool) and G2 (multi-tool) answer directories") or
#: ``'G1-G2-G3'`` (every split the data folder holds).
SPLITS = {"G1-G2": ("G1", "G2"), "G1-G2-G3": ("G1", "G2", "G3")}
DFS_GLOBS = (
    "data_example/answer/G*_answer/*.json",
    "stabletoolbench/data_example/answer/*/*/*.json",
)


@dataclass(frozen=True)
class ToolStep:
    """One assistant function call."""

    action: str
    arguments: dict[str, Any]
    content: str
    entities: tuple[str, ...]
    tool: str
    subgoal: int
    cost: float
    truncated: bool

    @property
    def text(self) -> str:
        """The text that is embedded: action, arguments and content."""
        args = json.dumps(self.arguments, sort_keys=True, ensure_ascii=False)
        return f"{self.action} {args} {self.content}".strip()


@dataclass(frozen=True)
class ToolTrajectory:
    """One answer trajectory: its query and its tool-call steps (``Finish`` included)."""

    traj_id: str
    source: str
    group: str
    query: str
    steps: tuple[ToolStep, ...]

    @property
    def evidence_candidates(self) -> tuple[int, ...]:
        """Indices of the steps that may be planted as evidence (every call but ``Finish``)."""
        return tuple(i for i, s in enumerate(self.steps) if s.action != "Finish")


@dataclass(frozen=True)
class ToolbenchData:
    """Loaded trajectories and every exclusion with its reason."""

    trajectories: tuple[ToolTrajectory, ...]
    exclusions: dict[str, int] = field(default_factory=dict)
    files: int = 0

    def summary(self) -> dict[str, Any]:
        steps = [s for t in self.trajectories for s in t.steps]
        return {
            "files_read": self.files,
            "trajectories": len(self.trajectories),
            "by_source": dict(Counter(t.source for t in self.trajectories)),
            "steps": len(steps),
            "truncated_steps": sum(s.truncated for s in steps),
            "finish_steps": sum(s.action == "Finish" for s in steps),
            "exclusions": dict(self.exclusions),
        }


def tool_signature(name: str) -> str:
    """G.1 tool signature.

    >>> tool_signature("genre_list_for_advanced_movie_search"), tool_signature("get_user")
    ('advanced_movie_search', 'get')
    """
    return name.split("_for_")[-1] if "_for_" in name else name.split("_")[0]


def step_cost(content: str) -> float:
    """``max(5, min(40, |content| // 4))`` tokens (Section 3.2)."""
    return float(max(5, min(40, len(content) // 4)))


def _entity(value: Any) -> str | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        return value if 2 <= len(value) <= 80 else None
    if isinstance(value, int | float):
        return str(value)
    return None


def entities_of(arguments: dict[str, Any]) -> tuple[str, ...]:
    """Entities of an argument dict: strings of length 2-80 and numbers, one level deep.

    >>> entities_of({"q": "Paris", "n": 3, "x": "a", "d": {"k": "Lyon", "deep": {"z": "no"}}})
    ('3', 'Lyon', 'Paris')
    """
    out: set[str] = set()
    for value in arguments.values():
        inner = (
            value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
        )
        for v in (value, *inner):
            e = _entity(v)
            if e is not None:
                out.add(e)
    return tuple(sorted(out))


def _make_step(
    name: str, arguments: dict[str, Any], content: str, index: int, truncated: bool
) -> ToolStep:
    return ToolStep(
        action=name,
        arguments=arguments,
        content=content,
        entities=entities_of(arguments),
        tool=tool_signature(name),
        subgoal=index,
        cost=step_cost(content),
        truncated=truncated,
    )


def _load_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not valid JSON ({exc}).") from None
    except OSError as exc:
        raise ValueError(f"{path}: cannot be read ({exc}).") from None


# -- DFS/CoT answer files (full arguments) -------------------------------------------------


def _parse_answer_file(path: Path, root: Path, excl: Counter[str]) -> ToolTrajectory | None:
    data = _load_json(path)
    if not isinstance(data, dict) or not isinstance(data.get("answer_generation"), dict):
        raise ValueError(f"{path}: entry `answer_generation` is missing or not an object.")
    ag = data["answer_generation"]
    msgs = ag.get("train_messages")
    if not msgs:
        excl["answer file without train_messages (valid_data=false)"] += 1
        return None
    if not isinstance(msgs, list) or not isinstance(msgs[-1], list):
        raise ValueError(
            f"{path}: entry `answer_generation.train_messages` is not a list of lists."
        )
    query = ag.get("query")
    if not isinstance(query, str) or not query.strip():
        raise ValueError(f"{path}: entry `answer_generation.query` is missing or empty.")
    chain = msgs[-1]
    steps: list[ToolStep] = []
    for k, m in enumerate(chain):
        if not isinstance(m, dict) or "role" not in m:
            raise ValueError(f"{path}: entry `train_messages[-1][{k}]` has no `role`.")
        call = m.get("function_call")
        if m["role"] != "assistant" or not call:
            continue
        if not isinstance(call, dict) or not isinstance(call.get("name"), str):
            raise ValueError(f"{path}: entry `train_messages[-1][{k}].function_call` has no name.")
        try:
            args = json.loads(call.get("arguments") or "{}")
        except json.JSONDecodeError:
            excl["call with unparsable JSON arguments (kept, no entities)"] += 1
            args = {}
        if not isinstance(args, dict):
            args = {}
        response = ""
        if k + 1 < len(chain) and chain[k + 1].get("role") == "function":
            response = str(chain[k + 1].get("content") or "")
        content = f"{m.get('content') or ''} {response}".strip()
        steps.append(_make_step(call["name"], args, content, len(steps), False))
    if not steps:
        excl["answer file with no function call"] += 1
        return None
    rel = path.relative_to(root).as_posix()
    group = re.search(r"G\d", rel)
    return ToolTrajectory(
        traj_id=rel,
        source="stabletoolbench" if rel.startswith("stabletoolbench") else "data_example",
        group=group.group(0) if group else "?",
        query=query.strip(),
        steps=tuple(steps),
    )


# -- the 600 truncated CoT runs -----------------------------------------------------------

_NAME = re.compile(r"^\{'name': '([^']*)'")
_ARGS_FULL = re.compile(r"'arguments': '(.*?)', 'response': (.*)$", re.S)
_ARGS_CUT = re.compile(r"'arguments': '(.*)$", re.S)
# a "key": value pair whose value ended before the cut (a delimiter follows it)
_PAIR = re.compile(r'"([^"\\]+)":\s*(?:"((?:[^"\\]|\\.)*)"|(-?\d+(?:\.\d+)?))(?=\s*(?:,|\\n|\}))')


def _unescape(s: str) -> str:
    """Undo the Python-repr escaping of the message string (``\\n`` -> newline, ...)."""
    try:
        out = ast.literal_eval("'" + s + "'")
    except (ValueError, SyntaxError):
        return s.replace("\\n", "\n")
    return out if isinstance(out, str) else s


def parse_cut_message(message: str) -> tuple[str, dict[str, Any], str, bool] | None:
    """Parse a tool message cut at 100 characters: (name, arguments, response, truncated).

    ``None`` when even the tool name was cut.

    >>> msg = "{'name': 'f_for_api', 'arguments': '{\\\\n  \\"q\\": \\"Paris\\"\\\\n}', "
    >>> parse_cut_message(msg + "'response': 'ok")
    ('f_for_api', {'q': 'Paris'}, 'ok', False)
    >>> cut = "{'name': 'f_for_a', 'arguments': '{\\\\n  \\"q\\": \\"Paris\\",\\\\n  \\"n\\": \\"L"
    >>> parse_cut_message(cut)
    ('f_for_a', {'q': 'Paris'}, '', True)
    """
    m = _NAME.match(message)
    if not m:
        return None
    name = m.group(1)
    full = _ARGS_FULL.search(message)
    if full:
        raw = _unescape(full.group(1))
        response = full.group(2)
        response = response[:-2] if response.endswith("'}") else response  # not cut: closing
        response = response.removeprefix("'")
        try:
            args = json.loads(raw) if raw.strip() else {}
            if isinstance(args, dict):
                return name, args, response, False
        except json.JSONDecodeError:
            pass
        fragment = full.group(1)
    else:
        cut = _ARGS_CUT.search(message)
        fragment, response = (cut.group(1) if cut else ""), ""
        closed = re.match(r"^(.*\})'", fragment, re.S)  # arguments complete, response cut
        if closed:
            try:
                args = json.loads(_unescape(closed.group(1)))
                if isinstance(args, dict):
                    return name, args, response, False
            except json.JSONDecodeError:
                pass
    args = {}
    for key, sval, nval in _PAIR.findall(fragment):
        if sval or not nval:
            args[key] = _unescape(sval)
        else:
            args[key] = float(nval) if "." in nval else int(nval)
    return name, args, response, True


def _chain(details: Any, where: str) -> list[dict[str, Any]]:
    if not isinstance(details, list):
        raise ValueError(f"{where}: `answer.answer_details` is not a list.")
    out: list[dict[str, Any]] = []
    nodes = details
    while nodes:
        node = nodes[-1]
        if not isinstance(node, dict) or "role" not in node:
            raise ValueError(f"{where}: a node of `answer.answer_details` has no `role`.")
        out.append(node)
        nodes = node.get("next") or []
    return out


def _parse_cot_file(path: Path, excl: Counter[str]) -> list[ToolTrajectory]:
    data = _load_json(path)
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected an object mapping query_id to runs.")
    group = path.stem.split("_")[0]
    out = []
    for qid, run in data.items():
        where = f"{path}, entry {qid!r}"
        if not isinstance(run, dict) or not isinstance(run.get("query"), str):
            raise ValueError(f"{where}: `query` is missing or not a string.")
        answer = run.get("answer")
        if not isinstance(answer, dict) or "answer_details" not in answer:
            raise ValueError(f"{where}: `answer.answer_details` is missing.")
        steps: list[ToolStep] = []
        prev_assistant = ""
        for node in _chain(answer["answer_details"], where):
            if node["role"] == "assistant":
                prev_assistant = str(node.get("message") or "")
                continue
            if node["role"] != "tool":
                continue
            parsed = parse_cut_message(str(node.get("message") or ""))
            if parsed is None:
                excl["CoT tool message whose tool name was cut (step dropped)"] += 1
                continue
            name, args, response, truncated = parsed
            content = f"{prev_assistant} {response}".strip()
            prev_assistant = ""
            steps.append(_make_step(name, args, content, len(steps), truncated))
        if not steps:
            excl["CoT run with no tool call"] += 1
            continue
        out.append(
            ToolTrajectory(
                traj_id=f"{COT_DIR}/{path.name}#{qid}",
                source="tooleval-cot",
                group=group,
                query=run["query"].strip(),
                steps=tuple(steps),
            )
        )
    return out


def load_toolbench(data_dir: str | Path, *, splits: str = "G1-G2") -> ToolbenchData:
    """Load the trajectories of `splits` (:data:`SPLITS`) under `data_dir` (module docstring).

    Trajectories of other splits are not loaded; they are counted in ``exclusions``.

    Raises
    ------
    FileNotFoundError
        `data_dir` does not exist or holds none of the expected files.
    ValueError
        A file is not valid JSON or an entry lacks a required field (file and entry named).
    """
    if splits not in SPLITS:
        raise ValueError(f"`splits` must be one of {list(SPLITS)}; got {splits!r}.")
    root = Path(data_dir)
    if not root.is_dir():
        raise FileNotFoundError(f"ToolBench data directory {root} does not exist.")
    files = sorted(p for g in DFS_GLOBS for p in root.glob(g))
    cot = sorted((root / COT_DIR).glob("*.json"))
    if not files and not cot:
        raise FileNotFoundError(
            f"{root} holds no ToolBench answer files (expected {DFS_GLOBS[0]} or {COT_DIR}/*.json)."
        )
    excl: Counter[str] = Counter()
    trajs: list[ToolTrajectory] = []
    for p in files:
        t = _parse_answer_file(p, root, excl)
        if t is not None:
            trajs.append(t)
    for p in cot:
        trajs.extend(_parse_cot_file(p, excl))
    keep = SPLITS[splits]
    for t in trajs:
        if t.group not in keep:
            excl[f"trajectory of split {t.group} (not loaded: splits = {splits})"] += 1
    trajs = [t for t in trajs if t.group in keep]
    return ToolbenchData(tuple(trajs), dict(sorted(excl.items())), len(files) + len(cot))
