"""``generate``: constrained beam search over any Hugging Face seq2seq or causal LM."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from transformers import PreTrainedModel

from dpc_decode.batch import DecodeBatch, Inputs, chunks, gc_paused, inference, resolve_options
from dpc_decode.constraints import TokenizeOptions
from dpc_decode.fallback import RELAXATIONS, fill
from dpc_decode.generation_config import score_settings
from dpc_decode.memory import check_model_fits
from dpc_decode.model_runner import scored_runner
from dpc_decode.options import BeamSearchOptions
from dpc_decode.outputs import GeneratedSequence
from dpc_decode.processors import ScoreSettings
from dpc_decode.search import beam_search
from dpc_decode.tensor_automaton import TensorAutomaton

__all__ = ["generate"]


def generate(
    model: PreTrainedModel,
    tokenizer: Any = None,
    inputs: Inputs = (),
    constraints: Any = None,
    *,
    banned: Any = None,
    options: BeamSearchOptions | None = None,
    tokenize: TokenizeOptions | None = None,
    batch_size: int | None = None,
    eos_token_id: int | list[int] | None | str = "model",
    pad_token_id: int | None = None,
    max_input_tokens: int | None = None,
    generation_config: Any = "model",
    logits_processor: Any = None,
    **option_values: Any,
) -> list[list[GeneratedSequence]]:
    """Beam search in which every output contains an alternative of every constraint set.

    Parameters
    ----------
    model : PreTrainedModel
        An ``AutoModelForSeq2SeqLM`` or ``AutoModelForCausalLM`` model.
    tokenizer : tokenizer or None
        Needed when inputs, constraints or banned phrases are text.
    inputs : list of str or list of list of int
        Prompts (decoder-only) or source sentences (encoder–decoder). A single string is one input.
    constraints : list of sets, or one list of sets per input
        ``[["rain", "rained", "rainy"], ["umbrella"]]``: "rain" or "rained" or "rainy", and
        "umbrella". Alternatives are text or token-id lists; see :mod:`dpc_decode.constraints`.
    banned : list of phrases, or one list per input
        Phrases that must never be generated.
    options : BeamSearchOptions, optional
        Search options; or give them as keywords (``num_beams=10``, ``max_new_tokens=30``, ...).
    tokenize : TokenizeOptions, optional
        Which token forms text alternatives expand to (default: the word-initial form), and
        whether they must be whole words (``TokenizeOptions(whole_word=True)``: "rain" is then
        not met by "rained"; off by default).
    batch_size : int, optional
        Decode at most this many inputs at once (bounds memory; default: all).
    eos_token_id : int, list of int, None or "model"
        Token(s) that end an output; ``"model"`` takes the model's generation config, ``None``
        generates exactly ``max_new_tokens``.
    pad_token_id : int, optional
        Padding id for prompts (default: the model's pad, else its EOS).
    max_input_tokens : int, optional
        Truncate longer inputs, with a warning (text keeps its special tokens). Without it, an
        input longer than the model's absolute position table holds (BERT, GPT-2, BART: see
        :func:`~dpc_decode.batch.position_limit`) raises :class:`~dpc_decode.errors.DpcError`
        naming the input, its token count and the limit, before anything runs;
        :func:`~dpc_decode.batch.cut_to_tokens` cuts a text to a token budget.
    generation_config : GenerationConfig, None or "model"
        Whose transformers score settings apply (forced BOS/EOS, ``bad_words_ids``,
        ``repetition_penalty``, ``suppress_tokens``, ...; see :mod:`dpc_decode.generation_config`):
        ``"model"`` the model's, ``None`` none. Search settings come from ``options``, never from
        here; a setting dpc cannot apply raises :class:`~dpc_decode.errors.DpcError`.
    logits_processor : list of LogitsProcessor, optional
        More transformers processors, applied after those of ``generation_config``.

    Returns
    -------
    list of list of GeneratedSequence
        Per input, ``num_return_sequences`` outputs, best first: satisfied outputs before
        unsatisfied ones, then by score. An unsatisfied output comes back only when the
        constraints could not be met (``satisfied=False``), or ``strict=True`` raises instead.
        An input whose every hypothesis was cut off is decoded again with the rules relaxed
        (:mod:`dpc_decode.fallback`), so no input comes back empty.

    Examples
    --------
    >>> import torch
    >>> from transformers import GPT2Config, GPT2LMHeadModel
    >>> _ = torch.manual_seed(0)
    >>> model = GPT2LMHeadModel(GPT2Config(vocab_size=50, n_embd=16, n_layer=1, n_head=2,
    ...                                    bos_token_id=0, eos_token_id=0)).eval()
    >>> out = generate(model, None, [[1, 2, 3]], [[[7, 8], [9]], [[11]]], num_beams=4,
    ...                max_new_tokens=6)
    >>> best = out[0][0]
    >>> best.satisfied, len(best.token_ids) <= 6, best.matches[1].token_ids
    (True, True, (11,))
    """
    options = resolve_options(options, option_values, BeamSearchOptions)
    scores = score_settings(model, generation_config, logits_processor)
    batch = DecodeBatch.prepare(
        model, tokenizer, inputs, constraints, banned, tokenize, eos_token_id, pad_token_id,
        max_input_tokens,
    )
    batch.check_positions(options.max_new_tokens)
    longest = max((len(ids) for ids in batch.input_ids), default=0)
    check_model_fits(model, options.num_beams, longest + options.max_new_tokens, "num_beams",
                     "beams")  # a size the allocator would refuse: one line, with the estimate
    if options.strict:
        batch.check_feasible(options.max_new_tokens)
    want = options.num_return_sequences
    results: list[list[GeneratedSequence]] = []
    with inference(model):
        for rows in chunks(len(batch.input_ids), batch_size):
            automaton = batch.automaton(rows, model.device)
            results.extend(_decode(batch, rows, options, scores, automaton))
        for relaxation in RELAXATIONS:
            short = [r for r, found in enumerate(results) if len(found) < want]
            if not short or not relaxation.changes(options):
                continue
            relaxed = relaxation.options(options)
            for part in chunks(len(short), batch_size):
                rows = [short[i] for i in part]
                automaton = relaxation.automaton(batch, rows, model.device)
                extra = _decode(batch, rows, relaxed, scores if relaxation.rules else None,
                                automaton)
                for row, outputs in zip(rows, extra):
                    results[row] = fill(results[row], outputs, want)
    if options.strict:
        for row, found in enumerate(results):
            batch.raise_if_unsatisfied(row, found[0] if found else None)
    return results


def _decode(
    batch: DecodeBatch,
    rows: Sequence[int],
    options: BeamSearchOptions,
    scores: ScoreSettings | None,
    automaton: TensorAutomaton | None,
) -> list[list[GeneratedSequence]]:
    """Beam search over ``rows`` and their reports (an input may get fewer outputs than asked)."""
    model = batch.model
    input_ids, attention_mask = batch.tensors(rows, model.device)
    runner = scored_runner(
        model, scores, input_ids, attention_mask, options.num_beams,
        max_new_tokens=options.max_new_tokens, eos_ids=batch.eos_ids, sampling=False,
    )
    found = beam_search(runner, input_ids, attention_mask, automaton, options, batch.eos_ids,
                        batch.pad_id)
    return _report(batch, rows, found)


@gc_paused()
def _report(batch: DecodeBatch, rows: Sequence[int], found: Any) -> list[list[GeneratedSequence]]:
    tokens = found.tokens.tolist()
    lengths = found.lengths.tolist()
    log_probs = found.log_probs.tolist()
    scores = found.scores.tolist()
    finished = found.finished.tolist()
    valid = found.valid.tolist()
    out: list[list[GeneratedSequence]] = []
    for k, row in enumerate(rows):
        outputs = []
        for j in range(len(tokens[k])):
            if not valid[k][j]:
                continue
            n = lengths[k][j] - (1 if finished[k][j] else 0)
            end = tokens[k][j][n] if finished[k][j] else None  # the EOS the hypothesis took
            outputs.append(batch.output(row, tokens[k][j][:n], log_probs[k][j], scores[k][j], end))
        out.append(outputs)
    return out
