"""Every trainer gives the same numbers as before it ran on :mod:`train.loop`.

Each test is a small fixed-seed run on the CPU that stops or is interrupted mid-run and resumes
from its checkpoint, then compares its losses and a sum of its trained weights with the values
the trainer gave before it used the shared loop (recorded once, written here). A change to the
loop or to a trainer's step that moves any number fails here.

The BERT encoders' starting weights are drawn here (:func:`own_init`), not by transformers: a
transformers release that changes how it initialises a BERT moved the digests with no change to
any trainer (transformers 5.24.0 did, for weights the losses never reach). The expected values
were recorded by running this file's runs on the trainers of commit de418d1 (before the shared
loop) with these starting weights, and the trainers of today give the same.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from safetensors.torch import load_file

#: Relative tolerance: the runs are deterministic on one machine; this allows for nothing but
#: a different summation order of the digest itself (other CPUs: :func:`expected`).
RTOL = 1e-6


def weight_digest(tensors: dict[str, torch.Tensor] | Any) -> list[float]:
    """Two numbers that move with any weight: the sum and the sum of squares (float64)."""
    if isinstance(tensors, torch.nn.Module):
        tensors = tensors.state_dict()
    values = [t.detach().double().cpu() for _, t in sorted(tensors.items())
              if t.is_floating_point()]
    return [float(sum(v.sum() for v in values)), float(sum((v * v).sum() for v in values))]


def own_init(model: torch.nn.Module, seed: int) -> torch.nn.Module:
    """Every weight drawn from one seeded generator (N(0, 0.02); LayerNorm 1 and biases 0), in
    name order, so the start does not depend on the installed transformers."""
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, parameter in sorted(model.named_parameters()):
            if "LayerNorm" in name or "layer_norm" in name:
                parameter.fill_(1.0 if name.endswith("weight") else 0.0)
            elif name.endswith("bias"):
                parameter.zero_()
            else:
                parameter.copy_(torch.randn(parameter.shape, generator=generator) * 0.02)
    return model


@pytest.fixture(scope="module")
def seeded_bert(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """conftest's tiny BERT warm-start folder, its weights drawn by :func:`own_init`."""
    from transformers import AutoTokenizer, BertConfig, BertModel

    from train.models import minilm_tokenizer_path

    folder = tmp_path_factory.mktemp("seeded_bert")
    tokenizer = AutoTokenizer.from_pretrained(str(minilm_tokenizer_path()), local_files_only=True)
    config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=16, num_hidden_layers=1,
                        num_attention_heads=2, intermediate_size=32, max_position_embeddings=64)
    own_init(BertModel(config), seed=0).save_pretrained(str(folder))
    tokenizer.save_pretrained(str(folder))
    return folder


# ----------------------------------------------------------------------------- the runs


def run_generator(bank: Path, tokenizer: Path, tmp: Path) -> dict[str, Any]:
    """``train_generator``: stopped at step 3 by its budget, resumed from the checkpoint to 8."""
    from train.trainer import TrainOptions, train_generator

    def options(max_steps: int) -> TrainOptions:
        return TrainOptions(bank=str(bank), tokenizer=str(tokenizer), out=str(tmp / "gen"),
                            d_model=32, d_ff=64, num_layers=1, num_heads=2, batch_size=16,
                            lr=3e-3, warmup_steps=5, eval_every=4, checkpoint_every=2,
                            dev_examples=32, max_steps=max_steps, progress=False, seed=3)

    first = train_generator(options(3))
    result = train_generator(options(8))
    weights = load_file(str(tmp / "gen" / "checkpoint" / "model.safetensors"))
    return {"first_steps": first.steps, "steps": result.steps,
            "train_loss": [h["train_loss"] for h in result.history],
            "dev_loss": [h["dev_loss"] for h in result.history],
            "best_dev_loss": result.best_dev_loss, "weights": weight_digest(weights)}


LORA_EXAMPLES = [(f"the {w} fell because", f"the wind blew {i}") for i, w in
                 enumerate(["tree", "fence", "sign", "roof", "pole", "wall", "lamp", "gate"])]


def run_lora(base: Path, tmp: Path) -> dict[str, Any]:
    """``train_lora``: stopped by its time budget after one step, resumed from its state."""
    from train.lora import LoraFiles, LoraOptions, train_lora

    def options(**kw: Any) -> LoraOptions:
        return LoraOptions(r=2, alpha=4, batch_size=3, epochs=3, lr=1e-2, progress=False,
                           checkpoint_every=2, seed=1, **kw)

    first = train_lora(LORA_EXAMPLES, tmp / "lora", options(max_minutes=1e-9), base,
                       dev=LORA_EXAMPLES[:3])
    summary = train_lora(LORA_EXAMPLES, tmp / "lora", options(), base, dev=LORA_EXAMPLES[:3])
    weights = load_file(str(tmp / "lora" / LoraFiles().adapter))
    return {"first_steps": first["steps"], "steps": summary["steps"],
            "final_loss": summary["final_loss"], "dev_loss_before": summary["dev_loss_before"],
            "dev_loss_after": summary["dev_loss_after"], "weights": weight_digest(weights)}


