"""COPA scorers backed by the trained generators (registered as ``generator``).

The generator scores an alternative by how much the premise raises its likelihood, PMI-style::

    score = log P(alt | "{asks_for}: {premise}") - log P(alt | "{asks_for}: ")

The second term is the alternative's own prior under the same model (the premise left empty), so
short or frequent alternatives get no advantage. With ``mode="both"`` the reverse direction is
added: how much the alternative raises the likelihood of the premise, read as the cause/effect of
the alternative (the other direction of the same one-model generator).

COPA sentences are full sentences ("The man fell."), CausalBank arguments are clauses: the final
period is dropped and a sentence-initial capital lowered (:func:`as_clause`) before scoring.

``dpc eval copa ../shared/data/copa/copa-dev.xml --scorer generator [--model PATH]``
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from tasks.copa import register_scorer
from train.data import format_input
from train.errors import TrainError

__all__ = ["GeneratorScorer", "as_clause", "make_generator_scorer"]

MODES = ("pmi", "forward", "both")
_OTHER = {"cause": "effect", "effect": "cause"}


def as_clause(sentence: str) -> str:
    """A COPA sentence as a CausalBank-style clause.

    >>> as_clause("The man fell.")
    'the man fell'
    >>> as_clause("I knocked on the door.")
    'I knocked on the door'
    """
    text = " ".join(sentence.split()).rstrip(".!?")
    if len(text) > 1 and text[0].isupper() and text[1].islower():
        text = text[0].lower() + text[1:]
    return text


class GeneratorScorer:
    """PMI-style COPA scorer over a seq2seq generator (see the module docstring)."""

    def __init__(self, model: Any, tokenizer: Any, mode: str = "both") -> None:
        if mode not in MODES:
            raise TrainError(f"generator scorer mode {mode!r} is not one of {', '.join(MODES)}")
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.mode = mode
        self._log_prob = lru_cache(maxsize=100_000)(self._log_prob_uncached)

    def _log_prob_uncached(self, source: str, target: str) -> float:
        from train.metrics import sequence_log_probs

        return sequence_log_probs(self.model, self.tokenizer, [source], [target])[0]

    def _pmi(self, context: str, direction: str, target: str) -> float:
        cond = self._log_prob(format_input(context, direction), target)
        if self.mode == "forward":
            return cond
        return cond - self._log_prob(format_input("", direction), target)

    def score(self, premise: str, asks_for: str, alternative: str) -> float:
        p, a = as_clause(premise), as_clause(alternative)
        total = self._pmi(p, asks_for, a)
        if self.mode == "both":
            total += self._pmi(a, _OTHER[asks_for], p)
        return total


def make_generator_scorer(model: str | None = None, mode: str = "both", **_: Any) -> GeneratorScorer:
    """Factory for ``--scorer generator``: the bundled default model unless ``model`` is given."""
    from train.models import default_model, load_generator

    loaded = load_generator(model) if model else default_model()
    return GeneratorScorer(loaded.model, loaded.tokenizer, mode)


register_scorer("generator", make_generator_scorer)
register_scorer("generator-forward", lambda **o: make_generator_scorer(mode="forward", **o))
register_scorer("generator-pmi", lambda **o: make_generator_scorer(mode="pmi", **o))
