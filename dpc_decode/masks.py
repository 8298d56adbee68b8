"""Log-probability masks applied before choosing tokens, shared by beam search and sampling.

Each function takes the step's log-probabilities ``(hyps, vocab)`` and returns them with
forbidden tokens set to ``-inf`` (in place where that is safe). No Python loop over hypotheses.

* :func:`mask_constraints` - banned phrases, and *feasibility*: a hypothesis that can still meet
  every set within ``max_new_tokens`` may only take tokens after which it still can, by
  :meth:`~dpc_decode.automaton.Automaton.need` (exact, overlaps between alternatives counted,
  within its budget). This is what turns "satisfied if beam search happens to find it" into
  "satisfied whenever the budget allows": with two tokens left and a two-token alternative
  unmet, the hypothesis must start it now. Because need is exact, a hypothesis that can finish
  always keeps a token after which it still can. With whole-word alternatives, a token that
  continues the word after one cancels it: after a pending set, tokens outside the alphabet are
  judged by the need with the set (a new word, punctuation) or without it (a word piece).
* :func:`mask_eos` - EOS is forbidden until every set is met (a pending whole-word set counts:
  EOS ends the word) and ``min_new_tokens`` are generated.
* :func:`mask_repeated_ngrams` - ``no_repeat_ngram_size`` over the generated tokens.
"""

from __future__ import annotations

import torch

from dpc_decode.options import DecodeOptions
from dpc_decode.tensor_automaton import RowTables, Successors, TensorAutomaton, rows_at

__all__ = [
    "apply_step_masks", "is_eos_token", "mask_constraints", "mask_eos", "mask_repeated_ngrams",
    "needs_state",
]

NEG_INF = float("-inf")


def mask_constraints(
    log_probs: torch.Tensor,
    automaton: TensorAutomaton,
    rows: torch.Tensor | RowTables,
    nodes: torch.Tensor | None,
    met: torch.Tensor | None,
    tokens_left: int,
    feasible: bool = True,
    successors: Successors | None = None,
) -> torch.Tensor:
    """Forbid tokens that complete a banned phrase, and (``feasible=True``) tokens after which the
    unmet sets no longer fit in the budget.

    log_probs: (hyps, vocab); rows: (hyps,) or their :class:`RowTables`; nodes: (hyps,); met:
    (hyps, S); ``tokens_left``: tokens that may still be generated, this one included;
    ``successors``: :meth:`TensorAutomaton.successors` when the caller has it already. With no
    banned phrase and a budget that is not tight, nothing can be forbidden: no tensor operation
    runs, and ``nodes``/``met`` may be ``None``.
    """
    tight = is_tight(automaton, tokens_left, feasible)
    if not tight and not automaton.has_banned:
        return log_probs
    assert nodes is not None and met is not None
    if not isinstance(rows, RowTables):
        rows = automaton.for_rows(rows)
    if successors is None:
        successors = automaton.successors(rows, nodes, met)
    letters, nxt = successors.letters, successors.nodes  # (hyps, A) each
    original = log_probs.gather(1, letters)  # (hyps, A)
    allowed = ~rows_at(automaton.violation, nxt) if automaton.has_banned else None  # (hyps, A)
    if tight:
        after = tokens_left - 1
        # need() now (hyps,), after each letter (hyps, A), after any other token (hyps,)
        now, letter_need, root_need, piece_need = automaton.step_needs(rows, nodes, met, successors)
        infeasible = now > tokens_left  # (hyps,): no plan fits; nothing is forced
        fits = (letter_need <= after) | infeasible.unsqueeze(1)
        allowed = fits if allowed is None else allowed & fits  # (hyps, A)
        # Any token outside the alphabet leads back to the root, keeping only the sets met.
        blocked = ~infeasible & (root_need > after)  # (hyps,)
        # A row of -inf or 0 added, not a broadcast masked_fill_, which is slower on a CPU
        # (benchmarks/engine_micro.py: add_row_ms against masked_fill_ms); x + 0 is x.
        log_probs.add_(torch.where(blocked, NEG_INF, 0.0).unsqueeze(1))
        if piece_need is not None:  # ... and the pending ones, unless it continues the word
            pieces = ~infeasible & ~blocked & (piece_need > after)  # (hyps,)
            continues = automaton.vocab_continues(log_probs.shape[1])  # (vocab,)
            log_probs.masked_fill_(pieces.unsqueeze(1) & continues, NEG_INF)
    # Padding columns mirror the first letter exactly, so duplicate writes carry equal values.
    assert allowed is not None
    log_probs.scatter_(1, letters, torch.where(allowed, original, NEG_INF))
    return log_probs


