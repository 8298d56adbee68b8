"""transformers ``custom_generate`` entry of dpc: DPC beam search (or sampling) from
``model.generate``.

Use::

    from dpc_decode import CUSTOM_GENERATE_DIR
    out = model.generate(input_ids, attention_mask=mask, custom_generate=str(CUSTOM_GENERATE_DIR),
                         trust_remote_code=True, constraints=[[[31, 7], [31]], [[88]]],
                         num_beams=8, max_new_tokens=20)

transformers runs this file instead of its own decoding loop. It requires the ``dpc`` package
to be installed (``requirements.txt``); all the work is done by :func:`dpc_decode.generate`.
"""

from __future__ import annotations

import warnings
from typing import Any

import torch


def _setting(name: str, kwargs: dict[str, Any], config: Any, model: Any, default: Any) -> Any:
    if name in kwargs:
        return kwargs.pop(name)
    for source in (config, getattr(model, "generation_config", None)):
        value = getattr(source, name, None) if source is not None else None
        if value is not None:
            return value
    return default


def generate(
    model: Any,
    inputs: torch.Tensor | None = None,
    generation_config: Any = None,
    logits_processor: Any = None,
    stopping_criteria: Any = None,
    constraints: Any = None,
    banned: Any = None,
    tokenizer: Any = None,
    **kwargs: Any,
) -> Any:
    """Decode with dpc; returns token ids shaped as transformers does (prompt included for
    decoder-only models, the decoder start token first for encoder-decoder models), or with
    ``return_dict_in_generate=True`` a dict with ``sequences``, ``sequences_scores`` and
    ``dpc_outputs`` (the full :class:`dpc_decode.GeneratedSequence` reports)."""
    from dpc_decode import BeamSearchOptions, SamplingOptions
    from dpc_decode import generate as dpc_generate
    from dpc_decode import sample as dpc_sample

    if logits_processor or stopping_criteria:
        warnings.warn("dpc custom_generate ignores `logits_processor` and `stopping_criteria`",
                      stacklevel=2)
    input_ids = inputs if inputs is not None else kwargs.pop("input_ids", None)
    if input_ids is None:
        raise ValueError("dpc custom_generate needs `input_ids` (or `inputs`)")
    attention_mask = kwargs.pop("attention_mask", None)
    if attention_mask is None:
        attention_mask = torch.ones_like(input_ids)
    prompts = [row[m.bool()].tolist() for row, m in zip(input_ids.cpu(), attention_mask.cpu())]

    cfg = generation_config
    common = {
        "max_new_tokens": _setting("max_new_tokens", kwargs, cfg, model, 20),
        "min_new_tokens": _setting("min_new_tokens", kwargs, cfg, model, 0) or 0,
        "no_repeat_ngram_size": _setting("no_repeat_ngram_size", kwargs, cfg, model, 0) or 0,
        "strict": kwargs.pop("strict", False),
        "feasible": kwargs.pop("feasible", True),
    }
    do_sample = bool(_setting("do_sample", kwargs, cfg, model, False))
    return_dict = bool(_setting("return_dict_in_generate", kwargs, cfg, model, False))
    eos = _setting("eos_token_id", kwargs, cfg, model, None)
    pad = _setting("pad_token_id", kwargs, cfg, model, None)
    if do_sample:
        options: Any = SamplingOptions(
            num_samples=_setting("num_return_sequences", kwargs, cfg, model, 1),
            temperature=_setting("temperature", kwargs, cfg, model, 1.0),
            top_k=_setting("top_k", kwargs, cfg, model, 0) or 0,
            top_p=_setting("top_p", kwargs, cfg, model, 1.0),
            **common,
        )
        results = dpc_sample(model, tokenizer, prompts, constraints, banned=banned,
                             options=options, eos_token_id=eos, pad_token_id=pad)
    else:
        options = BeamSearchOptions(
            num_beams=_setting("num_beams", kwargs, cfg, model, 1),
            num_return_sequences=_setting("num_return_sequences", kwargs, cfg, model, 1),
            length_penalty=_setting("length_penalty", kwargs, cfg, model, 1.0),
            early_stopping=_setting("early_stopping", kwargs, cfg, model, False),
            **common,
        )
        results = dpc_generate(model, tokenizer, prompts, constraints, banned=banned,
                               options=options, eos_token_id=eos, pad_token_id=pad)

    pad_id = pad if pad is not None else 0
    eos_ids = [eos] if isinstance(eos, int) else list(eos or [])
    if model.config.is_encoder_decoder:
        start = model.generation_config.decoder_start_token_id
        if start is None:
            start = model.config.decoder_start_token_id
        heads = [[start] for _ in prompts]
    else:
        heads = [list(map(int, row)) for row in input_ids.cpu()]  # the (padded) prompt as given
    rows, scores = [], []
    for head, outputs in zip(heads, results):
        for out in outputs:
            tail = list(out.token_ids) + ([eos_ids[0]] if out.finished and eos_ids else [])
            rows.append(head + tail)
            scores.append(out.score)
    width = max((len(r) for r in rows), default=0)
    sequences = torch.full((len(rows), width), pad_id, dtype=torch.long)
    for i, r in enumerate(rows):
        sequences[i, : len(r)] = torch.tensor(r, dtype=torch.long)
    sequences = sequences.to(input_ids.device)
    if not return_dict:
        return sequences
    return {
        "sequences": sequences,
        "sequences_scores": torch.tensor(scores),
        "dpc_outputs": results,
    }
