import json
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from dpc_errors import DpcError
from train.checkpoint import load_state
from train.errors import ModelFolderError, TrainError
from train.models import load_generator
from train.trainer import TrainOptions, train_generator


def _options(bank: Path, tok: Path, out: Path, **kw: object) -> TrainOptions:
    base = dict(bank=str(bank), tokenizer=str(tok), out=str(out), d_model=32, d_ff=64,
                num_layers=1, num_heads=2, batch_size=16, lr=3e-3, warmup_steps=5,
                eval_every=4, checkpoint_every=2, dev_examples=32, max_steps=8, progress=False,
                seed=3)
    base.update(kw)
    return TrainOptions(**base)  # type: ignore[arg-type]


def test_training_lowers_dev_loss_and_saves_a_loadable_model(tiny_bank, tiny_tokenizer, tmp_path):
    result = train_generator(_options(tiny_bank, tiny_tokenizer, tmp_path / "run", max_steps=24,
                                      eval_every=6))
    losses = [h["dev_loss"] for h in result.history]
    assert losses[-1] < losses[0]
    assert result.best_dev_loss == pytest.approx(min(losses), abs=1e-4)
    assert result.stopped == "max_steps=24 reached"
    loaded = load_generator(result.model_dir)
    assert loaded.model.config.d_model == 32
    info = json.loads((Path(result.model_dir) / "dpc_generator.json").read_text())
    assert info["input_format"] == "{direction}: {text}"


def test_threads_apply_to_the_run_only(tiny_bank, tiny_tokenizer, tmp_path, monkeypatch):
    before = torch.get_num_threads()
    seen = []
    real = torch.nn.Module.train

    def spy(module, mode=True):  # the model is put in training mode inside the run
        seen.append(torch.get_num_threads())
        return real(module, mode)

    monkeypatch.setattr(torch.nn.Module, "train", spy)
    torch.set_num_threads(2)
    try:
        train_generator(_options(tiny_bank, tiny_tokenizer, tmp_path / "run", max_steps=2,
                                 threads=1))
        assert torch.get_num_threads() == 2  # the caller's setting is back
    finally:
        torch.set_num_threads(before)
    assert seen and set(seen) == {1}


def _same_weights(a_dir: Path, b_dir: Path) -> bool:
    a = load_file(str(a_dir / "checkpoint" / "model.safetensors"))
    b = load_file(str(b_dir / "checkpoint" / "model.safetensors"))
    assert a.keys() == b.keys()
    return all(torch.equal(a[key], b[key]) for key in a)


