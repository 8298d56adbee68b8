"""Which settings of a transformers ``GenerationConfig`` dpc applies, and how; none is ignored.

Every field of a ``GenerationConfig`` falls in one group:

* **search settings**, dpc's own options (:class:`~dpc_decode.options.BeamSearchOptions`,
  :class:`~dpc_decode.options.SamplingOptions`): ``max_new_tokens`` / ``max_length``,
  ``min_new_tokens`` / ``min_length``, ``num_beams``, ``num_return_sequences``,
  ``length_penalty``, ``early_stopping``, ``no_repeat_ngram_size``, ``do_sample``,
  ``temperature``, ``top_k``, ``top_p``. Through ``model.generate(custom_generate=...)`` they are
  read with transformers' precedence (arguments, then the ``generation_config`` given, then the
  model's) and with transformers' defaults (20 new tokens, ``top_k=50`` when sampling).
  :func:`dpc_decode.generate` and :func:`dpc_decode.sample` take them as options instead, so the
  model's values of these are not read there.
* **score settings**, applied with transformers' own logits processors
  (:mod:`dpc_decode.processors`): :data:`~dpc_decode.processors.SCORE_SETTINGS`.
* **special ids and outputs**: ``eos_token_id``, ``pad_token_id``, ``decoder_start_token_id``
  (used), ``bos_token_id`` (only for generating without a prompt, which dpc does not do),
  ``return_dict_in_generate`` (used by the ``custom_generate`` entry).
* **no effect on the outputs** (:data:`NO_EFFECT`): caching, compilation, memory, and the
  tuning knobs of assisted generation, which dpc never starts.
* **refused**: everything else (:data:`REFUSED` gives the reasons), as soon as it is set to a
  value other than its no-op default. A setting that belongs to the other mode (``temperature``
  in beam search, ``length_penalty`` when sampling) is refused when the caller set it, and not
  applicable when it only comes from the model's own ``generation_config`` (transformers warns
  in the first case and ignores it in the second).

>>> from transformers import GenerationConfig
>>> check_refused(GenerationConfig(penalty_alpha=0.6, top_k=4), "the generation_config")
Traceback (most recent call last):
...
dpc_errors.DpcError: dpc cannot apply what the generation_config sets: `penalty_alpha` (=0.6): contrastive search is not DPC beam search
"""

from __future__ import annotations

import copy
import functools
from dataclasses import dataclass
from typing import Any

from transformers import GenerationConfig

from dpc_decode.errors import DpcError
from dpc_decode.options import BeamSearchOptions, SamplingOptions
from dpc_decode.processors import SCORE_SETTINGS, ScoreSettings

__all__ = [
    "NO_EFFECT",
    "REFUSED",
    "SEARCH_SETTINGS",
    "GenerationRequest",
    "check_refused",
    "read_generation_request",
    "score_settings",
]

#: Search settings (dpc options).
SEARCH_SETTINGS = (
    "max_new_tokens", "max_length", "min_new_tokens", "min_length", "num_beams",
    "num_return_sequences", "length_penalty", "early_stopping", "no_repeat_ngram_size",
    "do_sample", "temperature", "top_k", "top_p",
)
_SPECIAL = ("eos_token_id", "pad_token_id", "bos_token_id", "decoder_start_token_id",
            "return_dict_in_generate")
