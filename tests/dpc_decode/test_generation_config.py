"""transformers generation settings: each one is applied as transformers applies it, or refused
with an error that names it; none is ignored."""

from __future__ import annotations

import pytest
import torch
from transformers import GenerationConfig, LogitsProcessor, LogitsProcessorList

from dpc_decode import CUSTOM_GENERATE_DIR, DpcError, generate, sample, satisfies
from dpc_decode.generation_config import REFUSED

from .conftest import EOS, tiny_bart, tiny_gpt2, tiny_t5

PROMPTS = [[5, 6, 7, 8], [11, 12, 13, 3]]
SEARCH = {"num_beams": 4, "num_return_sequences": 2, "do_sample": False}


def plain_first_tokens(model) -> tuple[int, int]:
    """The first generated token of the best output of each prompt, unconstrained: settings
    built on them are sure to change the outputs."""
    out = generate(model, None, PROMPTS, num_beams=4, max_new_tokens=8)
    return out[0][0].token_ids[0], out[1][0].token_ids[0]


def score_settings_for(model) -> dict[str, dict]:
    a, b = plain_first_tokens(model)
    settings = {
        "forced_eos_token_id": {"forced_eos_token_id": EOS},
        "bad_words_ids": {"bad_words_ids": [[a], [b, b]]},
        "repetition_penalty": {"repetition_penalty": 1.8},
        "suppress_tokens": {"suppress_tokens": [a, b]},
        "begin_suppress_tokens": {"begin_suppress_tokens": [a, b]},
        "sequence_bias": {"sequence_bias": {(a,): -4.0, (b, b): -2.0, (9,): 1.5}},
        "exponential_decay_length_penalty": {"exponential_decay_length_penalty": (2, 1.5),
                                             "eos_token_id": a},
        "remove_invalid_values": {"remove_invalid_values": True, "suppress_tokens": [a]},
        "renormalize_logits": {"renormalize_logits": True, "suppress_tokens": [a, b]},
    }
    if model.config.is_encoder_decoder:
        settings["forced_bos_token_id"] = {"forced_bos_token_id": 9}
    return settings


def generated(model, sequences: list[list[int]], eos: int) -> list[list[int]]:
    """Generated tokens of transformers-shaped rows, up to and without the first EOS."""
    start = 1 if model.config.is_encoder_decoder else len(PROMPTS[0])
    rows = []
    for seq in sequences:
        gen = seq[start:]
        rows.append(gen[: gen.index(eos)] if eos in gen else gen)
    return rows


def transformers_outputs(model, **settings):
    ids = torch.tensor(PROMPTS)
    out = model.generate(ids, attention_mask=torch.ones_like(ids), return_dict_in_generate=True,
                         output_scores=True, **SEARCH, **settings)
    eos = settings.get("eos_token_id", EOS)
    return generated(model, out.sequences.tolist(), eos), out.sequences_scores.tolist()


def dpc_custom_outputs(model, **settings):
    ids = torch.tensor(PROMPTS)
    out = model.generate(ids, attention_mask=torch.ones_like(ids),
                         custom_generate=str(CUSTOM_GENERATE_DIR), trust_remote_code=True,
                         return_dict_in_generate=True, **SEARCH, **settings)
    eos = settings.get("eos_token_id", EOS)
    return generated(model, out["sequences"].tolist(), eos), out["sequences_scores"].tolist()


FAMILIES = {"gpt2": tiny_gpt2, "bart": tiny_bart, "t5": tiny_t5}


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_score_settings_make_transformers_choices(family, monkeypatch):
    """Each applied setting, alone, unconstrained: the same tokens and scores as transformers'
    beam search, through ``custom_generate`` and through ``generate(generation_config=...)``;
    and the setting changes the outputs (else the comparison would prove nothing)."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    model = FAMILIES[family]()
    plain, _ = transformers_outputs(model, max_new_tokens=8)
    for name, settings in score_settings_for(model).items():
        theirs, their_scores = transformers_outputs(model, max_new_tokens=8, **settings)
        assert theirs != plain, f"{name} has no effect on {family}: the test would prove nothing"
        ours, our_scores = dpc_custom_outputs(model, max_new_tokens=8, **settings)
        assert ours == theirs, name
        assert our_scores == pytest.approx(their_scores, abs=1e-4), name

        eos = settings.pop("eos_token_id", EOS)
        direct = generate(model, None, PROMPTS, num_beams=4, num_return_sequences=2,
                          max_new_tokens=8, eos_token_id=eos,
                          generation_config=GenerationConfig(**settings))
        assert [list(o.token_ids) for outs in direct for o in outs] == theirs, name
        assert [o.score for outs in direct for o in outs] == pytest.approx(their_scores, abs=1e-4)


@pytest.mark.parametrize("family", ["gpt2", "bart"])
def test_length_settings_through_custom_generate(family, monkeypatch):
    """``max_length`` and ``min_length`` count the prompt (decoder-only) or the decoder start
    token, as in transformers."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    model = FAMILIES[family]()
    a, _ = plain_first_tokens(model)
    width = 1 if model.config.is_encoder_decoder else len(PROMPTS[0])
    cases = [
        {"max_length": width + 5},
        # EOS = the token it would generate first, so min_length is what keeps it going.
        {"min_length": width + 6, "max_new_tokens": 9, "eos_token_id": a},
    ]
    for settings in cases:
        theirs, their_scores = transformers_outputs(model, **settings)
        ours, our_scores = dpc_custom_outputs(model, **settings)
        assert ours == theirs, settings
        assert our_scores == pytest.approx(their_scores, abs=1e-4)
    assert all(len(t) == 5 for t in transformers_outputs(model, **cases[0])[0])
    assert all(len(t) >= 6 for t in transformers_outputs(model, **cases[1])[0])


