"""Training data and training of the plausibility verifier: a cross-encoder that scores
``(input, direction, candidate)`` as a plausible cause or effect of the input.

This is CausalBERT's role in Li et al. 2020 (a judge of cause–effect plausibility), here as a
judge of generated text (:mod:`guided_generation.verifier` uses it). The model is a two-way
multiple-choice cross-encoder (:func:`train.cross_encoder.train_multiple_choice`): it reads
``(question, candidate)`` where the question is the input asking for its cause or its effect
(:func:`question`: ``"babies cry because"``, ``"it rained, so"``), and a softmax over the two
candidates of an item is trained towards the right one. Its one logit a pair is the score.

Every item is (question, right candidate, wrong candidate), from (never COPA):

* **e-CARE causal reasoning** (``causal_reasoning_train.jsonl``): the question's two
  hypotheses; the wrong one is a hard negative written by people;
* **e-CARE pairs** (``explanation_generation_train.jsonl``) in both directions, the wrong
  candidate another pair's answer (a cheap negative);
* **ConceptNet ``Causes`` edges** in both directions, the wrong candidate either another edge's
  answer or, asking for a cause, a *sibling*: another effect of the same cause (the swapped
  direction: it belongs to the topic, but it is an effect, not a cause).

A tenth of the e-CARE questions (a seeded shuffle, :func:`split_ecare`) is held back for the
verifier's own accuracy; pairs that share a sentence with a held-back question are left out of
training.

>>> question("The baby cried.", "cause")
'The baby cried because'
>>> question("it rained", "effect")
'it rained, so'
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from causal_mining.curated_pairs import read_conceptnet, read_ecare
from causal_mining.errors import BankFormatError
from causal_mining.pair import check_direction
from train.errors import TrainDataError

__all__ = ["VerifierItem", "conceptnet_items", "ecare_pair_items", "ecare_questions", "question",
           "split_ecare", "verifier_items"]


@dataclass(frozen=True)
class VerifierItem:
    """One training item: a question, its right candidate and a wrong one, and its source."""

    question: str
    right: str
    wrong: str
    source: str


def question(text: str, direction: str) -> str:
    """The verifier's first text: ``text`` asking for its cause (``"... because"``) or its
    effect (``"..., so"``), the final full stop dropped."""
    check_direction(direction, TrainDataError, "direction")
    text = " ".join(text.split()).rstrip(".")
    return f"{text} because" if direction == "cause" else f"{text}, so"


def _read(reader: Callable[[str | Path], Iterable[tuple[str, str]]],
          path: str | Path) -> list[tuple[str, str]]:
    """The pairs a :mod:`causal_mining.curated_pairs` reader gives, its errors as
    :class:`TrainDataError`."""
    try:
        return list(reader(path))
    except BankFormatError as err:
        raise TrainDataError(str(err)) from None


def ecare_questions(path: str | Path) -> list[VerifierItem]:
    """e-CARE causal-reasoning questions as items (the wrong hypothesis is the hard negative)."""
    items = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                hypotheses = (row["hypothesis1"], row["hypothesis2"])
                label = int(row["label"])
                items.append(VerifierItem(question(row["premise"], row["ask-for"]),
                                          hypotheses[label], hypotheses[1 - label], "ecare"))
            except (ValueError, KeyError, IndexError, TypeError) as err:
                raise TrainDataError(f"{path}:{number} is not an e-CARE question ({err})") from None
    return items


def split_ecare(items: Sequence[VerifierItem], seed: int = 0,
                held_share: float = 0.1) -> tuple[list[VerifierItem], list[VerifierItem]]:
    """(training, held-back) e-CARE questions: a seeded shuffle, the first tenth held back."""
    shuffled = list(items)
    random.Random(seed).shuffle(shuffled)
    cut = int(len(shuffled) * held_share)
    return shuffled[cut:], shuffled[:cut]


def ecare_pair_items(path: str | Path, rng: random.Random,
                     exclude: Collection[str] = ()) -> list[VerifierItem]:
    """e-CARE (cause, effect) pairs asked both ways; the wrong candidate another pair's answer.
    Pairs with a sentence in ``exclude`` (held-back questions' sentences) are left out."""
    exclude = set(exclude)
    pairs = [(c.strip(), e.strip()) for c, e in _read(read_ecare, path)]
    pairs = [(c, e) for c, e in pairs if c and e and c not in exclude and e not in exclude]
    items = []
    for cause, effect in pairs:
        other = pairs[rng.randrange(len(pairs))]
        if other[0] != cause:
            items.append(VerifierItem(question(effect, "cause"), cause, other[0], "ecare-pair"))
        other = pairs[rng.randrange(len(pairs))]
        if other[1] != effect:
            items.append(VerifierItem(question(cause, "effect"), effect, other[1], "ecare-pair"))
    return items


def conceptnet_items(path: str | Path, rng: random.Random) -> list[VerifierItem]:
    """ConceptNet ``Causes`` edges asked both ways: asking for an effect, the wrong candidate is
    another edge's effect; asking for a cause, it is a sibling (another effect of the same cause:
    the swapped direction) where the cause has one, else another edge's cause."""
    edges = [(c, e) for c, e in _read(read_conceptnet, path) if c and e]
    effects_of: dict[str, list[str]] = {}
    for cause, effect in edges:
        effects_of.setdefault(cause, []).append(effect)
    items = []
    for cause, effect in edges:
        other = edges[rng.randrange(len(edges))]
        if other[1] != effect:
            items.append(VerifierItem(question(cause, "effect"), effect, other[1], "conceptnet"))
        siblings = [e for e in effects_of[cause] if e != effect]
        wrong = rng.choice(siblings) if siblings else edges[rng.randrange(len(edges))][0]
        if wrong != cause:
            items.append(VerifierItem(question(effect, "cause"), cause, wrong, "conceptnet"))
    return items


def verifier_items(data: str | Path, *, seed: int = 0, pairs: int = 6000,
                   conceptnet: int = 6000) -> tuple[list[VerifierItem], list[VerifierItem]]:
    """(training items, held-back e-CARE questions) from the data folder (``ecare/`` and
    ``conceptnet/`` as in ``../shared/data``): every training e-CARE question, ``pairs``
    e-CARE pair items and ``conceptnet`` ConceptNet items drawn at random, shuffled."""
    data = Path(data)
    rng = random.Random(seed)
    train, held = split_ecare(ecare_questions(data / "ecare" / "causal_reasoning_train.jsonl"), seed)
    exclude = {s for item in held for s in (item.right, item.wrong)}
    exclude |= {item.question.rsplit(" because", 1)[0].rsplit(", so", 1)[0] + "." for item in held}
    extra = ecare_pair_items(data / "ecare" / "explanation_generation_train.jsonl", rng, exclude)
    concept = conceptnet_items(data / "conceptnet" / "conceptnet_cause_sets.txt", rng)
    items = train + rng.sample(extra, min(pairs, len(extra))) + rng.sample(concept, min(conceptnet, len(concept)))
    rng.shuffle(items)
    return items, held
