"""Constrained beam search with dynamic beam allocation, vectorised over inputs × beams.

One step, as short named stages (every tensor carries its shape in a comment):

1. :func:`~dpc_decode.masks.apply_step_masks` - banned phrases, feasibility, EOS until every set
   is met, no-repeat n-grams (no operation at all where none can forbid anything).
2. :func:`_candidates` - the ``2 * num_beams`` best continuations of each input over all its beams
   (as transformers does), plus each hypothesis's best token, plus the letters of each beam whose
   transition leaves the root (:meth:`_ConstraintSearch.letters`).
3. :meth:`_ConstraintSearch.states` - automaton state and progress bank of every candidate; a
   letter that advances no unmet set is dropped. :func:`_drop_repeats` drops duplicates.
4. :func:`~dpc_decode.beam.allocate` - order the candidates by dynamic beam allocation (the
   first few, which are all a step reads).
5. :func:`_Pool.add` - candidates among the first ``num_beams`` that end (EOS, or the last step)
   join the finished pool, ranked by (sets met, length-normalised score); under constraints
   every beam's EOS continuation is offered too (:func:`_add_other_endings`).
6. :func:`_reorder` and :meth:`_ConstraintSearch.reorder` - the first ``num_beams`` non-ending
   candidates become the new beams; tokens, cache and automaton state move with one index.

Without constraints every candidate is in one bank, the order is by score, and the search makes
the same choices as transformers' beam search (tests check that token for token). There is one
host sync per step, to stop early when every input is done.

``search="neurologic"`` (:attr:`~dpc_decode.options.BeamSearchOptions.search`) replaces stages
2, 4 and 5: :func:`_neurologic_candidates` (each beam's own top tokens too, constraint tokens
pruned by ``prune_factor``), :func:`_score_neurologic` (``sat_tolerance``, then
:func:`~dpc_decode.beam.neurologic_allocate`: groups by which sets are met; with ``lookahead``,
:class:`~dpc_decode.lookahead.Lookahead` orders the head again) and :func:`_end_model_choices`
(real endings: only an EOS among the model's own candidates ends a hypothesis; no ending is
offered). The lookahead adds a few host syncs a step, and its first model step is the next
step's (:meth:`~dpc_decode.lookahead.Lookahead.adopt`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import torch

from dpc_decode.beam import (
    Allocation,
    allocate,
    group_keys,
    lexsort,
    neurologic_allocate,
    within_tolerance,
)
from dpc_decode.lookahead import Candidates, FirstStep, Lookahead
from dpc_decode.masks import apply_step_masks, is_eos_token, needs_state
from dpc_decode.model_runner import ModelRunner
from dpc_decode.options import BeamSearchOptions
from dpc_decode.processors import apply_processors
from dpc_decode.tensor_automaton import TensorAutomaton, rows_at

__all__ = ["SearchResult", "beam_search"]

NEG_INF = float("-inf")

#: The automaton state of candidates: node (B, C), met (B, C, S), base (B, C), ended (B, C).
_States = tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]


@dataclass(frozen=True)
class SearchResult:
    """Raw outputs of a batch, best first per input. R = outputs per input, T = max_new_tokens."""

    tokens: torch.Tensor  # (B, R, T) generated ids; EOS kept at lengths-1 when finished; pad after
    lengths: torch.Tensor  # (B, R) tokens generated, the EOS included
    log_probs: torch.Tensor  # (B, R) total log-probability
    scores: torch.Tensor  # (B, R) ranking score
    finished: torch.Tensor  # (B, R) ended with EOS
    valid: torch.Tensor  # (B, R) a real output (False only when an input ran out of hypotheses)


@dataclass
class _Pool:
    """Finished hypotheses of each input, best first: (sets met desc, score desc)."""

    tokens: torch.Tensor  # (B, K, T)
    lengths: torch.Tensor  # (B, K)
    log_probs: torch.Tensor  # (B, K)
    scores: torch.Tensor  # (B, K) length-normalised; -inf for empty slots
    met: torch.Tensor  # (B, K) number of sets met; -1 for empty slots
    finished: torch.Tensor  # (B, K)

    @classmethod
    def empty(cls, batch: int, beams: int, steps: int, pad: int, device: torch.device) -> _Pool:
        return cls(
            tokens=torch.full((batch, beams, steps), pad, dtype=torch.long, device=device),
            lengths=torch.zeros((batch, beams), dtype=torch.long, device=device),
            log_probs=torch.full((batch, beams), NEG_INF, device=device),
            scores=torch.full((batch, beams), NEG_INF, device=device),
            met=torch.full((batch, beams), -1, dtype=torch.long, device=device),
            finished=torch.zeros((batch, beams), dtype=torch.bool, device=device),
        )

    def add(
        self,
        tokens: torch.Tensor,  # (B, N, T)
        length: int,
        log_probs: torch.Tensor,  # (B, N)
        met: torch.Tensor,  # (B, N)
        finished: torch.Tensor,  # (B, N)
        take: torch.Tensor,  # (B, N) which of them join
        length_penalty: float,
    ) -> None:
        beams = self.scores.shape[1]
        scores = torch.where(take, log_probs / (length**length_penalty), NEG_INF)
        met = torch.where(take, met, torch.full_like(met, -1))
        all_scores = torch.cat([self.scores, scores], dim=1)  # (B, K + N)
        all_met = torch.cat([self.met, met], dim=1)
        keep = lexsort(-all_met, -all_scores)[:, :beams]  # (B, K)
        lengths = torch.full_like(met, length)
        self.tokens = torch.cat([self.tokens, tokens], 1).gather(
            1, keep.unsqueeze(-1).expand(-1, -1, self.tokens.shape[2])
        )
        self.lengths = torch.cat([self.lengths, lengths], 1).gather(1, keep)
        self.log_probs = torch.cat([self.log_probs, log_probs], 1).gather(1, keep)
        self.scores = all_scores.gather(1, keep)
        self.met = all_met.gather(1, keep)
        self.finished = torch.cat([self.finished, finished], 1).gather(1, keep)


def _candidates(
    log_probs: torch.Tensor,  # (H, V) masked
    beam_scores: torch.Tensor,  # (B, K)
    letters: _Letters | None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Returns parent beam (B, C), token (B, C), total score (B, C).

    The first ``3 * beams`` columns are the top-k and best candidates, the rest (under
    constraints) the letters of every beam that leave the root, in alphabet order (see
    :meth:`_ConstraintSearch.letters`). The letters' scores are not yet
    restricted to those that advance an unmet set (:meth:`_ConstraintSearch.states` does that),
    nor are duplicates removed (:func:`_drop_repeats`)."""
    batch, beams = beam_scores.shape
    vocab = log_probs.shape[1]
    device = log_probs.device
    # The input's global top-2K lies within the union of its beams' own top-2K (an entry beaten
    # by 2K entries of its own beam cannot be in the global top-2K), so one pass over the
    # vocabulary gives both the global top-2K and each beam's best; adding a beam's score keeps
    # its order, so it is added to the 2K survivors only.
    width = min(2 * beams, vocab)
    flat_scores = beam_scores.reshape(-1, 1)  # (H, 1)
    row_scores, row_tokens = log_probs.topk(width, dim=1)  # (H, 2K)
    row_scores = row_scores + flat_scores
    top_scores, top_index = row_scores.view(batch, beams * width).topk(2 * beams, dim=1)  # (B, 2K)
    beam_ids = torch.arange(beams, device=device).expand(batch, beams)
    parents = [top_index // width, beam_ids]
    tokens = [row_tokens.view(batch, beams * width).gather(1, top_index), row_tokens[:, 0].view(batch, beams)]
    scores = [top_scores, row_scores[:, 0].view(batch, beams)]
    if letters is not None:
        parents.append(letters.parents)
        tokens.append(letters.tokens)
        scores.append((log_probs.gather(1, letters.hyp_tokens) + flat_scores).view(batch, -1))
    return torch.cat(parents, dim=1), torch.cat(tokens, dim=1), torch.cat(scores, dim=1)


def _drop_repeats(parent: torch.Tensor, token: torch.Tensor, score: torch.Tensor, vocab: int) -> torch.Tensor:
    """The same (beam, token) may come from several sources: keep its first occurrence, score the
    others -inf. All (B, C)."""
    key = parent * vocab + token
    order = torch.argsort(key, dim=1, stable=True)
    sorted_key = key.gather(1, order)
    repeat_sorted = torch.zeros_like(sorted_key, dtype=torch.bool)
    repeat_sorted[:, 1:] = sorted_key[:, 1:] == sorted_key[:, :-1]
    repeat = torch.zeros_like(repeat_sorted).scatter_(1, order, repeat_sorted)
    return score.masked_fill(repeat, NEG_INF)


@dataclass(frozen=True)
class _Letters:
    """The letters offered for every beam this step, the tail of the candidate list."""

    hyp_tokens: torch.Tensor  # (H, M) token ids
    tokens: torch.Tensor  # (B, K * M)
    parents: torch.Tensor  # (B, K * M) beam of each letter within its input


class _ConstraintSearch:
    """The automaton state of every beam, kept as (B, K) and (B, K, S) so that a candidate's
    parent state is one indexed read, and the per-step work added to plain beam search stays a
    few tensor operations (each a kernel launch on a GPU) whatever the number of sets. Up to 62
    sets (``packed``), the sets met are one int64 of bits per beam, (B, K), and a candidate's
    count of them and its bank are lookups of (B, C) integers, not reductions of (B, C, S)
    booleans (:func:`~dpc_decode.tensor_automaton._packed_tables`).

    ``base`` is ``sets met × (max_depth + 1)``: the bank of a state with no partial match.
    ``ended`` is the same count were the hypothesis to end now, which ranks it in the finished
    pool: with whole-word alternatives it adds the pending sets (EOS and the end of the output
    confirm them); otherwise it is ``base``.

    Whole-word alternatives and the banks: a pending set is not met (``met``, the EOS mask, the
    report), but the bank counts it as met, as the end of the output would: the hypothesis
    keeps its place among those that have met the set, and the next token confirms it there or,
    a word piece, cancels it and drops it back a bank. Counting a pending set as partial
    progress instead (a bank of its own below the met ones) spreads the beam over twice as many
    banks, and on the whole-word row (e) of ``python benchmarks/engine_speed.py`` returns worse
    outputs than the search without the rule finds; counted as met, it returns that search's
    outputs (all whole words).
    """

    def __init__(self, automaton: TensorAutomaton, batch: int, beams: int, device: torch.device,
                 fixed: int | None = None) -> None:
        self.automaton = automaton
        self.batch, self.beams = batch, beams
        self.scale = automaton.max_depth + 1
        inputs = torch.arange(batch, device=device)
        self.rows = inputs.repeat_interleave(beams)  # (H,)
        self.input_col = inputs.unsqueeze(1)  # (B, 1)
        self.first_beam = self.input_col * beams  # (B, 1): flat row of each input's first beam
        self.input_block = automaton.block[self.input_col]  # (B, 1)
        node, met = automaton.initial_state(self.rows)
        self.node = node.view(batch, beams)  # (B, K)
        self.packed = automaton.set_bits is not None
        self.met = (automaton.pack(met).view(batch, beams) if self.packed  # (B, K) bits
                    else met.view(batch, beams, -1))  # (B, K, S)
        self.base = self._count(self.met) * self.scale  # (B, K)
        self.ended = self.base  # (B, K): no set is pending before the first token
        width = automaton.leaving.shape[1]  # M: letters offered per beam
        self.row_tables = automaton.for_rows(self.rows)
        self.letter_parents = torch.arange(beams, device=device).repeat_interleave(width).expand(
            batch, -1)  # (B, K * M)
        # The leading candidates (the model's own: 3K under DBA, see _candidates; 2K + K*K under
        # NeuroLogic, see _neurologic_candidates) are kept whether they advance or not.
        fixed = 3 * beams if fixed is None else fixed
        self.head = torch.zeros((batch, fixed + beams * width), dtype=torch.bool, device=device)
        self.head[:, :fixed] = True  # (B, C)

    def letters(self) -> _Letters:
        """The letters of each beam whose transition leaves the root: a letter that leads back to
        it meets no set and starts no match, so it could never advance one; the others are
        offered (and kept where they do advance, see :meth:`states`)."""
        tokens = rows_at(self.automaton.leaving, self.node)  # (B, K, M)
        return _Letters(tokens.view(self.batch * self.beams, -1),
                        tokens.view(self.batch, -1), self.letter_parents)

    def _count(self, met: torch.Tensor) -> torch.Tensor:
        """The sets met: of packed bits (...,) or of booleans (..., S)."""
        return self.automaton.count_packed(met) if self.packed else met.sum(-1)

    def flat(self) -> tuple[torch.Tensor, torch.Tensor]:
        """node (H,) and met (H, S), for the masks."""
        met = self.met.view(-1) if self.packed else self.met.view(self.batch * self.beams, -1)
        return self.node.view(-1), self.automaton.unpack(met) if self.packed else met

    def mask_state(self, eos: torch.Tensor, step: int, options: BeamSearchOptions
                   ) -> tuple[torch.Tensor, torch.Tensor] | tuple[None, None]:
        """:meth:`flat` when the step's masks read the state (:func:`needs_state`), else
        ``(None, None)``."""
        if needs_state(self.automaton, eos, step, options):
            return self.flat()
        return None, None

    def states(self, parent: torch.Tensor, token: torch.Tensor, score: torch.Tensor) -> tuple[
        _States, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor
    ]:
        """State of every candidate (node (B, C), met (B, C, S), base (B, C), ended (B, C)), its
        bank (B, C), the rank it would have in the finished pool (``ended``: sets met, as the
        pool ranks them), the scores with letters that advance no unmet set dropped (-inf), and
        which sets it would have met were it to end now (B, C, S; pending whole words count).
        ``packed``: met and the sets met were it to end are (B, C) bits.

        A letter *advances* when its bank is above its parent's base: it meets a set, or it is on
        the way to an unmet one."""
        a = self.automaton
        parent_node = self.node.gather(1, parent)  # (B, C)
        node = a.next_node[parent_node, a.block_symbols(self.input_block, token)]
        sets_of = self._packed_sets if self.packed else self._boolean_sets
        met, ended_met, base, ended, bank = sets_of(parent, parent_node, node, token)
        # NeuroLogic may pass fewer letters than every beam's (_neurologic_candidates)
        keep = self.head[:, : parent.shape[1]] | (bank > self.base.gather(1, parent))
        return (node, met, base, ended), bank, ended, torch.where(keep, score, NEG_INF), ended_met

    def _boolean_sets(self, parent: torch.Tensor, parent_node: torch.Tensor, node: torch.Tensor,
                      token: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """The candidates' sets met (B, C, S), those met were each to end now (B, C, S), base,
        ended and bank (B, C each) (:meth:`states`), on (B, K, S) booleans."""
        a = self.automaton
        # one row gather each (rows_at): on a CPU faster than indexing met[input, parent]
        # (benchmarks/engine_micro.py: rows_at_pair_ms against index_pair_ms)
        parent_met = rows_at(self.met.view(self.batch * self.beams, -1), parent + self.first_beam)
        met = parent_met | rows_at(a.completes, node)  # (B, C, S)
        met = a.confirm(parent_node, met, token)  # the token ends a pending whole word, or not
        base = met.sum(-1) * self.scale  # (B, C)
        if a.has_whole_word:  # the bank counts pending sets as met (see the class notes)
            ended_met = a.met_if_ended(node, met)  # (B, C, S)
            ended = ended_met.sum(-1) * self.scale
        else:
            ended, ended_met = base, met
        bank = ended + torch.where(ended_met, 0, rows_at(a.partial_depth, node)).amax(-1)
        return met, ended_met, base, ended, bank

    def _packed_sets(self, parent: torch.Tensor, parent_node: torch.Tensor, node: torch.Tensor,
                     token: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """:meth:`_boolean_sets` on packed bits: the sets as (B, C) bits. The bank's partial
        progress is the node's depth where the node is on the way to an unmet set: every set a
        node is on the way to has its depth (``partial_depth``)."""
        a = self.automaton
        assert a.completes_packed is not None and a.useful_packed is not None
        met = self.met.gather(1, parent) | rows_at(a.completes_packed, node)  # (B, C)
        if a.has_whole_word:  # the token ends a pending whole word, or not
            assert a.pending_packed is not None
            met = met | torch.where(a.token_continues(token), 0, rows_at(a.pending_packed, parent_node))
            ended_met = met | rows_at(a.pending_packed, node)
            base, ended = a.count_packed(met) * self.scale, a.count_packed(ended_met) * self.scale
        else:
            ended_met = met
            base = ended = a.count_packed(met) * self.scale
        on_way = (rows_at(a.useful_packed, node) & ~ended_met) != 0
        return met, ended_met, base, ended, ended + torch.where(on_way, rows_at(a.depth, node), 0)

    def add_other_endings(self, pool: _Pool, log_probs: torch.Tensor, beam_scores: torch.Tensor,
                          history: torch.Tensor, head: _Head, eos: torch.Tensor, step: int,
                          done: torch.Tensor, length_penalty: float) -> None:
        """Every beam's EOS continuation joins the finished pool (:func:`_add_other_endings`),
        when the model has an EOS."""
        if eos.numel():
            _add_other_endings(pool, log_probs, beam_scores, history, self.ended, head.parent,
                               head.eos & head.ending, eos, step, done, length_penalty)

    def reorder(self, states: _States, pick: torch.Tensor) -> None:
        """Make the chosen candidates (B, K) the new beams."""
        node, met, base, ended = states
        self.node = node.gather(1, pick)
        self.met = met.gather(1, pick) if self.packed else met[self.input_col, pick]
        self.base = base.gather(1, pick)
        self.ended = ended.gather(1, pick) if ended is not base else self.base


def _moved_history(
    new_parent: torch.Tensor,  # (B, K) the parent beam of each chosen candidate
    new_token: torch.Tensor,  # (B, K)
    history: torch.Tensor,  # (B, K, T)
    step: int,
) -> torch.Tensor:
    """The chosen beams' tokens (B, K, T): their parents' history and the new token."""
    history = history.gather(1, new_parent.unsqueeze(-1).expand(-1, -1, history.shape[2]))
    history[:, :, step] = new_token
    return history


def _reorder_cache(
    runner: ModelRunner,
    new_parent: torch.Tensor,  # (B, K) the parent beam of each chosen candidate
    running: torch.Tensor,  # (A,) the inputs whose beams are in the runner's batch, in its order
) -> None:
    """Move the model's cache to the chosen beams with the index :func:`_moved_history` moves
    the tokens by (and the automaton state by the same ``pick``), so they cannot drift apart."""
    beams = new_parent.shape[1]
    offset = torch.arange(running.numel(), device=new_parent.device).unsqueeze(1) * beams  # (A, 1)
    runner.reorder((new_parent[running] + offset).view(-1))  # (A K,)


def _beam_rows(inputs: torch.Tensor, beams: int) -> torch.Tensor:
    """The flat beam rows ``(A K,)`` of ``inputs`` ``(A,)``."""
    return (inputs.unsqueeze(1) * beams + torch.arange(beams, device=inputs.device)).view(-1)


class _NoConstraints:
    """Plain beam search's stand-in for :class:`_ConstraintSearch` (``automaton=None``): every
    candidate in one bank, no letters offered, no state to mask with or to reorder."""

    automaton = None
    row_tables = None

    def mask_state(self, eos: torch.Tensor, step: int, options: BeamSearchOptions
                   ) -> tuple[None, None]:
        return None, None

    def letters(self) -> None:
        return None

    def states(self, parent: torch.Tensor, token: torch.Tensor, score: torch.Tensor
               ) -> tuple[None, torch.Tensor, torch.Tensor, torch.Tensor, None]:
        """No state; one bank (0) for every candidate, which is also its rank in the pool."""
        bank = torch.zeros_like(token)  # (B, C)
        return None, bank, bank, score, None

    def add_other_endings(self, pool: _Pool, log_probs: torch.Tensor, beam_scores: torch.Tensor,
                          history: torch.Tensor, head: _Head, eos: torch.Tensor, step: int,
                          done: torch.Tensor, length_penalty: float) -> None:
        """Nothing: without constraints only the head's endings join the pool, as in
        transformers."""

    def reorder(self, states: None, pick: torch.Tensor) -> None:
        """Nothing to move."""


@dataclass(frozen=True)
class _Scored:
    """The step's candidates, scored and checked: all (B, C)."""

    parent: torch.Tensor  # beam each candidate extends
    token: torch.Tensor
    score: torch.Tensor  # total log-probability; -inf: dropped
    valid: torch.Tensor  # the score is finite
    is_eos: torch.Tensor
    met_rank: torch.Tensor  # orders ending candidates by sets met, as the pool ranks them


@dataclass(frozen=True)
class _Head:
    """The first ``num_beams`` candidates in allocation order, as the finished pool saw them:
    all (B, K)."""

    parent: torch.Tensor
    eos: torch.Tensor  # the candidate is an EOS
    ending: torch.Tensor  # the candidate joined the pool (EOS or the last step)


def beam_search(
    runner: ModelRunner,
    input_ids: torch.Tensor,  # (B, L)
    attention_mask: torch.Tensor,  # (B, L)
    automaton: TensorAutomaton | None,
    options: BeamSearchOptions,
    eos_ids: list[int],
    pad_id: int,
) -> SearchResult:
    """Run constrained beam search over one batch; ``automaton=None`` searches unconstrained.

    Each step, in the order of the module's notes: :func:`_masked_log_probs`,
    :func:`_score_candidates`, :func:`~dpc_decode.beam.allocate`, :func:`_end_head` (and the
    other endings under constraints), :func:`_next_beams`, :func:`_reorder`, then the stopping
    rule, :func:`_compact` and :func:`_next_log_probs`. Without constraints :class:`_NoConstraints`
    stands in for the automaton's state."""
    batch = input_ids.shape[0]
    beams, steps = options.num_beams, options.max_new_tokens
    device = runner.device
    eos = torch.tensor(eos_ids, dtype=torch.long, device=device)

    logits = runner.start(input_ids, attention_mask)  # (B, V)
    runner.expand(beams)
    log_probs = torch.log_softmax(logits, dim=-1).repeat_interleave(beams, dim=0)  # (H, V)
    vocab = log_probs.shape[1]
    beam_scores = torch.full((batch, beams), NEG_INF, device=device)
    beam_scores[:, 0] = 0.0  # all beams start equal: expand only the first
    neurologic = automaton is not None and options.search == "neurologic"
    own = min(beams, vocab)  # NeuroLogic: each hypothesis's own top tokens offered
    model_columns = 2 * beams + beams * own  # NeuroLogic's candidates that are the model's own
    search: _ConstraintSearch | _NoConstraints = (
        _ConstraintSearch(automaton, batch, beams, device,
                          fixed=model_columns if neurologic else None)
        if automaton is not None else _NoConstraints())
    history = torch.full((batch, beams, steps), pad_id, dtype=torch.long, device=device)
    pool = _Pool.empty(batch, beams, steps, pad_id, device)
    done = torch.zeros(batch, dtype=torch.bool, device=device)
    # Inputs whose beams the model still runs: a done input leaves its batch once the done are
    # an eighth of it (its beams' scores stay, unused: a done input adds nothing to its pool).
    running = torch.arange(batch, device=device)
    compact = True
    # Without constraints there is one bank and allocation is score order already; score slots
    # would only move EOS candidates behind the others in the head.
    slots = options.score_slots if automaton is not None else 0
    lookahead = (Lookahead(search.automaton, search.input_block, beams, options)
                 if isinstance(search, _ConstraintSearch) and neurologic and options.lookahead
                 else None)

    for step in range(steps):
        last = step == steps - 1
        log_probs = _masked_log_probs(log_probs, runner, search, history, eos, step, options)
        stepped: FirstStep | None = None
        if neurologic:
            assert isinstance(search, _ConstraintSearch)
            scored, states, allocation, stepped = _score_neurologic(
                log_probs, beam_scores, search, eos, vocab, options, runner, running, done, step,
                lookahead)
            _end_model_choices(pool, scored, model_columns, history, step, done, options)
            if last:  # the length cap ends the head's other candidates too
                _end_head(pool, replace(scored, valid=scored.valid & ~scored.is_eos),
                          allocation, history, step, last, done, options)
                break
        else:
            scored, states, bank = _score_candidates(log_probs, beam_scores, search, eos, vocab)
            allocation = allocate(bank, scored.score, scored.valid, slots,
                                  ~scored.is_eos if slots else None)
            head = _end_head(pool, scored, allocation, history, step, last, done, options)
            if last:
                break
            search.add_other_endings(pool, log_probs, beam_scores, history, head, eos, step,
                                     done, options.length_penalty)
        pick, beam_scores, new_token = _next_beams(scored, allocation, beams)
        search.reorder(states, pick)  # type: ignore[arg-type]
        if lookahead is not None:
            lookahead.keep(pick)
        done |= _input_done(beam_scores, pool, step + 1, options, neurologic)
        # The step's one host sync. Every input outside `running` is done (only done ones leave).
        finished = int(done.sum()) - (batch - running.numel())  # done among the running inputs
        if finished == running.numel():
            break
        new_parent = scored.parent.gather(1, pick)  # (B, K)
        history = _moved_history(new_parent, new_token, history, step)
        # With a lookahead the new beams have mostly taken their model step already (adopt).
        adopted = (lookahead.adopt(runner, stepped, pick, beam_scores, done, running)
                   if lookahead is not None and stepped is not None and compact else None)
        if adopted is not None:
            running, next_log_probs = adopted
            log_probs = _with_rows(log_probs, next_log_probs, running, beams)
        else:
            _reorder_cache(runner, new_parent, running)
            if compact and finished * 8 >= running.numel():
                running, compact = _compact(runner, running, done, beams)
            log_probs = _next_log_probs(runner, log_probs, new_token, running, beams)

    return _result(pool, options.num_return_sequences)


def _masked_log_probs(
    log_probs: torch.Tensor,  # (H, V)
    runner: ModelRunner,
    search: _ConstraintSearch | _NoConstraints,
    history: torch.Tensor,  # (B, K, T)
    eos: torch.Tensor,
    step: int,
    options: BeamSearchOptions,
) -> torch.Tensor:
    """The step's log-probabilities (H, V) after the model's processors and the step masks
    (:func:`~dpc_decode.masks.apply_step_masks`; the automaton state only where they read it)."""
    steps = options.max_new_tokens
    node, met = search.mask_state(eos, step, options)
    log_probs = apply_processors(log_probs, history.view(-1, steps)[:, :step], runner.processors)
    return apply_step_masks(
        log_probs, search.automaton, search.row_tables, node, met,
        history.view(-1, steps)[:, :step], eos, step, options,
    )


def _score_candidates(
    log_probs: torch.Tensor,  # (H, V) masked
    beam_scores: torch.Tensor,  # (B, K)
    search: _ConstraintSearch | _NoConstraints,
    eos: torch.Tensor,
    vocab: int,
) -> tuple[_Scored, _States | None, torch.Tensor]:
    """The step's candidates (:func:`_candidates`), their automaton states and banks (B, C)
    (:meth:`_ConstraintSearch.states`), repeats dropped (:func:`_drop_repeats`)."""
    parent, token, score = _candidates(log_probs, beam_scores, search.letters())
    states, bank, met_rank, score, _ = search.states(parent, token, score)
    score = _drop_repeats(parent, token, score, vocab)
    valid = torch.isfinite(score)  # (B, C)
    return _Scored(parent, token, score, valid, is_eos_token(token, eos), met_rank), states, bank


def _neurologic_candidates(
    log_probs: torch.Tensor,  # (H, V) masked
    beam_scores: torch.Tensor,  # (B, K)
    letters: _Letters,
    prune_factor: int,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """NeuroLogic's candidates: parent beam (B, C), token (B, C), total score (B, C).

    Columns, in order: the input's top ``2K`` over all beams (kept whatever their score);
    each beam's own top ``K`` tokens (``K * K``); the letters of every beam that leave the root
    (:meth:`_ConstraintSearch.letters`; only the ``prune_factor`` best of them where there are
    more). A beam's own tokens but its best, and the letters, are pruned (-inf) unless their
    total score is among the ``prune_factor`` best of the input's step. Two passes of ``topk``:
    the input's best totals over all its beams' tokens at once (on a CPU one ``topk`` of a few
    wide rows is several times faster than of many rows of one vocabulary each: ``python
    benchmarks/engine_micro.py``, ``topk_flat_ms`` against ``topk_rows_ms``), and each beam's own
    top ``K``."""
    batch, beams = beam_scores.shape
    vocab = log_probs.shape[1]
    own = min(beams, vocab)
    flat_scores = beam_scores.reshape(-1, 1)  # (H, 1)
    prune = min(prune_factor, beams * vocab)
    totals = (log_probs + flat_scores).view(batch, beams * vocab)  # (B, K * V)
    best_scores, best_index = totals.topk(min(max(2 * beams, prune), beams * vocab), dim=1)
    floor = best_scores[:, prune - 1 : prune]  # (B, 1): the P-th best total score
    top_index = best_index[:, : 2 * beams]
    device = log_probs.device
    own_scores, own_tokens = log_probs.topk(own, dim=1)  # (H, own)
    own_scores = (own_scores + flat_scores).view(batch, beams * own)  # (B, K * own)
    own_first = torch.zeros(own, dtype=torch.bool, device=device)
    own_first[0] = True
    kept = (own_scores >= floor) | own_first.repeat(beams)  # each beam's best is never pruned
    letter_scores = (log_probs.gather(1, letters.hyp_tokens) + flat_scores).view(batch, -1)
    letter_parents, letter_tokens = letters.parents, letters.tokens
    if prune < letter_scores.shape[1]:
        # at most P letters reach the P-th best score (ties aside): only the P best go on, so
        # the sets' states, the groups and the sorts read P columns, not every beam's letters
        letter_scores, pick = letter_scores.topk(prune, dim=1)  # (B, P)
        letter_parents, letter_tokens = letter_parents.gather(1, pick), letter_tokens.gather(1, pick)
    parents = [top_index // vocab,
               torch.arange(beams, device=device).repeat_interleave(own).expand(batch, -1),
               letter_parents]
    tokens = [top_index % vocab, own_tokens.view(batch, beams * own), letter_tokens]
    scores = [best_scores[:, : 2 * beams], own_scores.masked_fill(~kept, NEG_INF),
              letter_scores.masked_fill(letter_scores < floor, NEG_INF)]
    return torch.cat(parents, dim=1), torch.cat(tokens, dim=1), torch.cat(scores, dim=1)


def _score_neurologic(
    log_probs: torch.Tensor,  # (H, V) masked
    beam_scores: torch.Tensor,  # (B, K)
    search: _ConstraintSearch,
    eos: torch.Tensor,
    vocab: int,
    options: BeamSearchOptions,
    runner: ModelRunner,
    running: torch.Tensor,  # (A,)
    done: torch.Tensor,  # (B,)
    step: int,
    lookahead: Lookahead | None,
) -> tuple[_Scored, _States, Allocation, FirstStep | None]:
    """The step's candidates under NeuroLogic (:func:`_neurologic_candidates`), their states,
    repeats dropped, those more than ``sat_tolerance`` sets behind dropped
    (:func:`~dpc_decode.beam.within_tolerance`), and their order
    (:func:`~dpc_decode.beam.neurologic_allocate`, grouped by the sets met were each to end
    now), the first ``2K`` ordered again by the ``lookahead``'s estimates where there is one
    (then also the model step it took for them, :class:`~dpc_decode.lookahead.FirstStep`)."""
    parent, token, score = _neurologic_candidates(log_probs, beam_scores, search.letters(),
                                                  options.prune_factor)
    states, _, met_rank, score, ended_met = search.states(parent, token, score)
    score = _drop_repeats(parent, token, score, vocab)
    met_count = torch.div(met_rank, search.scale, rounding_mode="floor")  # ended_met.sum(-1)
    valid = within_tolerance(met_count, torch.isfinite(score), options.sat_tolerance)
    score = score.masked_fill(~valid, NEG_INF)  # (B, C)
    is_eos = is_eos_token(token, eos)
    # (B, C) each; padding and impossible sets count as met, so all met is a count of S. Packed
    # met-bits are group_keys' own keys (the bits of the sets met).
    sets = search.automaton.num_sets
    group = ended_met if search.packed else group_keys(ended_met)
    complete = met_count == sets
    beams = beam_scores.shape[1]
    wide = sets > 31  # group keys of more sets may reach 2**31
    allocation = neurologic_allocate(group, complete, score, valid, beams, options.score_slots,
                                     ~is_eos, wide=wide)
    scored = _Scored(parent, token, score, valid, is_eos, met_rank)
    if lookahead is None:
        return scored, states, allocation, None
    width = min(2 * beams, score.shape[1])
    short = allocation.order[:, :width]  # (B, W) the candidates the lookahead reorders
    candidates = Candidates(parent, token, score, valid, is_eos, states[0], complete, ended_met)
    future, stepped = lookahead.estimate(runner, running, done, candidates, short,
                                         last=step == options.max_new_tokens - 1)  # (B, W)
    rank_score = score.gather(1, short) / (step + 1) + options.lookahead_weight * future
    again = neurologic_allocate(group.gather(1, short), complete.gather(1, short),
                                rank_score, valid.gather(1, short), beams,
                                options.score_slots, ~is_eos.gather(1, short), wide=wide)
    order = torch.cat([short.gather(1, again.order), allocation.order[:, width:]], dim=1)
    return scored, states, Allocation(order, allocation.key), stepped  # key: positions


def _end_model_choices(
    pool: _Pool,
    scored: _Scored,
    columns: int,
    history: torch.Tensor,  # (B, K, T)
    step: int,
    done: torch.Tensor,  # (B,)
    options: BeamSearchOptions,
) -> None:
    """Real endings: every EOS among the model's own candidates (the first ``columns``: the
    step's top ``2K`` and each beam's top ``K``) joins the finished pool, with the EOS id the
    model chose and its score; nothing else ends a hypothesis before the length cap. EOS is
    masked until every set is met, so each of them meets its sets."""
    take = (scored.valid & scored.is_eos)[:, :columns] & ~done.unsqueeze(1)  # (B, N)
    parent = scored.parent[:, :columns]
    tokens = history.gather(1, parent.unsqueeze(-1).expand(-1, -1, options.max_new_tokens))
    tokens[:, :, step] = scored.token[:, :columns]
    pool.add(tokens, step + 1, scored.score[:, :columns], scored.met_rank[:, :columns], take,
             take, options.length_penalty)


def _end_head(
    pool: _Pool,
    scored: _Scored,
    allocation: Allocation,
    history: torch.Tensor,  # (B, K, T)
    step: int,
    last: bool,
    done: torch.Tensor,  # (B,)
    options: BeamSearchOptions,
) -> _Head:
    """Finished pool: the ending candidates (EOS, or any at the last step) among the first
    ``num_beams`` in allocation order join it, those of done inputs excepted."""
    head = allocation.first(options.num_beams)  # (B, K) candidate columns
    head_parent = scored.parent.gather(1, head)
    head_token = scored.token.gather(1, head)
    head_eos = scored.is_eos.gather(1, head)
    ending = scored.valid.gather(1, head) & (head_eos | last) & ~done.unsqueeze(1)
    ended_tokens = history.gather(
        1, head_parent.unsqueeze(-1).expand(-1, -1, options.max_new_tokens))
    ended_tokens[:, :, step] = head_token
    pool.add(
        ended_tokens, step + 1, scored.score.gather(1, head), scored.met_rank.gather(1, head),
        head_eos, ending, options.length_penalty,
    )
    return _Head(head_parent, head_eos, ending)


def _next_beams(scored: _Scored, allocation: Allocation, beams: int
                ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Running beams: the first ``beams`` valid, non-ending candidates in allocation order.
    Returns their columns (B, K), scores (B, K; -inf where an input has fewer) and tokens (B, K)."""
    pick, ineligible = allocation.first_outside(beams, ~scored.valid | scored.is_eos)  # (B, K) each
    beam_scores = torch.where(ineligible, NEG_INF, scored.score.gather(1, pick))
    return pick, beam_scores, scored.token.gather(1, pick)


def _compact(runner: ModelRunner, running: torch.Tensor, done: torch.Tensor, beams: int
             ) -> tuple[torch.Tensor, bool]:
    """The done inputs leave the model's batch: the running inputs (A',) that stay, and whether
    to compact again (not once the runner cannot select rows)."""
    keep = (~done[running]).nonzero().squeeze(-1)  # (A',) positions among `running`
    if runner.select(_beam_rows(keep, beams)):
        return running[keep], True
    return running, False


def _next_log_probs(
    runner: ModelRunner,
    log_probs: torch.Tensor,  # (H, V)
    new_token: torch.Tensor,  # (B, K)
    running: torch.Tensor,  # (A,)
    beams: int,
) -> torch.Tensor:
    """One model step on the running beams' new tokens: the next log-probabilities (H, V); the
    rows of inputs outside ``running`` keep this step's (unused: those inputs are done)."""
    return _with_rows(log_probs, torch.log_softmax(runner.step(new_token[running].view(-1)), dim=-1),
                      running, beams)


def _with_rows(
    log_probs: torch.Tensor,  # (H, V)
    rows: torch.Tensor,  # (A K, V) the running beams' next log-probabilities
    running: torch.Tensor,  # (A,)
    beams: int,
) -> torch.Tensor:
    """The next log-probabilities (H, V): ``rows`` for the running inputs' beams, this step's
    for the others (unused: those inputs are done)."""
    if running.numel() * beams == log_probs.shape[0]:
        return rows
    log_probs = log_probs.clone()
    log_probs[_beam_rows(running, beams)] = rows
    return log_probs


def _result(pool: _Pool, count: int) -> SearchResult:
    """The ``count`` best finished outputs of each input."""
    return SearchResult(
        tokens=pool.tokens[:, :count],
        lengths=pool.lengths[:, :count],
        log_probs=pool.log_probs[:, :count],
        scores=pool.scores[:, :count],
        finished=pool.finished[:, :count],
        valid=torch.isfinite(pool.scores[:, :count]),
    )


def _add_other_endings(
    pool: _Pool,
    log_probs: torch.Tensor,  # (H, V) masked
    beam_scores: torch.Tensor,  # (B, K)
    history: torch.Tensor,  # (B, K, T)
    met_rank: torch.Tensor,  # (B, K) orders the beams by sets met
    head_parent: torch.Tensor,  # (B, K) parents of the first `beams` candidates
    head_ended: torch.Tensor,  # (B, K) which of those ended with EOS (already in the pool)
    eos: torch.Tensor,  # (n_eos,)
    step: int,
    done: torch.Tensor,  # (B,)
    length_penalty: float,
) -> None:
    """Under constraints, every beam's EOS continuation joins the finished pool, not only those
    among the first ``beams`` candidates (transformers' rule, kept for unconstrained search).

    A hypothesis that has just met its last set is often outscored by longer continuations of
    the other beams that met theirs earlier; under the top-``beams`` rule its EOS is dropped and
    the search can return only longer, less likely outputs (the exhaustive oracle in
    ``benchmarks/oracle.py`` showed it). The pool keeps the best ``beams`` finished outputs by
    (sets met, score), so offering it more can only improve what is returned. EOS stays masked
    (-inf, not taken) until every set is met."""
    batch, beams = beam_scores.shape
    eos_scores = (log_probs[:, eos[0]] + beam_scores.reshape(-1)).view(batch, beams)  # (B, K)
    counts = torch.zeros((batch, beams), dtype=torch.long, device=beam_scores.device)
    already = counts.scatter_add_(1, head_parent, head_ended.long()) > 0  # (B, K) EOS in the head
    take = torch.isfinite(eos_scores) & ~already & ~done.unsqueeze(1)
    tokens = history.clone()
    tokens[:, :, step] = eos[0]
    pool.add(tokens, step + 1, eos_scores, met_rank, take, take,
             length_penalty)


def _input_done(
    beam_scores: torch.Tensor, pool: _Pool, generated: int, options: BeamSearchOptions,
    model_endings: bool = False,
) -> torch.Tensor:
    """transformers' stopping rule per input, plus: an input with no live beam is done. (B,)
    With ``model_endings`` (NeuroLogic's real endings) ``early_stopping=True`` never stops while
    an open beam can beat the finished ones: it is transformers' ``False`` rule."""
    full = torch.isfinite(pool.scores).all(-1)  # (B,)
    if options.early_stopping is True and not model_endings:
        return full | ~torch.isfinite(beam_scores).any(-1)
    length = generated
    if options.early_stopping == "never" and options.length_penalty > 0:
        length = options.max_new_tokens
    best_running = beam_scores.max(-1).values / (length**options.length_penalty)
    worst_finished = torch.where(full, pool.scores.min(-1).values, NEG_INF)
    return ~(best_running > worst_finished) | ~torch.isfinite(beam_scores).any(-1)
