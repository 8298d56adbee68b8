"""The cross-encoder fine-tuner on a tiny BERT: it learns, saves, loads, resumes, refuses."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from dpc_errors import DpcError
from train.checkpoint import load_state
from train.cross_encoder import (
    CONFIG_FILE,
    STATE_FILE,
    CrossEncoder,
    CrossEncoderOptions,
    train_multiple_choice,
    train_pair_classifier,
)

WORDS = ["red", "blue", "green", "cat", "dog", "bird", "house", "tree"]


def pair_data(n: int = 48) -> tuple[list[str], list[str], list[int]]:
    """Label 1 when the two texts share their first word, else 0 (needs both texts)."""
    a, b, y = [], [], []
    for i in range(n):
        w = WORDS[i % 8]
        same = i % 2 == 0
        a.append(f"{w} thing")
        b.append(f"{w if same else WORDS[(i + 3) % 8]} item")
        y.append(1 if same else 0)
    return a, b, y


def options(tiny_bert: Path, **kw: object) -> CrossEncoderOptions:
    base = {"encoder": tiny_bert, "epochs": 3, "batch_size": 8, "lr": 3e-3, "max_length": 16,
            "seed": 0, "progress": False, "checkpoint_every": 4}
    base.update(kw)
    return CrossEncoderOptions(**base)  # type: ignore[arg-type]


def test_pair_classifier_learns_saves_and_loads(tiny_bert: Path, tmp_path: Path) -> None:
    a, b, y = pair_data()
    model = train_pair_classifier(a, b, y, 2, options(tiny_bert, epochs=6), out=tmp_path / "m",
                                  dev=(a, b, y), label_names=["no", "yes"])
    logits = model.logits(a, b)
    assert logits.shape == (48, 2)
    acc = float((logits.argmax(1) == np.array(y)).mean())
    assert acc >= 0.75, acc
    config = json.loads((tmp_path / "m" / CONFIG_FILE).read_text())
    assert config["num_labels"] == 2 and config["mode"] == "pair"
    assert config["label_names"] == ["no", "yes"]
    assert (tmp_path / "m" / "encoder" / "model.safetensors").is_file()
    assert not (tmp_path / "m" / STATE_FILE).exists()  # cleaned up once finished
    loaded = CrossEncoder.load(tmp_path / "m")
    np.testing.assert_allclose(loaded.logits(a, b), logits, atol=1e-5)
    probs = loaded.probabilities(a[:3], b[:3])
    np.testing.assert_allclose(probs.sum(1), 1.0, atol=1e-5)
    emb = loaded.embed(a[:5], b[:5])
    assert emb.shape == (5, 16)
    loaded.save(tmp_path / "half", half=True)
    half = CrossEncoder.load(tmp_path / "half")
    assert next(half.encoder.parameters()).dtype == torch.float32
    np.testing.assert_allclose(half.logits(a, b), logits, atol=2e-2)
    # length-sorted batching keeps the input order
    np.testing.assert_allclose(loaded.logits(a[::-1], b[::-1], batch_size=3), logits[::-1],
                               atol=1e-5)


def test_single_text_and_seeded(tiny_bert: Path) -> None:
    a, _, y = pair_data(16)
    m1 = train_pair_classifier(a, None, y, 2, options(tiny_bert, epochs=1))
    m2 = train_pair_classifier(a, None, y, 2, options(tiny_bert, epochs=1))
    np.testing.assert_allclose(m1.logits(a), m2.logits(a), atol=1e-6)
    assert m1.logits([]).shape == (0, 2)


def test_resume_continues_to_the_same_weights(tiny_bert: Path, tmp_path: Path) -> None:
    a, b, y = pair_data(32)
    full = train_pair_classifier(a, b, y, 2, options(tiny_bert, epochs=2), out=tmp_path / "full")
    # an interrupted run: stop at step 4 by raising from the data, then restart
    opts = options(tiny_bert, epochs=2)
    calls = {"n": 0}

    class Boom(Exception):
        pass

    original = CrossEncoder._tokenize

    def flaky(self: CrossEncoder, ta: list[str], tb: list[str] | None) -> dict:
        if self.training:
            calls["n"] += 1
            if calls["n"] == 6:
                raise Boom
        return original(self, ta, tb)

    CrossEncoder._tokenize = flaky  # type: ignore[method-assign]
    try:
        with pytest.raises(Boom):
            train_pair_classifier(a, b, y, 2, opts, out=tmp_path / "resumed")
    finally:
        CrossEncoder._tokenize = original  # type: ignore[method-assign]
    state = load_state(tmp_path / "resumed" / STATE_FILE)
    assert state["step"] == 4
    resumed = train_pair_classifier(a, b, y, 2, opts, out=tmp_path / "resumed")
    np.testing.assert_allclose(resumed.logits(a, b), full.logits(a, b), atol=1e-5)
    # a finished run is loaded, not retrained
    again = train_pair_classifier(a, b, y, 2, opts, out=tmp_path / "resumed")
    np.testing.assert_allclose(again.logits(a, b), full.logits(a, b), atol=1e-5)
    # other data in the same folder is refused
    with pytest.raises(DpcError, match="other data"):
        train_pair_classifier(a, b, [1 - v for v in y], 2, opts, out=tmp_path / "resumed")


def test_multiple_choice(tiny_bert: Path, tmp_path: Path) -> None:
    contexts, choices, labels = [], [], []
    for i in range(32):
        w = WORDS[i % 8]
        right = (i * 5) % 3
        opts = [f"{WORDS[(i + 1 + j) % 8]} bad" for j in range(3)]
        opts[right] = f"{w} good"  # learnable from the choice alone: tests the softmax wiring
        contexts.append(f"{w} thing")
        choices.append(opts)
        labels.append(right)
    model = train_multiple_choice(contexts, choices, labels,
                                  options(tiny_bert, epochs=8, lr=5e-3),
                                  out=tmp_path / "mc", dev=(contexts, choices, labels))
    scores = model.choice_scores(contexts, choices)
    assert scores.shape == (32, 3)
    assert float((scores.argmax(1) == np.array(labels)).mean()) >= 0.9
    loaded = CrossEncoder.load(tmp_path / "mc")
    assert loaded.mode == "choice"
    np.testing.assert_allclose(loaded.choice_scores(contexts, choices), scores, atol=1e-5)


def test_init_from_continues_a_saved_model(tiny_bert: Path, tmp_path: Path) -> None:
    a, b, y = pair_data(16)
    first = train_pair_classifier(a, b, y, 2, options(tiny_bert, epochs=1), out=tmp_path / "m")
    more = train_pair_classifier(a, b, y, 2, options(tiny_bert, epochs=1, lr=1e-9,
                                                     init_from=tmp_path / "m"))
    np.testing.assert_allclose(more.logits(a, b), first.logits(a, b), atol=1e-3)
    with pytest.raises(DpcError, match="2 labels, not a pair model with 3"):
        train_pair_classifier(a, b, y, 3, options(tiny_bert, init_from=tmp_path / "m"))


def test_max_minutes_stops_early(tiny_bert: Path) -> None:
    a, b, y = pair_data(32)
    model = train_pair_classifier(a, b, y, 2, options(tiny_bert, epochs=50, max_minutes=1e-4))
    assert model.training_summary["steps"] < 50 * 4


def test_bad_folders_and_input(tiny_bert: Path, tmp_path: Path) -> None:
    with pytest.raises(DpcError, match="no cross_encoder.json"):
        CrossEncoder.load(tmp_path)
    with pytest.raises(DpcError, match="does not exist"):
        CrossEncoder.load(tmp_path / "nope")
    # a pickle where the head should be is refused, never unpickled
    a, b, y = pair_data(8)
    model = train_pair_classifier(a, b, y, 2, options(tiny_bert, epochs=1), out=tmp_path / "m")
    torch.save({"weight": torch.zeros(2)}, tmp_path / "m" / "head.safetensors")
    with pytest.raises(DpcError, match="pickle"):
        CrossEncoder.load(tmp_path / "m")
    # pickle encoder weights are refused too
    (tmp_path / "enc").mkdir()
    (tmp_path / "enc" / "config.json").write_text("{}")
    (tmp_path / "enc" / "pytorch_model.bin").write_bytes(b"\x80\x04")
    with pytest.raises(DpcError, match="pickle"):
        train_pair_classifier(a, b, y, 2, options(tmp_path / "enc"))
    with pytest.raises(DpcError, match="out of range"):
        train_pair_classifier(a, b, [0, 1, 2, 0, 1, 0, 1, 0], 2, options(tiny_bert))
    with pytest.raises(DpcError, match="labels"):
        train_pair_classifier(a, b, y[:3], 2, options(tiny_bert))
    with pytest.raises(DpcError, match="batch_size"):
        train_pair_classifier(a, b, y, 2, options(tiny_bert, batch_size=0))
    with pytest.raises(DpcError, match="choices"):
        model.choice_scores(["x", "y"], [["a", "b"], ["c"]])
