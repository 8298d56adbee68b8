"""The transformers-native entry: ``model.generate(custom_generate=<dpc folder>)``, offline."""

from __future__ import annotations

import pytest
import torch

from dpc_decode import CUSTOM_GENERATE_DIR, DpcError, generate, satisfies

from .conftest import tiny_gpt2, tiny_t5

SETS = [[[20], [21, 22]], [[30]]]


def test_model_generate_runs_dpc_from_the_local_folder(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    model = tiny_gpt2()
    ids = torch.tensor([[5, 6, 7, 8], [0, 0, 9, 10]])
    mask = torch.tensor([[1, 1, 1, 1], [0, 0, 1, 1]])
    out = model.generate(ids, attention_mask=mask, custom_generate=str(CUSTOM_GENERATE_DIR),
                         trust_remote_code=True, constraints=SETS, num_beams=4,
                         num_return_sequences=2, max_new_tokens=8, return_dict_in_generate=True)
    direct = generate(model, None, [[5, 6, 7, 8], [9, 10]], SETS, num_beams=4,
                      num_return_sequences=2, max_new_tokens=8)
    sequences = out["sequences"].tolist()
    assert len(sequences) == 4
    flat = [o for per_input in direct for o in per_input]
    for row, expected in zip(sequences, flat):
        generated = row[4 : 4 + len(expected.token_ids)]
        assert generated == list(expected.token_ids)
        assert satisfies(generated, SETS)
    assert out["sequences_scores"].tolist() == [o.score for o in flat]


def test_seq2seq_through_custom_generate(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    model = tiny_t5()
    ids = torch.tensor([[5, 6, 7, 8]])
    seqs = model.generate(ids, custom_generate=str(CUSTOM_GENERATE_DIR), trust_remote_code=True,
                          constraints=SETS, num_beams=4, max_new_tokens=8)
    assert seqs[0, 0].item() == model.config.decoder_start_token_id
    body = [t for t in seqs[0, 1:].tolist()]
    assert satisfies(body, SETS)


def test_score_slots_through_custom_generate(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    model = tiny_gpt2(seed=3)
    ids = torch.tensor([[5, 6, 7, 8]])
    out = model.generate(ids, attention_mask=torch.ones_like(ids),
                         custom_generate=str(CUSTOM_GENERATE_DIR), trust_remote_code=True,
                         constraints=SETS, num_beams=4, max_new_tokens=8, score_slots=4)
    direct = generate(model, None, [[5, 6, 7, 8]], SETS, num_beams=4, max_new_tokens=8,
                      score_slots=4)[0][0]
    assert out[0, 4:4 + len(direct.token_ids)].tolist() == list(direct.token_ids)
    with pytest.raises(DpcError, match=r"`score_slots` \(=2\) is a beam search option"):
        model.generate(ids, attention_mask=torch.ones_like(ids),
                       custom_generate=str(CUSTOM_GENERATE_DIR), trust_remote_code=True,
                       constraints=SETS, do_sample=True, max_new_tokens=8, score_slots=2)
    with pytest.raises(DpcError, match=r"`score_slots` \(=5\) must be an integer"):
        generate(model, None, [[5, 6, 7, 8]], SETS, num_beams=4, score_slots=5)


def test_the_search_through_custom_generate_and_the_generation_config(monkeypatch):
    """``search=`` and its settings reach the engine as arguments and as entries of the
    generation config (the argument wins); sampling refuses them."""
    from transformers import GenerationConfig

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    model = tiny_gpt2(seed=3)
    ids = torch.tensor([[5, 6, 7, 8]])
    kw = {"attention_mask": torch.ones_like(ids), "custom_generate": str(CUSTOM_GENERATE_DIR),
          "trust_remote_code": True, "constraints": SETS, "max_new_tokens": 8}
    direct = generate(model, None, [[5, 6, 7, 8]], SETS, num_beams=4, max_new_tokens=8,
                      search="neurologic", lookahead=2, prune_factor=5)[0][0]
    dba = generate(model, None, [[5, 6, 7, 8]], SETS, num_beams=4, max_new_tokens=8)[0][0]
    assert direct.token_ids != dba.token_ids  # the two searches differ here: the test can fail
    as_arguments = model.generate(ids, num_beams=4, search="neurologic", lookahead=2,
                                  prune_factor=5, **kw)
    config = GenerationConfig(num_beams=4, search="neurologic", lookahead=2, prune_factor=5)
    from_config = model.generate(ids, generation_config=config, **kw)
    overridden = model.generate(ids, generation_config=config, search="dba", lookahead=0, **kw)
    n = len(direct.token_ids)
    assert as_arguments[0, 4:4 + n].tolist() == list(direct.token_ids)
    assert from_config[0, 4:4 + n].tolist() == list(direct.token_ids)
    assert overridden[0, 4:4 + len(dba.token_ids)].tolist() == list(dba.token_ids)
    with pytest.raises(DpcError, match=r"`search` \(='neurologic'\) is a beam search option"):
        model.generate(ids, do_sample=True, search="neurologic", **kw)
