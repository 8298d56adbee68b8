"""A decoding batch: encoding the inputs, padding, compiling the automata, reporting the outputs.

Shared by beam search (:mod:`dpc_decode.generation`) and sampling (:mod:`dpc_decode.sampling`).
"""

from __future__ import annotations

import gc
import threading
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import torch
from transformers import PreTrainedModel

from dpc_decode.automaton import Automaton
from dpc_decode.constraints import InputConstraints, TokenizeOptions, prepare_constraints
from dpc_decode.errors import DpcError, UnsatisfiableConstraintsError
from dpc_decode.model_runner import model_vocab_size, resolve_special_ids
from dpc_decode.outputs import ConstraintMatch, GeneratedSequence
from dpc_decode.tensor_automaton import TensorAutomaton
from dpc_decode.word_boundary import WordPieces, word_pieces

__all__ = ["DecodeBatch", "chunks", "encode_inputs"]

Inputs = str | Sequence[str] | Sequence[Sequence[int]]


def encode_inputs(
    inputs: Inputs, tokenizer: Any, vocab_size: int, max_input_tokens: int | None = None
) -> list[list[int]]:
    """Token ids of every input (text is tokenised with the model's special tokens).

    >>> encode_inputs([[5, 6], [7]], None, vocab_size=10)
    [[5, 6], [7]]
    >>> encode_inputs([[5, 60]], None, vocab_size=10)
    Traceback (most recent call last):
    ...
    dpc_errors.DpcError: input 0 holds token id 60, outside the vocabulary (size 10)
    """
    if isinstance(inputs, str):
        inputs = [inputs]
    if not isinstance(inputs, Sequence):
        raise DpcError(f"`inputs` must be a list of texts or of token-id lists, got {inputs!r}")
    encoded: list[list[int]] = []
    for i, item in enumerate(inputs):
        if isinstance(item, str):
            if tokenizer is None:
                raise DpcError(f"input {i} ({item!r}) is text, but no tokenizer was given")
            ids = list(tokenizer(item, add_special_tokens=True)["input_ids"])
        elif isinstance(item, Sequence) and not isinstance(item, bytes):
            ids = list(item)
            for t in ids:
                if isinstance(t, bool) or not isinstance(t, int):
                    raise DpcError(f"input {i} holds {t!r}, which is not a token id (int)")
                if not 0 <= t < vocab_size:
                    raise DpcError(
                        f"input {i} holds token id {t}, outside the vocabulary (size {vocab_size})"
                    )
        else:
            raise DpcError(f"input {i} must be text or a list of token ids, got {item!r}")
        if max_input_tokens is not None and len(ids) > max_input_tokens:
            warnings.warn(
                f"input {i} has {len(ids)} tokens; truncated to max_input_tokens={max_input_tokens}",
                stacklevel=3,
            )
            ids = ids[:max_input_tokens]
        encoded.append(ids)
    return encoded


def chunks(n: int, size: int | None) -> Iterator[range]:
    """Consecutive ranges of at most ``size`` indices covering ``range(n)``."""
    if size is not None and (isinstance(size, bool) or not isinstance(size, int) or size < 1):
        raise DpcError(f"`batch_size` (={size!r}) must be a positive integer or None")
    step = n if size is None else size
    for start in range(0, n, max(step, 1)):
        yield range(start, min(n, start + step))


def resolve_options(options: Any, values: dict[str, Any], kind: type) -> Any:
    """``options`` as given, or ``kind(**values)``; both at once is an error."""
    if options is None:
        return kind(**values)
    if values:
        raise TypeError(
            f"give options either as `options` or as keywords, not both: {sorted(values)}"
        )
    return options


@contextmanager
def inference(model: PreTrainedModel) -> Iterator[None]:
    """Eval mode and no autograd for the duration; the model's training flag is restored."""
    was_training = model.training
    model.eval()
    try:
        with torch.inference_mode():
            yield
    finally:
        model.train(was_training)


_gc_lock = threading.Lock()
_gc_pauses = 0  # pauses in progress, in every thread
_gc_resume = False  # the first of them found the collector on