WORDS = ["red", "blue", "green", "cat", "dog", "bird", "house", "tree"]


def _pair_data(n: int) -> tuple[list[str], list[str], list[int]]:
    a, b, y = [], [], []
    for i in range(n):
        w = WORDS[i % 8]
        same = i % 2 == 0
        a.append(f"{w} thing")
        b.append(f"{w if same else WORDS[(i + 3) % 8]} item")
        y.append(1 if same else 0)
    return a, b, y


def run_cross_encoder(encoder: Path, tmp: Path, monkeypatch: pytest.MonkeyPatch
                      ) -> dict[str, Any]:
    """``train_pair_classifier`` with ``out`` and ``dev``: interrupted at its 6th training
    step, resumed from the checkpoint of step 4; then ``train_multiple_choice`` without ``out``
    (the best dev model kept in memory), evaluated every 3 steps."""
    from train.cross_encoder import (
        CrossEncoder,
        CrossEncoderOptions,
        train_multiple_choice,
        train_pair_classifier,
    )

    a, b, y = _pair_data(32)
    options = CrossEncoderOptions(encoder=encoder, epochs=2, batch_size=6, lr=3e-3,
                                  max_length=16, seed=2, progress=False, checkpoint_every=2)
    real_forward, calls = CrossEncoder.forward, []

    def interrupted(self: CrossEncoder, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        if self.training:
            calls.append(1)
            if len(calls) == 6:
                raise KeyboardInterrupt
        return real_forward(self, batch)

    monkeypatch.setattr(CrossEncoder, "forward", interrupted)
    with pytest.raises(KeyboardInterrupt):
        train_pair_classifier(a, b, y, 2, options, out=tmp / "pair", dev=(a[:12], b[:12], y[:12]))
    monkeypatch.setattr(CrossEncoder, "forward", real_forward)
    pair = train_pair_classifier(a, b, y, 2, options, out=tmp / "pair",
                                 dev=(a[:12], b[:12], y[:12]))

    contexts = [f"the {WORDS[i % 8]} one" for i in range(24)]
    choices = [[f"{WORDS[i % 8]} here", f"{WORDS[(i + 1) % 8]} there", f"{WORDS[(i + 5) % 8]}"]
               for i in range(24)]
    labels = [0] * 24
    mc_options = CrossEncoderOptions(encoder=encoder, epochs=2, batch_size=5, lr=3e-3,
                                     max_length=16, seed=4, progress=False, eval_every=3)
    choice = train_multiple_choice(contexts, choices, labels, mc_options,
                                   dev=(contexts[:8], choices[:8], labels[:8]))
    return {"pair_history": pair.training_summary["history"],
            "pair_steps": pair.training_summary["steps"],
            "pair_weights": weight_digest(pair),
            "choice_history": choice.training_summary["history"],
            "choice_weights": weight_digest(choice)}


def tiny_causal_bert(seed: int = 0) -> tuple[Any, Any]:
    from transformers import AutoTokenizer, BertConfig, BertModel

    from train.causal_bert import CausalBert
    from train.models import minilm_tokenizer_path

    tokenizer = AutoTokenizer.from_pretrained(minilm_tokenizer_path(), local_files_only=True)
    config = BertConfig(vocab_size=len(tokenizer), hidden_size=16, num_hidden_layers=1,
                        num_attention_heads=2, intermediate_size=32, max_position_embeddings=64,
                        hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.0)
    encoder = own_init(BertModel(config, add_pooling_layer=False), seed)
    torch.manual_seed(seed)  # the head's draw follows no draw of transformers'
    return CausalBert(encoder), tokenizer


CAUSAL_PAIRS = [(f"the {w} fell {i}", f"the {v} broke {i}") for i, (w, v) in
                enumerate(zip(WORDS * 3, reversed(WORDS * 3)))]


def run_causal_bert(tmp: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """``train_margin`` with a checkpoint every 5 steps: interrupted at step 8, resumed."""
    import train.causal_bert as cb

    options = cb.CausalBertOptions(bank="unused", out=str(tmp / "cb"), pairs=24, batch_size=4,
                                   lr=1e-3, epochs=2, dev_pairs=0, checkpoint_every=5,
                                   progress=False, seed=5)
    real_loss, calls = cb.margin_loss, []

    def interrupted(*args: Any, **kwargs: Any) -> torch.Tensor:
        calls.append(1)
        if len(calls) == 8:
            raise KeyboardInterrupt
        return real_loss(*args, **kwargs)

    checkpoint = tmp / "cb.safetensors"
    monkeypatch.setattr(cb, "margin_loss", interrupted)
    model, tokenizer = tiny_causal_bert()
    with pytest.raises(KeyboardInterrupt):
        cb.train_margin(model, tokenizer, CAUSAL_PAIRS, options, checkpoint, {"x": 1})
    monkeypatch.setattr(cb, "margin_loss", real_loss)
    model, tokenizer = tiny_causal_bert(seed=9)  # the weights must come from the checkpoint
    losses = cb.train_margin(model, tokenizer, CAUSAL_PAIRS, options, checkpoint, {"x": 1})
    return {"losses": losses, "weights": weight_digest(model)}


def run_copa_ranking() -> dict[str, Any]:
    """``train_copa_ranking``: 3 epochs of 3 steps (no checkpoint: it has none)."""
    from tasks.copa import CopaItem
    from tasks.copa.causal_bert import CopaRankingOptions, train_copa_ranking

    items = [CopaItem(str(i), f"The {w} fell.", "effect",
                      *((f"The {w} broke.", f"The {w} sang.") if i % 2 else
                        (f"The {w} sang.", f"The {w} broke.")), 1 if i % 2 else 2)
             for i, w in enumerate(WORDS)]
    model, tokenizer = tiny_causal_bert(seed=1)
    losses = train_copa_ranking(model, tokenizer, items,
                                CopaRankingOptions(epochs=3, batch_size=3, lr=3e-3, seed=2))
    return {"losses": losses, "weights": weight_digest(model)}


def run_swag_committee() -> dict[str, Any]:
    """The SWAG committee's torch members (CNN, BiLSTM), 2 epochs of batches of 32."""
    from tasks.swag.committee import Committee, EndingTable

    rng = np.random.default_rng(0)
    texts, lps, toks = [], [], []
    fillers = ["he walks", "she runs fast", "they sit down", "the dog barks", "a man waves"]
    for _ in range(50):
        for j in range(4):
            texts.append(fillers[rng.integers(len(fillers))]
                         + (" indeed ." if j == 0 else " now ."))
            lps.append(-30.0 if j == 0 else -10.0 + rng.normal())
            toks.append(5)
    tags = [[(w, "NOUN" if w in ("dog", "man") else "X") for w in t.split()] for t in texts]
    table = EndingTable.build(texts, lps, toks, [8] * len(texts), tags)
    questions = np.arange(200).reshape(50, 4)
    committee = Committee(["cnn", "lstm"], seed=3).fit(table, questions[:40])
    scores = committee.scores(table, questions[40:].reshape(-1))
    return {name: weight_digest(committee.members[name].net) + [float(scores[name].sum())]
            for name in ("cnn", "lstm")}


# ----------------------------------------------------------------------------- the values

#: What each run gave before the trainers used :mod:`train.loop`.
EXPECTED: dict[str, dict[str, Any]] = {'generator': {'first_steps': 3,
                                                      'steps': 8,
                                                      'train_loss': [5.3104, 5.0011, 4.609],
                                                      'dev_loss': [5.1577, 5.0351, 4.6046],
                                                      'best_dev_loss': 4.604618617466518,
                                                      'weights': [187.13633442860737,
                                                                  3585.970762980877]},
                                        'lora': {'first_steps': 1,
                                                 'steps': 9,
                                                 'final_loss': 10.2604,
                                                 'dev_loss_before': 10.2757,
                                                 'dev_loss_after': 10.2134,
                                                 'weights': [0.8431015014648438,
                                                             5.415683081895622]},
                                        'cross_encoder': {'choice_history': [{'dev_accuracy': 0.25,
                                                                              'step': 3},
                                                                             {'dev_accuracy': 1.0,
                                                                              'step': 6},
                                                                             {'dev_accuracy': 1.0,
                                                                              'step': 9},
                                                                             {'dev_accuracy': 1.0,
                                                                              'step': 10}],
                                                          'choice_weights': [21.509226819788957,
                                                                             245.62327296797744],
                                                          'pair_history': [{'dev_accuracy': 0.6666666666666666,
                                                                            'step': 6},
                                                                           {'dev_accuracy': 0.6666666666666666,
                                                                            'step': 12}],
                                                          'pair_steps': 12,
                                                          'pair_weights': [21.11503567484923,
                                                                           245.49960484510956]},
                                        'causal_bert': {'losses': [0.2988463044166565,
                                                                   0.3372783660888672,
                                                                   0.271759569644928,
                                                                   0.2959577143192291,
                                                                   0.30895012617111206,
                                                                   0.30832624435424805,
                                                                   0.2833421230316162,
                                                                   0.2640714645385742,
                                                                   0.29046058654785156,
                                                                   0.30961692333221436,
                                                                   0.25357019901275635,
                                                                   0.2705240249633789],
                                                        'weights': [30.792355433795073,
                                                                    122.39527351182758]},
                                        'copa_ranking': {'losses': [0.27068087458610535,
                                                                    0.2757909595966339,
                                                                    0.24713487923145294,
                                                                    0.20738951861858368,
                                                                    0.23391155898571014,
                                                                    0.1763514131307602,
                                                                    0.14651787281036377,
                                                                    0.16026614606380463,
                                                                    0.12389447540044785],
                                                         'weights': [53.983883828611866,
                                                                     245.78245181734252]},
                                        'swag_committee': {'cnn': [-44.68518710587523,
                                                                   1264.0153885947086,
                                                                   -68.10818481445312],
                                                           'lstm': [-74.77120495035342,
                                                                    1475.9185467351056,
                                                                    -14.338324546813965]}}


#: The two runs whose numbers depend on the CPU's vector instructions (BERT's matrix products and
#: the committee's convolutions and LSTM move by up to 2% after a few steps of Adam between an
#: AVX2 and a wider CPU, with no change to any trainer). EXPECTED holds them as recorded on the
#: machine where they were first taken (and CI passed); these are the same runs recorded on an
#: AVX2 machine (``torch.backends.cpu.get_cpu_capability() == "AVX2"``) at 935f34c, whose
#: trainers are a61efcc's, which gave EXPECTED's values on that first machine.
EXPECTED_AVX2: dict[str, dict[str, Any]] = {'cross_encoder': {'choice_history': [{'dev_accuracy': 0.25, 'step': 3},
                                      {'dev_accuracy': 1.0, 'step': 6},
                                      {'dev_accuracy': 1.0, 'step': 9},
                                      {'dev_accuracy': 1.0, 'step': 10}],
                   'choice_weights': [21.511388824184948, 245.62384473352714],
                   'pair_history': [{'dev_accuracy': 0.6666666666666666, 'step': 6},
                                    {'dev_accuracy': 0.6666666666666666, 'step': 12}],
                   'pair_steps': 12,
                   'pair_weights': [21.115035575710237, 245.49960484503146]},
 'swag_committee': {'cnn': [-44.69665013609989, 1264.0038659910158, -69.2506332397461],
                    'lstm': [-74.7721942286662, 1475.918734642988, -14.378059387207031]}}


def expected(name: str) -> dict[str, Any]:
    """The recorded values of run ``name`` for this CPU (:data:`EXPECTED_AVX2` on AVX2)."""
    if torch.backends.cpu.get_cpu_capability() == "AVX2" and name in EXPECTED_AVX2:
        return EXPECTED_AVX2[name]
    return EXPECTED[name]


def _close(got: Any, want: Any) -> None:
    if isinstance(want, dict):
        assert isinstance(got, dict) and got.keys() == want.keys()
        for key in want:
            _close(got[key], want[key])
    elif isinstance(want, (list, tuple)):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _close(g, w)
    elif isinstance(want, float):
        assert got == pytest.approx(want, rel=RTOL, abs=1e-12)
    else:
        assert got == want


def test_generator_results_are_unchanged(tiny_bank: Path, tiny_tokenizer: Path,
                                         tmp_path: Path) -> None:
    _close(run_generator(tiny_bank, tiny_tokenizer, tmp_path), EXPECTED["generator"])


def test_lora_results_are_unchanged(tiny_lm: Path, tmp_path: Path) -> None:
    _close(run_lora(tiny_lm, tmp_path), EXPECTED["lora"])


def test_cross_encoder_results_are_unchanged(seeded_bert: Path, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    _close(run_cross_encoder(seeded_bert, tmp_path, monkeypatch), expected("cross_encoder"))


def test_causal_bert_results_are_unchanged(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    _close(run_causal_bert(tmp_path, monkeypatch), EXPECTED["causal_bert"])


def test_copa_ranking_results_are_unchanged() -> None:
    _close(run_copa_ranking(), EXPECTED["copa_ranking"])


def test_swag_committee_results_are_unchanged() -> None:
    _close(run_swag_committee(), expected("swag_committee"))


def test_the_digest_moves_with_any_weight() -> None:
    # guards the comparisons above: a changed weight changes the digest
    weights = {"a": torch.ones(3), "b": torch.zeros(2)}
    before = weight_digest(weights)
    weights["b"][1] = 1e-3
    assert weight_digest(weights) != before

