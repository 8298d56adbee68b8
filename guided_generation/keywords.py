"""Keyword rows: which constraint sets each decoded row of the pipeline must meet.

A *keyword* is a lemma from the Cause Effect Graph or a word the user gave. Each becomes one
disjunctive set of its surface forms (:func:`cause_effect_graph.word_forms.variants`: {love,
loves, loved, loving}); a user word written with ``|`` (``"hungry|hunger"``) gives its alternatives as they are.
A graph keyword may be inflected only in the parts of speech it has in the graph's text
(``pos_of``, e.g. :meth:`~cause_effect_graph.parts_of_speech.PartsOfSpeech.of` of the bundled
profile), so the noun *purse* gives {purse, purses} and never "pursed"; a user's keyword keeps
every form. :func:`keyword_rows` combines the graph's keywords with the user's as
:class:`~guided_generation.options.GuidedOptions.constraint_mode` says.

Examples
--------
>>> rows = keyword_rows(["hungry", "tired"], ["rain"], "combine", n=2)
>>> [(r.keyword, r.source) for r in rows]
[('rain', 'user'), ('hungry', 'graph')]
>>> rows[0].sets
[['rain', 'rained', 'raining', 'rains']]
>>> [r.sets for r in keyword_rows(["hungry"], ["night|nights"], "require", n=5)]
[[['hungrier', 'hungriest', 'hungry'], ['night', 'nights']]]
>>> keyword_rows([], ["hungry|hunger", "tired"], "all", n=5)[0].keyword
'hungry|hunger + tired'
>>> [r.sets for r in keyword_rows(["purse"], ["purse"], pos_of=lambda w: ("NOUN",))]
[[['purse', 'pursed', 'purses', 'pursing']]]
>>> [r.sets for r in keyword_rows(["purse"], ["cry"], pos_of=lambda w: ("NOUN",))]
[[['cried', 'cries', 'cry', 'crying']], [['purse', 'purses']]]
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Literal

from cause_effect_graph.word_forms import variants
from guided_generation.errors import GuidedGenerationError
from guided_generation.options import CONSTRAINT_MODES

__all__ = ["KeywordRow", "keyword_rows", "keyword_set"]

Source = Literal["graph", "sampled", "user", "none"]


@dataclass(frozen=True)
class KeywordRow:
    """One decoded row: the keyword it stands for, where it came from, and its constraint sets
    (``source="none"``, no sets: the unconstrained row of :attr:`GuidedOptions.plain_row`)."""

    keyword: str
    source: Source
    sets: list[list[str]]


def keyword_set(word: str, capitalized: bool = False,
                pos: Collection[str] | None = None) -> list[str]:
    """The constraint set of one keyword: its variants, or its ``|``-separated alternatives.

    ``capitalized`` also adds each form with an upper-case first letter. ``pos`` (UPOS tags)
    keeps only the inflections of those parts of speech (:func:`cause_effect_graph.word_forms.
    variants`; ``None`` or empty: all); alternatives and phrases are taken as written whatever
    it says.

    >>> keyword_set("cry")
    ['cried', 'cries', 'cry', 'crying']
    >>> keyword_set("cry", pos=["NOUN"])
    ['cries', 'cry']
    >>> keyword_set("hungry|hunger")
    ['hungry', 'hunger']
    >>> keyword_set("ice cream")
    ['ice cream']
    >>> keyword_set(" | x")
    Traceback (most recent call last):
    ...
    guided_generation.errors.GuidedGenerationError: keyword ' | x' has an empty alternative
    """
    if "|" in word:
        parts = [p.strip() for p in word.split("|")]
        if any(not p for p in parts):
            raise GuidedGenerationError(f"keyword {word!r} has an empty alternative")
        forms = list(dict.fromkeys(parts))
        if capitalized:
            forms += [f[:1].upper() + f[1:] for f in forms if f[:1].upper() + f[1:] not in forms]
        return forms
    word = word.strip()
    if not word:
        raise GuidedGenerationError("a keyword is empty")
    if " " in word:  # a phrase: as given (lemminflect inflects single words)
        return [word, word[:1].upper() + word[1:]] if capitalized and not word[0].isupper() else [word]
    return variants(word, capitalized=capitalized, pos=pos) or [word]


def keyword_rows(
    graph_keywords: Sequence[str],
    user_keywords: Sequence[str],
    mode: str = "combine",
    n: int = 300,
    capitalized: bool = False,
    pos_of: Callable[[str], Collection[str]] | None = None,
) -> list[KeywordRow]:
    """The rows to decode for the graph's keywords and the user's (see the module docstring).

    ``pos_of`` gives the parts of speech a graph keyword may be inflected in (an empty answer:
    all of them; ``None``: all, for every keyword); the user's keywords keep every form.

    ``combine``: the user's rows first, then the graph's, ``n`` rows at most (the user's are never
    dropped). ``replace``: the user's rows only. ``require``: the first ``n`` graph rows, each also
    holding every user set (no graph keyword: one row of the user's sets). ``all``: one row holding
    every user set. Repeated keywords are decoded once.
    """
    if mode not in CONSTRAINT_MODES:
        raise GuidedGenerationError(f"constraint mode {mode!r} is not one of {', '.join(CONSTRAINT_MODES)}")
    user = list(dict.fromkeys(w.strip() for w in user_keywords))
    user_sets = [keyword_set(w, capitalized) for w in user]
    if mode in ("replace", "all") and not user:
        raise GuidedGenerationError(f"constraint mode {mode!r} needs at least one --constraint")
    if mode == "replace":
        return [KeywordRow(w, "user", [s]) for w, s in zip(user, user_sets)]
    if mode == "all":
        return [KeywordRow(" + ".join(user), "user", user_sets)]
    graph = [g for g in dict.fromkeys(graph_keywords) if g not in user]

    def graph_set(g: str) -> list[str]:
        return keyword_set(g, capitalized, pos_of(g) if pos_of is not None else None)

    if mode == "require":
        if not graph_keywords:
            return [KeywordRow(" + ".join(user), "user", user_sets)] if user else []
        return [KeywordRow(g, "graph", [graph_set(g), *user_sets])
                for g in list(dict.fromkeys(graph_keywords))[:n]]
    rows = [KeywordRow(w, "user", [s]) for w, s in zip(user, user_sets)]
    room = max(0, n - len(rows))
    rows += [KeywordRow(g, "graph", [graph_set(g)]) for g in graph[:room]]
    return rows
