"""What decoding returns: one :class:`GeneratedSequence` per output, with its constraint report."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

__all__ = ["ConstraintMatch", "GeneratedSequence"]


@dataclass(frozen=True)
class ConstraintMatch:
    """Where a constraint set was met in an output.

    Attributes
    ----------
    set_index : int
        The set, as positioned in the input's list of sets.
    alternative_index : int
        Which of the user's alternatives of that set met it.
    alternative : str or tuple of int
        That alternative as the user gave it (text or token ids).
    token_ids : tuple of int
        The token sequence that occurred (one tokenisation of the alternative).
    start, end : int
        ``output.token_ids[start:end] == token_ids``: the first occurrence that met the set.
    """

    set_index: int
    alternative_index: int
    alternative: str | tuple[int, ...]
    token_ids: tuple[int, ...]
    start: int
    end: int


@dataclass(frozen=True)
class GeneratedSequence:
    """One generated output.

    Attributes
    ----------
    text : str or None
        Decoded text (``None`` when no tokenizer was given).
    token_ids : tuple of int
        Generated tokens: the prompt and the final EOS are not included.
    log_prob : float
        Total log-probability of the generated tokens under the model (the EOS included when
        the output ended with one).
    score : float
        The ranking score: ``log_prob / length ** length_penalty`` for beam search (length counts
        the EOS), ``log_prob`` for sampling.
    nll : float
        Mean negative log-likelihood per token (``-log_prob / length``).
    satisfied : bool
        Every constraint set met and no banned phrase present.
    matches : tuple of (ConstraintMatch or None)
        Per constraint set, the occurrence that met it, or ``None`` for an unmet set.
    finished : bool
        The output ended with EOS (``False``: it stopped at ``max_new_tokens``).
    end_token_id : int or None
        Which of the EOS ids ended it (several may be given, e.g. a line break and a period);
        ``None`` when it did not finish. Not part of ``token_ids`` or ``text``.
    """

    text: str | None
    token_ids: tuple[int, ...]
    log_prob: float
    score: float
    nll: float
    satisfied: bool
    matches: tuple[ConstraintMatch | None, ...]
    finished: bool
    end_token_id: int | None = None

    @property
    def unmet_sets(self) -> tuple[int, ...]:
        """Indices of the sets that no alternative met."""
        return tuple(i for i, m in enumerate(self.matches) if m is None)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (tuples become lists)."""
        return asdict(self)
