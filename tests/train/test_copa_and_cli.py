import math
from pathlib import Path

import pytest

from tasks.copa import CopaItem, accuracy, decide_all, make_scorer
from tasks.copa.dataset import as_clause
from tasks.copa.generator import GeneratorScorer
from train.cli import main
from train.errors import TrainError
from train.metrics import sequence_log_probs
from train.trainer import TrainOptions, train_generator


@pytest.fixture(scope="module")
def tiny_model(tiny_bank: Path, tiny_tokenizer: Path, tmp_path_factory) -> str:
    out = tmp_path_factory.mktemp("gen")
    options = TrainOptions(bank=str(tiny_bank), tokenizer=str(tiny_tokenizer), out=str(out),
                           d_model=32, d_ff=64, num_layers=1, num_heads=2, batch_size=16,
                           lr=3e-3, warmup_steps=5, eval_every=6, max_steps=12, progress=False)
    return train_generator(options).model_dir


def test_generator_scorer_is_pmi_in_both_directions(tiny_model: str) -> None:
    scorer = make_scorer("generator", model=tiny_model)
    assert isinstance(scorer, GeneratorScorer)
    m, t = scorer.model, scorer.tokenizer

    def lp(src: str, tgt: str) -> float:
        return sequence_log_probs(m, t, [src], [tgt])[0]

    expected = (lp("effect: it rained", "the ground was wet") - lp("effect: ", "the ground was wet")
                + lp("cause: the ground was wet", "it rained") - lp("cause: ", "it rained"))
    got = scorer.score("It rained.", "effect", "The ground was wet.")
    assert got == pytest.approx(expected, abs=1e-4)
    forward = make_scorer("generator-forward", model=tiny_model)
    assert forward.score("It rained.", "effect", "The ground was wet.") == pytest.approx(
        lp("effect: it rained", "the ground was wet"), abs=1e-4)
    item = CopaItem("1", "It rained.", "effect", "The ground was wet.", "The sun shone.", 1)
    assert accuracy(scorer, [item]) in (0.0, 1.0)


ITEMS = [CopaItem("1", "It rained.", "effect", "The ground was wet.", "The sun shone.", 1),
         CopaItem("2", "The baby cried.", "cause", "The baby was hungry.", "The road was icy.", 1),
         CopaItem("3", "The dog barked loudly all night.", "effect", "The neighbours woke up.",
                  "He missed the bus.", 1)]


def test_prepared_scores_equal_one_at_a_time(tiny_model: str) -> None:
    single = make_scorer("generator", model=tiny_model)
    batched = make_scorer("generator", model=tiny_model, batch_size=2)  # padding inside batches
    batched.prepare(ITEMS)
    assert len(batched._known) == len({r for it in ITEMS for a in it.alternatives
                                       for r in batched._requests(it.premise, it.asks_for, a)})
    calls = []
    batched.model.register_forward_hook(lambda *_: calls.append(1))
    for it in ITEMS:
        for alt in it.alternatives:
            assert batched.score(it.premise, it.asks_for, alt) == pytest.approx(
                single.score(it.premise, it.asks_for, alt), abs=1e-4)
    assert not calls  # every score was looked up, none recomputed


def test_prepare_computes_what_the_mode_reads(tiny_model: str) -> None:
    forward = make_scorer("generator-forward", model=tiny_model)
    forward.prepare(ITEMS)
    assert len(forward._known) == 6  # one forward log-probability per alternative
    forward.prepare(ITEMS, all_evidence=True)
    e = forward.evidence(ITEMS[0].premise, ITEMS[0].asks_for, ITEMS[0].alternative1)
    assert e.pmi == pytest.approx(e.forward - e.prior)
    assert forward.score(ITEMS[0].premise, ITEMS[0].asks_for, ITEMS[0].alternative1) == e.forward


def test_decide_all_lets_the_scorer_prepare() -> None:
    class Recording:
        def __init__(self) -> None:
            self.prepared: list[CopaItem] = []

        def prepare(self, items):
            self.prepared = list(items)

        def score(self, premise, asks_for, alternative):
            assert self.prepared, "score called before prepare"
            return -len(alternative)

    scorer = Recording()
    assert decide_all(scorer, ITEMS) == [(2, False), (2, False), (2, False)]
    assert scorer.prepared == ITEMS


def test_scorer_rejects_unknown_mode(tiny_model: str) -> None:
    with pytest.raises(TrainError, match="'loud'"):
        make_scorer("generator", model=tiny_model, mode="loud")


def test_as_clause() -> None:
    assert as_clause("The girl  ran.") == "the girl ran"
    assert as_clause("I ran!") == "I ran"


def test_evaluate_generator_on_a_split(tiny_model: str, tiny_bank: Path) -> None:
    from train.evaluation import evaluate_generator

    m = evaluate_generator(tiny_model, tiny_bank, split="train", max_examples=40)
    assert m.tokens > 40 and 0.0 <= m.word_accuracy <= 1.0
    assert 1.0 < m.perplexity < 120.0  # untrained: ~vocab size (120); 12 steps do better
    assert math.isclose(m.perplexity, math.exp(m.nll_sum / m.tokens))


def test_cli_errors_name_the_bad_value(tmp_path: Path, tiny_tokenizer: Path, capsys) -> None:
    code = main(["generator", "--bank", str(tmp_path / "nobank"), "--tokenizer",
                 str(tiny_tokenizer), "--out", str(tmp_path / "o"), "--no-progress"])
    assert code == 2
    assert "nobank" in capsys.readouterr().err
    code = main(["evaluate", "--model", str(tmp_path / "nomodel"), "--bank", str(tmp_path)])
    assert code == 2
    assert "nomodel" in capsys.readouterr().err


def test_tokenizer_command(tiny_bank: Path, tmp_path: Path, capsys) -> None:
    assert main(["tokenizer", "--bank", str(tiny_bank), "--out", str(tmp_path / "t"),
                 "--vocab-size", "60"]) == 0
    assert (tmp_path / "t" / "tokenizer.json").is_file()


def test_trim_vocab_and_export_commands(tiny_bank: Path, tiny_bert: Path, tiny_model: str,
                                        tmp_path: Path, capsys) -> None:
    assert main(["trim-vocab", "--from", str(tiny_bert), "--bank", str(tiny_bank), "--out",
                 str(tmp_path / "t"), "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "of 30522 tokens kept" in out and str(tmp_path / "t") in out
    assert main(["generator", "--bank", str(tiny_bank), "--tokenizer", str(tmp_path / "t"),
                 "--warm-start", str(tmp_path / "t"), "--share-weights", "--out",
                 str(tmp_path / "run"), "--max-steps", "1", "--eval-every", "1",
                 "--batch-size", "8", "--dev-examples", "8", "--no-progress"]) == 0
    capsys.readouterr()
    assert main(["export", "--model", str(tmp_path / "run" / "model"), "--out",
                 str(tmp_path / "x")]) == 0
    assert "as float16" in capsys.readouterr().out
    assert main(["trim-vocab", "--from", tiny_model, "--bank", str(tiny_bank), "--out",
                 str(tmp_path / "bad"), "--no-progress"]) == 2
    assert "only a WordPiece" in capsys.readouterr().err
    assert main(["export", "--model", str(tmp_path / "nomodel"), "--out",
                 str(tmp_path / "y")]) == 2
    assert "nomodel" in capsys.readouterr().err
