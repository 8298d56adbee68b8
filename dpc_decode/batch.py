"""A decoding batch: encoding the inputs, padding, compiling the automata, reporting the outputs.

Shared by beam search (:mod:`dpc_decode.generation`) and sampling (:mod:`dpc_decode.sampling`).
"""

from __future__ import annotations

import gc
import re
import threading
import warnings
import weakref
from collections.abc import Callable, Iterator, Sequence
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
from dpc_errors import check_int

__all__ = ["DecodeBatch", "chunks", "cut_to_tokens", "encode_inputs", "input_token_limit",
           "position_limit"]

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
            ids = _truncate(item, ids, tokenizer, max_input_tokens)
        encoded.append(ids)
    return encoded


def _truncate(item: Any, ids: list[int], tokenizer: Any, most: int) -> list[int]:
    """The first ``most`` tokens of an input; text keeps its special tokens (the tokenizer cuts
    it, as transformers' ``truncation=True`` does), token ids are sliced as given."""
    specials = getattr(tokenizer, "num_special_tokens_to_add", None)
    if isinstance(item, str) and callable(specials) and most > specials():
        cut = tokenizer(item, add_special_tokens=True, truncation=True, max_length=most)
        return list(cut["input_ids"])
    return ids[:most]


#: :func:`position_limit` of the models seen (a model's position table does not change).
_POSITION_LIMITS: weakref.WeakKeyDictionary[Any, int | None] = weakref.WeakKeyDictionary()
#: Names of learned (absolute) position tables: BERT, GPT-2, BART/OPT/Marian, ...
_POSITION_TABLE = re.compile(r"(^|\.)(wpe|position_embeddings?|embed_positions)$")


def position_limit(module: torch.nn.Module) -> int | None:
    """How many positions the learned (absolute) position table of ``module`` holds: the most
    tokens it can read at once; ``None`` when it has no such table (relative or rotary
    positions: T5, Llama, SmolLM2, ...), whose length is bounded only by memory.

    The config's ``n_positions`` / ``max_position_embeddings`` when it declares one (BART's
    table holds two more rows than it uses), never more than the table; a table whose
    ``padding_idx`` is set numbers positions after it (RoBERTa: 514 rows, 512 positions).

    >>> from transformers import GPT2Config, GPT2LMHeadModel, T5Config, T5ForConditionalGeneration
    >>> position_limit(GPT2LMHeadModel(GPT2Config(n_positions=32, n_embd=8, n_layer=1, n_head=2)))
    32
    >>> print(position_limit(T5ForConditionalGeneration(T5Config(d_model=8, d_ff=8, d_kv=4,
    ...     num_heads=2, num_layers=1))))
    None
    """
    try:
        return _POSITION_LIMITS[module]  # a walk over every submodule: once per model
    except (KeyError, TypeError):
        pass
    rows = [m.num_embeddings - (0 if m.padding_idx is None else m.padding_idx + 1)
            for name, m in module.named_modules()
            if isinstance(m, torch.nn.Embedding) and _POSITION_TABLE.search(name)]
    limit = min(rows) if rows else None
    config = getattr(module, "config", None)
    for key in ("n_positions", "max_position_embeddings"):
        declared = getattr(config, key, None)
        if rows and isinstance(declared, int) and not isinstance(declared, bool) and declared > 0:
            limit = min(declared, *rows)
            break
    try:
        _POSITION_LIMITS[module] = limit
    except TypeError:  # not weakly referable
        pass
    return limit


def _stacks(model: Any) -> tuple[Any, Any]:
    """The encoder and decoder of a seq2seq model (``(None, model)`` for a decoder-only one)."""
    if not getattr(model.config, "is_encoder_decoder", False):
        return None, model
    encoder = model.get_encoder() if hasattr(model, "get_encoder") else model
    decoder = model.get_decoder() if hasattr(model, "get_decoder") else model
    return encoder, decoder


def input_token_limit(model: Any, max_new_tokens: int) -> int | None:
    """The most input tokens (special tokens included) ``model`` can read while still writing
    ``max_new_tokens``: its encoder's :func:`position_limit` for a seq2seq model, the
    decoder-only model's less ``max_new_tokens`` (the prompt and the output share the
    positions); ``None`` when the model has no absolute position table.

    >>> from transformers import GPT2Config, GPT2LMHeadModel
    >>> input_token_limit(GPT2LMHeadModel(GPT2Config(n_positions=32, n_embd=8, n_layer=1,
    ...     n_head=2)), max_new_tokens=10)
    22
    """
    encoder, decoder = _stacks(model)
    if encoder is not None:
        return position_limit(encoder)
    limit = position_limit(decoder)
    return None if limit is None else limit - max_new_tokens


