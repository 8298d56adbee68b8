"""The pipeline over a decoder-only LM: plain-English prompts, stop tokens, PMI with causal
log-probabilities, and the plain (unconstrained) row."""

from __future__ import annotations

import pytest
import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers
from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

from guided_generation.errors import GuidedGenerationError
from guided_generation.options import GuidedOptions
from guided_generation.pipeline import GuidedGenerator
from tests.guided_generation.conftest import toy_graph, toy_lemmatizer
from train.prompts import CAUSAL

WORDS = ["babies", "cry", "because", "so", "they", "are", "hungry", "tired", "in", "pain", "the",
         "a", "wake", "tears", "was", "it", "love", "loved", "loves", "loving", "hungrier", "hungriest", "."]


def _tokenizer() -> PreTrainedTokenizerFast:
    vocab = {"<eos>": 0, "<unk>": 1}
    for w in WORDS:
        vocab.setdefault("Ġ" + w, len(vocab))
        vocab.setdefault(w, len(vocab))
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    return PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<eos>", unk_token="<unk>",
                                   pad_token="<eos>")


@pytest.fixture(scope="module")
def causal() -> GuidedGenerator:
    tok = _tokenizer()
    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config(vocab_size=len(tok), n_embd=16, n_layer=1, n_head=2,
                                       bos_token_id=0, eos_token_id=0, pad_token_id=0)).eval()
    return GuidedGenerator(model, tok, toy_graph(), lemmatizer=toy_lemmatizer,
                                verifier=None)


def test_a_causal_lm_is_asked_in_plain_english(causal):
    assert causal.input_format is CAUSAL
    assert causal.prompt("babies cry.", "cause").endswith("\nbabies cry because")
    stops = causal.eos_token_id
    assert causal.tokenizer.convert_tokens_to_ids(".") in stops and 0 in stops


def test_outputs_hold_their_keyword_and_never_a_stop_token(causal):
    result = causal.generate("babies cry", "cause", GuidedOptions(n=2, m=2, k=4, max_new_tokens=5,
                                                                  rank="weight", plain_row=False))
    assert result.outputs and {o.keyword for o in result.outputs} <= {"hungry", "tired"}
    for out in result.outputs:
        assert out.text == out.text.strip() and "." not in out.text
        assert out.matched in out.text.split()


def test_pmi_rerank_runs_on_causal_log_probs(causal):
    result = causal.generate("babies cry", "cause",
                             GuidedOptions(n=2, m=2, k=4, max_new_tokens=5, rerank="pmi"))
    pmis = [o.pmi for o in result.outputs]
    assert all(p is not None for p in pmis) and pmis == sorted(pmis, reverse=True)


def test_pmi_of_a_causal_lm_reads_the_decode_and_scores_only_the_prior(causal):
    from train.metrics import continuation_log_probs

    options = GuidedOptions(n=2, m=2, k=20, max_new_tokens=5, rerank="pmi")
    result = causal.generate("babies cry", "cause", options)
    assert result.outputs and all(o.token_ids for o in result.outputs)
    prompt = causal.prompt("babies cry", "cause")
    for out in result.outputs:
        # the decode's log-probability is the model's: teacher-forcing its tokens agrees
        forced = continuation_log_probs(causal.model, causal.tokenizer, prompt, [out.token_ids])[0]
        assert out.log_prob == pytest.approx(forced, abs=1e-4)
        prior = continuation_log_probs(causal.model, causal.tokenizer, causal.prompt("", "cause"),
                                       [out.token_ids])[0]
        assert out.pmi == pytest.approx((forced - prior) / len(out.token_ids), abs=1e-4)
    assert "token_ids" not in result.outputs[0].to_dict()


def test_the_plain_row_adds_unconstrained_outputs(causal):
    base = GuidedOptions(n=2, m=2, k=20, max_new_tokens=5, rank="weight", plain_row=False)
    without = causal.generate("babies cry", "cause", base)
    with_plain = causal.generate("babies cry", "cause", GuidedOptions(
        n=2, m=2, k=20, max_new_tokens=5, rank="weight", plain_row=True))
    assert with_plain.keywords == without.keywords == ["hungry", "tired"]
    plain = [o for o in with_plain.outputs if o.source == "none"]
    assert plain and all(o.keyword is None and o.keywords == () for o in plain)
    assert with_plain.stats["rows"] == without.stats["rows"] + 1


def test_the_plain_row_keeps_plain_m_outputs_from_a_search_of_its_own(causal, monkeypatch):
    calls = []
    search = causal.unconstrained
    monkeypatch.setattr(causal, "unconstrained",
                        lambda prompt, count, *a, **k: calls.append(count) or search(prompt, count, *a, **k))
    for plain_m in (1, 3):
        result = causal.generate("babies cry", "cause", GuidedOptions(
            n=2, m=2, k=40, max_new_tokens=5, rank="weight", plain_m=plain_m,
            template_limit=None))
        plain = [o for o in result.outputs if o.source == "none"]
        assert 1 <= len(plain) <= plain_m  # duplicates of keyword outputs are merged away
        assert calls[-1] == plain_m
    with pytest.raises(GuidedGenerationError, match="plain_m"):
        GuidedOptions(plain_m=0)


def test_a_batch_holding_only_the_plain_row_decodes(causal):
    # 2 keyword rows in batches of 2, and the plain row (a search of its own, without any
    # constraint set: once a batch of its own that the engine read as one shared empty set)
    options = GuidedOptions(n=2, m=2, k=20, max_new_tokens=5, rank="weight", plain_row=True,
                            batch_rows=2)
    result = causal.generate("babies cry", "cause", options)
    assert result.keywords == ["hungry", "tired"]
    assert any(o.source == "none" for o in result.outputs)
    together = causal.generate("babies cry", "cause", GuidedOptions(
        n=2, m=2, k=20, max_new_tokens=5, rank="weight", plain_row=True))
    assert sorted(o.text for o in result.outputs) == sorted(o.text for o in together.outputs)