def test_the_models_own_score_settings_apply_by_default():
    """``generate`` reads the model's generation_config (BART ships ``forced_eos_token_id``);
    ``generation_config=None`` decodes without it."""
    model = tiny_bart()
    model.generation_config.forced_eos_token_id = EOS
    forced = generate(model, None, PROMPTS, num_beams=4, max_new_tokens=6)
    assert all(o.finished for outs in forced for o in outs)
    free = generate(model, None, PROMPTS, num_beams=4, max_new_tokens=6, generation_config=None)
    assert not all(o.finished for outs in free for o in outs)


class _Ban(LogitsProcessor):
    def __init__(self, token: int) -> None:
        self.token = token

    def __call__(self, input_ids, scores):
        scores = scores.clone()
        scores[:, self.token] = float("-inf")
        return scores


def test_custom_logits_processors_are_applied(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    model = tiny_gpt2()
    a, b = plain_first_tokens(model)
    processors = LogitsProcessorList([_Ban(a), _Ban(b)])
    ids = torch.tensor(PROMPTS)
    theirs = model.generate(ids, max_new_tokens=8, logits_processor=processors, **SEARCH)
    ours = model.generate(ids, max_new_tokens=8, logits_processor=processors, **SEARCH,
                          custom_generate=str(CUSTOM_GENERATE_DIR), trust_remote_code=True)
    assert ours.tolist() == theirs.tolist()
    direct = generate(model, None, PROMPTS, num_beams=4, max_new_tokens=8,
                      logits_processor=processors)
    assert all(a not in o.token_ids and b not in o.token_ids for outs in direct for o in outs)


def test_score_settings_apply_when_sampling_and_under_constraints():
    model = tiny_t5()
    a, b = plain_first_tokens(model)
    config = GenerationConfig(forced_bos_token_id=9, suppress_tokens=[a, b])
    sets = [[[20], [21, 22]]]
    outs = sample(model, None, PROMPTS, sets, num_samples=6, max_new_tokens=8, seed=0,
                  generation_config=config)
    beams = generate(model, None, PROMPTS, sets, num_beams=4, max_new_tokens=8,
                     generation_config=config)
    for o in [o for per in outs + beams for o in per]:
        assert o.token_ids[0] == 9
        assert a not in o.token_ids and b not in o.token_ids
        assert o.satisfied and satisfies(o.token_ids, sets)


# ---- refused settings --------------------------------------------------------------------------

REFUSED_SETTINGS = [
    ({"guidance_scale": 1.5}, "guidance_scale"),
    ({"encoder_repetition_penalty": 1.3}, "encoder_repetition_penalty"),
    ({"encoder_no_repeat_ngram_size": 2}, "encoder_no_repeat_ngram_size"),
    ({"penalty_alpha": 0.6, "top_k": 4}, "penalty_alpha"),
    ({"dola_layers": "low"}, "dola_layers"),
    ({"num_beam_groups": 2, "diversity_penalty": 0.5}, "num_beam_groups"),
    ({"force_words_ids": [[5]]}, "force_words_ids"),
    ({"token_healing": True}, "token_healing"),
    ({"stop_strings": ["x"]}, "stop_strings"),
    ({"max_time": 5.0}, "max_time"),
    ({"prompt_lookup_num_tokens": 3}, "prompt_lookup_num_tokens"),
    # Sampling settings in beam search, set by the caller.
    ({"temperature": 0.7}, "temperature"),
    ({"top_k": 5}, "top_k"),
    ({"top_p": 0.9}, "top_p"),
    ({"min_p": 0.1}, "min_p"),
    ({"typical_p": 0.9}, "typical_p"),
    # Beam settings when sampling, set by the caller; sampling knobs dpc lacks.
    ({"do_sample": True, "num_beams": 1, "length_penalty": 2.0}, "length_penalty"),
    ({"do_sample": True, "num_beams": 1, "min_p": 0.1}, "min_p"),
    ({"do_sample": True, "num_beams": 1, "epsilon_cutoff": 0.01}, "epsilon_cutoff"),
    ({"do_sample": True, "num_beams": 1, "eta_cutoff": 0.01}, "eta_cutoff"),
    ({"do_sample": True, "num_beams": 1, "top_h": 0.5}, "top_h"),
    ({"do_sample": True, "num_beams": 1, "repetition_penalty": 1.3}, "repetition_penalty"),
    ({"do_sample": True, "num_beams": 1, "exponential_decay_length_penalty": (2, 1.5)},
     "exponential_decay_length_penalty"),
    ({"do_sample": True, "num_beams": 4}, "beam sampling"),
    # What dpc does not return or use.
    ({"output_scores": True}, "output_scores"),
    ({"output_logits": True}, "output_logits"),
    ({"stopping_criteria": [object()]}, "stopping_criteria"),
    ({"streamer": object()}, "streamer"),
    ({"prefix_allowed_tokens_fn": lambda batch, ids: [5]}, "prefix_allowed_tokens_fn"),
    ({"num_beam": 4}, "num_beam"),  # a typo is not ignored
]


@pytest.mark.parametrize(("settings", "named"), REFUSED_SETTINGS,
                         ids=[n for _, n in REFUSED_SETTINGS])
def test_refused_settings_name_themselves(settings, named, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    model = tiny_gpt2()
    ids = torch.tensor(PROMPTS)
    search = {"num_beams": 2, "max_new_tokens": 4, **settings}
    with pytest.raises(DpcError, match=f"`?{named}"):
        model.generate(ids, custom_generate=str(CUSTOM_GENERATE_DIR), trust_remote_code=True,
                       **search)


def test_every_refused_setting_raises_from_a_generation_config():
    """Through ``generate(generation_config=...)`` and through the model's own config."""
    model = tiny_gpt2()
    values = {"guidance_scale": 1.5, "encoder_repetition_penalty": 1.3,
              "encoder_no_repeat_ngram_size": 2, "penalty_alpha": 0.6, "dola_layers": "low",
              "num_beam_groups": 2, "diversity_penalty": 0.5, "force_words_ids": [[5]],
              "constraints": [], "token_healing": True, "stop_strings": ["x"],
              "max_time": 5.0, "use_mtp": True, "prompt_lookup_num_tokens": 3,
              "assistant_early_exit": 2, "watermarking_config": {"greenlist_ratio": 0.25}}
    mode_dependent = {"min_p", "top_h", "typical_p", "epsilon_cutoff", "eta_cutoff"}
    assert set(values) | mode_dependent == set(REFUSED)
    for name, value in values.items():
        config = GenerationConfig()
        setattr(config, name, value)
        with pytest.raises(DpcError, match=f"generation_config sets: .*`{name}`"):
            generate(model, None, PROMPTS, num_beams=2, max_new_tokens=4,
                     generation_config=config)
    model.generation_config.max_time = 5.0
    with pytest.raises(DpcError, match="model's generation_config .* sets: `max_time`"):
        generate(model, None, PROMPTS, num_beams=2, max_new_tokens=4)
    assert generate(model, None, PROMPTS, num_beams=2, max_new_tokens=4, generation_config=None)


def test_other_mode_settings_from_the_model_are_not_applicable(monkeypatch):
    """A model that ships sampling defaults (Llama: temperature 0.6, top_p 0.9) still runs beam
    search; the same values given by the caller are refused (transformers warns about them)."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    model = tiny_gpt2()
    ids = torch.tensor(PROMPTS)
    plain = model.generate(ids, custom_generate=str(CUSTOM_GENERATE_DIR), trust_remote_code=True,
                           num_beams=2, max_new_tokens=4)
    model.generation_config.temperature = 0.6
    model.generation_config.top_p = 0.9
    again = model.generate(ids, custom_generate=str(CUSTOM_GENERATE_DIR), trust_remote_code=True,
                           num_beams=2, max_new_tokens=4)
    assert again.tolist() == plain.tolist()
    with pytest.raises(DpcError, match="`temperature` \\(=0.6\\) has no meaning in beam search"):
        model.generate(ids, custom_generate=str(CUSTOM_GENERATE_DIR), trust_remote_code=True,
                       temperature=0.6, num_beams=2, max_new_tokens=4)
    with pytest.raises(DpcError, match="`top_p` \\(=0.8\\) has no meaning in beam search"):
        model.generate(ids, custom_generate=str(CUSTOM_GENERATE_DIR), trust_remote_code=True,
                       generation_config=GenerationConfig(top_p=0.8, num_beams=2,
                                                          max_new_tokens=4))