def cut_to_tokens(tokenizer: Any, text: str, max_tokens: int) -> str:
    """The longest start of ``text`` that the tokenizer reads as at most ``max_tokens`` tokens
    (special tokens not counted): cut after a whole word when that keeps at least half of the
    budget, else inside the word (a long word, a run of CJK text with no space), so any text
    can be cut. The result is a prefix of ``text`` (valid text, characters the tokenizer does
    not know included), with no space at its end.

    >>> from train.models import placeholder_model
    >>> tokenizer = placeholder_model().tokenizer
    >>> cut_to_tokens(tokenizer, "babies cry at night", 2)
    'babies cry'
    >>> cut_to_tokens(tokenizer, "猫" * 1000, 3)
    '猫猫猫'
    >>> cut_to_tokens(tokenizer, "babies cry", 10)
    'babies cry'
    """
    if max_tokens < 1:
        return ""

    def count(piece: str) -> int:
        return len(tokenizer(piece, add_special_tokens=False)["input_ids"])

    if count(text) <= max_tokens:
        return text.rstrip()
    end = _prefix_end(tokenizer, text, max_tokens, count)
    space = text.rfind(" ", 0, end + 1)
    if space > 0 and count(text[:space]) * 2 >= max_tokens:
        return text[:space].rstrip()  # whole words, and at least half of the budget
    return text[:end].rstrip()


def _prefix_end(tokenizer: Any, text: str, most: int, count: Callable[[str], int]) -> int:
    """How many characters of ``text`` make the longest prefix of at most ``most`` tokens: where
    the first token left out begins (the tokenizer's offsets), or a binary search over the
    characters for a tokenizer without offsets."""
    try:
        offsets = tokenizer(text, add_special_tokens=False,
                            return_offsets_mapping=True)["offset_mapping"]
    except (NotImplementedError, TypeError, ValueError, KeyError):
        offsets = None
    if offsets is not None and len(offsets) > most:
        for keep in range(most, 0, -1):  # a token that merges across the cut can add one
            end = int(offsets[keep][0])
            if count(text[:end]) <= most:
                return end
        return 0
    lo, hi = 0, len(text)  # the most characters within the budget
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if count(text[:mid]) <= most:
            lo = mid
        else:
            hi = mid - 1
    return lo


def chunks(n: int, size: int | None) -> Iterator[range]:
    """Consecutive ranges of at most ``size`` indices covering ``range(n)``."""
    if size is not None:
        check_int("batch_size", size, 1)
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
    process's long-lived objects (torch and transformers alone keep ~400k alive), a share of a
    decode's time that the pause removes (``python benchmarks/engine_gc.py`` measures it). They
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
        for name, given in (("eos_token_id", eos_token_id), ("pad_token_id", pad_token_id)):
            if given is not None and not isinstance(given, str):  # str: "model" (its own ids)
                for token in given if isinstance(given, (list, tuple)) else [given]:
                    check_int(name, token, 0, vocab - 1)  # an id the model can score or embed
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

    def check_positions(self, max_new_tokens: int) -> None:
        """Raise :class:`DpcError` naming the input, its token count and the limit when the
        model's absolute position table (:func:`position_limit`) cannot hold it: an input
        longer than a seq2seq model's encoder reads, a decoder-only prompt that leaves no room
        for ``max_new_tokens``, or more new tokens than a seq2seq decoder holds. (Models with
        relative or rotary positions have no such limit.)"""
        encoder, decoder = _stacks(self.model)
        if encoder is not None:
            limit = position_limit(encoder)
            for i, ids in enumerate(self.input_ids):
                if limit is not None and len(ids) > limit:
                    raise DpcError(
                        f"input {i} has {len(ids)} tokens, more than the {limit} the model's "
                        f"encoder can read: shorten it, or pass max_input_tokens (at most {limit})"
                    )
            out = position_limit(decoder)
            if out is not None and max_new_tokens + 1 > out:
                raise DpcError(
                    f"max_new_tokens (={max_new_tokens}) is more than the {out - 1} new tokens "
                    f"the model's decoder can write ({out} positions)"
                )
            return
        limit = position_limit(decoder)
        if limit is None:
            return
        for i, ids in enumerate(self.input_ids):
            if len(ids) + max_new_tokens > limit:
                room = limit - max_new_tokens
                raise DpcError(
                    f"input {i} has {len(ids)} tokens and max_new_tokens={max_new_tokens}: "
                    f"{len(ids) + max_new_tokens} positions, more than the model's {limit}; "
                    + (f"shorten it, or pass max_input_tokens (at most {room})" if room > 0
                       else f"max_new_tokens must be below {limit}")
                )

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
