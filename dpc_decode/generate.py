"""``generate``: constrained beam search over any Hugging Face seq2seq or causal LM."""

from __future__ import annotations

from typing import Any

from transformers import PreTrainedModel

from dpc_decode.batch import DecodeBatch, Inputs, chunks, inference, resolve_options
from dpc_decode.constraints import TokenizeOptions
from dpc_decode.model_runner import ModelRunner
from dpc_decode.options import BeamSearchOptions
from dpc_decode.outputs import GeneratedSequence
from dpc_decode.search import beam_search

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
        Which token forms text alternatives expand to (default: the word-initial form).
    batch_size : int, optional
        Decode at most this many inputs at once (bounds memory; default: all).
    eos_token_id : int, list of int, None or "model"
        Token(s) that end an output; ``"model"`` takes the model's generation config, ``None``
        generates exactly ``max_new_tokens``.
    pad_token_id : int, optional
        Padding id for prompts (default: the model's pad, else its EOS).
    max_input_tokens : int, optional
        Truncate longer inputs, with a warning.

    Returns
    -------
    list of list of GeneratedSequence
        Per input, up to ``num_return_sequences`` outputs, best first: satisfied outputs before
        unsatisfied ones, then by score. An unsatisfied output comes back only when the
        constraints could not be met (``satisfied=False``), or ``strict=True`` raises instead.

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
    batch = DecodeBatch.prepare(
        model, tokenizer, inputs, constraints, banned, tokenize, eos_token_id, pad_token_id,
        max_input_tokens,
    )
    if options.strict:
        batch.check_feasible(options.max_new_tokens)
    results: list[list[GeneratedSequence]] = []
    with inference(model):
        for rows in chunks(len(batch.input_ids), batch_size):
            device = model.device
            input_ids, attention_mask = batch.tensors(rows, device)
            found = beam_search(
                ModelRunner(model),
                input_ids,
                attention_mask,
                batch.automaton(rows, device),
                options,
                batch.eos_ids,
                batch.pad_id,
            )
            results.extend(_report(batch, rows, found, options))
    return results


def _report(batch: DecodeBatch, rows: range, found: Any, options: BeamSearchOptions) -> list[list[GeneratedSequence]]:
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
            outputs.append(
                batch.output(row, tokens[k][j][:n], log_probs[k][j], scores[k][j], finished[k][j])
            )
        if options.strict:
            batch.raise_if_unsatisfied(row, outputs[0] if outputs else None)
        out.append(outputs)
    return out
