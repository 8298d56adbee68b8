"""Automatic metrics of generated causes and effects: Div (BLEU-1), distinct-n, coverage, hits.

*Div* is the paper's diversity measure: BLEU-1 of each input's top 3 outputs against that input's
gold text, **without brevity penalty** (lower = further from the gold = more diverse), i.e. the
corpus-level clipped 1-gram precision of sacrebleu, as a percentage. *Distinct-n* (Li et al.,
2016) is the share of unique n-grams among all n-grams of a set of outputs. Coverage and keyword
hit rate are shares of inputs, fractions in ``[0, 1]``.

Every function takes plain strings and returns a ``float``; a metric that is undefined (nothing to
count) is ``nan``. A list of output strings where a list of *lists* is expected (one list per
input) is refused rather than silently read as lists of characters.

Examples
--------
>>> div_bleu1([["a b c d"], ["a b"]], ["a b x", "a b y"])
66.66...
>>> distinct_n(["the cat sat", "the cat ran"], 2)
0.75
>>> constraint_coverage([True, True, False, True])
0.75
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Collection, Iterable, Sequence

from dpc_errors import check_int
from guided_generation.errors import GuidedGenerationError

__all__ = [
    "constraint_coverage",
    "distinct_n",
    "div_bleu1",
    "keyword_hit_rate",
    "mean_distinct_n",
    "words",
]

# A word (letters, digits, underscore; inner apostrophes kept: "don't") or one punctuation mark.
_TOKEN = re.compile(r"\w+(?:['’]\w+)*|[^\w\s]")


def words(text: str) -> list[str]:
    """Lower-cased tokens of ``text``: words, and each punctuation mark as a token of its own.

    A word is a run of letters, digits and underscores, inner apostrophes included (``don't``);
    any other non-space character is one token. This is the tokenisation of :func:`distinct_n`.

    Examples
    --------
    >>> words("Babies cry, don't they?!")
    ['babies', 'cry', ',', "don't", 'they', '?', '!']
    >>> words("  ")
    []
    """
    return _TOKEN.findall(text.lower())


def _check_nested(name: str, outputs: Sequence[Sequence[str]]) -> None:
    """Refuse a flat list of strings where one list of outputs per input is expected."""
    if isinstance(outputs, str):
        raise GuidedGenerationError(f"`{name}` is a string; expected one list of outputs per input")
    for i, item in enumerate(outputs):
        if isinstance(item, str):
            raise GuidedGenerationError(
                f"`{name}[{i}]` (={item!r}) is a string; expected a list of outputs per input"
            )


def _check_lengths(outputs: Sequence[object], name: str, others: Sequence[object]) -> None:
    if len(outputs) != len(others):
        raise GuidedGenerationError(
            f"{len(outputs)} output lists but {len(others)} {name}: one per input is needed"
        )


def div_bleu1(outputs: Sequence[Sequence[str]], golds: Sequence[str], top: int = 3,
              lowercase: bool = False) -> float:
    """The paper's Div: BLEU-1 of the top outputs against the gold, without brevity penalty.

    Each of the first ``top`` outputs of input ``i`` (outputs are taken to be ranked best first)
    is one hypothesis whose one reference is ``golds[i]``. The result is sacrebleu's corpus
    1-gram precision (``corpus_score(...).precisions[0]``, 13a tokenisation, clipped counts):
    the matched unigrams of all hypotheses over their unigram count, summed over the corpus
    before dividing, as a percentage. Leaving out the brevity penalty means a short output is
    not rewarded for being short: ``"a"`` against ``"a b c"`` scores 100.

    Parameters
    ----------
    outputs
        One list of generated texts per input, best first. An empty list contributes nothing.
    golds
        One gold text per input.
    top
        How many outputs of each input count (the paper: 3).
    lowercase
        Compare case-insensitively (sacrebleu's ``lowercase``); default case-sensitive.

    Returns
    -------
    float
        A percentage in ``[0, 100]``; lower is more diverse. ``nan`` when there is no hypothesis
        (every list empty) or the hypotheses hold no token at all.

    Raises
    ------
    GuidedGenerationError
        (a ``ValueError``) if the two lengths differ, ``top`` is not a positive integer, or
        ``outputs`` is a flat list of strings.

    Examples
    --------
    >>> div_bleu1([["a b c d"]], ["a b x"])  # a, b of 4 unigrams
    50.0
    >>> div_bleu1([["a"]], ["a b c"])  # no brevity penalty
    100.0
    >>> div_bleu1([["a a a a"]], ["a b"])  # counts are clipped
    25.0
    >>> div_bleu1([["x y", "a b", "never counted"], []], ["a b", "z"], top=2)
    50.0
    >>> div_bleu1([[]], ["a b"])
    nan
    """
    _check_nested("outputs", outputs)
    _check_lengths(outputs, "gold texts", golds)
    check_int("top", top, 1, error=GuidedGenerationError)
    hypotheses: list[str] = []
    references: list[str] = []
    for outs, gold in zip(outputs, golds):
        kept = list(outs[:top])
        hypotheses.extend(kept)
        references.extend([gold] * len(kept))
    if not hypotheses:
        return math.nan
    from sacrebleu.metrics import BLEU

    score = BLEU(lowercase=lowercase, max_ngram_order=1).corpus_score(hypotheses, [references])
    if score.totals[0] == 0:
        return math.nan
    return float(score.precisions[0])


def _ngrams(tokens: list[str], n: int) -> list[tuple[str, ...]]:
    return [tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1)]


def distinct_n(texts: Sequence[str], n: int) -> float:
    """Distinct-n: unique n-grams over all n-grams of ``texts`` (tokenised by :func:`words`).

    N-grams are taken within each text (none spans two texts) and pooled.

    Returns
    -------
    float
        A fraction in ``(0, 1]``; ``nan`` if the texts hold no n-gram (all shorter than ``n``).

    Raises
    ------
    GuidedGenerationError
        If ``n`` is not a positive integer or ``texts`` is one string.

    Examples
    --------
    >>> distinct_n(["The cat sat.", "the cat ran"], 1)  # the, cat, sat, ., the, cat, ran
    0.7142857142857143
    >>> distinct_n(["the cat sat", "the cat ran"], 2)  # {the cat, cat sat, cat ran} / 4
    0.75
    >>> distinct_n(["one"], 2)
    nan
    """
    check_int("n", n, 1, error=GuidedGenerationError)
    if isinstance(texts, str):
        raise GuidedGenerationError(f"`texts` (={texts!r}) is a string; expected a list of texts")
    grams = [gram for text in texts for gram in _ngrams(words(text), n)]
    if not grams:
        return math.nan
    return len(set(grams)) / len(grams)


def mean_distinct_n(outputs: Sequence[Sequence[str]], n: int) -> float:
    """Mean over inputs of :func:`distinct_n` of each input's outputs.

    Inputs whose outputs hold no n-gram are left out of the mean; ``nan`` if none is left.

    Examples
    --------
    >>> mean_distinct_n([["a b", "a b"], ["a b", "b c"], ["x"]], 2)  # (1/2 + 2/2) / 2; x skipped
    0.75
    >>> mean_distinct_n([], 1)
    nan
    """
    check_int("n", n, 1, error=GuidedGenerationError)
    _check_nested("outputs", outputs)
    values = [value for outs in outputs if not math.isnan(value := distinct_n(outs, n))]
    return sum(values) / len(values) if values else math.nan


def constraint_coverage(flags: Iterable[bool]) -> float:
    """Share of outputs (or inputs) whose constraints are met: the fraction of ``True`` flags.

    Examples
    --------
    >>> constraint_coverage([True, False, True, True])
    0.75
    >>> constraint_coverage([])
    nan
    """
    values = [bool(flag) for flag in flags]
    return sum(values) / len(values) if values else math.nan


def keyword_hit_rate(outputs: Sequence[Sequence[str]], gold_lemmas: Sequence[Collection[str]],
                     lemmatize: Callable[[str], list[str]]) -> float:
    """Share of inputs where at least one output contains a lemma of the gold answer.

    Each output is lemmatised with ``lemmatize`` (for instance a
    :class:`cause_effect_graph.lemmas.Lemmatizer`, which gives content lemmas); an input is a
    hit when one output's lemmas meet ``gold_lemmas[i]``, compared case-insensitively. An input
    with no output or no gold lemma is a miss; every input counts in the denominator.

    Returns
    -------
    float
        A fraction in ``[0, 1]``; ``nan`` when there is no input.

    Raises
    ------
    GuidedGenerationError
        If the two lengths differ or ``outputs`` is a flat list of strings.

    Examples
    --------
    >>> lemmas = {"she was hungry": ["hungry"], "it was late": ["late"], "he fell": ["fall"]}
    >>> keyword_hit_rate([["it was late", "she was hungry"], ["he fell"], []],
    ...                  [{"hungry", "tired"}, {"rain"}, {"fall"}], lemmas.__getitem__)
    0.3333333333333333
    """
    _check_nested("outputs", outputs)
    _check_lengths(outputs, "gold lemma sets", gold_lemmas)
    if not outputs:
        return math.nan
    hits = 0
    for outs, golds in zip(outputs, gold_lemmas):
        wanted = {lemma.lower() for lemma in golds}
        if wanted and any(wanted.intersection(lemma.lower() for lemma in lemmatize(out))
                          for out in outs):
            hits += 1
    return hits / len(outputs)