#: Settings that do not change which tokens are generated.
NO_EFFECT = (
    "use_cache", "cache_implementation", "cache_config", "max_cache_len", "compile_config",
    "disable_compile", "low_memory", "prefill_chunk_size", "continuous_batching_config",
    "is_assistant", "num_assistant_tokens", "num_assistant_tokens_schedule",
    "assistant_confidence_threshold", "max_matching_ngram_size", "assistant_lookbehind",
    "target_lookbehind", "assistant_ensemble_weight", "speculation_type", "transformers_version",
    "_from_model_config", "output_attentions", "output_hidden_states", "output_scores",
    "output_logits",
)
#: Refused settings and why. Output flags are refused only through ``custom_generate`` (below).
REFUSED = {
    "guidance_scale": "classifier-free guidance needs a second, unconditional model pass",
    "watermarking_config": "watermarking is not implemented in dpc's search",
    "encoder_repetition_penalty": "dpc's processors see the decoder history, not the source",
    "encoder_no_repeat_ngram_size": "dpc's processors see the decoder history, not the source",
    "penalty_alpha": "contrastive search is not DPC beam search",
    "dola_layers": "DoLa decoding is not DPC beam search",
    "num_beam_groups": "group (diverse) beam search is not DPC beam search",
    "diversity_penalty": "group (diverse) beam search is not DPC beam search",
    "constraints": "give dpc constraints as `constraints=` (disjunctive sets of phrases)",
    "force_words_ids": "give dpc constraints as `constraints=` (disjunctive sets of phrases)",
    "token_healing": "token healing rewrites the prompt, which dpc does not do",
    "stop_strings": "dpc stops at EOS or max_new_tokens only",
    "max_time": "dpc stops at EOS or max_new_tokens only",
    "use_mtp": "multi-token prediction is not DPC beam search",
    "prompt_lookup_num_tokens": "assisted (prompt-lookup) decoding is not DPC beam search",
    "assistant_early_exit": "assisted decoding is not DPC beam search",
    "min_p": "dpc's sampler has temperature, top_k and top_p only",
    "top_h": "dpc's sampler has temperature, top_k and top_p only",
    "typical_p": "dpc's sampler has temperature, top_k and top_p only",
    "epsilon_cutoff": "dpc's sampler has temperature, top_k and top_p only",
    "eta_cutoff": "dpc's sampler has temperature, top_k and top_p only",
}
_SAMPLER_ONLY = ("min_p", "top_h", "typical_p", "epsilon_cutoff", "eta_cutoff")
_OUTPUT_FLAGS = ("output_scores", "output_logits", "output_attentions", "output_hidden_states")
#: Values that leave decoding as it is (a setting at one of these is not "set").
_NO_OP = {
    "repetition_penalty": 1.0, "encoder_repetition_penalty": 1.0, "no_repeat_ngram_size": 0,
    "encoder_no_repeat_ngram_size": 0, "num_beam_groups": 1, "diversity_penalty": 0.0,
    "guidance_scale": 1.0, "typical_p": 1.0, "epsilon_cutoff": 0.0, "eta_cutoff": 0.0,
    "temperature": 1.0, "top_p": 1.0, "length_penalty": 1.0, "num_beams": 1, "min_length": 0,
    "min_new_tokens": 0, "num_return_sequences": 1,
}
_SAMPLING_SETTINGS = ("temperature", "top_k", "top_p", *_SAMPLER_ONLY)
_BEAM_SETTINGS = ("num_beams", "length_penalty", "early_stopping")


def _is_set(name: str, value: Any) -> bool:
    if value is None or value is False:
        return False
    return not (name in _NO_OP and value == _NO_OP[name])


@functools.cache
def _config_fields() -> tuple[str, ...]:
    return tuple(k for k in GenerationConfig().to_dict() if not k.startswith("_"))


def check_refused(config: Any, where: str, ignore: tuple[str, ...] = ()) -> None:
    """Raise :class:`DpcError` for the first refused setting ``config`` sets (score settings,
    search settings, special ids and no-effect settings pass; so do the names in ``ignore``)."""
    accepted = (*SEARCH_SETTINGS, *SCORE_SETTINGS, *_SPECIAL, *NO_EFFECT)
    refused = []
    for name in _config_fields():
        if name in ignore or name in accepted:
            continue
        value = getattr(config, name, None)
        if _is_set(name, value):
            reason = REFUSED.get(name, "a setting dpc does not know")
            refused.append(f"`{name}` (={value!r}): {reason}")
    if refused:
        raise DpcError(f"dpc cannot apply what {where} sets: {'; '.join(refused)}")


