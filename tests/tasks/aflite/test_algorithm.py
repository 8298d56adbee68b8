"""AFLite: the batched torch ensemble against the scikit-learn loop, and what it removes."""

from __future__ import annotations

import numpy as np
import pytest

from tasks.aflite.algorithm import (
    AfliteError,
    aflite,
    aflite_reference,
    ensemble_scores,
    ensemble_scores_reference,
    phase_subsets,
    scaled_parameters,
)
from tasks.errors import TaskError


def planted(size: int = 600, planted_share: float = 0.25, classes: int = 2, d: int = 8,
            seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Noise features, except that the first ``planted_share`` carry their label in column j."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, classes, size)
    X = rng.normal(size=(size, d))
    easy = np.arange(int(size * planted_share))
    X[easy, y[easy]] += 5.0                                           # the artifact
    return X, y, easy


@pytest.mark.parametrize("classes", [2, 3])
def test_batched_phase_agrees_with_the_scikit_learn_loop(classes: int) -> None:
    X, y, _ = planted(classes=classes)
    X = (X - X.mean(0)) / X.std(0)
    subsets = phase_subsets(np.random.default_rng(1), 12, len(X), 200)
    fast = ensemble_scores(X, y, subsets, classes=classes, dtype="float64", max_iter=500)
    slow = ensemble_scores_reference(X, y, subsets, classes=classes)
    assert fast.shape == slow.shape == (len(X),)
    # every score is a fraction over ~8 held-out models: equal up to a boundary case or two
    assert np.abs(fast - slow).max() <= 0.15
    assert np.mean(fast == slow) > 0.98
    assert 0.4 < np.nanmean(fast) < 1.0                               # not a constant


def test_aflite_matches_its_reference_and_removes_the_planted_instances() -> None:
    X, y, easy = planted()
    # the paper's stopping rule alone, so that both run to the end
    fast = aflite(X, y, n=16, m=150, k=30, tau=0.75, seed=3, dtype="float64", max_iter=500,
                  stop_at_chance=False)
    slow = aflite_reference(X, y, n=16, m=150, k=30, tau=0.75, seed=3, stop_at_chance=False)
    overlap = len(np.intersect1d(fast.kept, slow.kept)) / len(np.union1d(fast.kept, slow.kept))
    assert overlap > 0.97
    removed = np.setdiff1d(np.arange(len(X)), fast.kept)
    first_phase = fast.phases[0]
    assert first_phase.removed == 30 and first_phase.remaining == len(X) - 30
    assert sum(first_phase.histogram) == len(X)
    # the planted quarter is most of what the first phases remove
    early = np.setdiff1d(np.arange(len(X)), aflite(X, y, n=16, m=150, k=30, seed=3,
                                                   max_phases=4).kept)
    assert np.isin(early, easy).mean() > 0.6
    assert np.isin(easy, removed).mean() > 0.8
    assert fast.phases[-1].removed < 30 or fast.phases[-1].remaining <= 150


def test_noise_alone_loses_little_and_the_run_is_seeded() -> None:
    rng = np.random.default_rng(5)
    X, y = rng.normal(size=(500, 6)), rng.integers(0, 2, 500)
    # the paper's rule alone, which removes something even from noise (stop-at-chance, the
    # default, may remove nothing here, and two empty removals would prove nothing)
    a = aflite(X, y, n=32, m=100, k=25, seed=0, stop_at_chance=False)
    b = aflite(X, y, n=32, m=100, k=25, seed=0, stop_at_chance=False)
    other = aflite(X, y, n=32, m=100, k=25, seed=1, stop_at_chance=False)
    assert 250 < len(a.kept) < 500
    assert np.array_equal(a.kept, b.kept)
    assert not np.array_equal(a.kept, other.kept)


def test_grouped_subsets_train_on_whole_groups() -> None:
    groups = np.repeat(np.arange(50), 2)                              # 50 twin pairs
    subsets = phase_subsets(np.random.default_rng(0), 20, 100, 40, groups)
    for row in subsets:
        assert len(set(row.tolist())) == 40
        assert np.bincount(groups[row], minlength=50).max() == 2
        assert (np.bincount(groups[row], minlength=50) == 1).sum() == 0


def test_scaled_parameters_keep_the_papers_proportions() -> None:
    assert scaled_parameters(47_000) == (10_000, 500)
    m, k = scaled_parameters(9_075)
    assert m == 1931 and k == 97


@pytest.mark.parametrize("kwargs, words", [
    ({"m": 600}, "`m` (=600) must be smaller than the number of instances (600)"),
    ({"m": 1}, "`m` (=1)"),
    ({"k": 0}, "`k` (=0)"),
    ({"k": 601}, "`k` (=601)"),
    ({"tau": 0.0}, "`tau` (=0.0) must be in (0, 1]"),
    ({"tau": 1.5}, "`tau` (=1.5)"),
    ({"tau": float("nan")}, "`tau` (=nan)"),
    ({"n": 0}, "`n` (=0)"),
])
def test_parameters_out_of_range_are_named(kwargs: dict, words: str) -> None:
    X, y, _ = planted()
    options = {"n": 4, "m": 100, "k": 10} | kwargs
    with pytest.raises(AfliteError) as err:
        aflite(X, y, **options)
    assert words in str(err.value)
    assert isinstance(err.value, TaskError)


def test_embeddings_and_labels_must_match() -> None:
    X, y, _ = planted()
    with pytest.raises(AfliteError, match=r"different lengths \(600 embeddings, 599 labels\)"):
        aflite(X, y[:-1], n=4, m=100, k=10)
    with pytest.raises(AfliteError, match="at least 2 classes"):
        aflite(X, np.zeros(600, dtype=int), n=4, m=100, k=10)
    with pytest.raises(AfliteError, match="2-D"):
        aflite(X[None], y, n=4, m=100, k=10)
    with pytest.raises(AfliteError, match="integers"):
        aflite(X, y.astype(float), n=4, m=100, k=10)
    bad = X.copy()
    bad[3, 1] = np.nan
    with pytest.raises(AfliteError, match="finite"):
        aflite(bad, y, n=4, m=100, k=10)
    with pytest.raises(AfliteError, match="599 groups"):
        aflite(X, y, n=4, m=100, k=10, groups=list(range(599)))


def test_stop_at_chance_keeps_noise_and_still_removes_an_artifact() -> None:
    rng = np.random.default_rng(7)
    X, y = rng.normal(size=(500, 6)), rng.integers(0, 2, 500)
    plain = aflite(X, y, n=32, m=100, k=25, seed=0, stop_at_chance=False)
    stopped = aflite(X, y, n=32, m=100, k=25, seed=0)   # the default
    assert len(stopped.kept) > len(plain.kept)
    assert stopped.phases[-1].mean_score <= 0.55
    X, y, easy = planted()
    result = aflite(X, y, n=16, m=150, k=30, seed=3)
    assert np.isin(easy, np.setdiff1d(np.arange(len(X)), result.kept)).mean() > 0.6
    assert result.parameters["stop_at_chance"] is True
    assert plain.parameters["stop_at_chance"] is False
