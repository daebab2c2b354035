"""Build the prepared files of the registry from their upstream blobs (the READMEs' recipes).

Each recipe is a pure function from the source blobs (in the registry's order, each already
checked against its git blob id) to the bytes of the prepared file; :mod:`osustat.data.store`
then checks those bytes against the registered SHA-256, so a recipe that drifted from the one
that made the shared copy is refused, never used.

- ``tau-bench-tasks``: the airline task list ``TASKS`` of ``tau_bench/envs/airline/tasks_test.py``
  exported to JSON (``task_id`` = position), read with :mod:`ast` (the source is never executed).
- ``tau2-adaptive``: a bare list of τ²-bench simulations joined with its pinned ``tasks.json``
  and a constructed ``info`` (the source has none; the agent and user models are those of the
  submission's ``submission.json``, fixed here).
- ``tau2-ironshell-mixed``: five τ²-bench results files merged in order with the pinned
  ``tasks.json``; their common ``info`` with ``agent_info.llm = "mixed"``, a ``sources`` list,
  and ``source_file`` / ``source_agent_info`` added to each simulation.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Callable, Sequence
from typing import Any

from osustat.data.registry import Source

__all__ = ["RECIPES", "build"]

_ADAPTIVE_INFO = {
    "agent_info": {"implementation": "adaptive_agent", "llm": "claude-opus-4-6"},
    "user_info": {"implementation": "user_simulator", "llm": "claude-opus-4-6"},
    "environment_info": {"domain_name": "airline"},
    "num_trials": 1,
    "note": "constructed by the osustat data preparation (the source file has no info object): "
    "domain from the source, agent/user models from the submission's submission.json",
}
_MIXED_NOTE = (
    "five source files merged; each simulation's agent is in simulations[*].source_agent_info "
    "(the source files' info.agent_info, copied verbatim) and simulations[*].source_file"
)
_TASK_KEYS = ("annotator", "user_id", "instruction", "actions", "outputs")


def _call_kwargs(node: ast.AST, name: str, where: str) -> dict[str, Any]:
    if not (isinstance(node, ast.Call) and getattr(node.func, "id", None) == name):
        raise ValueError(f"{where}: expected a {name}(...) call, got {ast.dump(node)[:80]}.")
    if node.args:
        raise ValueError(f"{where}: {name}(...) with positional arguments is not read.")
    return {k.arg: k.value for k in node.keywords if k.arg is not None}


def tau_bench_tasks(blobs: Sequence[bytes]) -> bytes:
    """``tasks_test.py`` -> the JSON list of tasks (indent 1, as the shared copy)."""
    tree = ast.parse(blobs[0].decode("utf-8"), filename="tasks_test.py")
    lists = [
        node.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id.startswith("TASKS") for t in node.targets)
        and isinstance(node.value, ast.List)
    ]
    if len(lists) != 1:
        raise ValueError(f"tasks_test.py: expected one TASKS = [...] list; found {len(lists)}.")
    out = []
    for i, node in enumerate(lists[0].elts):
        kw = _call_kwargs(node, "Task", f"tasks_test.py task {i}")
        missing = [k for k in _TASK_KEYS if k not in kw and k != "outputs"]
        if missing:
            raise ValueError(f"tasks_test.py task {i}: no {', '.join(missing)}.")
        task: dict[str, Any] = {"task_id": i}
        for key in _TASK_KEYS:
            if key == "actions":
                acts = kw[key].elts if isinstance(kw[key], ast.List) else []
                task[key] = []
                for j, a in enumerate(acts):
                    akw = _call_kwargs(a, "Action", f"tasks_test.py task {i} action {j}")
                    task[key].append(
                        {
                            "name": ast.literal_eval(akw["name"]),
                            "kwargs": ast.literal_eval(akw["kwargs"]),
                        }
                    )
            else:
                task[key] = ast.literal_eval(kw[key]) if key in kw else []
        out.append(task)
    return json.dumps(out, indent=1).encode("utf-8")


def tau2_adaptive(blobs: Sequence[bytes]) -> bytes:
    """Simulations list + ``tasks.json`` -> a τ²-bench results file (indent 2)."""
    simulations, tasks = json.loads(blobs[0]), json.loads(blobs[1])
    if not isinstance(simulations, list):
        raise ValueError("tau2-adaptive: the source is not a bare list of simulations.")
    doc = {"info": _ADAPTIVE_INFO, "tasks": tasks, "simulations": simulations}
    return json.dumps(doc, indent=2).encode("utf-8")


def tau2_ironshell_mixed(blobs: Sequence[bytes], sources: Sequence[Source]) -> bytes:
    """Five results files + ``tasks.json`` -> one merged results file (indent 2)."""
    *runs, tasks_blob = [json.loads(b) for b in blobs]
    infos = [{k: v for k, v in r["info"].items() if k != "agent_info"} for r in runs]
    if any(i != infos[0] for i in infos[1:]):
        raise ValueError("tau2-ironshell-mixed: the source files' info differ beyond agent_info.")
    agents = [r["info"]["agent_info"] for r in runs]
    info = dict(runs[0]["info"])
    info["agent_info"] = {
        "implementation": agents[0]["implementation"],
        "llm": "mixed",
        "llms": [a["llm"] for a in agents],
        "note": _MIXED_NOTE,
    }
    listed, simulations = [], []
    for run, src in zip(runs, sources, strict=False):
        commit, path = src.url.split("/tau2-bench/", 1)[1].split("/", 1)
        listed.append(
            {
                "file": path.rsplit("/", 1)[1],
                "path": path,
                "blob": src.git_blob,
                "commit": commit,
                "timestamp": run["timestamp"],
                "agent_info": run["info"]["agent_info"],
                "simulations": len(run["simulations"]),
            }
        )
        for sim in run["simulations"]:
            simulations.append(
                {
                    **sim,
                    "source_file": listed[-1]["file"],
                    "source_agent_info": run["info"]["agent_info"],
                }
            )
    doc = {"info": info, "sources": listed, "tasks": tasks_blob, "simulations": simulations}
    return json.dumps(doc, indent=2).encode("utf-8")


RECIPES: dict[str, Callable[[Sequence[bytes], Sequence[Source]], bytes]] = {
    "tau-bench-tasks": lambda blobs, sources: tau_bench_tasks(blobs),
    "tau2-adaptive": lambda blobs, sources: tau2_adaptive(blobs),
    "tau2-ironshell-mixed": tau2_ironshell_mixed,
}


def build(recipe: str, blobs: Sequence[bytes], sources: Sequence[Source]) -> bytes:
    """The prepared file's bytes from its source blobs (ValueError for an unknown recipe)."""
    if recipe not in RECIPES:
        raise ValueError(f"unknown recipe {recipe!r}; known: {', '.join(RECIPES)}.")
    if len(blobs) != len(sources):
        raise ValueError(f"recipe {recipe!r}: {len(blobs)} blobs for {len(sources)} sources.")
    return RECIPES[recipe](blobs, sources)
