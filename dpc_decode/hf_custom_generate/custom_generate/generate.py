"""transformers ``custom_generate`` entry of dpc: DPC beam search (or sampling) from
``model.generate``.

Use::

    from dpc_decode import CUSTOM_GENERATE_DIR
    out = model.generate(input_ids, attention_mask=mask, custom_generate=str(CUSTOM_GENERATE_DIR),
                         trust_remote_code=True, constraints=[[[31, 7], [31]], [[88]]],
                         num_beams=8, max_new_tokens=20)

transformers runs this file instead of its own decoding loop. It requires the ``dpc`` package
to be installed (``requirements.txt``); all the work is done by :func:`dpc_decode.generate`.
Generation settings are read as transformers reads them (arguments, then ``generation_config``,
then the model's) and each is applied or refused (:mod:`dpc_decode.generation_config`).
"""

from __future__ import annotations

from typing import Any

import torch

from dpc_decode import DpcError
from dpc_decode import generate as dpc_generate
from dpc_decode import sample as dpc_sample
from dpc_decode.generation_config import read_generation_request
from dpc_decode.model_runner import decoder_start_id

#: Arguments transformers' ``generate`` always passes on; ``None`` (or empty) means unused.
_UNSUPPORTED_ARGUMENTS = {
    "stopping_criteria": "dpc stops at EOS or max_new_tokens only",
    "prefix_allowed_tokens_fn": "give dpc constraints as `constraints=` or `banned=`",
    "assistant_model": "assisted decoding is not DPC beam search",
    "streamer": "dpc returns whole outputs, it does not stream",
    "negative_prompt_ids": "classifier-free guidance is not DPC beam search",
    "negative_prompt_attention_mask": "classifier-free guidance is not DPC beam search",
    "synced_gpus": "dpc decodes on one device",
}


def generate(
    model: Any,
    inputs: torch.Tensor | None = None,
    generation_config: Any = None,
    logits_processor: Any = None,
    constraints: Any = None,
    banned: Any = None,
    tokenizer: Any = None,
    strict: bool = False,
    feasible: bool = True,
    score_slots: int | None = None,
    search: str | None = None,
    prune_factor: int | None = None,
    sat_tolerance: int | None = None,
    lookahead: int | None = None,
    lookahead_weight: float | None = None,
    tokenize: Any = None,
    **kwargs: Any,
) -> Any:
    """Decode with dpc; returns token ids shaped as transformers does (prompt included for
    decoder-only models, the decoder start token first for encoder-decoder models), one row per
    input and returned sequence, or with ``return_dict_in_generate=True`` a dict with
    ``sequences``, ``sequences_scores`` and ``dpc_outputs`` (the full
    :class:`dpc_decode.GeneratedSequence` reports). ``logits_processor`` objects are applied
    after the ones the settings ask for, as transformers does. ``tokenize`` is
    :class:`dpc_decode.TokenizeOptions` for text constraints (``whole_word=True``: whole words);
    ``strict``, ``feasible``, ``score_slots``, ``search``, ``prune_factor``,
    ``sat_tolerance``, ``lookahead`` and ``lookahead_weight`` are
    :class:`dpc_decode.BeamSearchOptions`' (all but the first two may also come as entries of
    the generation config: ``GenerationConfig(search="neurologic")``)."""
    for name, reason in _UNSUPPORTED_ARGUMENTS.items():
        value = kwargs.pop(name, None)
        if value is not None and value is not False and not (isinstance(value, list) and not value):
            raise DpcError(f"dpc custom_generate got `{name}`: {reason}")
    input_ids = inputs if inputs is not None else kwargs.pop("input_ids", None)
    if input_ids is None:
        raise DpcError("dpc custom_generate needs `input_ids` (or `inputs`)")
    attention_mask = kwargs.pop("attention_mask", None)
    if attention_mask is None:
        attention_mask = torch.ones_like(input_ids)
    is_enc_dec = bool(model.config.is_encoder_decoder)
    request, rest = read_generation_request(
        model, generation_config, kwargs, 1 if is_enc_dec else input_ids.shape[-1],
        strict=strict, feasible=feasible, score_slots=score_slots, search=search,
        prune_factor=prune_factor, sat_tolerance=sat_tolerance, lookahead=lookahead,
        lookahead_weight=lookahead_weight,
    )
    unused = sorted(k for k, v in rest.items() if v is not None)
    if unused:
        raise DpcError(f"dpc custom_generate does not use {', '.join(f'`{k}`' for k in unused)}")
    prompts = [row[m.bool()].tolist() for row, m in zip(input_ids.cpu(), attention_mask.cpu())]

    decode = dpc_sample if request.sampling else dpc_generate
    results = decode(model, tokenizer, prompts, constraints, banned=banned,
                     options=request.options, eos_token_id=request.eos_token_id,
                     pad_token_id=request.pad_token_id, generation_config=request.config,
                     logits_processor=logits_processor, tokenize=tokenize)

    eos = request.eos_token_id
    pad_id = request.pad_token_id if request.pad_token_id is not None else 0
    eos_ids = [eos] if isinstance(eos, int) else list(eos or [])
    if is_enc_dec:
        heads = [[decoder_start_id(model)] for _ in prompts]
    else:
        heads = [list(map(int, row)) for row in input_ids.cpu()]  # the (padded) prompt as given
    per_input = getattr(request.options, "num_return_sequences", None) or request.options.num_samples
    rows, scores = [], []
    for head, outputs in zip(heads, results):
        for out in outputs:
            tail = list(out.token_ids) + ([eos_ids[0]] if out.finished and eos_ids else [])
            rows.append(head + tail)
            scores.append(out.score)
        # One row per input and sequence even if an input got fewer (a vocabulary smaller than
        # the beam): the prompt alone, scored -inf; `dpc_outputs` shows what was found.
        for _ in range(per_input - len(outputs)):
            rows.append(list(head))
            scores.append(float("-inf"))
    width = max((len(r) for r in rows), default=0)
    sequences = torch.full((len(rows), width), pad_id, dtype=torch.long)
    for i, r in enumerate(rows):
        sequences[i, : len(r)] = torch.tensor(r, dtype=torch.long)
    sequences = sequences.to(input_ids.device)
    if not request.return_dict:
        return sequences
    return {
        "sequences": sequences,
        "sequences_scores": torch.tensor(scores),
        "dpc_outputs": results,
    }
