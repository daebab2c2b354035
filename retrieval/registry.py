"""One registry of retrieval methods: names, constructors, oracle flag.

Every pipeline, the contract test and ``osustat check-retriever`` read the paper's methods from
:data:`METHODS`, so a method's name and settings are written once. User retrievers join a run
through :func:`load_retriever` (``module:Class`` or the entry-point group
``osustat.retrievers``) and are checked by :mod:`osustat.retrieval.contract`.
"""

from __future__ import annotations

import functools
import importlib
import os
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .base import BaseRetriever, Retriever
from .baselines import BASELINES
from .osu import OSUConfig
from .osumem import CohesionOSU, CoverageGuidedOSU, OSUMem, OSUMemGF

__all__ = [
    "ENTRY_POINT_GROUP",
    "METHODS",
    "PAPER_METHODS",
    "MethodSpec",
    "load_retriever",
    "make",
    "paper_methods",
    "user_factories",
]

ENTRY_POINT_GROUP = "osustat.retrievers"


@dataclass(frozen=True)
class MethodSpec:
    """A named retrieval method.

    Attributes
    ----------
    name : str
        The name records use (the paper's table label).
    factory : callable
        Returns a new, unbuilt retriever with this method's settings.
    oracle : bool
        Whether the method sees the ground-truth evidence (never deployable).
    description : str
    source : str
        How a user retriever was named (``module:Class`` or an entry point); empty for the
        paper's methods.
    """

    name: str
    factory: Callable[[], Retriever]
    oracle: bool
    description: str = ""
    source: str = ""


def _spec(name: str, factory: Callable[[], BaseRetriever], description: str) -> MethodSpec:
    return MethodSpec(name, factory, bool(factory().oracle), description)


METHODS: dict[str, MethodSpec] = {
    **{
        name: _spec(name, cls, (cls.__doc__ or "").strip().splitlines()[0])
        for name, cls in BASELINES.items()
    },
    "OSU-Mem": _spec("OSU-Mem", OSUMem, "Algorithm 1 with Table 8 defaults"),
    "OSU-Mem + GF": _spec("OSU-Mem + GF", OSUMemGF, "oracle OSU selection (not deployable)"),
    "OSU-Mem (disjoint)": _spec(
        "OSU-Mem (disjoint)",
        functools.partial(OSUMem, osu_config=OSUConfig(m_max=1)),
        "M_max = 1: each step in one OSU",
    ),
    "OSU-Mem (sim only)": _spec(
        "OSU-Mem (sim only)",
        functools.partial(OSUMem, osu_config=OSUConfig(views=("similarity",))),
        "similarity view only",
    ),
    "OSU-Mem (no novelty)": _spec(
        "OSU-Mem (no novelty)",
        functools.partial(OSUMem, lambda_nov=0.0),
        "novelty term off (lambda_nov = 0)",
    ),
    "OSU-Mem (coverage-guided)": _spec(
        "OSU-Mem (coverage-guided)", CoverageGuidedOSU, "coverage-guided greedy, beta = .12"
    ),
    "OSU-Mem (cohesion)": _spec(
        "OSU-Mem (cohesion)", CohesionOSU, "cohesion-style alpha variant (Appendix G.5)"
    ),
}


#: The registered methods each of the paper's benchmarks runs, in the order of its tables:
#: Table 9 (synthetic), Table 11 (τ-bench: Table 9's rows without the oracle and sim-only), the
#: Table 3 baselines (ToolBench, whose OSU-Mem variants are built per beta / alpha by the
#: pipeline). Pipelines read their lists here.
PAPER_METHODS: dict[str, tuple[str, ...]] = {
    "synthetic": (
        "No LT Memory",
        "Budget-Truncated Replay",
        "Sliding Window",
        "Periodic Summary",
        "Flat Vector",
        "Flat + MMR",
        "Coverage-Aware",
        "Disjoint Hierarchy",
        "Tree Abstraction",
        "OSU-Mem",
        "OSU-Mem + GF",
        "OSU-Mem (disjoint)",
        "OSU-Mem (sim only)",
        "OSU-Mem (no novelty)",
    ),
    "toolbench": ("Flat Vector", "Flat + MMR", "Disjoint Hierarchy"),
}


PAPER_METHODS["tau-bench"] = tuple(
    m for m in PAPER_METHODS["synthetic"] if m not in ("OSU-Mem + GF", "OSU-Mem (sim only)")
)


def paper_methods(benchmark: str) -> dict[str, Callable[[], Retriever]]:
    """Name -> factory of the methods `benchmark` runs (:data:`PAPER_METHODS`), in order.

    >>> from osustat.retrieval.registry import paper_methods
    >>> list(paper_methods("toolbench"))
    ['Flat Vector', 'Flat + MMR', 'Disjoint Hierarchy']
    """
    if benchmark not in PAPER_METHODS:
        raise ValueError(f"unknown benchmark {benchmark!r}; known: {sorted(PAPER_METHODS)}.")
    return {name: METHODS[name].factory for name in PAPER_METHODS[benchmark]}


def make(name: str) -> Retriever:
    """A new, unbuilt retriever of a registered method.

    >>> from osustat.retrieval.registry import make
    >>> make("OSU-Mem (disjoint)").osu_config.m_max
    1
    """
    if name not in METHODS:
        raise ValueError(f"unknown retrieval method {name!r}; known: {sorted(METHODS)}.")
    return METHODS[name].factory()


#: Modules found only through the current directory (sent to workers by value).
_FROM_CWD: set[str] = set()


