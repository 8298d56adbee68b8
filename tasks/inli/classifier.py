"""The 4-way Implied NLI classifier: a cross-encoder (:mod:`train.cross_encoder`) over
``(premise, hypothesis)`` pairs, or over the hypothesis alone (the hypothesis-only baseline).

Each INLI premise gives four examples, one a label of :data:`~tasks.datasets.INLI_LABELS`. Model
selection holds out a part of train made *by premise* (:func:`split_by_premise`), so that the four
hypotheses of a premise are on the same side.

:func:`train_classifier` trains on ``device=`` under autocast in ``dtype=`` (:mod:`dpc_device`'s
training rules; default the CPU in float32); :meth:`InliClassifier.load` moves the model to
``device=`` and casts its weights to ``dtype=`` (:func:`dpc_device.place`), and scoring follows
the model's device.

>>> from tasks.datasets import InliRow
>>> row = InliRow("0", "circa", "P.", "I.", "E.", "N.", "C.")
>>> examples([row])
(['P.', 'P.', 'P.', 'P.'], ['I.', 'E.', 'N.', 'C.'], [0, 1, 2, 3])
>>> examples([row], hypothesis_only=True)[0]
['I.', 'E.', 'N.', 'C.']
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from dpc_files import write_json
from tasks.datasets import INLI_LABELS, InliRow
from tasks.errors import TaskError
from train.cross_encoder import CrossEncoder, train_pair_classifier

if TYPE_CHECKING:
    import torch

__all__ = [
    "CLASSIFIER_FILE",
    "MODEL_DIR",
    "InliClassifier",
    "InliReport",
    "evaluate",
    "examples",
    "format_report",
    "label_index",
    "split_by_premise",
    "train_classifier",
]

#: The bundled classifier (present only if it was built and shipped with the package).
MODEL_DIR = Path(__file__).resolve().parent / "model"
#: The file, next to the cross-encoder's, that says how the classifier reads its input.
CLASSIFIER_FILE = "inli_classifier.json"
#: Short names accepted for the labels (``--labels explicit,neutral``).
SHORT = {"implied": "implied_entailment", "explicit": "explicit_entailment",
         "neutral": "neutral", "contradiction": "contradiction"}


def label_index(name: str) -> int:
    """The index of a label in :data:`INLI_LABELS` (a short name like ``implied`` works too).

    >>> label_index("neutral"), label_index("explicit")
    (2, 1)
    >>> label_index("entailment")
    Traceback (most recent call last):
    ...
    tasks.errors.TaskError: unknown INLI label 'entailment'; the labels are implied_entailment, \
