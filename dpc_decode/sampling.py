"""Constrained sampling (temperature, top-k, top-p), with optional oversampling of distinct outputs.

How constraints are honoured when sampling:

* **Banned phrases** - always: a token that would complete one gets probability 0.
* **Positive sets** - by the same two masks beam search uses: EOS is forbidden until every set is
  met, and a sample that can still meet its sets within ``max_new_tokens`` may only take tokens
  after which it still can (:mod:`dpc_decode.masks`). So every sample satisfies its constraints
  whenever the budget allows; samples come from the model's distribution *restricted by those
  masks* and renormalised at each step - a locally constrained sampler, not an exact sample of the
  model conditioned on satisfaction (which would need lookahead over whole sequences). Constraint
  words therefore tend to come late, when the budget forces them; a larger ``max_new_tokens``
  leaves the model more room to place them itself.
* **Whole-word alternatives** (``TokenizeOptions(whole_word=True)``) - the same way: a word piece
  right after one cancels it, EOS confirms it, and when the budget is tight the feasibility mask
  forbids a piece that would cancel the last chance.

``unique=True`` oversamples: rounds of ``num_samples`` draws per input until ``num_samples``
distinct outputs are collected or ``max_rounds`` is reached (SWAG draws 1,023 distinct endings
per context this way). An input that runs out of rounds returns fewer outputs, with a warning.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from transformers import PreTrainedModel

from dpc_decode.batch import DecodeBatch, Inputs, chunks, gc_paused, inference, resolve_options
from dpc_decode.constraints import TokenizeOptions
from dpc_decode.fallback import RELAXATIONS, Relaxation
from dpc_decode.generation_config import score_settings
from dpc_decode.masks import apply_step_masks, is_eos_token
from dpc_decode.memory import check_model_fits
from dpc_decode.model_runner import ModelRunner, scored_runner
from dpc_decode.options import SamplingOptions
from dpc_decode.outputs import GeneratedSequence
from dpc_decode.processors import ScoreSettings, apply_processors
from dpc_decode.tensor_automaton import TensorAutomaton

__all__ = ["filter_top_k_top_p", "sample"]

NEG_INF = float("-inf")


def filter_top_k_top_p(scores: torch.Tensor, top_k: int = 0, top_p: float = 1.0) -> torch.Tensor:
    """Set scores outside the top-k / nucleus to -inf (keeps at least one token per row).

    >>> import torch
    >>> s = torch.log(torch.tensor([[0.5, 0.3, 0.15, 0.05]]))
    >>> torch.isfinite(filter_top_k_top_p(s, top_p=0.7)).tolist()
    [[True, True, False, False]]
    >>> torch.isfinite(filter_top_k_top_p(s, top_k=3)).tolist()
    [[True, True, True, False]]
    """
    if top_k and top_k < scores.shape[-1]:
        kth = scores.topk(top_k, dim=-1).values[:, -1:]  # (H, 1)
        scores = scores.masked_fill(scores < kth, NEG_INF)
    if top_p < 1.0:
        nucleus = _nucleus_by_threshold(scores, top_p) if scores.device.type == "cpu" else None
        if nucleus is not None:
            return nucleus
        ordered, index = scores.sort(dim=-1, descending=True)
        probs = ordered.softmax(dim=-1)
        before = probs.cumsum(dim=-1) - probs  # mass of the better tokens
        drop = before >= top_p
        drop[:, 0] = False
        scores = scores.scatter(-1, index, ordered.masked_fill(drop, NEG_INF))
    return scores


def _nucleus_by_threshold(scores: torch.Tensor, top_p: float) -> torch.Tensor | None:
    """The top-p filter of :func:`filter_top_k_top_p`, bit for bit, from a sort of the values
    alone, on a CPU; ``None`` where it cannot tell (the caller then sorts with indices).

    ``torch.sort`` also orders the indices, which numpy's sort of the values alone does not
    need (the cost side by side: ``benchmarks/sampling_top_p.py``). The sorted values, their softmax and cumulative sum are the same tensors as
    the sort-and-scatter's, so ``drop`` is the same; the tokens kept are then those at or above
    the last kept value, unless the drops are not a prefix of the order or that value is tied
    with the first dropped one (which of the tied tokens a sort puts first decides then). NaN
    or ``+inf`` scores also go back to the caller.
    """
    if scores.dtype not in (torch.float32, torch.float64) or scores.dim() != 2 or scores.shape[1] < 2:
        return None
    ascending = np.sort(scores.detach().numpy(), axis=-1)
    if not bool((ascending[:, -1] < np.inf).all()):  # NaN sorts last, as does +inf
        return None
    ordered = torch.empty_like(scores)  # allocated by torch, as the sort's output is: the same softmax
    ordered.numpy()[:] = ascending[:, ::-1]
    probs = ordered.softmax(dim=-1)
    before = probs.cumsum(dim=-1) - probs  # mass of the better tokens
    drop = before >= top_p
    drop[:, 0] = False
    if bool((drop[:, :-1] & ~drop[:, 1:]).any()):  # a kept token after a dropped one
        return None
    last = (~drop).sum(-1, keepdim=True) - 1  # (H, 1) position of the last token kept
    threshold = ordered.gather(1, last)  # (H, 1)
    after = ordered.gather(1, (last + 1).clamp(max=ordered.shape[1] - 1))
    if bool(((after == threshold) & (last + 1 < ordered.shape[1])).any()):
        return None
    return scores.masked_fill(scores < threshold, NEG_INF)


@dataclass(frozen=True)
class _Draws:
    tokens: list[list[int]]  # per draw, without EOS and padding
    log_probs: list[float]
    ends: list[int | None]  # per draw, the EOS that ended it (None: not finished)
    valid: list[bool]


def _sample_batch(
    runner: ModelRunner,
    input_ids: torch.Tensor,  # (B, L)
    attention_mask: torch.Tensor,  # (B, L)
    automaton: TensorAutomaton | None,
    options: SamplingOptions,
    eos_ids: list[int],
    pad_id: int,
    draws: int,
    generator: torch.Generator | None,
) -> _Draws:
    """``draws`` samples of every input, rows of one input adjacent: (B * draws) results."""
    batch, steps = input_ids.shape[0], options.max_new_tokens
    device = runner.device
    eos = torch.tensor(eos_ids, dtype=torch.long, device=device)
    rows = torch.arange(batch, device=device).repeat_interleave(draws)  # (H,)
    count = rows.shape[0]

    logits = runner.start(input_ids, attention_mask)  # (B, V)
    runner.expand(draws)
    log_probs = torch.log_softmax(logits, dim=-1).repeat_interleave(draws, dim=0)  # (H, V)
    if automaton is not None:
        node, met = automaton.initial_state(rows)
    else:
        node = torch.zeros_like(rows)
        met = torch.ones((count, 1), dtype=torch.bool, device=device)
    tokens = torch.full((count, steps), pad_id, dtype=torch.long, device=device)
    total = torch.zeros(count, device=device)
    lengths = torch.zeros(count, dtype=torch.long, device=device)
    done = torch.zeros(count, dtype=torch.bool, device=device)
    finished = torch.zeros(count, dtype=torch.bool, device=device)
    stuck = torch.zeros(count, dtype=torch.bool, device=device)
    active = torch.arange(count, device=device)  # the rows still in the runner's batch
    compact = True
    # Rows not finished, once some are (None: all rows). The filters run on those rows only;
    # multinomial still draws for every row, so the generator advances as it would otherwise
    # and every other row's draw is unchanged (each row's draw depends on its row alone).
    undone: torch.Tensor | None = None
    filters = bool(options.top_k) or options.top_p < 1.0

    for step in range(steps):
        scored = apply_processors(log_probs.clone(), tokens[:, :step], runner.processors)
        masked = apply_step_masks(
            scored, automaton, rows, node, met, tokens[:, :step], eos, step, options
        )
        dead = ~torch.isfinite(masked).any(-1)  # (H,) no allowed token left
        scores = masked / options.temperature
        if undone is None:
            scores = filter_top_k_top_p(scores, options.top_k, options.top_p)
        elif filters:  # a finished row's draw is discarded: only the others need the filter
            scores[undone] = filter_top_k_top_p(scores[undone], options.top_k, options.top_p)
        # Keep softmax defined for rows with nothing allowed; their draw is discarded below.
        scores[:, pad_id] = torch.where(dead, 0.0, scores[:, pad_id])
        choice = torch.multinomial(scores.softmax(-1), 1, generator=generator).squeeze(-1)  # (H,)
        live = ~done & ~dead
        choice = torch.where(live, choice, torch.full_like(choice, pad_id))
        total += torch.where(live, log_probs.gather(1, choice.unsqueeze(1)).squeeze(1), 0.0)
        lengths += live.long()
        tokens[:, step] = choice
        ends = live & is_eos_token(choice, eos)
        finished |= ends
        stuck |= dead & ~done
        done |= ends | dead
        if automaton is not None:
            node, met = automaton.advance(rows, node, met, choice)
        if bool(done.all()):
            break
        if filters and (undone is not None or bool(done.any())):
            undone = (~done).nonzero().squeeze(-1)
        # Finished rows leave the model's batch once they are an eighth of it (their scores
        # stay, unused: a done row only ever takes the pad token and adds nothing).
        if compact and int(done[active].sum()) * 8 >= active.numel():
            keep = (~done[active]).nonzero().squeeze(-1)  # positions within the runner's rows
            if runner.select(keep):
                active = active[keep]
            else:
                compact = False
        if active.numel() == count:
            log_probs = torch.log_softmax(runner.step(choice), dim=-1)
        else:
            log_probs[active] = torch.log_softmax(runner.step(choice[active]), dim=-1)

    token_rows = tokens.tolist()
    lengths_l = lengths.tolist()
    finished_l = finished.tolist()
    kept = [
        row[: n - (1 if fin else 0)] for row, n, fin in zip(token_rows, lengths_l, finished_l)
    ]
    ends = [row[n - 1] if fin else None for row, n, fin in zip(token_rows, lengths_l, finished_l)]
    return _Draws(kept, total.tolist(), ends, (~stuck).tolist())


def sample(
    model: PreTrainedModel,
    tokenizer: Any = None,
    inputs: Inputs = (),
    constraints: Any = None,
    *,
    banned: Any = None,
    options: SamplingOptions | None = None,
    tokenize: TokenizeOptions | None = None,
    batch_size: int | None = None,
    eos_token_id: int | list[int] | None | str = "model",
    pad_token_id: int | None = None,
    max_input_tokens: int | None = None,
    generation_config: Any = "model",
    logits_processor: Any = None,
    **option_values: Any,
) -> list[list[GeneratedSequence]]:
    """Sample outputs under the same constraints as :func:`~dpc_decode.generate`.

    Parameters are those of :func:`~dpc_decode.generate`, with :class:`SamplingOptions`
    (``num_samples``, ``temperature``, ``top_k``, ``top_p``, ``unique``, ``max_rounds``,
    ``seed``, ``max_new_tokens``, ...) in place of the beam-search options. The score settings
    of ``generation_config`` and ``logits_processor`` apply to the log-probabilities before
    temperature, top-k and top-p; ``repetition_penalty`` and
    ``exponential_decay_length_penalty`` are refused (transformers applies them to raw logits).

    Returns
    -------
    list of list of GeneratedSequence
        Per input, ``num_samples`` outputs in the order drawn (``score`` is the log-probability
        under the model, before any processor). With ``unique=True`` they are distinct. A draw
        cut off by the masks (no allowed token left) is replaced by one drawn with the rules
        relaxed (:mod:`dpc_decode.fallback`), reported ``satisfied=False`` unless it meets the
        constraints.

    Examples
    --------
    >>> import torch
    >>> from transformers import GPT2Config, GPT2LMHeadModel
    >>> _ = torch.manual_seed(0)
    >>> model = GPT2LMHeadModel(GPT2Config(vocab_size=50, n_embd=16, n_layer=1, n_head=2,
    ...                                    bos_token_id=0, eos_token_id=0)).eval()
    >>> outs = sample(model, None, [[1, 2, 3]], [[[7], [9]]], banned=[[4]], num_samples=20,
    ...               unique=True, max_new_tokens=5, seed=1)[0]
    >>> len(outs), len({o.token_ids for o in outs}), all(o.satisfied for o in outs)
    (20, 20, True)
    """
    options = resolve_options(options, option_values, SamplingOptions)
    scores = score_settings(model, generation_config, logits_processor)
    scores.check_sampling()
    batch = DecodeBatch.prepare(
        model, tokenizer, inputs, constraints, banned, tokenize, eos_token_id, pad_token_id,
        max_input_tokens,
    )
    batch.check_positions(options.max_new_tokens)
    longest = max((len(ids) for ids in batch.input_ids), default=0)
    check_model_fits(model, options.num_samples, longest + options.max_new_tokens, "num_samples",
                     "samples")  # a size the allocator would refuse: one line, with the estimate
    if options.strict:
        batch.check_feasible(options.max_new_tokens)
    generator = None
    if options.seed is not None:
        generator = torch.Generator(device=model.device).manual_seed(options.seed)
    want = options.num_samples
    results: list[list[GeneratedSequence]] = [[] for _ in batch.input_ids]
    with inference(model):
        cut: set[int] = set()  # inputs with a draw cut off by the masks
        for rows in chunks(len(batch.input_ids), batch_size):
            cut |= _sample_rows(batch, list(rows), options, generator, results, scores, None)
        for relaxation in RELAXATIONS:
            short = [r for r in sorted(cut) if len(results[r]) < want]
            if not short or not relaxation.changes(options):
                continue
            cut = set()
            relaxed = relaxation.options(options)
            for part in chunks(len(short), batch_size):
                rows = [short[i] for i in part]
                cut |= _sample_rows(batch, rows, relaxed, generator, results,
                                    scores if relaxation.rules else None, relaxation)
    rounds = options.max_rounds if options.unique else 1
    for row, found in enumerate(results):
        if options.strict:
            for out in found or [None]:
                batch.raise_if_unsatisfied(row, out)  # returns for a satisfied output
        if len(found) < want:
            warnings.warn(
                f"input {row}: {len(found)} of {want} requested samples "
                f"({'distinct, ' if options.unique else ''}after {rounds} round(s))",
                stacklevel=2,
            )
    return results


def _sample_rows(
    batch: DecodeBatch,
    rows: list[int],
    options: SamplingOptions,
    generator: torch.Generator | None,
    results: list[list[GeneratedSequence]],
    scores: ScoreSettings | None,
    relaxation: Relaxation | None,
) -> set[int]:
    """Add samples of ``rows`` to ``results`` (up to ``num_samples`` each; distinct ones with
    ``unique``). Returns the rows that had a draw cut off by the masks."""
    want = options.num_samples
    seen: dict[int, set[tuple[int, ...]]] = {r: {o.token_ids for o in results[r]} for r in rows}
    pending = [r for r in rows if len(results[r]) < want]
    cut: set[int] = set()
    rounds = options.max_rounds if options.unique else 1
    model = batch.model
    for _ in range(rounds):
        if not pending:
            break
        ids, mask = batch.tensors(pending, model.device)
        if relaxation is None:
            automaton = batch.automaton(pending, model.device)
        else:
            automaton = relaxation.automaton(batch, pending, model.device)
        runner = scored_runner(
            model, scores, ids, mask, want, max_new_tokens=options.max_new_tokens,
            eos_ids=batch.eos_ids, sampling=True,
        )
        draws = _sample_batch(
            runner, ids, mask, automaton, options, batch.eos_ids, batch.pad_id, want, generator,
        )
        with gc_paused():
            for k, row in enumerate(pending):
                for d in range(k * want, (k + 1) * want):
                    if not draws.valid[d]:
                        cut.add(row)
                        continue
                    if len(results[row]) >= want:
                        continue
                    key = tuple(draws.tokens[d])
                    if options.unique and key in seen[row]:
                        continue
                    seen[row].add(key)
                    results[row].append(
                        batch.output(row, draws.tokens[d], draws.log_probs[d],
                                     draws.log_probs[d], draws.ends[d])
                    )
        pending = [r for r in pending if len(results[r]) < want]
    return cut
