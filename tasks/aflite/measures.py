"""How much of the label a set's embeddings still give away.

* :func:`pc1_kl`: the measure of WinoGrande's Figure 1 -- the KL divergence between the
  label-conditional distributions of the set's first principal component. PC1 is fitted on the
  set itself; its values are cut into ``bins`` equal-width bins over their range, each label's
  counts are Laplace-smoothed (+1 per bin) and normalised, and the divergence is
  ``KL(P(pc1 | first label) || P(pc1 | second label))`` (with more labels: the mean over ordered
  pairs). 0 when the labels look alike on PC1.
* :func:`probe_accuracy`: cross-validated accuracy of a linear probe (standardised features,
  logistic regression) -- at chance (the majority label's share) after good filtering.
* :func:`figure`: the paper's Figure 1, a 2-D PCA scatter and the PC1 histograms per label, one
  column per set (all / random / PMI / AFLite), as a PNG.

>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> y = np.repeat([0, 1], 200)
>>> separable = rng.normal(size=(400, 3)) + 3 * y[:, None]
>>> round(pc1_kl(separable, y), 1) > 2, round(pc1_kl(rng.normal(size=(400, 3)), y), 2) < 0.2
(True, True)
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tasks.aflite.algorithm import check_embeddings

__all__ = ["SetMeasures", "figure", "measure_set", "pc1_kl", "pca", "probe_accuracy"]


def pca(X: np.ndarray, components: int = 2) -> np.ndarray:
    """``(N, components)`` projections of ``X`` on its principal components (sign fixed so the
    largest loading of each component is positive)."""
    centred = X - X.mean(axis=0)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    basis = vt[:components]                                           # (components, d)
    signs = np.sign(basis[np.arange(len(basis)), np.abs(basis).argmax(axis=1)])
    return centred @ (basis * signs[:, None]).T


def _histograms(values: np.ndarray, y: np.ndarray, bins: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-label smoothed probabilities ``(labels, bins)`` over common edges, and the edges."""
    edges = np.linspace(values.min(), values.max(), bins + 1)
    if edges[0] == edges[-1]:
        edges = np.linspace(edges[0] - 0.5, edges[0] + 0.5, bins + 1)
    rows = [np.histogram(values[y == c], bins=edges)[0] + 1.0 for c in np.unique(y)]
    table = np.array(rows)
    return table / table.sum(axis=1, keepdims=True), edges


def pc1_kl(X: Any, y: Any, *, bins: int = 20) -> float:
    """KL divergence of the label-conditional PC1 histograms of ``(X, y)`` (module notes)."""
    X, y = check_embeddings(X, y)
    p, _ = _histograms(pca(X, 1)[:, 0], y, bins)
    pairs = [(a, b) for a in range(len(p)) for b in range(len(p)) if a != b]
    if len(p) == 2:
        pairs = [(0, 1)]
    return float(np.mean([np.sum(p[a] * np.log(p[a] / p[b])) for a, b in pairs]))


def probe_accuracy(X: Any, y: Any, *, folds: int = 5, seed: int = 0, c: float = 1.0,
                   groups: Sequence[Any] | None = None) -> float:
    """Mean accuracy of a logistic-regression probe over ``folds`` stratified folds (fewer when
    the rarest label has fewer members; NaN below 2); with
    ``groups`` (e.g. WinoGrande twins, ``None`` entries alone) a group is never split between
    training and test folds: a probe that saw one twin mispredicts the other."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedGroupKFold, StratifiedKFold, cross_val_score
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y = check_embeddings(X, y)
    # no more folds than the rarest label has members (or than there are groups)
    folds = min(folds, int(np.bincount(np.unique(y, return_inverse=True)[1]).min()),
                len(set(groups)) if groups is not None else len(y))
    if folds < 2:
        return float("nan")
    probe = make_pipeline(StandardScaler(), LogisticRegression(C=c, max_iter=1000))
    if groups is None:
        split = StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed)
        return float(cross_val_score(probe, X, y, cv=split).mean())
    names = [f"\0{i}" if g is None else str(g) for i, g in enumerate(groups)]
    split = StratifiedGroupKFold(n_splits=folds, shuffle=True, random_state=seed)
    return float(cross_val_score(probe, X, y, cv=split, groups=names).mean())


@dataclass(frozen=True)
class SetMeasures:
    """Size, PC1 KL, probe accuracy and chance (majority share) of one set."""

    size: int
    kl: float
    probe: float
    chance: float

    def to_json(self) -> dict[str, float | int]:
        return {k: (round(v, 4) if isinstance(v, float) else v) for k, v in asdict(self).items()}


def measure_set(X: np.ndarray, y: np.ndarray, *, seed: int = 0, bins: int = 20,
                groups: Sequence[Any] | None = None) -> SetMeasures:
    """:class:`SetMeasures` of ``(X, y)`` (``groups``: see :func:`probe_accuracy`)."""
    X, y = check_embeddings(X, y)
    chance = float(np.bincount(np.unique(y, return_inverse=True)[1]).max() / len(y))
    return SetMeasures(len(y), pc1_kl(X, y, bins=bins),
                       probe_accuracy(X, y, seed=seed, groups=groups), chance)


def figure(sets: Mapping[str, tuple[np.ndarray, np.ndarray]], path: str | os.PathLike[str], *,
           label_names: Sequence[str] | None = None, bins: int = 20, points: int = 2000,
           seed: int = 0, title: str = "") -> Path:
    """Write the paper's Figure 1 for each named set ``(X, y)``: top row a 2-D PCA scatter
    (at most ``points`` points drawn), bottom row the PC1 histograms per label, with the KL."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rng = np.random.default_rng(seed)
    fig, axes = plt.subplots(2, len(sets), figsize=(3.2 * len(sets), 6.0), squeeze=False)
    for column, (name, (X, y)) in enumerate(sets.items()):
        X, y = check_embeddings(X, y)
        projected = pca(X, 2)
        labels = np.unique(y)
        _, edges = _histograms(projected[:, 0], y, bins)
        shown = rng.permutation(len(y))[:points]
        for j, label in enumerate(labels):
            text = label_names[j] if label_names is not None else str(label)
            mine = shown[y[shown] == label]
            axes[0, column].scatter(projected[mine, 0], projected[mine, 1], s=3, alpha=0.4,
                                    label=text)
            axes[1, column].hist(projected[y == label, 0], bins=edges, alpha=0.5, density=True,
                                 label=text)
        axes[0, column].set_title(f"{name} (n={len(y)})", fontsize=9)
        axes[1, column].set_title(f"KL={pc1_kl(X, y, bins=bins):.3f}", fontsize=9)
        axes[1, column].set_xlabel("PC1", fontsize=8)
    axes[0, 0].legend(fontsize=7, markerscale=3)
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    target = Path(path)
    fig.savefig(target, dpi=110)
    plt.close(fig)
    return target