explicit_entailment, neutral, contradiction
    """
    full = SHORT.get(name, name)
    if full not in INLI_LABELS:
        raise TaskError(f"unknown INLI label {name!r}; the labels are {', '.join(INLI_LABELS)}")
    return INLI_LABELS.index(full)


def examples(rows: Sequence[InliRow], *, hypothesis_only: bool = False
             ) -> tuple[list[str], list[str], list[int]]:
    """``(premises, hypotheses, labels)``: four examples a row, in :data:`INLI_LABELS` order
    (with ``hypothesis_only`` the first list is the hypotheses and the second is empty)."""
    premises = [r.premise for r in rows for _ in INLI_LABELS]
    hypotheses = [r.hypothesis(label) for r in rows for label in INLI_LABELS]
    labels = [i for _ in rows for i in range(len(INLI_LABELS))]
    if hypothesis_only:
        return hypotheses, [], labels
    return premises, hypotheses, labels


def split_by_premise(rows: Sequence[InliRow], dev_fraction: float = 0.1, seed: int = 0
                     ) -> tuple[list[InliRow], list[InliRow]]:
    """``(train, dev)``: a seeded random ``dev_fraction`` of the premises (each with its four
    hypotheses) held out; a premise text that occurs twice goes to one side only.

    >>> rows = [InliRow(str(i), "d", f"p{i % 5}", "a", "b", "c", "d") for i in range(20)]
    >>> tr, dv = split_by_premise(rows, 0.2)
    >>> len(tr) + len(dv), {r.premise for r in tr} & {r.premise for r in dv}
    (20, set())
    """
    if not 0 < dev_fraction < 1:
        raise TaskError(f"--dev-fraction (={dev_fraction}) has to be between 0 and 1")
    premises = sorted({r.premise for r in rows})
    random.Random(seed).shuffle(premises)
    held = set(premises[:max(1, round(len(premises) * dev_fraction))])
    return [r for r in rows if r.premise not in held], [r for r in rows if r.premise in held]


class InliClassifier:
    """A trained cross-encoder and whether it reads the premise."""

    def __init__(self, model: Any, hypothesis_only: bool) -> None:
        self.model = model
        self.hypothesis_only = hypothesis_only

    @classmethod
    def load(cls, folder: str | Path | None = None, *, device: str | torch.device | None = None,
             dtype: str | torch.dtype | None = None) -> InliClassifier:
        """The classifier saved in ``folder`` (``None``: the bundled one, if installed), on
        ``device`` with its weights in ``dtype`` (:func:`dpc_device.place`; ``None``: the CPU,
        float32)."""
        if folder is None:
            if not (MODEL_DIR / CLASSIFIER_FILE).is_file():
                raise TaskError("no INLI classifier is bundled with this install; train one with "
                                "`dpc inli train --out DIR` and pass --model DIR")
            folder = MODEL_DIR
        folder = Path(folder)
        model = CrossEncoder.load(folder, device=device, dtype=dtype)
        try:
            meta = json.loads((folder / CLASSIFIER_FILE).read_text(encoding="utf-8"))
            hypothesis_only = bool(meta["hypothesis_only"])
        except (OSError, ValueError, KeyError, TypeError):
            raise TaskError(f"{os.fspath(folder)!r} is a cross-encoder but not an INLI classifier "
                            f"(no readable {CLASSIFIER_FILE})") from None
        if model.num_labels != len(INLI_LABELS) or model.mode != "pair":
            raise TaskError(f"{os.fspath(folder)!r} is not a 4-way pair classifier")
        return cls(model, hypothesis_only)

    def probabilities(self, premises: Sequence[str], hypotheses: Sequence[str], *,
                      progress: bool = False) -> np.ndarray:
        """``(n, 4)`` label probabilities of each ``(premise, hypothesis)``."""
        if self.hypothesis_only:
            return self.model.probabilities(hypotheses, None, progress=progress)
        return self.model.probabilities(premises, hypotheses, progress=progress)

    def predict(self, premises: Sequence[str], hypotheses: Sequence[str]) -> list[str]:
        """The most probable label of each pair."""
        return [INLI_LABELS[i] for i in self.probabilities(premises, hypotheses).argmax(1)]


def train_classifier(rows: Sequence[InliRow], out: str | Path, options: Any, *,
                     hypothesis_only: bool = False, dev_fraction: float = 0.1,
                     split_seed: int = 0, device: str | torch.device | None = None,
                     dtype: str | torch.dtype | None = None) -> InliClassifier:
    """Fine-tune the classifier on ``rows`` (model selection on a premise split of them, made
    with ``split_seed``) and save it in ``out`` (resumable: a rerun with the same ``out``
    continues). It trains on ``device`` (``None``: the CPU) with the forward passes under
    autocast in ``dtype`` (:func:`train.cross_encoder.train_pair_classifier`)."""
    train_rows, dev_rows = split_by_premise(rows, dev_fraction, split_seed)
    a, b, y = examples(train_rows, hypothesis_only=hypothesis_only)
    da, db, dy = examples(dev_rows, hypothesis_only=hypothesis_only)
    model = train_pair_classifier(a, b or None, y, len(INLI_LABELS), options, out=out,
                                  dev=(da, db or None, dy), label_names=list(INLI_LABELS),
                                  device=device, dtype=dtype)
    meta = {"hypothesis_only": hypothesis_only, "dev_fraction": dev_fraction,
            "split_seed": split_seed,
            "train_premises": len(train_rows), "dev_premises": len(dev_rows)}
    write_json(Path(out) / CLASSIFIER_FILE, meta)
    return InliClassifier(model, hypothesis_only)


@dataclass
class InliReport:
    """Accuracy of a classifier on INLI rows: overall, per gold label, per source dataset, and
    the confusion matrix (``confusion[gold][predicted]``, in :data:`INLI_LABELS` order)."""

    n: int
    overall: float
    per_label: dict[str, float]
    per_dataset: dict[str, tuple[int, float]]
    confusion: list[list[int]] = field(default_factory=list)

    @property
    def implied(self) -> float:
        return self.per_label["implied_entailment"]


def evaluate(classifier: InliClassifier, rows: Sequence[InliRow], *, progress: bool = False,
             assign: bool = False) -> InliReport:
    """Score every ``(premise, hypothesis)`` of ``rows`` and tabulate. ``assign``: give the four
    hypotheses of a premise four different labels (:func:`assign_labels`) instead of each its
    most probable one -- it uses the dataset's structure, so it is not comparable with
    per-pair accuracy."""
    if not rows:
        raise TaskError("no INLI rows to evaluate")
    premises, hypotheses, gold = examples(rows)
    probs = classifier.probabilities(premises, hypotheses, progress=progress)
    pred = assign_labels(probs) if assign else probs.argmax(1)
    return report(rows, gold, pred.tolist())


def assign_labels(probs: np.ndarray) -> np.ndarray:
    """Per block of four rows (a premise's hypotheses), the one-to-one label assignment of
    highest total log-probability.

    >>> p = np.array([[.5, .4, .05, .05], [.6, .3, .05, .05], [.1, .1, .7, .1], [.1, .1, .1, .7]])
    >>> assign_labels(p).tolist()
    [1, 0, 2, 3]
    """
    from scipy.optimize import linear_sum_assignment

    k = len(INLI_LABELS)
    out = np.empty(len(probs), dtype=int)
    for start in range(0, len(probs), k):
        cost = -np.log(np.clip(probs[start:start + k], 1e-12, 1.0))
        rows, cols = linear_sum_assignment(cost)
        out[start + rows] = cols
    return out


def report(rows: Sequence[InliRow], gold: Sequence[int], pred: Sequence[int]) -> InliReport:
    """The :class:`InliReport` of predictions ``pred`` of :func:`examples` ``(rows)``.

    >>> rows = [InliRow("0", "d", "P.", "I.", "E.", "N.", "C.")]
    >>> r = report(rows, [0, 1, 2, 3], [0, 0, 2, 3])
    >>> r.overall, r.implied, r.per_label["explicit_entailment"], r.confusion[1]
    (0.75, 1.0, 0.0, [1, 0, 0, 0])
    """
    k = len(INLI_LABELS)
    g, p = np.asarray(gold), np.asarray(pred)
    confusion = [[int(((g == i) & (p == j)).sum()) for j in range(k)] for i in range(k)]
    per_label = {INLI_LABELS[i]: float((p[g == i] == i).mean()) if (g == i).any() else 0.0
                 for i in range(k)}
    datasets = np.asarray([r.dataset for r in rows for _ in range(k)])
    per_dataset = {d: (int((datasets == d).sum()) // k, float((p[datasets == d] ==
                                                              g[datasets == d]).mean()))
                   for d in sorted(set(datasets.tolist()))}
    return InliReport(len(rows), float((g == p).mean()), per_label, per_dataset, confusion)


def format_report(r: InliReport) -> str:
    """The table ``dpc inli eval`` prints; its last line is ``overall 0.xxx implied 0.xxx``.

    >>> rows = [InliRow("0", "d", "P.", "I.", "E.", "N.", "C.")]
    >>> print(format_report(report(rows, [0, 1, 2, 3], [0, 0, 2, 3])).splitlines()[-1])
    overall 0.750 implied 1.000
    """
    short = ["implied", "explicit", "neutral", "contra"]
    lines = [f"premises {r.n}, pairs {4 * r.n}", "", "accuracy by gold label"]
    lines += [f"  {name:<22} {acc:.3f}" for name, acc in r.per_label.items()]
    lines += ["", "accuracy by source dataset (premises)"]
    lines += [f"  {d:<14} {n:>5}  {acc:.3f}" for d, (n, acc) in r.per_dataset.items()]
    lines += ["", "confusion (rows gold, columns predicted)",
              "  " + " " * 10 + "".join(f"{s:>10}" for s in short)]
    lines += ["  " + f"{short[i]:<10}" + "".join(f"{c:>10}" for c in row)
              for i, row in enumerate(r.confusion)]
    lines += ["", f"overall {r.overall:.3f} implied {r.implied:.3f}"]
    return "\n".join(lines)
