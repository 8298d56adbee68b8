"""AFLite (Sakaguchi et al. 2020, Algorithm 1): adversarial filtering over precomputed embeddings.

Each *phase* trains an ensemble of ``n`` linear classifiers (L2-regularised logistic
regression), each on its own random subset of ``m`` of the remaining instances, and predicts
every instance with the models that did not train on it. An instance's *predictability score* is
the fraction of those held-out predictions that are correct. The ``k`` instances with the highest
scores among those scoring at least ``tau`` are removed; the phases repeat until a phase removes
fewer than ``k`` (it still removes them) or no more than ``m`` instances remain -- or, by
default and not in the paper (``stop_at_chance``), until a phase's ensemble is no better than
the majority label (that phase removes nothing). The paper's values: ``m = 10,000``,
``n = 64``, ``k = 500``, ``tau = 0.75`` for 47k instances (:func:`scaled_parameters` keeps
their proportions for another size).

Two implementations of the ensemble, tested against each other:

* :func:`aflite` trains the ``n`` classifiers of a phase as ONE batched model in torch: a
  ``(n, d, outputs)`` weight tensor fitted with full-batch L-BFGS on the sum of the ``n``
  independent objectives (each model sees its own subset through a gather), so a phase is a
  few dozen batched matrix products instead of ``n`` Python fits.
* :func:`aflite_reference` fits scikit-learn's ``LogisticRegression`` ``n`` times in a loop.

Both minimise scikit-learn's objective exactly (binary logistic loss with one weight vector for
two classes, multinomial otherwise; ``0.5 * ||W||^2 + c * sum(loss)``, the intercept not
penalised), on the same subsets (:func:`phase_subsets`), so they agree up to the solvers'
tolerance. The batched fit runs on ``device`` (:func:`dpc_device.resolve_device`; default the
CPU), always in its own ``dtype`` (float32 by default: L-BFGS's tolerances need it), never under
autocast. Features are standardised once (mean 0, variance 1 per column, over all the given
instances) before the first phase: embedding coordinates are ~0.05 and the L2 penalty would
otherwise swamp them.

Examples
--------
>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> y = rng.integers(0, 2, 400)
>>> X = rng.normal(size=(400, 5))
>>> X[:100, 0] += 4 * (2 * y[:100] - 1)   # the first 100 carry an artifact
>>> result = aflite(X, y, n=64, m=150, k=20, tau=0.75, seed=0)
>>> removed = np.setdiff1d(np.arange(400), result.kept)
>>> len(removed), int((removed < 100).sum())    # 20% of the data, 71% of what was removed
(80, 57)
>>> [p.removed for p in result.phases]         # phase 5's ensemble is at chance: stop
[20, 20, 20, 20, 0]
>>> paper = aflite(X, y, n=64, m=150, k=20, tau=0.75, seed=0, stop_at_chance=False)
>>> [p.removed for p in paper.phases]          # the paper's rule: until fewer than k
[20, 20, 20, 20, 20, 20, 12]
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from dpc_device import resolve_device
from dpc_errors import INT64_MAX
from tasks.errors import TaskError

if TYPE_CHECKING:
    import torch

__all__ = [
    "PAPER",
    "AfliteError",
    "AfliteOptions",
    "AfliteResult",
    "PhaseLog",
    "aflite",
    "aflite_reference",
    "check_embeddings",
    "check_parameters",
    "ensemble_scores",
    "ensemble_scores_reference",
    "phase_subsets",
    "scaled_parameters",
]

#: The paper's parameters and the number of instances they were used on (53k - 6k fine-tuning).
PAPER: dict[str, float] = {"n": 64, "m": 10_000, "k": 500, "tau": 0.75, "instances": 47_000}

#: Edges of the score histogram kept in each phase's log (10 bins over [0, 1]).
SCORE_BINS = np.linspace(0.0, 1.0, 11)


class AfliteError(TaskError):
    """Bad input to AFLite: a parameter out of range, embeddings and labels that do not match."""


@dataclass(frozen=True)
class AfliteOptions:
    """The parameters of AFLite (the paper's defaults for ``n`` and ``tau``; ``m`` and ``k``
    of ``None`` are :func:`scaled_parameters` of the data size)."""

    n: int = 64
    m: int | None = None
    k: int | None = None
    tau: float = 0.75
    seed: int = 0
    c: float = 1.0
    max_phases: int | None = None
    stop_at_chance: bool = True


@dataclass(frozen=True)
class PhaseLog:
    """One phase: how many instances it saw, removed and left, and its score histogram."""

    phase: int
    remaining_before: int
    removed: int
    remaining: int
    eligible: int
    mean_score: float
    histogram: list[int]
    seconds: float

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class AfliteResult:
    """The indices (into the input, ascending) that AFLite kept, and the log of its phases."""

    kept: np.ndarray
    phases: list[PhaseLog] = field(default_factory=list)
    parameters: dict[str, Any] = field(default_factory=dict)

    @property
    def removed(self) -> int:
        return sum(p.removed for p in self.phases)

    def to_json(self) -> dict[str, Any]:
        return {"kept": len(self.kept), "removed": self.removed, "parameters": self.parameters,
                "phases": [p.to_json() for p in self.phases]}


def scaled_parameters(size: int) -> tuple[int, int]:
    """``(m, k)`` in the paper's proportions to the number of instances filtered
    (``m = 10,000`` and ``k = 500`` of 47,000), at least 2 and 1.

    >>> scaled_parameters(47_000)
    (10000, 500)
    >>> scaled_parameters(9_234)
    (1965, 98)
    """
    m = max(2, round(size * PAPER["m"] / PAPER["instances"]))
    k = max(1, round(size * PAPER["k"] / PAPER["instances"]))
    return m, k


def check_embeddings(X: Any, y: Any) -> tuple[np.ndarray, np.ndarray]:
    """``X`` as a finite float 2-D array and ``y`` as 1-D integer labels of the same length;
    else :class:`AfliteError` naming what is wrong."""
    X = np.asarray(X)
    y = np.asarray(y)
    if X.ndim != 2:
        raise AfliteError(f"embeddings must be a 2-D array (instances, dimensions), "
                          f"got shape {X.shape}")
    if y.ndim != 1:
        raise AfliteError(f"labels must be a 1-D array, got shape {y.shape}")
    if len(X) != len(y):
        raise AfliteError(f"embeddings and labels have different lengths ({len(X)} embeddings, "
                          f"{len(y)} labels)")
    if not np.issubdtype(X.dtype, np.number) or not np.isfinite(X).all():
        raise AfliteError("embeddings must be finite numbers (found NaN, inf or non-numbers)")
    if not np.issubdtype(y.dtype, np.integer):
        raise AfliteError(f"labels must be integers, got dtype {y.dtype}")
    if len(np.unique(y)) < 2:
        raise AfliteError(f"labels must hold at least 2 classes, got {np.unique(y).tolist()}")
    return X.astype(np.float64, copy=False), y


def check_parameters(size: int, n: int, m: int, k: int, tau: float, c: float = 1.0) -> None:
    """Raise :class:`AfliteError` naming the first parameter out of range for ``size``
    instances (``1 <= n``, ``2 <= m < size``, ``1 <= k <= size``, ``0 < tau <= 1``, ``c > 0``).

    >>> check_parameters(100, n=8, m=100, k=5, tau=0.75)
    Traceback (most recent call last):
    ...
    tasks.aflite.algorithm.AfliteError: `m` (=100) must be smaller than the number of instances (100): each model needs instances it did not train on
    """
    if not isinstance(n, (int, np.integer)) or not 1 <= n <= INT64_MAX:
        raise AfliteError(f"`n` (={n!r}) must be a positive number of models (at most "
                          f"{INT64_MAX})")
    if not isinstance(m, (int, np.integer)) or m < 2:
        raise AfliteError(f"`m` (={m!r}) must be an integer of at least 2 (training size)")
    if m >= size:
        raise AfliteError(f"`m` (={m}) must be smaller than the number of instances ({size}): "
                          "each model needs instances it did not train on")
    if not isinstance(k, (int, np.integer)) or not 1 <= k <= size:
        raise AfliteError(f"`k` (={k!r}) must be an integer from 1 to the number of instances "
                          f"({size})")
    if not isinstance(tau, (int, float)) or math.isnan(tau) or not 0.0 < tau <= 1.0:
        raise AfliteError(f"`tau` (={tau!r}) must be in (0, 1] (a fraction of correct "
                          "predictions)")
    if not isinstance(c, (int, float)) or not 0 < c < math.inf:
        raise AfliteError(f"`c` (={c!r}) must be a positive inverse regularisation strength")


def phase_subsets(rng: np.random.Generator, n: int, size: int, m: int,
                  groups: np.ndarray | None = None) -> np.ndarray:
    """``(n, m)`` indices: the training subset of each of the ``n`` models, ``m`` distinct
    instances each out of ``size``. With ``groups`` (``(size,)`` integer group ids) whole groups
    are drawn (in a random order of groups, the instances of a group next to each other), so
    only the group cut at the ``m``-th instance is split between training and held out.

    >>> rng = np.random.default_rng(0)
    >>> phase_subsets(rng, 2, 6, 3).shape
    (2, 3)
    >>> s = phase_subsets(rng, 50, 6, 4, groups=np.array([0, 0, 1, 1, 2, 2]))
    >>> bool(all(len(set(row // 2)) == 2 for row in np.sort(s)))
    True
    """
    keys = rng.random((n, size))                                      # (n, size)
    if groups is not None:
        group_keys = rng.random((n, int(groups.max()) + 1))           # (n, groups)
        keys = group_keys[:, groups] + keys * 1e-6                    # a group's members adjacent
    return np.argsort(keys, axis=1)[:, :m]


def _standardise(X: np.ndarray) -> np.ndarray:
    std = X.std(axis=0)
    return (X - X.mean(axis=0)) / np.where(std > 0, std, 1.0)


# -- the ensemble: batched torch and the scikit-learn loop -------------------------------------

def ensemble_scores(X: np.ndarray, y: np.ndarray, subsets: np.ndarray, *, classes: int,
                    c: float = 1.0, max_iter: int = 200, dtype: str = "float32",
                    device: str | torch.device | None = None) -> np.ndarray:
    """Held-out predictability score of every instance, the ``n`` models trained together.

    ``X`` ``(N, d)``, ``y`` ``(N,)`` in ``0..classes-1``, ``subsets`` ``(n, m)``. Returns
    ``(N,)``: the fraction of the models that did not train on an instance that predict its
    label; NaN for an instance every model trained on. Fitted on ``device`` (``None``: the CPU)
    in ``dtype``.
    """
    import torch

    where = resolve_device(device)
    torch_dtype = getattr(torch, dtype)
    n, m = subsets.shape
    binary = classes == 2
    outputs = 1 if binary else classes
    Xt = torch.as_tensor(X, dtype=torch_dtype, device=where)          # (N, d)
    yt = torch.as_tensor(y, dtype=torch.long, device=where)           # (N,)
    idx = torch.as_tensor(subsets, dtype=torch.long, device=where)    # (n, m)
    Xs = Xt[idx]                                                      # (n, m, d)
    ys = yt[idx]                                                      # (n, m)
    d = Xt.shape[1]
    W = torch.zeros(n, d, outputs, dtype=torch_dtype, device=where, requires_grad=True)
    b = torch.zeros(n, 1, outputs, dtype=torch_dtype, device=where, requires_grad=True)
    # Each model's objective divided by m (its optimum unchanged), so the gradient tolerance
    # means the same for any m.
    scale = 1.0 / m
    optimiser = torch.optim.LBFGS([W, b], lr=1.0, max_iter=max_iter, history_size=20,
                                  tolerance_grad=1e-6, tolerance_change=1e-10,
                                  line_search_fn="strong_wolfe")

    def closure() -> torch.Tensor:
        optimiser.zero_grad()
        logits = torch.baddbmm(b, Xs, W)                              # (n, m, outputs)
        if binary:
            loss = torch.nn.functional.binary_cross_entropy_with_logits(
                logits[..., 0], ys.to(torch_dtype), reduction="sum")
        else:
            loss = torch.nn.functional.cross_entropy(
                logits.reshape(-1, outputs), ys.reshape(-1), reduction="sum")
        total = scale * (c * loss + 0.5 * (W * W).sum())
        total.backward()
        return total

    optimiser.step(closure)
    with torch.no_grad():
        logits = torch.einsum("nd,kdo->kno", Xt, W) + b               # (n, N, outputs)
        predicted = (logits[..., 0] > 0).long() if binary else logits.argmax(-1)  # (n, N)
        correct = (predicted == yt).cpu().numpy()                     # (n, N)
    return _held_out_fraction(correct, subsets)


def ensemble_scores_reference(X: np.ndarray, y: np.ndarray, subsets: np.ndarray, *,
                              classes: int, c: float = 1.0, max_iter: int = 1000) -> np.ndarray:
    """:func:`ensemble_scores` with ``n`` scikit-learn ``LogisticRegression`` fits in a loop."""
    from sklearn.linear_model import LogisticRegression

    correct = np.zeros((len(subsets), len(X)), dtype=bool)
    for row, subset in enumerate(subsets):
        model = LogisticRegression(C=c, max_iter=max_iter, tol=1e-8)
        model.fit(X[subset], y[subset])
        correct[row] = model.predict(X) == y
    return _held_out_fraction(correct, subsets)


def _held_out_fraction(correct: np.ndarray, subsets: np.ndarray) -> np.ndarray:
    """``correct`` ``(n, N)`` -> per-instance fraction over the models that held it out."""
    held = np.ones_like(correct, dtype=bool)
    np.put_along_axis(held, subsets, False, axis=1)                   # (n, N)
    count = held.sum(axis=0)
    hits = (correct & held).sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, hits / np.maximum(count, 1), np.nan)


# -- the phases -----------------------------------------------------------------------------------

def _group_ids(groups: Any, size: int) -> np.ndarray | None:
    """Integer ids of ``groups`` (``None`` entries: a group of their own)."""
    if groups is None:
        return None
    if len(groups) != size:
        raise AfliteError(f"groups and embeddings have different lengths ({len(groups)} groups, "
                          f"{size} embeddings)")
    names = [f"\0{i}" if g is None else str(g) for i, g in enumerate(groups)]
    return np.unique(names, return_inverse=True)[1].astype(np.int64)


def _run(X: Any, y: Any, n: int, m: int | None, k: int | None, tau: float, seed: int,
         c: float, max_phases: int | None, scores: Callable[..., np.ndarray],
         progress: bool, groups: Any, stop_at_chance: bool) -> AfliteResult:
    X, y = check_embeddings(X, y)
    size = len(X)
    group_ids = _group_ids(groups, size)
    default_m, default_k = scaled_parameters(size)
    m = default_m if m is None else m
    k = default_k if k is None else k
    check_parameters(size, n, m, k, tau, c)
    if max_phases is not None and max_phases < 0:
        raise AfliteError(f"`max_phases` (={max_phases!r}) must be 0 or more")
    labels, y_index = np.unique(y, return_inverse=True)
    classes = len(labels)
    Xz = _standardise(X)
    rng = np.random.default_rng(seed)
    alive = np.arange(size)
    phases: list[PhaseLog] = []
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(desc="aflite phases", unit="phase")
    while len(alive) > m and (max_phases is None or len(phases) < max_phases):
        start = time.perf_counter()
        subsets = phase_subsets(rng, n, len(alive), m,
                                None if group_ids is None else group_ids[alive])
        score = scores(Xz[alive], y_index[alive], subsets, classes=classes, c=c)
        eligible = np.flatnonzero(np.nan_to_num(score, nan=-1.0) >= tau)
        chance = np.bincount(y_index[alive], minlength=classes).max() / len(alive)
        at_chance = stop_at_chance and float(np.nanmean(score)) <= chance
        if at_chance:
            eligible = eligible[:0]  # the ensemble is no better than the majority label
        # highest scores first; ties in a seeded random order
        order = np.lexsort((rng.random(len(eligible)), -score[eligible]))
        removed = eligible[order[:k]]
        histogram = np.histogram(score[~np.isnan(score)], bins=SCORE_BINS)[0]
        before = len(alive)
        alive = np.delete(alive, removed)
        phases.append(PhaseLog(len(phases) + 1, before, len(removed), len(alive),
                               len(eligible), float(np.nanmean(score)),
                               histogram.astype(int).tolist(),
                               round(time.perf_counter() - start, 3)))
        if bar is not None:
            bar.update(1)
            bar.set_postfix(remaining=len(alive), removed=len(removed))
        if len(removed) < k or at_chance:
            break
    if bar is not None:
        bar.close()
    parameters = {"n": n, "m": m, "k": k, "tau": tau, "seed": seed, "c": c,
                  "instances": size, "classes": classes, "grouped": group_ids is not None,
                  "stop_at_chance": stop_at_chance}
    return AfliteResult(np.sort(alive), phases, parameters)


def aflite(X: Any, y: Any, *, n: int = 64, m: int | None = None, k: int | None = None,
           tau: float = 0.75, seed: int = 0, c: float = 1.0, max_phases: int | None = None,
           max_iter: int = 200, dtype: str = "float32", groups: Any = None,
           stop_at_chance: bool = True, progress: bool = False,
           device: str | torch.device | None = None) -> AfliteResult:
    """AFLite over embeddings ``X`` ``(N, d)`` and labels ``y`` ``(N,)`` (any integers).

    Parameters
    ----------
    n, m, k, tau
        Models per phase, training-subset size, most instances removed per phase, score
        threshold. ``m``/``k`` of ``None``: :func:`scaled_parameters` of ``N``.
    seed
        Seeds the subsets and the order of tied scores: equal inputs give equal results.
    c
        Inverse L2 strength of each logistic regression (scikit-learn's ``C``).
    max_phases
        Stop after this many phases (``None``: only the other stopping rules).
    max_iter, dtype, device
        L-BFGS iterations per phase, the precision of the batched fit and where it runs
        (:func:`dpc_device.resolve_device`; ``None``: the CPU).
    groups
        Optional group of each instance (e.g. WinoGrande twins): a model trains on a whole
        group or holds it out (:func:`phase_subsets`). Twins have near-equal embeddings and
        opposite labels, so a model that saw one twin mispredicts the other.
    stop_at_chance
        Also stop (removing nothing more) at the first phase whose ensemble is no better, on
        average over the instances it held out, than always answering the majority label
        (default). Not in the paper: when the embeddings carry (almost) no label signal, the
        paper's rule keeps removing the instances that noise happens to score >= ``tau``, and
        what is left turns adversarial (on WinoGrande ``train_l`` with MiniLM embeddings, a
        cross-validated probe ends 4.4 points below chance; ``benchmarks/aflite/RESULTS.md``).
        ``False``: the paper's rule alone.

    Returns
    -------
    AfliteResult
        ``kept`` (ascending indices into ``X``) and one :class:`PhaseLog` per phase.
    """
    where = resolve_device(device)

    def scores(Xp: np.ndarray, yp: np.ndarray, subsets: np.ndarray, *, classes: int,
               c: float) -> np.ndarray:
        return ensemble_scores(Xp, yp, subsets, classes=classes, c=c, max_iter=max_iter,
                               dtype=dtype, device=where)

    return _run(X, y, n, m, k, tau, seed, c, max_phases, scores, progress, groups,
                stop_at_chance)


def aflite_reference(X: Any, y: Any, *, n: int = 64, m: int | None = None,
                     k: int | None = None, tau: float = 0.75, seed: int = 0, c: float = 1.0,
                     max_phases: int | None = None, groups: Any = None,
                     stop_at_chance: bool = True, progress: bool = False) -> AfliteResult:
    """:func:`aflite` with the ensemble fitted as ``n`` scikit-learn models in a loop (the
    oracle the batched version is tested against; same subsets for the same seed)."""
    return _run(X, y, n, m, k, tau, seed, c, max_phases, ensemble_scores_reference, progress,
                groups, stop_at_chance)
