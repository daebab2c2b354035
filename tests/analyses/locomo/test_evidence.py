"""Evidence ids: the unambiguous repairs, and every other string reported (README's 9 cases)."""

from __future__ import annotations

from osustat.analyses.locomo.evidence import resolve_evidence

INDEX = {
    f"D{s}:{k}": i
    for i, (s, k) in enumerate((s, k) for s in (4, 8, 9, 10, 11, 30) for k in range(1, 27))
}


def test_the_readmes_malformed_strings() -> None:
    cases = {
        "D8:6; D9:17": ("D8:6", "D9:17"),
        "D:11:26": ("D11:26",),
        "D30:05": ("D30:5",),
        "D9:1 D4:4 D4:6": ("D9:1", "D4:4", "D4:6"),
    }
    for raw, ids in cases.items():
        r = resolve_evidence((raw,), INDEX)
        assert r.repaired == ((raw, ids),)
        assert r.steps == tuple(sorted(INDEX[i] for i in ids))
        assert r.unresolved == ()
    for raw, why in (("D", "malformed"), ("D10:99", "no such turn"), ("D4:36", "no such turn")):
        r = resolve_evidence((raw,), INDEX)
        assert r.steps == () and r.unresolved == ((raw, why),)


def test_strict_reading_resolves_exact_ids_only() -> None:
    r = resolve_evidence(("D30:05", "D4:1"), INDEX, lenient=False)
    assert r.steps == (INDEX["D4:1"],)
    assert r.unresolved == (("D30:05", "malformed"),)


def test_duplicates_counted_once_and_partial_joined_string() -> None:
    r = resolve_evidence(("D4:5", "D4:5", "D8:5"), INDEX)
    assert r.steps == (INDEX["D4:5"], INDEX["D8:5"]) and r.duplicates == 1
    r = resolve_evidence(("D4:1; D4:99",), INDEX)
    assert r.steps == (INDEX["D4:1"],)
    assert r.unresolved == (("D4:99 (in 'D4:1; D4:99')", "no such turn"),)