def score_settings(model: Any, generation_config: Any = "model",
                   logits_processor: Any = None) -> ScoreSettings:
    """For :func:`dpc_decode.generate` and :func:`dpc_decode.sample`: the score settings of
    ``generation_config`` (``"model"``: the model's; ``None``: none) and ``logits_processor``.
    Refused settings raise; search settings are the options' business and are not read here."""
    if isinstance(generation_config, str):
        if generation_config != "model":
            raise DpcError(
                f"`generation_config` (={generation_config!r}) must be a GenerationConfig, None "
                "or 'model'"
            )
        generation_config = getattr(model, "generation_config", None)
        where = "the model's generation_config (pass generation_config=None to decode without it)"
    elif generation_config is not None and not isinstance(generation_config, GenerationConfig):
        raise DpcError(
            f"`generation_config` must be a GenerationConfig, None or 'model', got "
            f"{type(generation_config).__name__}"
        )
    else:
        where = "the generation_config"
    if generation_config is not None:
        check_refused(generation_config, where, ignore=_SAMPLER_ONLY)
    return ScoreSettings.from_config(generation_config, logits_processor)


@dataclass(frozen=True)
class GenerationRequest:
    """A ``model.generate(custom_generate=...)`` call, resolved.

    Attributes
    ----------
    sampling : bool
        ``do_sample``.
    options : BeamSearchOptions or SamplingOptions
    config : GenerationConfig
        The merged settings; their score settings are what the search applies.
    eos_token_id, pad_token_id : as the merged config gives them (``None``: the model's).
    return_dict : bool
    """

    sampling: bool
    options: BeamSearchOptions | SamplingOptions
    config: GenerationConfig
    eos_token_id: Any
    pad_token_id: int | None
    return_dict: bool