@contextmanager
def gc_paused() -> Iterator[None]:
    """Python's cyclic garbage collector paused for the duration (restored after, if it was on).

    Laying out a batch's automata and reporting its outputs make tens of thousands of small
    lists and tuples; every 700 of them trigger a young collection, and some of those walk the
    process's long-lived objects (torch and transformers alone keep ~400k alive): 20-47 ms of
    a 300-row decode on the CPU proxy, 1 ms with the pause (``benchmarks/engine_gc.py``). They
    are short and make few reference cycles; any they make are collected by the first
    collection after. Also a decorator.

    The collector is process-wide: pauses that overlap (nested, or decodes in several threads,
    as ``dpc serve`` runs them) are counted, and the collector comes back when the last of them
    ends, on only if it was on when the first began.

    >>> import gc
    >>> with gc_paused():
    ...     gc.isenabled()
    False
    >>> gc.isenabled()
    True
    """
    global _gc_pauses, _gc_resume
    with _gc_lock:
        if _gc_pauses == 0:
            _gc_resume = gc.isenabled()
            gc.disable()
        _gc_pauses += 1
    try:
        yield
    finally:
        with _gc_lock:
            _gc_pauses -= 1
            if _gc_pauses == 0 and _gc_resume:
                gc.enable()


@lru_cache(maxsize=4096)
def _automaton(
    sets: tuple[tuple[tuple[int, ...], ...], ...],
    banned: tuple[tuple[int, ...], ...],
    whole_word: tuple[tuple[bool, ...], ...] | None = None,
    pieces: WordPieces | None = None,
) -> Automaton:
    """One :class:`Automaton` per distinct (sets, banned, whole-word flags, word pieces), across
    calls too: compiled tensor tables are laid out once per distinct object
    (:meth:`TensorAutomaton.compile`). :class:`WordPieces` hash by identity: one per tokenizer."""
    return Automaton(sets, banned, whole_word, pieces)


