"""Exhaustive constrained search over a tiny vocabulary: the oracle beam search is measured
against. Scores every sequence of up to ``max_new_tokens`` tokens by teacher forcing, so it is
only usable when ``vocab ** max_new_tokens`` is small (tests and ``benchmarks/oracle.py``)."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import torch
from transformers import PreTrainedModel

from dpc_decode.automaton import Automaton
from dpc_decode.errors import DpcError

__all__ = ["exhaustive_best", "sequence_log_probs"]


def sequence_log_probs(
    model: PreTrainedModel, prompt: Sequence[int], continuations: list[list[int]],
    decoder_start: int = 0,
) -> list[float]:
    """Total log-probability of each continuation given ``prompt`` (teacher forcing)."""
    if not continuations:
        return []
    with torch.inference_mode():
        if model.config.is_encoder_decoder:
            src = torch.tensor([list(prompt)] * len(continuations))
            dec = torch.tensor([[decoder_start] + c for c in continuations])
            logits = model(input_ids=src, decoder_input_ids=dec[:, :-1]).logits
            target = dec[:, 1:]
        else:
            ids = torch.tensor([list(prompt) + c for c in continuations])
            logits = model(input_ids=ids).logits[:, len(prompt) - 1 : -1]
            target = ids[:, len(prompt) :]
        lp = torch.log_softmax(logits.float(), -1).gather(2, target.unsqueeze(-1)).squeeze(-1)
    return lp.sum(-1).tolist()


def exhaustive_best(
    model: PreTrainedModel,
    prompt: Sequence[int],
    sets: Sequence[Sequence[Sequence[int]]],
    vocab: int,
    max_new_tokens: int,
    eos: int,
    limit: int = 200_000,
    *,
    whole_word: Sequence[Sequence[bool]] | None = None,
    continues: Sequence[bool] | None = None,
) -> tuple[float, list[int] | None]:
    """The highest total log-probability of any output that satisfies ``sets``: outputs that end
    with ``eos`` within ``max_new_tokens``, or run to ``max_new_tokens`` without it (as beam
    search may return). Returns ``(log_prob, tokens with EOS)``; ``(-inf, None)`` if none.

    ``whole_word`` and ``continues`` make alternatives whole-word, as in
    :class:`~dpc_decode.automaton.Automaton`: such an alternative counts only where the next
    token does not continue the word, or where the output ends (EOS or ``max_new_tokens``)."""
    if vocab**max_new_tokens > limit:
        raise DpcError(f"exhaustive search over {vocab}**{max_new_tokens} sequences exceeds {limit}")
    automaton = Automaton(sets, whole_word=whole_word, continues=continues)
    decoder_start = getattr(model.config, "decoder_start_token_id", None) or 0
    best: tuple[float, list[int] | None] = (float("-inf"), None)
    for n in range(1, max_new_tokens + 1):
        candidates = []
        for body in itertools.product(range(vocab), repeat=n):
            seq = list(body)
            if eos in seq[:-1]:
                continue
            ended = seq[-1] == eos
            if not ended and n < max_new_tokens:
                continue
            if automaton.is_satisfied(automaton.run(seq[:-1] if ended else seq)):
                candidates.append(seq)
        for seq, lp in zip(candidates, sequence_log_probs(model, prompt, candidates, decoder_start)):
            if lp > best[0]:
                best = (lp, seq)
    return best