def read_generation_request(
    model: Any,
    generation_config: GenerationConfig | None,
    kwargs: dict[str, Any],
    input_width: int,
    strict: bool = False,
    feasible: bool = True,
    score_slots: int | None = None,
    search: str | None = None,
    prune_factor: int | None = None,
    sat_tolerance: int | None = None,
    lookahead: int | None = None,
    lookahead_weight: float | None = None,
) -> tuple[GenerationRequest, dict[str, Any]]:
    """Merge settings as transformers does (``kwargs`` > ``generation_config`` > the model's),
    refuse what dpc cannot apply, and map the rest to dpc options and score settings.

    ``input_width`` is the length of ``input_ids`` (decoder-only) or 1 (encoder-decoder), to turn
    ``max_length`` / ``min_length`` into new tokens. ``strict``, ``feasible``, ``score_slots``,
    ``search``, ``prune_factor``, ``sat_tolerance``, ``lookahead`` and ``lookahead_weight`` are
    dpc's own (:class:`~dpc_decode.options.BeamSearchOptions`); all but the first two, when not
    given, are read
    from the generation config where it carries them as entries of its own
    (``GenerationConfig(num_beams=8, search="neurologic")``), and are refused when sampling.
    Returns the request and the kwargs that are not generation settings (model inputs such as
    ``attention_mask``).
    """
    model_config = getattr(model, "generation_config", None) or GenerationConfig()
    merged = copy.deepcopy(generation_config) if generation_config is not None else GenerationConfig()
    user_set = set()
    if generation_config is not None:
        for name in _config_fields():
            value = getattr(generation_config, name, None)
            if value is not None and value != getattr(model_config, name, None):
                user_set.add(name)
    merged.update(**model_config.to_dict(), defaults_only=True, allow_custom_entries=True)
    fields = set(_config_fields())
    settings = {k: v for k, v in kwargs.items() if k in fields}
    rest = {k: v for k, v in kwargs.items() if k not in fields}
    merged.update(**settings)
    user_set |= set(settings)

    def source(name: str) -> str:
        return "" if name in user_set else " (from the model's generation_config)"

    check_refused(merged, "the generation settings", ignore=(*_SAMPLER_ONLY, *_OUTPUT_FLAGS))
    for name in _OUTPUT_FLAGS:
        if getattr(merged, name, None):
            raise DpcError(
                f"`{name}`{source(name)} is set: dpc custom_generate returns `sequences`, "
                "`sequences_scores` and `dpc_outputs` (the full reports), not scores, logits, "
                "attentions or hidden states"
            )
    sampling = bool(merged.do_sample)
    num_beams = merged.num_beams or 1
    if sampling and num_beams > 1:
        raise DpcError(
            f"`do_sample=True`{source('do_sample')} with `num_beams` (={num_beams})"
            f"{source('num_beams')} is beam sampling, which dpc does not do: pass do_sample=False "
            "for DPC beam search, or num_beams=1 to sample"
        )
    other_mode = _BEAM_SETTINGS if sampling else _SAMPLING_SETTINGS
    for name in other_mode:
        value = getattr(merged, name, None)
        if name in user_set and _is_set(name, value) and not (name == "top_k" and value == 50):
            mode = "beam search" if not sampling else "sampling"
            raise DpcError(
                f"`{name}` (={value!r}) has no meaning in {mode} (do_sample={sampling}); "
                f"drop it{', or pass do_sample=True' if not sampling else ''}"
            )
    if sampling:
        for name in _SAMPLER_ONLY:
            value = getattr(merged, name, None)
            if _is_set(name, value):
                raise DpcError(f"`{name}` (={value!r}){source(name)} is set: {REFUSED[name]}")

    max_new = merged.max_new_tokens
    if max_new is None:
        if merged.max_length is not None:
            max_new = merged.max_length - input_width
            if max_new < 1:
                raise DpcError(
                    f"`max_length` (={merged.max_length}){source('max_length')} leaves no room "
                    f"after the {input_width} input tokens; set max_new_tokens"
                )
        else:
            max_new = 20
    min_new = merged.min_new_tokens
    if min_new is None:
        min_new = max(0, (merged.min_length or 0) - input_width)
    common = {
        "max_new_tokens": max_new,
        "min_new_tokens": min(min_new, max_new),
        "no_repeat_ngram_size": merged.no_repeat_ngram_size or 0,
        "strict": strict,
        "feasible": feasible,
    }
    options: BeamSearchOptions | SamplingOptions
    given = {"score_slots": score_slots, "search": search, "prune_factor": prune_factor,
             "sat_tolerance": sat_tolerance, "lookahead": lookahead,
             "lookahead_weight": lookahead_weight}
    beam_options = {}
    for name, value in given.items():
        if value is None:
            value = getattr(merged, name, None)
        if value is not None:
            beam_options[name] = value
    if sampling:
        for name, value in beam_options.items():
            if value != getattr(BeamSearchOptions, name):
                raise DpcError(f"`{name}` (={value!r}) is a beam search option; sampling "
                               "keeps no beams")
    if sampling:
        options = SamplingOptions(
            num_samples=merged.num_return_sequences or 1,
            temperature=merged.temperature if merged.temperature is not None else 1.0,
            top_k=merged.top_k if merged.top_k is not None else 50,
            top_p=merged.top_p if merged.top_p is not None else 1.0,
            **common,
        )
    else:
        options = BeamSearchOptions(
            num_beams=num_beams,
            num_return_sequences=merged.num_return_sequences or 1,
            length_penalty=merged.length_penalty if merged.length_penalty is not None else 1.0,
            early_stopping=merged.early_stopping if merged.early_stopping is not None else False,
            **beam_options,
            **common,
        )
    request = GenerationRequest(
        sampling=sampling,
        options=options,
        config=merged,
        eos_token_id=merged.eos_token_id,
        pad_token_id=merged.pad_token_id,
        return_dict=bool(merged.return_dict_in_generate),
    )
    return request, rest
