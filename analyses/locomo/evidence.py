"""Evidence ids: ``dia_id`` strings resolved to turn positions, malformed ones parsed or reported.

A well-formed id is ``D<n>:<k>`` naming a turn of the conversation. Malformed strings are
parsed only where the reading is unambiguous (README, "Evidence entries that do not resolve"):

- several ids joined in one string (``"D8:6; D9:17"``, ``"D9:1 D4:4 D4:6"``): split on ``;``,
  ``,`` and whitespace;
- a stray colon after ``D`` (``"D:11:26"`` -> ``D11:26``);
- zero-padded numbers (``"D30:05"`` -> ``D30:5``).

What is left (a truncated ``"D"``, an id naming a turn that does not exist) is *unresolved*:
returned per question with the reason, never dropped silently.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Resolved", "resolve_evidence"]

_ID = re.compile(r"^D:?(\d+):(\d+)$")


@dataclass(frozen=True)
class Resolved:
    """The evidence of one question: turn positions (sorted, distinct) and what did not resolve.

    ``repaired`` lists ``(original string, ids read from it)`` for every string that needed
    parsing; ``unresolved`` lists ``(string, reason)``; ``duplicates`` counts ids cited twice.
    """

    steps: tuple[int, ...]
    repaired: tuple[tuple[str, tuple[str, ...]], ...]
    unresolved: tuple[tuple[str, str], ...]
    duplicates: int


def _canonical(token: str) -> str | None:
    m = _ID.match(token)
    if m is None:
        return None
    return f"D{int(m.group(1))}:{int(m.group(2))}"


def resolve_evidence(
    evidence: tuple[str, ...], index: dict[str, int], *, lenient: bool = True
) -> Resolved:
    """Resolve `evidence` strings against `index` (``dia_id -> turn position``).

    With ``lenient=False`` only exact matches resolve (the official evaluation's reading).

    >>> idx = {"D1:1": 0, "D1:2": 1, "D2:5": 2}
    >>> r = resolve_evidence(("D1:1", "D1:2; D2:05", "D", "D9:9"), idx)
    >>> r.steps, r.repaired
    ((0, 1, 2), (('D1:2; D2:05', ('D1:2', 'D2:5')),))
    >>> r.unresolved
    (('D', 'malformed'), ('D9:9', 'no such turn'))
    """
    steps: list[int] = []
    repaired: list[tuple[str, tuple[str, ...]]] = []
    unresolved: list[tuple[str, str]] = []
    for raw in evidence:
        if raw in index:
            steps.append(index[raw])
            continue
        if not lenient:
            unresolved.append((raw, "no such turn" if _canonical(raw) == raw else "malformed"))
            continue
        tokens = [t for t in re.split(r"[;,\s]+", raw.strip()) if t]
        ids = [_canonical(t) for t in tokens]
        if not tokens or any(i is None for i in ids):
            unresolved.append((raw, "malformed"))
            continue
        good = [i for i in ids if i is not None]
        found = [i for i in good if i in index]
        for i in good:
            if i not in index:
                unresolved.append((raw if good == [i] else f"{i} (in {raw!r})", "no such turn"))
        if found and found != [raw]:
            repaired.append((raw, tuple(found)))
        steps.extend(index[i] for i in found)
    distinct = sorted(set(steps))
    return Resolved(tuple(distinct), tuple(repaired), tuple(unresolved), len(steps) - len(distinct))
