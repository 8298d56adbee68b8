"""The measures: PC1 KL, the linear probe (twin-aware), Figure 1."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tasks.aflite.measures import figure, measure_set, pc1_kl, probe_accuracy


def data(shift: float, size: int = 400, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1], size // 2)
    return rng.normal(size=(size, 5)) + shift * y[:, None], y


def test_kl_grows_with_the_label_signal_on_pc1() -> None:
    values = [pc1_kl(*data(shift)) for shift in (0.0, 1.0, 3.0)]
    assert values[0] < 0.1 < values[1] < values[2]
    assert values[2] > 2.0
    # more labels: the mean over ordered pairs, still 0-ish for noise
    rng = np.random.default_rng(1)
    assert pc1_kl(rng.normal(size=(600, 4)), np.arange(600) % 4) < 0.15


def test_probe_accuracy_is_chance_on_noise_and_high_on_signal() -> None:
    assert abs(probe_accuracy(*data(0.0)) - 0.5) < 0.08
    assert probe_accuracy(*data(3.0)) > 0.95


def test_grouped_probe_does_not_learn_one_twin_from_the_other() -> None:
    # twins: the same point with opposite labels; an ungrouped probe sees the twin of every test
    # point in training and predicts the wrong label for it
    rng = np.random.default_rng(2)
    base = rng.normal(size=(200, 5))
    X = np.repeat(base, 2, axis=0) + 0.01 * rng.normal(size=(400, 5))
    y = np.tile([0, 1], 200)
    groups = np.repeat(np.arange(200), 2).tolist()
    assert probe_accuracy(X, y, groups=groups) > probe_accuracy(X, y) + 0.05


def test_measure_set_and_figure(tmp_path: Path) -> None:
    X, y = data(2.0)
    m = measure_set(X, y)
    assert m.size == 400 and m.chance == 0.5 and m.probe > 0.8 and m.kl > 1.0
    assert set(m.to_json()) == {"size", "kl", "probe", "chance"}
    path = figure({"all": (X, y), "half": (X[::2], y[::2])}, tmp_path / "f.png",
                  label_names=["no", "yes"], title="test")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
