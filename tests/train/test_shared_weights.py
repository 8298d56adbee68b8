from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file, save_file

from train.errors import ModelFolderError
from train.generator import build_generator, build_warm_started, count_parameters
from train.models import load_generator
from train.options import GeneratorConfig
from train.shared_weights import SHARED_FLAG, load_shared, save_shared, share_encoder_decoder


@pytest.fixture()
def shared(tiny_bert: Path):
    return build_warm_started(str(tiny_bert), seed=0, share=True).eval()


def _logits(model, target: list[int]) -> torch.Tensor:
    with torch.no_grad():
        return model(input_ids=torch.tensor([[101, 2009, 8372, 102]]),
                     decoder_input_ids=torch.tensor([target])).logits[0]


def test_sharing_ties_every_counterpart_and_halves_the_layers(tiny_bert: Path, shared) -> None:
    plain = build_warm_started(str(tiny_bert), seed=0)
    assert count_parameters(shared) < count_parameters(plain)
    enc, dec = shared.encoder, shared.decoder.bert
    assert dec.embeddings.word_embeddings.weight is enc.embeddings.word_embeddings.weight
    assert shared.decoder.get_output_embeddings().weight is enc.embeddings.word_embeddings.weight
    layer, twin = dec.encoder.layer[0], enc.encoder.layer[0]
    assert layer.attention.self.query.weight is twin.attention.self.query.weight
    assert layer.output.dense.weight is twin.output.dense.weight
    # the decoder's own parts stay its own
    assert all(p is not q for p in layer.crossattention.parameters() for q in enc.parameters())
    assert getattr(shared.config, SHARED_FLAG)


def test_the_decoder_stays_causal(shared) -> None:
    a = _logits(shared, [101, 1996, 4542, 2001])
    b = _logits(shared, [101, 1996, 4542, 3000])
    assert torch.allclose(a[:3], b[:3]) and not torch.allclose(a[3], b[3])


def test_saved_once_and_loaded_tied(shared, tiny_bert: Path, tmp_path: Path) -> None:
    save_shared(shared, tmp_path)
    stored = load_file(str(tmp_path / "model.safetensors"))
    assert not any(k.startswith("decoder.bert.embeddings") for k in stored)
    assert any("crossattention" in k for k in stored)
    again = load_shared(tmp_path).eval()
    assert again.decoder.bert.encoder.layer[0].intermediate.dense.weight is \
        again.encoder.encoder.layer[0].intermediate.dense.weight
    target = [101, 1996, 4542]
    assert torch.allclose(_logits(shared, target), _logits(again, target), atol=1e-6)
    # every dpc loader goes through the same path
    from transformers import AutoTokenizer

    AutoTokenizer.from_pretrained(str(tiny_bert)).save_pretrained(str(tmp_path))
    loaded = load_generator(tmp_path).model
    assert torch.allclose(_logits(shared, target), _logits(loaded, target), atol=1e-6)


def test_a_missing_own_weight_is_a_clear_error(shared, tmp_path: Path) -> None:
    save_shared(shared, tmp_path)
    stored = load_file(str(tmp_path / "model.safetensors"))
    gone = next(k for k in stored if "crossattention" in k)
    del stored[gone]
    save_file(stored, str(tmp_path / "model.safetensors"), metadata={"format": "pt"})
    with pytest.raises(ModelFolderError, match=f"lacks 1 weight.*{gone}"):
        load_shared(tmp_path)


def test_a_t5_has_nothing_to_share() -> None:
    t5 = build_generator(GeneratorConfig(vocab_size=50, d_model=16, d_ff=32, num_layers=1,
                                         num_heads=2))
    with pytest.raises(ModelFolderError, match="no encoder and decoder|bert2bert-style"):
        share_encoder_decoder(t5)
