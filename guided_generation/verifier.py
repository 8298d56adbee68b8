"""The plausibility verifier: a judge of generated causes and effects.

A cross-encoder trained on everyday causal knowledge (e-CARE's questions and pairs, ConceptNet's
``Causes`` edges, cheap negatives; never COPA: :mod:`train.verifier`) reads
``("<input> because" | "<input>, so", candidate)`` and gives one score (a logit: higher is more
plausible). The pipeline uses it twice (:mod:`guided_generation.pipeline`):

* **before decoding**, to rank candidate keywords (the graph's and those of the generator's own
  sampled answers) as causes or effects of the input, so the rows decoded are the plausible
  ones;
* **after decoding**, to rerank the outputs by its score plus a weight times the output's PMI
  under the generator; an output whose score falls below ``GuidedOptions.reject_below`` is
  rejected and never enters the top K: the result then holds fewer than K, with a note.

:attr:`Verifier.threshold` is the cross-encoder's own cut: the score that best separates the
right answers of held-back e-CARE questions from the wrong ones (:func:`best_threshold`),
written beside the model when it is bundled.

>>> verifier = Verifier.load()
>>> s = verifier.scores("the baby cried", "cause", ["the baby was hungry", "the sun rose"])
>>> bool(s[0] > s[1])
True
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import numpy as np

from dpc_errors import DpcError
from train.verifier import question

if TYPE_CHECKING:
    import torch

    from train.cross_encoder import CrossEncoder

__all__ = ["BUNDLED_VERIFIER", "THRESHOLD_FILE", "Verifier", "best_threshold", "default_verifier",
           "order_by_verifier"]

T = TypeVar("T")

#: The bundled verifier's folder.
BUNDLED_VERIFIER = Path(__file__).resolve().parent / "verifier_model"
#: The file beside the model that holds its rejection threshold.
THRESHOLD_FILE = "verifier.json"


def best_threshold(right: Sequence[float], wrong: Sequence[float]) -> float:
    """The score that best separates ``right`` answers' scores from ``wrong`` ones' (most of
    them on the correct side; the midpoint between two neighbouring scores; the lowest of
    equally good cuts).

    >>> best_threshold([2.0, 3.0, 0.5], [-1.0, 0.0, 1.0])
    0.25
    """
    if not len(right) or not len(wrong):
        raise DpcError("a threshold needs right and wrong scores")
    values = np.array(list(right) + list(wrong), dtype=float)
    labels = np.array([1] * len(right) + [0] * len(wrong))
    order = np.argsort(values, kind="stable")
    values, labels = values[order], labels[order]
    # correct when everything at or below the cut is wrong and everything above is right
    below_wrong = np.concatenate([[0], np.cumsum(labels == 0)])
    above_right = np.concatenate([[0], np.cumsum((labels == 1)[::-1])])[::-1]
    correct = below_wrong + above_right  # cut after position i (i values below)
    cut = int(np.argmax(correct))
    if cut == 0:
        return float(values[0] - 1.0)
    if cut == len(values):
        return float(values[-1] + 1.0)
    return float((values[cut - 1] + values[cut]) / 2)


class Verifier:
    """A trained cross-encoder as a judge of ``(input, direction, candidate)``.

    Parameters
    ----------
    model
        A multiple-choice :class:`train.cross_encoder.CrossEncoder` trained on
        :func:`train.verifier.question` texts.
    threshold
        The cross-encoder's own cut between right and wrong answers of held-back e-CARE
        questions (``None``: not measured). The pipeline's floor is on its combined score
        (:attr:`GuidedOptions.reject_below <guided_generation.options.GuidedOptions>`).
    """

    def __init__(self, model: CrossEncoder, threshold: float | None = None) -> None:
        self.model = model
        self.threshold = threshold

    @classmethod
    def load(cls, path: str | Path | None = None, *, device: str | torch.device | None = None,
             dtype: str | torch.dtype | None = None) -> Verifier:
        """The verifier saved in ``path`` (default: the bundled one), with its threshold when
        the folder has one; a :class:`~dpc_errors.DpcError` naming a missing or foreign
        folder."""
        from train.cross_encoder import CrossEncoder

        folder = Path(path) if path is not None else BUNDLED_VERIFIER
        if not folder.is_dir():
            raise DpcError(f"verifier {os.fspath(folder)!r} is not a folder")
        model = CrossEncoder.load(folder, device=device, dtype=dtype)
        if model.mode != "choice":
            raise DpcError(f"verifier {os.fspath(folder)!r} is a {model.mode!r} model, not a "
                           "multiple-choice scorer")
        threshold = None
        if (folder / THRESHOLD_FILE).is_file():
            try:
                threshold = json.loads((folder / THRESHOLD_FILE).read_text("utf-8"))["threshold"]
            except (ValueError, KeyError, TypeError) as err:
                raise DpcError(f"{os.fspath(folder / THRESHOLD_FILE)!r} is not a verifier "
                               f"threshold file ({err})") from None
        return cls(model, None if threshold is None else float(threshold))

    def scores(self, text: str, direction: str, candidates: Sequence[str]) -> np.ndarray:
        """One score a candidate as the ``direction`` of ``text`` (higher: more plausible);
        :func:`train.verifier.question` checks ``direction``."""
        if not candidates:
            return np.zeros(0)
        q = question(text, direction)
        return self.model.logits([q] * len(candidates), list(candidates))[:, 0].astype(float)


def order_by_verifier(outputs: Sequence[T], nll_weight: float = 0.0) -> list[T]:
    """``outputs`` best first by ``verifier - nll_weight * nll`` (their ``verifier`` and
    ``nll`` attributes; an output without a verifier score last), ties by lower ``nll``, then
    text.

    >>> from types import SimpleNamespace as O
    >>> [o.text for o in order_by_verifier([O(text="a", verifier=0.1, nll=1.0),
    ...                                     O(text="b", verifier=2.0, nll=3.0)])]
    ['b', 'a']
    """
    def key(o: T) -> tuple[float, float, str]:
        score = getattr(o, "verifier", None)
        value = float("-inf") if score is None else score - nll_weight * o.nll  # type: ignore[attr-defined]
        return (-value, o.nll, o.text)  # type: ignore[attr-defined]

    return sorted(outputs, key=key)


@lru_cache(maxsize=1)
def default_verifier() -> Verifier:
    """The bundled verifier, loaded once per process."""
    return Verifier.load()