def test_interrupted_run_resumes_to_the_same_weights(tiny_bank, tiny_tokenizer, tmp_path,
                                                     monkeypatch):
    straight = train_generator(_options(tiny_bank, tiny_tokenizer, tmp_path / "a"))
    import train.trainer as trainer

    calls = {"n": 0}
    real_collate = trainer.collate

    def crash_on_step_7(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 1 + 7:  # the one dev batch is collated first; step 7 crashes
            raise KeyboardInterrupt
        return real_collate(*args, **kwargs)

    monkeypatch.setattr(trainer, "collate", crash_on_step_7)
    with pytest.raises(KeyboardInterrupt):
        train_generator(_options(tiny_bank, tiny_tokenizer, tmp_path / "b"))
    monkeypatch.setattr(trainer, "collate", real_collate)
    state = load_state(tmp_path / "b" / "checkpoint" / "trainer_state.safetensors")
    assert state["step"] == 6  # the last checkpoint before the crash (every 2 steps)
    resumed = train_generator(_options(tiny_bank, tiny_tokenizer, tmp_path / "b"))
    assert resumed.steps == straight.steps == 8
    assert _same_weights(tmp_path / "a", tmp_path / "b")


def test_budget_stop_then_larger_budget_continues(tiny_bank, tiny_tokenizer, tmp_path):
    train_generator(_options(tiny_bank, tiny_tokenizer, tmp_path / "a"))
    first = train_generator(_options(tiny_bank, tiny_tokenizer, tmp_path / "b", max_steps=3))
    assert (first.steps, first.stopped) == (3, "max_steps=3 reached")
    resumed = train_generator(_options(tiny_bank, tiny_tokenizer, tmp_path / "b"))
    assert (resumed.steps, resumed.stopped) == (8, "max_steps=8 reached")
    assert _same_weights(tmp_path / "a", tmp_path / "b")


def test_resumed_run_differs_from_a_fresh_seed(tiny_bank, tiny_tokenizer, tmp_path):
    # guards the test above: another seed must give other weights
    train_generator(_options(tiny_bank, tiny_tokenizer, tmp_path / "a"))
    train_generator(_options(tiny_bank, tiny_tokenizer, tmp_path / "c", seed=4))
    assert not _same_weights(tmp_path / "a", tmp_path / "c")


def test_early_stopping_when_dev_loss_stalls(tiny_bank, tiny_tokenizer, tmp_path):
    # an lr far below float32 resolution leaves the weights, hence the dev loss, unchanged
    result = train_generator(_options(tiny_bank, tiny_tokenizer, tmp_path / "r", lr=1e-30,
                                      dropout=0.0, eval_every=1, patience=2, max_steps=50))
    assert result.stopped.startswith("early stopping")
    assert result.steps == 3


def test_resume_with_other_options_is_refused(tiny_bank, tiny_tokenizer, tmp_path):
    train_generator(_options(tiny_bank, tiny_tokenizer, tmp_path / "r", max_steps=2))
    with pytest.raises(TrainError, match="d_model: 32 -> 48"):
        train_generator(_options(tiny_bank, tiny_tokenizer, tmp_path / "r", d_model=48))


def test_wrong_architecture_and_missing_tokenizer(tmp_path, tiny_tokenizer):
    from transformers import BertConfig, BertModel

    BertModel(BertConfig(vocab_size=50, hidden_size=16, num_hidden_layers=1,
                         num_attention_heads=2, intermediate_size=32)).save_pretrained(tmp_path / "b")
    with pytest.raises(ModelFolderError, match="'bert' model.*encoder-decoder"):
        load_generator(tmp_path / "b")
    with pytest.raises(ModelFolderError, match="no tokenizer.json"):
        train_generator(_options(tmp_path, tmp_path / "b", tmp_path / "out"))


def test_init_from_starts_at_the_given_weights(tiny_bank, tiny_tokenizer, tmp_path):
    source = train_generator(_options(tiny_bank, tiny_tokenizer, tmp_path / "a", max_steps=8))
    # a learning rate so small that two steps cannot move the weights measurably
    cont = train_generator(_options(tiny_bank, tiny_tokenizer, tmp_path / "b", max_steps=2,
                                    lr=1e-12, init_from=source.model_dir))
    fresh = train_generator(_options(tiny_bank, tiny_tokenizer, tmp_path / "c", max_steps=2,
                                     lr=1e-12))
    a = load_file(str(Path(source.model_dir) / "model.safetensors"))
    b = load_file(str(tmp_path / "b" / "checkpoint" / "model.safetensors"))
    c = load_file(str(tmp_path / "c" / "checkpoint" / "model.safetensors"))
    assert all(torch.allclose(a[k], b[k], atol=1e-6) for k in a)
    assert not all(torch.allclose(a[k], c[k], atol=1e-6) for k in a)
    assert cont.best_dev_loss < fresh.best_dev_loss


def test_init_from_another_architecture_or_a_missing_folder(tiny_bank, tiny_tokenizer, tmp_path):
    source = train_generator(_options(tiny_bank, tiny_tokenizer, tmp_path / "a", max_steps=2))
    with pytest.raises(TrainError, match="another architecture: d_model: 32 .folder. vs 16"):
        train_generator(_options(tiny_bank, tiny_tokenizer, tmp_path / "b", d_model=16,
                                 init_from=source.model_dir))
    with pytest.raises(DpcError, match="/no/such/model"):
        train_generator(_options(tiny_bank, tiny_tokenizer, tmp_path / "c",
                                 init_from="/no/such/model"))


def _warm(bank: Path, bert: Path, out: Path, **kw: object) -> TrainOptions:
    return _options(bank, bert, out, warm_start=str(bert), lr=1e-3, **kw)


def test_warm_start_trains_a_loadable_bert2bert(tiny_bank, tiny_bert, tmp_path):
    from train.evaluation import evaluate_generator
    from train.metrics import sequence_log_probs

    result = train_generator(_warm(tiny_bank, tiny_bert, tmp_path / "run", max_steps=6,
                                   eval_every=3))
    assert result.steps == 6 and len(result.history) == 2
    loaded = load_generator(result.model_dir)
    assert type(loaded.model).__name__ == "EncoderDecoderModel"
    assert loaded.model.config.decoder_start_token_id == loaded.tokenizer.cls_token_id
    info = json.loads((Path(result.model_dir) / "dpc_generator.json").read_text())
    assert info["model"] == {"warm_start": str(tiny_bert), "type": "bert2bert", "shared": False}
    # targets end with [SEP] and do not start with [CLS] (the decoder's start token)
    lp = sequence_log_probs(loaded.model, loaded.tokenizer, ["cause: the road was icy"] * 2,
                            ["the car slid off", "the car slid off the road"])
    assert lp[0] < 0 and lp[1] < lp[0]
    metrics = evaluate_generator(result.model_dir, tiny_bank, "train", max_examples=20)
    assert metrics.words > 0 and 1 < metrics.word_perplexity < float("inf")


def test_init_from_a_warm_started_model_continues_it(tiny_bank, tiny_bert, tiny_tokenizer,
                                                     tmp_path):
    warm = train_generator(_warm(tiny_bank, tiny_bert, tmp_path / "warm", max_steps=2,
                                 share_weights=True))
    with pytest.raises(TrainError, match="uses that model's tokenizer: pass --tokenizer"):
        train_generator(_options(tiny_bank, tiny_tokenizer, tmp_path / "cont",
                                 init_from=warm.model_dir))
    # the corrected command in the same folder is not refused as a changed run
    cont = train_generator(_options(tiny_bank, warm.model_dir, tmp_path / "cont", max_steps=2,
                                    lr=1e-12, init_from=warm.model_dir))
    info = json.loads((Path(cont.model_dir) / "dpc_generator.json").read_text())
    assert info["model"] == {"init_from": warm.model_dir, "type": "bert2bert", "shared": True}
    assert cont.parameters == warm.parameters  # still shared: same count, not twice the decoder
    a = load_generator(warm.model_dir).model.state_dict()
    b = load_generator(cont.model_dir).model.state_dict()
    assert all(torch.allclose(a[k], b[k], atol=1e-6) for k in a)  # lr 1e-12: the same weights


def test_warm_started_run_resumes_to_the_same_weights(tiny_bank, tiny_bert, tmp_path):
    train_generator(_warm(tiny_bank, tiny_bert, tmp_path / "a", max_steps=4))
    train_generator(_warm(tiny_bank, tiny_bert, tmp_path / "b", max_steps=2))
    resumed = train_generator(_warm(tiny_bank, tiny_bert, tmp_path / "b", max_steps=4))
    assert resumed.steps == 4
    assert _same_weights(tmp_path / "a", tmp_path / "b")


def test_warm_start_option_errors(tiny_bank, tiny_bert, tiny_tokenizer, tmp_path):
    with pytest.raises(TrainError, match="exclude each other"):
        _warm(tiny_bank, tiny_bert, tmp_path / "x", init_from="somewhere")
    with pytest.raises(TrainError, match="uses that model's tokenizer"):
        _options(tiny_bank, tiny_tokenizer, tmp_path / "x", warm_start=str(tiny_bert))
    with pytest.raises(ModelFolderError, match="does not exist"):
        train_generator(_warm(tiny_bank, tmp_path / "no_bert", tmp_path / "x"))


def test_shared_warm_start_trains_and_resumes_to_the_same_weights(tiny_bank, tiny_bert,
                                                                  tmp_path):
    a = train_generator(_warm(tiny_bank, tiny_bert, tmp_path / "a", max_steps=4,
                              share_weights=True))
    train_generator(_warm(tiny_bank, tiny_bert, tmp_path / "b", max_steps=2, share_weights=True))
    resumed = train_generator(_warm(tiny_bank, tiny_bert, tmp_path / "b", max_steps=4,
                                    share_weights=True))
    assert resumed.steps == 4 and resumed.parameters == a.parameters
    assert _same_weights(tmp_path / "a", tmp_path / "b")
    plain = train_generator(_warm(tiny_bank, tiny_bert, tmp_path / "c", max_steps=1))
    assert a.parameters < plain.parameters
    model = load_generator(a.model_dir).model
    assert model.decoder.bert.encoder.layer[0].attention.self.key.weight is \
        model.encoder.encoder.layer[0].attention.self.key.weight
    info = json.loads((Path(a.model_dir) / "dpc_generator.json").read_text())
    assert info["model"]["shared"] is True


def test_share_weights_needs_a_warm_start(tiny_bank, tiny_tokenizer, tmp_path):
    with pytest.raises(TrainError, match="--share-weights applies to a warm-started"):
        _options(tiny_bank, tiny_tokenizer, tmp_path / "x", share_weights=True)


def test_a_run_saved_before_an_option_existed_resumes(tiny_bank, tiny_tokenizer, tmp_path):
    train_generator(_options(tiny_bank, tiny_tokenizer, tmp_path / "a", max_steps=2))
    config = tmp_path / "a" / "train_config.json"
    saved = json.loads(config.read_text())
    del saved["share_weights"]
    config.write_text(json.dumps(saved))
    assert train_generator(_options(tiny_bank, tiny_tokenizer, tmp_path / "a",
                                    max_steps=4)).steps == 4