@dataclass
class DecodeBatch:
    """Everything decoding needs for a list of inputs, before it is split into chunks."""

    model: PreTrainedModel
    tokenizer: Any
    input_ids: list[list[int]]
    constraints: list[InputConstraints]
    automata: list[Automaton]
    eos_ids: list[int]
    pad_id: int

    @classmethod
    @gc_paused()
    def prepare(
        cls,
        model: PreTrainedModel,
        tokenizer: Any,
        inputs: Inputs,
        constraints: Any,
        banned: Any,
        tokenize: TokenizeOptions | None,
        eos_token_id: Any,
        pad_token_id: int | None,
        max_input_tokens: int | None,
    ) -> DecodeBatch:
        vocab = model_vocab_size(model)
        ids = encode_inputs(inputs, tokenizer, vocab, max_input_tokens)
        eos, pad = resolve_special_ids(model, eos_token_id, pad_token_id)
        is_enc_dec = bool(getattr(model.config, "is_encoder_decoder", False))
        if not is_enc_dec:
            for i, row in enumerate(ids):
                if not row:
                    raise DpcError(
                        f"input {i} is empty: a decoder-only model needs at least one prompt token"
                    )
        prepared = prepare_constraints(constraints, banned, len(ids), tokenizer, vocab, tokenize)
        pieces = None
        if any(c.has_whole_word for c in prepared):
            # Whole-word text alternatives: which tokens continue a word, read from the
            # tokenizer once; the model's EOS always ends one (the text ends there).
            pieces = word_pieces(tokenizer, vocab).with_boundaries(eos)
        # Rows with the same constraints share one Automaton, built once (and compiled once).
        automata = [
            _automaton(c.sets, c.banned, c.whole_word, pieces) if c.has_whole_word
            else _automaton(c.sets, c.banned)
            for c in prepared
        ]
        return cls(model, tokenizer, ids, prepared, automata, eos, pad)

    @property
    def constrained(self) -> bool:
        return any(a.num_sets or a.banned for a in self.automata)

    def check_feasible(self, max_new_tokens: int) -> None:
        """Strict mode, before decoding: raise for a set that cannot be met at all (every
        alternative holds a banned phrase), whose shortest alternative is longer than the budget,
        or, where :meth:`Automaton.need` is exact, for sets that together need more tokens than
        the budget (overlapping alternatives counted). Beyond the exact budget only the lower
        bound of the single sets is checked: the plan's count can exceed the true minimum, and
        would refuse satisfiable sets; the check after decoding still applies."""
        for i, (a, c) in enumerate(zip(self.automata, self.constraints)):
            for s in range(a.num_sets):
                if s in a.impossible_sets:
                    raise UnsatisfiableConstraintsError(
                        f"constraint set {s} of input {i} ({list(c.user_sets[s])!r}) cannot be met: "
                        "every alternative contains a banned phrase",
                        input_index=i, set_index=s,
                    )
                if a.min_length[s] > max_new_tokens:
                    raise UnsatisfiableConstraintsError(
                        f"constraint set {s} of input {i} ({list(c.user_sets[s])!r}) needs at least "
                        f"{a.min_length[s]} tokens, more than max_new_tokens={max_new_tokens}",
                        input_index=i, set_index=s,
                    )
            if a.num_sets and a.need_is_exact and a.need(a.start()) > max_new_tokens:
                raise UnsatisfiableConstraintsError(
                    f"the constraints of input {i} need at least {a.need(a.start())} tokens "
                    f"together (the exact minimum, overlapping alternatives counted), more than "
                    f"max_new_tokens={max_new_tokens}",
                    input_index=i, set_index=0,
                )

    def tensors(self, rows: Sequence[int], device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
        """Padded ``input_ids`` and ``attention_mask`` (B, L): right-padded for encoder-decoder
        models, left-padded for decoder-only ones."""
        seqs = [self.input_ids[r] for r in rows]
        width = max(1, max(len(s) for s in seqs))
        left = not getattr(self.model.config, "is_encoder_decoder", False)
        pads = [[self.pad_id] * (width - len(s)) for s in seqs]
        holes = [[0] * (width - len(s)) for s in seqs]
        if left:
            ids = [p + s for p, s in zip(pads, seqs)]
            mask = [h + [1] * len(s) for h, s in zip(holes, seqs)]
        else:
            ids = [s + p for p, s in zip(pads, seqs)]
            mask = [[1] * len(s) + h for h, s in zip(holes, seqs)]
        # One tensor each, whatever the number of rows (on a GPU, one copy each).
        return (torch.tensor(ids, dtype=torch.long, device=device),
                torch.tensor(mask, dtype=torch.long, device=device))

    @gc_paused()
    def automaton(self, rows: Sequence[int], device: torch.device) -> TensorAutomaton | None:
        """The compiled automata of these rows, or ``None`` when none of them has a constraint."""
        chosen = [self.automata[r] for r in rows]
        if not any(a.num_sets or a.banned for a in chosen):
            return None
        return TensorAutomaton.compile(chosen, device, model_vocab_size(self.model))

    def output(
        self,
        row: int,
        tokens: list[int],
        log_prob: float,
        score: float,
        end_token_id: int | None,
    ) -> GeneratedSequence:
        """Build one reported output (``end_token_id``: the EOS that ended it, ``None`` when it
        did not finish); the reference automaton recomputes what was met, where."""
        finished = end_token_id is not None
        automaton, given = self.automata[row], self.constraints[row]
        state, first = automaton.scan(tokens)
        matches: list[ConstraintMatch | None] = []
        for s in range(automaton.num_sets):
            m = first.get(s)
            if m is None:
                matches.append(None)
                continue
            user = given.origin[s][m.alternative_index]
            matches.append(
                ConstraintMatch(
                    set_index=s,
                    alternative_index=user,
                    alternative=given.user_sets[s][user],
                    token_ids=given.sets[s][m.alternative_index],
                    start=m.start,
                    end=m.end,
                )
            )
        length = len(tokens) + (1 if finished else 0)
        text = None
        if self.tokenizer is not None:
            text = self.tokenizer.decode(tokens, skip_special_tokens=True)
        return GeneratedSequence(
            text=text,
            token_ids=tuple(tokens),
            log_prob=log_prob,
            score=score,
            nll=-log_prob / max(length, 1),
            satisfied=automaton.is_satisfied(state),
            matches=tuple(matches),
            finished=finished,
            end_token_id=end_token_id,
        )

    def raise_if_unsatisfied(self, row: int, best: GeneratedSequence | None) -> None:
        """Strict mode, after decoding: the best output of an input must satisfy its constraints."""
        if best is not None and best.satisfied:
            return
        given = self.constraints[row]
        unmet = best.unmet_sets if best is not None else tuple(range(len(given.sets)))
        if unmet:
            s = unmet[0]
            raise UnsatisfiableConstraintsError(
                f"no output of input {row} meets constraint set {s} ({list(given.user_sets[s])!r})",
                input_index=row, set_index=s,
            )
        raise UnsatisfiableConstraintsError(
            f"the best output of input {row} contains a banned phrase", input_index=row, set_index=-1
        )
