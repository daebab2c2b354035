"""Named entities of a turn's text: a documented rule-based extractor (no model).

Why rules: no well-kept English NER model installs offline from PyPI with its weights inside
the package (spaCy's official models are not on PyPI; the copies there are unofficial
re-uploads), and the project downloads nothing at run time. The rules read capitalization,
calibrated on the corpus itself (all turns of the loaded file):

1. Tokens are words starting with an upper-case letter (inner ``'``, ``.``, ``-`` allowed;
   a trailing possessive ``'s`` and trailing punctuation are stripped).
2. A token is a *name word* when, over the corpus, it is written capitalized in mid-sentence
   more often than its lower-case form is written at all (``"Prius"``, ``"LGBTQ"``,
   ``"Tokyo"``; not ``"Nature"``, ``"Chess"``), and it is not on the stop list: the pronoun
   ``I`` and its contractions, days and months (dates are not entities here), and chat
   abbreviations (``OK``, ``BTW``, ``TV`` ...).
3. An entity is a maximal run of adjacent capitalized tokens that contains a name word, or a
   run of two or more capitalized tokens not at a sentence start (``"the Rocky Mountains"``).
   A run at a sentence start loses its leading non-name words (``"Hey Sam"`` -> ``"sam"``).
4. Entities are lower-cased, so ``"LGBTQ+"`` and ``"LGBTQ"`` agree; the typographic
   apostrophe is read as ``'`` (so ``"I’m"`` meets the stop list).

Variants (the declared choice ``entity_extractor``): ``"proper-nouns"`` drops the two speakers'
names and the prefixes of at least three letters of them (the nicknames ``"Mel"``, ``"Deb"``):
the speaker has its own view, and vocatives ("Hey Caroline!") say whom a turn addresses, not
what it is about. ``"proper-nouns+speakers"`` keeps them. Validation against a hand-labelled
sample of turns: ``docs/locomo.md``.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["EXTRACTORS", "EntityExtractor"]

EXTRACTORS = ("proper-nouns", "proper-nouns+speakers")

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9'’.\-]*[A-Za-z0-9+]|[A-Za-z]")
_BOUNDARY = re.compile(r"[.!?:;\"“”()\[\]—–]\s*$|^\s*$")
_STOP = frozenset(
    """i i'm i've i'll i'd ok okay btw tv lol omg haha yay hey hi hello thanks
    monday tuesday wednesday thursday friday saturday sunday
    january february march april may june july august september october november december""".split()
)


def _clean(word: str) -> str:
    w = word.replace("’", "'").rstrip(".-'")
    if w.endswith("'s"):
        w = w[:-2]
    return w


def _tokens(text: str) -> list[tuple[str, bool, int, int]]:
    """(clean word, sentence-initial, start, end) for every word of `text`."""
    out = []
    for m in _WORD.finditer(text):
        word = _clean(m.group(0))
        if not word:
            continue
        initial = bool(_BOUNDARY.search(text[: m.start()]))
        out.append((word, initial, m.start(), m.end()))
    return out


@dataclass(frozen=True)
class EntityExtractor:
    """The rule-based extractor, calibrated on a corpus of texts (see the module docstring)."""

    name_words: frozenset[str]

    @classmethod
    def fit(cls, texts: Iterable[str]) -> EntityExtractor:
        lower: Counter[str] = Counter()
        capmid: Counter[str] = Counter()
        for text in texts:
            for word, initial, _, _ in _tokens(text):
                if word[0].islower():
                    lower[word.lower()] += 1
                elif not initial:
                    capmid[word.lower()] += 1
        names = {w for w, c in capmid.items() if c > lower[w] and w not in _STOP}
        return cls(frozenset(names))

    def extract(self, text: str, *, exclude: Iterable[str] = ()) -> frozenset[str]:
        """Entities of `text` (lower-cased), without those in `exclude` (lower-cased names)."""
        skip = {e.lower() for e in exclude}
        runs: list[list[tuple[str, bool]]] = []
        last_end = -2
        for word, initial, start, end in _tokens(text):
            if not word[0].isupper():
                last_end = -2
                continue
            if runs and start == last_end + 1 and text[last_end] == " " and not initial:
                runs[-1].append((word, initial))
            else:
                runs.append([(word, initial)])
            last_end = end
        out = set()
        for run in runs:
            while run and run[0][1] and run[0][0].lower() not in self.name_words:
                run = run[1:]  # sentence-initial capitals that are not names
                if run:
                    run = [(run[0][0], True), *run[1:]]
            words = [w for w, _ in run if w.lower() not in _STOP]
            if not words:
                continue
            named = any(w.lower() in self.name_words for w in words)
            if named or (len(words) >= 2 and not run[0][1]):
                entity = " ".join(words).lower().strip("+")
                if entity not in skip:
                    out.add(entity)
        return frozenset(out)


def speaker_exclusions(speakers: Iterable[str], candidates: Iterable[str]) -> set[str]:
    """Speaker names and the candidates that are prefixes (>= 3 letters) of one."""
    names = {s.lower() for s in speakers}
    out = set(names)
    for c in candidates:
        if len(c) >= 3 and any(n.startswith(c) for n in names):
            out.add(c)
    return out