def _import(module_name: str) -> object:
    """Import a module; like ``python -m``, the current directory counts as importable.

    A module found only that way is registered with cloudpickle to travel by value, so that
    worker processes (joblib, Dask) need not find it themselves: they may have started before
    the current directory joined ``sys.path``, or run on another machine.
    """
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError:
        cwd = os.getcwd()
        if cwd in sys.path:
            raise
        sys.path.insert(0, cwd)
        module = importlib.import_module(module_name)
        _FROM_CWD.add(module_name)
    if module_name in _FROM_CWD:
        try:
            import cloudpickle
        except ImportError:  # pragma: no cover - joblib depends on it
            pass
        else:
            cloudpickle.register_pickle_by_value(module)
    return module


def load_retriever(spec: str) -> MethodSpec:
    """A user retriever from ``module:Class`` (or ``module:factory``) or an entry point name.

    The class (or zero-argument factory) must build retrievers that follow the
    :class:`~osustat.retrieval.base.Retriever` protocol; records name it by its ``name``
    class attribute. Entry points are looked up in the group ``osustat.retrievers``.
    """
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"a retriever must be 'module:Class' or an entry point; got {spec!r}.")
    spec = spec.strip()
    if ":" in spec:
        module_name, _, attr = spec.partition(":")
        try:
            module = _import(module_name)
        except ImportError as exc:
            missing = exc.name if isinstance(exc, ModuleNotFoundError) else None
            if missing and not (module_name + ".").startswith(missing + "."):
                raise ValueError(  # the module is there; one it imports is not
                    f"retriever {spec!r}: module {module_name!r} imports {missing!r}, which is "
                    f"not installed ({exc})."
                ) from exc
            raise ValueError(
                f"retriever {spec!r}: cannot import module {module_name!r} ({exc}); is it "
                "installed or on PYTHONPATH?"
            ) from exc
        except Exception as exc:  # the module's own code failed (a SyntaxError, a raise)
            raise ValueError(
                f"retriever {spec!r}: importing module {module_name!r} raised "
                f"{type(exc).__name__}: {exc}"
            ) from exc
        try:
            factory = functools.reduce(getattr, attr.split("."), module)
        except AttributeError:
            raise ValueError(
                f"retriever {spec!r}: module {module_name!r} has no attribute {attr!r}."
            ) from None
    else:
        from importlib.metadata import entry_points

        found = [ep for ep in entry_points(group=ENTRY_POINT_GROUP) if ep.name == spec]
        if not found:
            raise ValueError(
                f"retriever {spec!r}: no 'module:Class' and no entry point named {spec!r} in "
                f"group {ENTRY_POINT_GROUP!r}."
            )
        factory = found[0].load()
    if not callable(factory):
        raise ValueError(f"retriever {spec!r}: {factory!r} is not a class or factory.")
    try:
        instance = factory()
    except Exception as exc:
        raise ValueError(
            f"retriever {spec!r}: constructing it with no arguments failed: {exc}"
        ) from exc
    if not isinstance(instance, Retriever):
        raise ValueError(
            f"retriever {spec!r}: {type(instance).__name__} does not follow the retriever "
            "protocol (class attributes `name` and `oracle`, methods `build(trajectory)` and "
            "`retrieve(query, budget, *, time=None, evidence=None)`); see docs/scaling.md."
        )
    return MethodSpec(
        _method_name(spec, instance.name), factory, bool(instance.oracle),
        f"user retriever {spec}", spec,
    )  # fmt: skip


def _method_name(spec: str, name: Any) -> str:
    """A retriever's `name` as records and the command line can carry it: a non-empty text
    without surrounding spaces (``analyze --treatment`` strips them) and without a comma
    (its lists split on commas); else the error says why."""
    if not isinstance(name, str):
        raise ValueError(
            f"retriever {spec!r}: its `name` must be text (the records' method); got "
            f"{type(name).__name__} {name!r}."
        )
    problems = (
        (not name.strip(), "is empty"),
        (name != name.strip(), "has spaces around it (the command line strips them)"),
        ("," in name, "holds a comma (the command line's method lists split on commas)"),
        (any(c in name for c in "\r\n"), "holds a line break"),
    )
    problem = next((said for broken, said in problems if broken), None)
    if problem:
        raise ValueError(
            f"retriever {spec!r}: its `name` {name!r} {problem}; give the class another `name`."
        )
    return name


def user_factories(
    specs: Sequence[MethodSpec], *, taken: Iterable[str]
) -> tuple[tuple[str, Callable[[], Retriever]], ...]:
    """``(name, factory)`` of user retrievers joining a run whose own methods are `taken`.

    Each factory is a :class:`~osustat.retrieval.contract.CheckedFactory`: every answer its
    retrievers give is checked by the contract's per-answer rules, and the first broken rule
    (or an exception of the retriever's own) stops the run with a
    :class:`~osustat.retrieval.contract.RetrieverError` naming the retriever, episode and
    budget. Raises ``ValueError`` when a name is already used (records would mix two methods).
    """
    from .contract import CheckedFactory

    used = set(taken)
    out = []
    for spec in specs:
        if not isinstance(spec, MethodSpec):
            raise TypeError(
                f"user retrievers must be MethodSpec (from load_retriever); got {spec!r}."
            )
        clash = [u for u in used if u.casefold() == spec.name.casefold()]
        if clash:
            same = "" if clash[0] == spec.name else f" as {clash[0]!r} (case aside)"
            raise ValueError(
                f"retriever {spec.source or spec.name!r}: its name "
                f"{spec.name!r} is already a method of this run{same}; give the class another "
                "`name`."
            )
        used.add(spec.name)
        out.append((spec.name, CheckedFactory(spec.factory, spec.source or spec.name)))
    return tuple(out)