def mask_eos(
    log_probs: torch.Tensor,
    eos: torch.Tensor,
    blocked: torch.Tensor | None,
) -> torch.Tensor:
    """Forbid every EOS id for hypotheses where ``blocked`` (hyps,) is true (``None``: for all)."""
    if eos.numel() == 0:
        return log_probs
    if blocked is None:
        log_probs[:, eos] = NEG_INF
    else:
        cols = log_probs[:, eos]  # (hyps, n_eos)
        log_probs[:, eos] = cols.masked_fill(blocked.unsqueeze(1), NEG_INF)
    return log_probs


def is_eos_token(tokens: torch.Tensor, eos: torch.Tensor) -> torch.Tensor:
    """Whether each token is an EOS id (``eos`` (n_eos,)): one comparison for the usual single
    id, cheaper on a CPU than ``torch.isin`` (``benchmarks/engine_micro.py``: ``eq_us`` against
    ``isin_us``; the size of ``eos`` is known on the host: no sync).

    >>> import torch
    >>> is_eos_token(torch.tensor([[3, 1]]), torch.tensor([1])).tolist()
    [[False, True]]
    """
    if eos.numel() == 1:
        return tokens == eos
    if eos.numel() == 0:
        return torch.zeros_like(tokens, dtype=torch.bool)
    return torch.isin(tokens, eos)


def mask_repeated_ngrams(log_probs: torch.Tensor, generated: torch.Tensor, n: int) -> torch.Tensor:
    """Forbid tokens that would repeat an n-gram already in ``generated`` (hyps, t).

    >>> import torch
    >>> lp = torch.zeros(1, 6)
    >>> mask_repeated_ngrams(lp, torch.tensor([[1, 2, 3, 1]]), 2)[0].tolist()
    [0.0, 0.0, -inf, 0.0, 0.0, 0.0]
    """
    t = generated.shape[1]
    if n <= 0 or t < n:
        return log_probs
    if n == 1:
        return log_probs.scatter_(1, generated, NEG_INF)
    windows = generated.unfold(1, n, 1)  # (hyps, t - n + 1, n)
    prefix = generated[:, t - n + 1 :]  # (hyps, n - 1): the n-gram the next token would close
    hit = (windows[:, :, : n - 1] == prefix.unsqueeze(1)).all(-1)  # (hyps, t - n + 1)
    banned = windows[:, :, n - 1]  # (hyps, t - n + 1)
    # A token may close several windows, hit or not: a min-reduction writes -inf where any window
    # hits and leaves the others as they are (+inf never wins), touching only t - n + 1 columns.
    fill = torch.where(hit, NEG_INF, float("inf")).to(log_probs.dtype)  # (hyps, t - n + 1)
    return log_probs.scatter_reduce_(1, banned, fill, reduce="amin", include_self=True)


def apply_step_masks(
    log_probs: torch.Tensor,  # (H, V), modified in place
    automaton: TensorAutomaton | None,
    rows: torch.Tensor | RowTables | None,  # (H,); None without an automaton
    node: torch.Tensor | None,  # (H,)
    met: torch.Tensor | None,  # (H, S)
    history: torch.Tensor,  # (H, t) generated so far
    eos: torch.Tensor,  # (n_eos,)
    step: int,
    options: DecodeOptions,
    successors: Successors | None = None,
) -> torch.Tensor:
    """Every mask of one decoding step, in the order that keeps each one in force: constraints
    first (they write allowed values back), then EOS, then repeated n-grams. ``node`` and ``met``
    are read only where a mask needs them (see :func:`needs_state`)."""
    if automaton is not None:
        assert rows is not None
        mask_constraints(
            log_probs, automaton, rows, node, met, options.max_new_tokens - step, options.feasible,
            successors,
        )
        if eos.numel():
            assert met is not None and node is not None
            ended = automaton.met_if_ended(node, met)  # (H, S): EOS confirms the pending sets
            blocked = ~ended.all(-1) if step >= options.min_new_tokens else None  # (H,)
            mask_eos(log_probs, eos, blocked)
    elif step < options.min_new_tokens:
        mask_eos(log_probs, eos, None)
    if options.no_repeat_ngram_size:
        mask_repeated_ngrams(log_probs, history, options.no_repeat_ngram_size)
    return log_probs


def needs_state(automaton: TensorAutomaton, eos: torch.Tensor, step: int, options: DecodeOptions) -> bool:
    """Whether :func:`apply_step_masks` reads the automaton state at this step (a banned phrase,
    a tight budget, or an EOS to hold back)."""
    tight = is_tight(automaton, options.max_new_tokens - step, options.feasible)
    return automaton.has_banned or tight or bool(eos.numel())


def is_tight(automaton: TensorAutomaton, tokens_left: int, feasible: bool) -> bool:
    """Whether the feasibility mask can forbid anything with ``tokens_left`` tokens to go (this
    one included): no reachable state needs more than ``max_need``, so while that fits after this
    token, nothing is tight. Decided on the host, without a tensor operation."""
    return feasible and tokens_left - 1 < automaton.max_need
