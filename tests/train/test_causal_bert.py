"""CausalBERT: margin loss, corruption, continued training, COPA scorer order and input errors.

A tiny randomly initialised BERT (hidden 16, one layer) on the all-MiniLM-L6-v2 tokenizer keeps
every test fast; nothing here needs the real MiniLM weights.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
import torch
from transformers import AutoTokenizer, BertConfig, BertModel

from cli import main as dpc_main
from tasks.copa import CopaItem, accuracy, make_scorer
from tasks.copa.causal_bert import (
    CausalBertScorer,
    CopaRankingOptions,
    causal_order,
    make_causal_bert_scorer,
    train_copa_ranking,
)
from tests.train.conftest import copa_file
from train.causal_bert import (
    CausalBert,
    CausalBertOptions,
    continue_training,
    corrupt,
    load_bank_pairs,
    load_causal_bert,
    margin_loss,
    score_pairs,
    train_margin,
)
from train.errors import ModelFolderError, TrainDataError, TrainError
from train.models import minilm_tokenizer_path


@pytest.fixture(scope="module")
def tokenizer():
    return AutoTokenizer.from_pretrained(minilm_tokenizer_path(), local_files_only=True)


def tiny_model(tokenizer, seed: int = 0) -> CausalBert:
    torch.manual_seed(seed)
    config = BertConfig(vocab_size=len(tokenizer), hidden_size=16, num_hidden_layers=1,
                        num_attention_heads=2, intermediate_size=32, max_position_embeddings=64,
                        hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    return CausalBert(BertModel(config, add_pooling_layer=False))


@pytest.mark.parametrize("pos, neg, expected", [
    (1.0, 0.0, 0.0),    # positive ahead by more than the margin: no loss
    (0.0, 0.0, 0.3),    # tie: the margin
    (0.2, 0.0, 0.1),    # ahead by less than the margin
    (0.0, 0.5, 0.8),    # negative ahead: margin + gap
    (0.3, 0.0, 0.0),    # exactly the margin: clipped at 0
    (-1.0, -1.0, 0.3),  # only the difference counts
])
def test_margin_loss_table(pos: float, neg: float, expected: float) -> None:
    got = margin_loss(torch.tensor([pos]), torch.tensor([neg]), margin=0.3)
    assert got.item() == pytest.approx(expected, abs=1e-6)


def test_corrupt_never_returns_the_original_pair() -> None:
    # duplicates of causes and effects make the naive swap return the original often
    pairs = [("rain", "wet"), ("rain", "dry"), ("sun", "wet"), ("rain", "wet2"), ("x", "wet")]
    rng = random.Random(0)
    seen_slots = set()
    for _ in range(500):
        i = rng.randrange(len(pairs))
        new = corrupt(pairs, i, rng)
        assert new != pairs[i]
        assert new[0] == pairs[i][0] or new[1] == pairs[i][1]  # one side kept
        seen_slots.add("cause" if new[1] == pairs[i][1] else "effect")
    assert seen_slots == {"cause", "effect"}  # both sides get swapped


def test_corrupt_fallback_and_impossible_cases() -> None:
    # only one donor differs, in one side: the fallback must find it
    pairs = [("a", "b")] * 50 + [("c", "b")]
    for seed in range(20):
        assert corrupt(pairs, 0, random.Random(seed)) == ("c", "b")
    with pytest.raises(TrainDataError, match="cannot corrupt pair 0"):
        corrupt([("a", "b"), ("a", "b")], 0, random.Random(0))
    with pytest.raises(TrainDataError, match="among 1 pairs"):
        corrupt([("a", "b")], 0, random.Random(0))


def test_a_few_steps_reduce_the_margin_loss(tokenizer) -> None:
    # four pairs: every recombination of their sides is a possible corrupted pair
    pairs = [("it rained", "the ground was wet"), ("the sun came out", "the snow melted"),
             ("the dog barked", "the baby woke"), ("he ran", "he was tired")]
    negatives = [(c, e) for c, _ in pairs for _, e in pairs if (c, e) not in pairs]
    model = tiny_model(tokenizer)

    def all_pairs_loss() -> float:  # hinge of every positive against every negative
        with torch.no_grad():
            pos = score_pairs(model, tokenizer, pairs)  # (4,)
            neg = score_pairs(model, tokenizer, negatives)  # (12,)
        return margin_loss(pos[:, None], neg[None, :]).mean().item()

    before = all_pairs_loss()
    options = CausalBertOptions(bank="unused", out="unused", pairs=4, batch_size=4, lr=1e-2,
                                epochs=60, progress=False)
    losses = train_margin(model, tokenizer, pairs, options)
    assert len(losses) == 60
    after = all_pairs_loss()
    assert before > 0.2 and after < before / 3, (before, after)
    assert sum(losses[-10:]) < sum(losses[:10]) / 2


def test_load_bank_pairs_takes_distinct_train_pairs(tiny_bank: Path) -> None:
    pairs = load_bank_pairs(tiny_bank, "train", None, seed=0)
    assert len(pairs) == len(set(pairs)) > 100
    assert load_bank_pairs(tiny_bank, "train", 10, seed=0) == pairs[:10]
    assert load_bank_pairs(tiny_bank, "train", 10, seed=1) != pairs[:10]


def test_continue_training_saves_loads_and_reuses(tokenizer, tiny_bank: Path,
                                                  tmp_path: Path) -> None:
    out = tmp_path / "cb"
    options = CausalBertOptions(bank=str(tiny_bank), out=str(out), pairs=16, batch_size=8,
                                lr=1e-3, dev_pairs=0, progress=False)
    model = tiny_model(tokenizer)
    result = continue_training(options, model, tokenizer)
    assert (result.pairs, result.steps, result.reused) == (16, 2, False)
    loaded, tok = load_causal_bert(out)
    probe = [("it rained all night", "the ground was wet")]
    with torch.no_grad():
        assert score_pairs(loaded.eval(), tok, probe).item() == pytest.approx(
            score_pairs(model.eval(), tokenizer, probe).item(), abs=1e-5)
    again = continue_training(options)  # no model given: would need MiniLM if it retrained
    assert again.reused and again.steps == 2
    with pytest.raises(TrainError, match="other options"):
        continue_training(CausalBertOptions(bank=str(tiny_bank), out=str(out), pairs=8,
                                            dev_pairs=0, progress=False))


def test_interrupted_continued_training_resumes_to_the_same_result(
        tokenizer, tiny_bank: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import train.causal_bert as cb

    def options(out: Path) -> CausalBertOptions:
        return CausalBertOptions(bank=str(tiny_bank), out=str(out), pairs=24, batch_size=4,
                                 lr=1e-3, epochs=2, dev_pairs=0, checkpoint_every=5,
                                 progress=False)

    whole = continue_training(options(tmp_path / "whole"), tiny_model(tokenizer), tokenizer)
    assert whole.steps == 12  # 2 epochs of 6 batches

    real_loss, calls = cb.margin_loss, []

    def failing_loss(*args, **kwargs):
        calls.append(1)
        if len(calls) == 8:  # the 8th step dies after the checkpoint of step 5
            raise KeyboardInterrupt
        return real_loss(*args, **kwargs)

    monkeypatch.setattr(cb, "margin_loss", failing_loss)
    with pytest.raises(KeyboardInterrupt):
        continue_training(options(tmp_path / "cut"), tiny_model(tokenizer), tokenizer)
    assert (tmp_path / "cut" / cb.CHECKPOINT_FILE).is_file()
    assert not (tmp_path / "cut" / cb.RUN_FILE).exists()
    monkeypatch.setattr(cb, "margin_loss", real_loss)

    # another initialisation: the weights must come from the checkpoint, not from this model
    resumed = continue_training(options(tmp_path / "cut"), tiny_model(tokenizer, seed=7),
                                tokenizer)
    assert resumed.steps == 12 and not (tmp_path / "cut" / cb.CHECKPOINT_FILE).exists()
    assert resumed.history == pytest.approx(whole.history)
    assert (resumed.first_loss, resumed.last_loss) == pytest.approx(
        (whole.first_loss, whole.last_loss))
    probe = [("it rained all night", "the ground was wet"), ("he ran fast", "he was tired")]
    a, tok = load_causal_bert(tmp_path / "whole")
    b, _ = load_causal_bert(tmp_path / "cut")
    with torch.no_grad():
        assert score_pairs(a.eval(), tok, probe).tolist() == pytest.approx(
            score_pairs(b.eval(), tok, probe).tolist(), abs=1e-6)


def test_resuming_with_other_options_is_refused(tokenizer, tiny_bank: Path, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    import train.causal_bert as cb

    def stop(*args, **kwargs):
        raise KeyboardInterrupt

    base = {"bank": str(tiny_bank), "out": str(tmp_path / "cb"), "pairs": 8, "batch_size": 2,
            "dev_pairs": 0, "checkpoint_every": 1, "progress": False}
    real_save = cb.save_checkpoint
    monkeypatch.setattr(cb, "save_checkpoint",
                        lambda *args, **kwargs: (real_save(*args, **kwargs), stop()))
    with pytest.raises(KeyboardInterrupt):
        continue_training(CausalBertOptions(**base), tiny_model(tokenizer), tokenizer)
    monkeypatch.setattr(cb, "save_checkpoint", real_save)
    with pytest.raises(TrainError, match="interrupted run with other options"):
        continue_training(CausalBertOptions(**{**base, "lr": 1e-2}), tiny_model(tokenizer),
                          tokenizer)


@pytest.mark.parametrize("asks_for, expected", [
    ("cause", ("he tripped", "the man fell")),   # the alternative is the cause
    ("effect", ("the man fell", "he tripped")),  # the premise is the cause
])
def test_causal_order(asks_for: str, expected: tuple[str, str]) -> None:
    assert causal_order("The man fell.", asks_for, "He tripped.") == expected


def test_scorer_scores_in_causal_order(tokenizer) -> None:
    model = tiny_model(tokenizer, seed=3).eval()
    scorer = CausalBertScorer(model, tokenizer)
    with torch.no_grad():
        ab, ba = score_pairs(model, tokenizer, [("he tripped", "the man fell"),
                                                ("the man fell", "he tripped")]).tolist()
    assert abs(ab - ba) > 1e-6  # the order matters to the model, so the check below can fail
    assert scorer.score("The man fell.", "cause", "He tripped.") == pytest.approx(ab, abs=1e-5)
    assert scorer.score("The man fell.", "effect", "He tripped.") == pytest.approx(ba, abs=1e-5)


def test_copa_ranking_learns_the_training_items(tokenizer) -> None:
    words = ["cup", "vase", "glass", "plate", "bowl", "jar", "mug", "pot"]
    # "broke" is always the right effect, in either position
    items = [CopaItem(str(i), f"The {w} fell.", "effect",
                      *((f"The {w} broke.", f"The {w} sang.") if i % 2 else
                        (f"The {w} sang.", f"The {w} broke.")), 1 if i % 2 else 2)
             for i, w in enumerate(words)]
    model = tiny_model(tokenizer, seed=1)
    assert accuracy(CausalBertScorer(model, tokenizer), items) < 1.0  # not solved by chance
    losses = train_copa_ranking(model, tokenizer, items,
                                CopaRankingOptions(epochs=15, batch_size=8, lr=3e-3))
    assert len(losses) == 15 and losses[-1] < losses[0]
    assert accuracy(CausalBertScorer(model, tokenizer), items) == 1.0


def test_missing_train_file_is_a_clear_error() -> None:
    with pytest.raises(TrainError, match="--train"):
        make_causal_bert_scorer(model=None)
    with pytest.raises(TrainError, match="--train"):
        make_scorer("causal-bert")


def test_missing_model_folder_is_named(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    copa = copa_file(tmp_path / "copa.xml")
    missing = tmp_path / "no-such-model"
    with pytest.raises(ModelFolderError, match="no-such-model"):
        make_causal_bert_scorer(train=str(copa), model=str(missing))
    not_cb = tmp_path / "plain"
    not_cb.mkdir()
    with pytest.raises(ModelFolderError, match="not a CausalBERT folder"):
        load_causal_bert(not_cb)
    # through the CLI: exit status 2 and the path in the message
    assert dpc_main(["eval", "copa", str(copa), "--scorer", "causal-bert", "--train", str(copa),
                     "--model", str(missing)]) == 2
    assert "no-such-model" in capsys.readouterr().err
    assert dpc_main(["eval", "copa", str(copa), "--scorer", "causal-bert"]) == 2
    assert "--train" in capsys.readouterr().err


def test_cli_rejects_bad_pair_count(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert dpc_main(["train", "causal-bert", "--bank", "b", "--out", str(tmp_path / "o"),
                     "--pairs", "lots"]) == 2
    assert "'lots'" in capsys.readouterr().err


def test_a_checkpoint_without_the_loops_entries_resumes(tokenizer, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """A margin checkpoint holding no ``step``/``elapsed`` (the layout before train.loop) counts
    its steps by its losses and resumes to the same result."""
    import train.causal_bert as cb
    from train.checkpoint import load_state, save_state

    pairs = [(f"cause {i}", f"effect {i}") for i in range(12)]
    options = CausalBertOptions(bank="unused", out=str(tmp_path), pairs=12, batch_size=4,
                                lr=1e-3, epochs=2, dev_pairs=0, checkpoint_every=2,
                                progress=False)
    whole_model = tiny_model(tokenizer)
    whole = train_margin(whole_model, tokenizer, pairs, options)

    real_loss, calls = cb.margin_loss, []

    def failing_loss(*args, **kwargs):
        calls.append(1)
        if len(calls) == 4:  # after the checkpoint of step 2
            raise KeyboardInterrupt
        return real_loss(*args, **kwargs)

    path = tmp_path / "margin.safetensors"
    monkeypatch.setattr(cb, "margin_loss", failing_loss)
    with pytest.raises(KeyboardInterrupt):
        train_margin(tiny_model(tokenizer), tokenizer, pairs, options, path)
    monkeypatch.setattr(cb, "margin_loss", real_loss)
    state = load_state(path)
    assert state.pop("step") == 2 and "elapsed" in state
    del state["elapsed"]
    save_state(path, state)

    resumed_model = tiny_model(tokenizer, seed=7)
    resumed = train_margin(resumed_model, tokenizer, pairs, options, path)
    assert resumed == pytest.approx(whole, rel=1e-6) and len(resumed) == 6
    for a, b in zip(whole_model.parameters(), resumed_model.parameters()):
        torch.testing.assert_close(a, b, rtol=1e-6, atol=1e-7)
