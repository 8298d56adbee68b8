"""COPA scorers backed by the trained generators (``--scorer generator``, ``generator-forward``,
``generator-pmi``).

The generator scores an alternative by how much the premise raises its likelihood, PMI-style::

    score = log P(alt | "{asks_for}: {premise}") - log P(alt | "{asks_for}: ")

The second term is the alternative's own prior under the same model (the premise left empty), so
short or frequent alternatives get no advantage. With ``mode="both"`` the reverse direction is
added: how much the alternative raises the likelihood of the premise, read as the cause/effect of
the alternative (the other direction of the same one-model generator).

COPA sentences are full sentences ("The man fell."), CausalBank arguments are clauses: the final
period is dropped and a sentence-initial capital lowered
(:func:`~tasks.copa.dataset.as_clause`) before scoring.

Every log-probability a set of items needs is computed up front in length-sorted batches by
:meth:`GeneratorScorer.prepare` (``dpc eval copa`` and :func:`~tasks.copa.scoring.accuracy` call
it), so a
COPA file costs a few dozen batched model passes instead of four single passes per alternative.

``dpc eval copa ../shared/data/copa/copa-dev.xml --scorer generator [--model PATH]``
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any, NamedTuple

from causal_mining.pair import opposite
from dpc_device import place, resolve_device
from tasks.copa.dataset import CopaItem, as_clause
from train.errors import TrainError
from train.metrics import sequence_log_probs
from train.models import default_model, resolve_generator
from train.prompts import CAUSAL_ZERO_SHOT, InputFormat, input_format_for

__all__ = ["MODES", "Evidence", "GeneratorScorer", "make_generator_scorer", "make_lm_scorer"]

MODES = ("pmi", "forward", "both")
#: How many of the four :class:`Evidence` log-probabilities each mode reads.
_NEEDED = {"forward": 1, "pmi": 2, "both": 4}


class Evidence(NamedTuple):
    """The four log-probabilities behind one alternative's score (natural log, summed over the
    target's tokens, EOS included)."""

    forward: float  #: log P(alt | "{asks_for}: {premise}")
    prior: float  #: log P(alt | "{asks_for}: ")
    reverse: float  #: log P(premise | "{other}: {alt}")
    reverse_prior: float  #: log P(premise | "{other}: ")

    @property
    def pmi(self) -> float:
        return self.forward - self.prior

    @property
    def reverse_pmi(self) -> float:
        return self.reverse - self.reverse_prior

    def score(self, mode: str) -> float:
        """The score of a scoring mode (:data:`MODES`); it reads only the first
        ``_NEEDED[mode]`` log-probabilities, so the others may be NaN."""
        if mode == "forward":
            return self.forward
        if mode == "pmi":
            return self.pmi
        return self.pmi + self.reverse_pmi


class GeneratorScorer:
    """PMI-style COPA scorer over a seq2seq generator (see the module docstring)."""

    def __init__(self, model: Any, tokenizer: Any, mode: str = "both",
                 batch_size: int = 64, input_format: InputFormat | None = None) -> None:
        if mode not in MODES:
            raise TrainError(f"generator scorer mode {mode!r} is not one of {', '.join(MODES)}")
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.input_format = input_format or input_format_for(model)
        self._end_id = self.input_format.end_id(tokenizer)
        self.mode = mode
        self.batch_size = batch_size
        self._known: dict[tuple[str, str], float] = {}

    def _requests(self, premise: str, asks_for: str, alternative: str) -> tuple[tuple[str, str], ...]:
        """(source, target) of forward, prior, reverse and reverse prior (:class:`Evidence`'s
        order), the sources in the model's input format."""
        p, a, other = as_clause(premise), as_clause(alternative), opposite(asks_for)
        ask = self.input_format.prompt
        return ((ask(p, asks_for), a), (ask("", asks_for), a), (ask(a, other), p),
                (ask("", other), p))

    def prepare(self, items: Iterable[CopaItem], *, all_evidence: bool = False) -> None:
        """Compute every log-probability ``items`` need, batched (sorted by length, so batches
        carry little padding); later :meth:`score` calls only look them up. ``all_evidence``
        computes all four of :class:`Evidence` whatever the mode (for :meth:`evidence`)."""
        needed = 4 if all_evidence else _NEEDED[self.mode]
        todo = {r for it in items for alt in it.alternatives
                for r in self._requests(it.premise, it.asks_for, alt)[:needed]}
        todo -= self._known.keys()
        keys = sorted(todo, key=lambda k: (len(k[0]) + len(k[1]), k))
        values = sequence_log_probs(self.model, self.tokenizer, [s for s, _ in keys],
                                    [t for _, t in keys], batch_size=self.batch_size,
                                    end_id=self._end_id)
        self._known.update(zip(keys, values))

    def _log_prob(self, source: str, target: str) -> float:
        if (source, target) not in self._known:
            self._known[source, target] = sequence_log_probs(
                self.model, self.tokenizer, [source], [target], end_id=self._end_id)[0]
        return self._known[source, target]

    def evidence(self, premise: str, asks_for: str, alternative: str) -> Evidence:
        """The four log-probabilities behind :meth:`score` (all modes read them)."""
        return Evidence(*(self._log_prob(s, t) for s, t in
                          self._requests(premise, asks_for, alternative)))

    def score(self, premise: str, asks_for: str, alternative: str) -> float:
        needed = _NEEDED[self.mode]
        lp = [self._log_prob(s, t) for s, t in
              self._requests(premise, asks_for, alternative)[:needed]]
        return Evidence(*lp, *[math.nan] * (4 - needed)).score(self.mode)


def make_generator_scorer(model: str | None = None, mode: str = "both", batch_size: int = 64,
                          device: str | None = None, dtype: str | None = None,
                          **_: Any) -> GeneratorScorer:
    """Factory for ``--scorer generator``: the bundled default model unless ``model`` is given,
    on ``device`` with its weights in ``dtype`` (:func:`dpc_device.place`; ``None``: the CPU,
    float32)."""
    placed = resolve_device(device) if device is not None else None  # before the model is read
    loaded = resolve_generator(model) if model else default_model()
    return GeneratorScorer(place(loaded.model, placed, dtype), loaded.tokenizer, mode, batch_size)



def make_lm_scorer(model: str | None = None, mode: str = "forward", batch_size: int = 32,
                   device: str | None = None, dtype: str | None = None,
                   **_: Any) -> GeneratorScorer:
    """Factory for ``--scorer lm``: a causal LM (default: the pretrained default generator,
    :data:`train.models.DEFAULT_GENERATOR`) asked zero-shot, ``log P(alternative | premise +
    " because")`` or ``", so"`` (:data:`train.prompts.CAUSAL_ZERO_SHOT`), on ``device`` in
    ``dtype``. A seq2seq ``model`` keeps its own input format."""
    placed = resolve_device(device) if device is not None else None  # before the model is read
    loaded = resolve_generator(model)
    fmt = None if getattr(loaded.model.config, "is_encoder_decoder", False) else CAUSAL_ZERO_SHOT
    return GeneratorScorer(place(loaded.model, placed, dtype), loaded.tokenizer, mode, batch_size,
                           input_format=fmt)
