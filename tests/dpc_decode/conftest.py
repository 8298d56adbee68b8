"""Tiny random models of each family, built from configs (nothing is downloaded)."""

from __future__ import annotations

import pytest
import torch
from transformers import (
    BartConfig,
    BartForConditionalGeneration,
    GPT2Config,
    GPT2LMHeadModel,
    LlamaConfig,
    LlamaForCausalLM,
    MarianConfig,
    MarianMTModel,
    T5Config,
    T5ForConditionalGeneration,
)

EOS = 1
PAD = 0


@pytest.fixture
def plan_need_only(monkeypatch):
    """Every automaton built from here on is over the exact need's budget, so its need is the
    plan (``Automaton.plan_need``). Automata are cached per distinct constraints
    (``batch._automaton``), so the cache is emptied on both sides."""
    from dpc_decode import automaton, batch

    batch._automaton.cache_clear()
    monkeypatch.setattr(automaton, "EXACT_NEED_BUDGET", 0)
    yield
    batch._automaton.cache_clear()


@pytest.fixture
def unpacked(monkeypatch):
    """Compiled automata from here on keep their met-sets as (..., S) booleans, as they do beyond
    62 sets: the reference that the packed bits (``tensor_automaton._packed_tables``) must match."""
    from dpc_decode import tensor_automaton

    packed = tensor_automaton._packed_tables
    monkeypatch.setattr(tensor_automaton, "_packed_tables",
                        lambda *args: dict.fromkeys(packed(*args)))


@pytest.fixture
def step_rows(monkeypatch):
    """The number of rows of every model step (``ModelRunner.step``) from here on, as a list the
    test may clear; ``step_rows.full_batch()`` makes the runner unable to shrink its batch
    (``ModelRunner.select`` refuses), the reference an optimisation must match."""
    from dpc_decode.model_runner import ModelRunner

    sizes = _StepRows()
    step = ModelRunner.step

    def counting_step(self, tokens):
        sizes.append(tokens.shape[0])
        return step(self, tokens)

    monkeypatch.setattr(ModelRunner, "step", counting_step)
    sizes.full_batch = lambda: monkeypatch.setattr(ModelRunner, "select",
                                                   lambda self, index: False)
    return sizes


class _StepRows(list):
    full_batch: object


def tiny_t5(vocab: int = 40, seed: int = 0) -> T5ForConditionalGeneration:
    torch.manual_seed(seed)
    cfg = T5Config(vocab_size=vocab, d_model=32, d_ff=64, d_kv=8, num_heads=4, num_layers=2,
                   decoder_start_token_id=PAD, pad_token_id=PAD, eos_token_id=EOS)
    return T5ForConditionalGeneration(cfg).eval()


def tiny_bart(vocab: int = 40, seed: int = 0) -> BartForConditionalGeneration:
    torch.manual_seed(seed)
    cfg = BartConfig(vocab_size=vocab, d_model=32, encoder_layers=1, decoder_layers=1,
                     encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=64,
                     decoder_ffn_dim=64, max_position_embeddings=64, pad_token_id=PAD,
                     eos_token_id=EOS, bos_token_id=2, decoder_start_token_id=2,
                     forced_eos_token_id=None, forced_bos_token_id=None)
    return BartForConditionalGeneration(cfg).eval()


def tiny_gpt2(vocab: int = 40, seed: int = 0) -> GPT2LMHeadModel:
    torch.manual_seed(seed)
    cfg = GPT2Config(vocab_size=vocab, n_embd=32, n_layer=2, n_head=4, n_positions=64,
                     bos_token_id=EOS, eos_token_id=EOS, pad_token_id=PAD)
    return GPT2LMHeadModel(cfg).eval()


def tiny_llama(vocab: int = 40, seed: int = 0) -> LlamaForCausalLM:
    torch.manual_seed(seed)
    cfg = LlamaConfig(vocab_size=vocab, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64,
                      bos_token_id=2, eos_token_id=EOS, pad_token_id=PAD)
    return LlamaForCausalLM(cfg).eval()


def tiny_marian(vocab: int = 40, seed: int = 0) -> MarianMTModel:
    torch.manual_seed(seed)
    cfg = MarianConfig(vocab_size=vocab, d_model=32, encoder_layers=1, decoder_layers=1,
                       encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=64,
                       decoder_ffn_dim=64, max_position_embeddings=64, pad_token_id=PAD,
                       eos_token_id=EOS, decoder_start_token_id=PAD, forced_eos_token_id=None)
    return MarianMTModel(cfg).eval()


FAMILIES = {"t5": tiny_t5, "bart": tiny_bart, "marian": tiny_marian, "gpt2": tiny_gpt2,
            "llama": tiny_llama}


@pytest.fixture(params=sorted(FAMILIES))
def family(request):
    """(name, builder) for each model family."""
    return request.param, FAMILIES[request.param]
