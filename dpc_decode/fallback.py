"""What the engine returns for an input whose search came back with fewer outputs than asked.

A hypothesis is cut off when the step's masks leave it no allowed token. Under constraints that
happens when the feasibility rule forces a hypothesis into an alternative that can never be
finished: an alternative holding an EOS id (EOS is masked until every set is met), one that
``no_repeat_ngram_size`` forbids, one whose next token completes a banned phrase in context (only
for constraints beyond :data:`~dpc_decode.automaton.EXACT_NEED_BUDGET`: the exact need steers
around bans), or a forced EOS (``forced_eos_token_id``) before the sets are met. When every hypothesis of an
input is cut off, its finished pool is empty.

Such inputs are decoded again, with the rules relaxed one level at a time, until they have as
many outputs as asked (:data:`RELAXATIONS`):

1. **feasibility off** - the search no longer forces the sets into the budget; every rule the
   caller gave still holds (sets steer the search and hold back EOS, bans, no-repeat n-grams,
   minimum length, transformers score settings);
2. **sets off** - the constraint sets are dropped; bans, no-repeat n-grams, minimum length and
   score settings still hold;
3. **model alone** - nothing but the model's log-probabilities.

The outputs keep the report of the real constraints: :class:`~dpc_decode.batch.DecodeBatch`
checks ``satisfied`` and ``matches`` against the caller's sets and bans whatever level found
them, so an output that does not meet them says ``satisfied=False``. Outputs already found stay
first; new ones fill the remaining places, satisfied ones before unsatisfied ones.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

import torch

from dpc_decode.automaton import Automaton
from dpc_decode.batch import DecodeBatch
from dpc_decode.options import DecodeOptions
from dpc_decode.outputs import GeneratedSequence
from dpc_decode.tensor_automaton import TensorAutomaton

__all__ = ["RELAXATIONS", "Relaxation", "fill"]

Options = TypeVar("Options", bound=DecodeOptions)


@dataclass(frozen=True)
class Relaxation:
    """One fallback level.

    Attributes
    ----------
    name : str
    sets : bool
        Keep the constraint sets (they steer the search and hold back EOS).
    rules : bool
        Keep banned phrases, no-repeat n-grams, ``min_new_tokens`` and the transformers score
        settings (:mod:`dpc_decode.processors`).
    """

    name: str
    sets: bool
    rules: bool

    def changes(self, options: DecodeOptions) -> bool:
        """Whether this level decodes differently from ``options`` (feasibility already off
        makes the first level a repeat)."""
        return not self.sets or options.feasible

    def options(self, options: Options) -> Options:
        """``options`` with feasibility off (and, without ``rules``, no n-gram or length rule)."""
        if self.rules:
            return dataclasses.replace(options, feasible=False)
        return dataclasses.replace(options, feasible=False, no_repeat_ngram_size=0,
                                   min_new_tokens=0)

    def automaton(self, batch: DecodeBatch, rows: Sequence[int],
                  device: torch.device) -> TensorAutomaton | None:
        """The compiled automata the search of ``rows`` runs with at this level."""
        if self.sets:
            return batch.automaton(rows, device)
        if not self.rules:
            return None
        return _banned_only(batch).automaton(rows, device)


#: The fallback levels, mildest first.
RELAXATIONS = (
    Relaxation("feasibility off", sets=True, rules=True),
    Relaxation("sets off", sets=False, rules=True),
    Relaxation("model alone", sets=False, rules=False),
)


def _banned_only(batch: DecodeBatch) -> DecodeBatch:
    """``batch`` with every automaton reduced to its banned phrases (shared ones stay shared)."""
    built: dict[int, Automaton] = {}
    automata = []
    for c in batch.constraints:
        if id(c) not in built:
            built[id(c)] = Automaton((), c.banned)
        automata.append(built[id(c)])
    return dataclasses.replace(batch, automata=automata)


def fill(found: list[GeneratedSequence], extra: list[GeneratedSequence],
         want: int) -> list[GeneratedSequence]:
    """``found``, then outputs of ``extra`` not already there, up to ``want`` in all; satisfied
    outputs first (the order is otherwise kept).

    >>> def out(ids, ok):
    ...     return GeneratedSequence(None, ids, -1.0, -1.0, 1.0, ok, (), True)
    >>> [o.token_ids for o in fill([out((5,), False)], [out((5,), False), out((6,), True)], 3)]
    [(6,), (5,)]
    """
    seen = {(o.token_ids, o.finished) for o in found}
    merged = list(found)
    for o in extra:
        if len(merged) >= want:
            break
        if (o.token_ids, o.finished) not in seen:
            seen.add((o.token_ids, o.finished))
            merged.append(o)
    merged.sort(key=lambda o: not o.satisfied)
    return merged
