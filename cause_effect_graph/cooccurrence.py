"""Word co-occurrence in a sliding window over raw text, and the window-PMI COPA baseline.

Roemmele, Bejan & Gordon (2011) answered COPA with the pointwise mutual information of word
pairs that co-occur within a few words of each other in Project Gutenberg (57.8% on dev with
a 5-word window). This module computes such counts from any corpus the miner can read and
scores COPA with them, beside the Cause Effect Graph's scorers, which use only the
cause–effect pairs the miner extracted:

* :func:`count_windows` streams the text (every reader of :mod:`causal_mining.readers`),
  lower-cases it, lemmatises each word with lemminflect (dictionary look-up, cached per word
  form; spaCy would be ~100x slower over 120M words), and counts, for every pair of lemmas of a
  given vocabulary, how often the first occurs 1 to ``window`` words *before* the second. Stop
  words are not in the vocabulary but still take their place in the window. One process per
  input file.
* :func:`window_pmi` is ``log(c(x before y) * N / (c(x) * c(y) * window))``;
  :class:`WindowPmiScorer` (``--scorer window-pmi``) gives a (cause, effect) pair of phrases the
  mean of ``window_pmi(c, e)`` over their lemma pairs, a pair never seen counting 0, so the cause
  words must come *before* the effect words, as causes tend to precede effects in narrative.
  For ``asks-for="cause"`` the alternative is the cause. ``--scorer window-pmi-any-order``
  counts the pairs in either order instead.
* ``--scorer graph-window`` answers with the graph's causal strength when the graph knows a
  lemma pair of either alternative, and with the window PMI otherwise (a back-off decided before
  looking at the results).

The counts are restricted to a vocabulary (e.g. the content lemmas of a COPA file) so they stay
small: all lemma pairs of a 700 MB corpus would not fit in memory in Python.

Examples
--------
>>> counts = WindowCounts.from_texts(["the rain made the grass wet", "rain wet rain"],
...                                  vocab={"rain", "wet", "grass"}, window=5)
>>> counts.pair("rain", "wet"), counts.pair("wet", "rain"), counts.unigrams["rain"]
(2, 1, 3)
>>> round(window_pmi(counts, "rain", "wet"), 3)
-0.511
"""

from __future__ import annotations

import gzip
import json
import math
import os
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from cause_effect_graph.errors import GraphError

__all__ = [
    "COUNTS_FORMAT",
    "GraphWindowScorer",
    "WindowCounts",
    "WindowPmiScorer",
    "content_lemmas",
    "copa_vocabulary",
    "count_windows",
    "load_counts",
    "save_counts",
    "window_pmi",
    "word_lemma",
]

COUNTS_FORMAT = "dpc-window-counts"
COUNTS_VERSION = 1
_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")
_LEMMA_ORDER = ("VERB", "NOUN", "ADJ", "ADV")


@cache
def word_lemma(word: str) -> str:
    """The lemma of a lower-case word form by lemminflect's dictionary (verb reading first).

    Without context the reading is a guess ("ground" becomes "grind"); what matters for the
    counts is that the corpus and the questions are lemmatised by the same function.

    >>> word_lemma("babies"), word_lemma("cried"), word_lemma("rising"), word_lemma("qwzx")
    ('baby', 'cry', 'rise', 'qwzx')
    """
    from lemminflect import getAllLemmas

    lemmas = getAllLemmas(word)
    for pos in _LEMMA_ORDER:
        if pos in lemmas:
            return lemmas[pos][0]
    return word


@lru_cache(maxsize=1)
def _stop_words() -> frozenset[str]:
    from spacy.lang.en.stop_words import STOP_WORDS

    return frozenset(STOP_WORDS)


def content_lemmas(text: str) -> list[str]:
    """Lemmas of the words of ``text`` that are not stop words, in order.

    >>> content_lemmas("The babies were crying loudly.")
    ['baby', 'cry', 'loudly']
    """
    stop = _stop_words()
    return [word_lemma(w) for w in _WORD.findall(text.lower()) if w not in stop]


@dataclass
class WindowCounts:
    """Ordered co-occurrence counts of vocabulary lemmas within ``window`` words."""

    window: int
    tokens: int = 0  # every word of the corpus, vocabulary or not
    unigrams: Counter[str] = field(default_factory=Counter)
    pairs: Counter[tuple[str, str]] = field(default_factory=Counter)  # (earlier, later)
    sources: list[str] = field(default_factory=list)

    def pair(self, first: str, second: str) -> int:
        """How often ``first`` occurred 1..window words before ``second``."""
        return self.pairs.get((first, second), 0)

    def add_text(self, text: str, lemma_of: Callable[[str], str | None]) -> None:
        """Count one text (a paragraph: windows do not cross texts); ``lemma_of`` maps a word
        form to its vocabulary lemma, or ``None`` for words outside the vocabulary."""
        forms = _WORD.findall(text.lower())
        self.tokens += len(forms)
        hits = [(i, lemma) for i, lemma in ((i, lemma_of(w)) for i, w in enumerate(forms))
                if lemma is not None]
        for k, (i, first) in enumerate(hits):
            self.unigrams[first] += 1
            m = k + 1
            while m < len(hits) and hits[m][0] - i <= self.window:
                self.pairs[(first, hits[m][1])] += 1
                m += 1

    def merge(self, other: WindowCounts) -> None:
        if other.window != self.window:
            raise GraphError(f"cannot merge counts of window {other.window} into {self.window}")
        self.tokens += other.tokens
        self.unigrams.update(other.unigrams)
        self.pairs.update(other.pairs)
        self.sources.extend(other.sources)

    @classmethod
    def from_texts(cls, texts: Iterable[str], vocab: Iterable[str],
                   window: int = 5) -> WindowCounts:
        """Counts over in-memory texts (tests, small corpora)."""
        vocab_set = frozenset(vocab)
        counts = cls(window)
        lemma_of = _vocab_lemmatizer(vocab_set)
        for text in texts:
            counts.add_text(text, lemma_of)
        return counts


def _vocab_lemmatizer(vocab: frozenset[str]) -> Callable[[str], str | None]:
    """word form -> its lemma if that is in ``vocab`` (and not a stop word), else ``None``."""
    stop = _stop_words()
    cache: dict[str, str | None] = {}

    def lemma_of(form: str) -> str | None:
        try:
            return cache[form]
        except KeyError:
            lemma = None if form in stop else word_lemma(form)
            cache[form] = lemma if lemma in vocab else None
            return cache[form]

    return lemma_of


def window_pmi(counts: WindowCounts, first: str, second: str, ordered: bool = True) -> float:
    """PMI of ``first`` occurring before ``second`` within the window (``ordered``), or of the
    two occurring within the window in either order; 0.0 if never seen."""
    joint = counts.pair(first, second)
    spans = counts.window
    if not ordered:
        joint += counts.pair(second, first) if first != second else 0
        spans *= 2
    if joint == 0:
        return 0.0
    return math.log(joint * counts.tokens
                    / (counts.unigrams[first] * counts.unigrams[second] * spans))


def _count_file(job: tuple[str, frozenset[str], int]) -> WindowCounts:
    from causal_mining.readers import ReadStats, read_documents

    path, vocab, window = job
    counts = WindowCounts(window, sources=[path])
    lemma_of = _vocab_lemmatizer(vocab)
    for doc in read_documents(Path(path), ReadStats()):
        counts.add_text(doc.text, lemma_of)
    return counts


def count_windows(inputs: Sequence[str | os.PathLike[str]], vocab: Iterable[str],
                  window: int = 5, workers: int | None = None,
                  progress: bool = True) -> WindowCounts:
    """Window counts of ``vocab`` lemmas over files, folders or globs (one process per file).

    Raises :class:`GraphError` for an empty vocabulary or a window below 1; unreadable input is
    handled as the miner does (counted and skipped by the readers).
    """
    from multiprocessing import get_context

    from causal_mining.readers import expand_inputs

    vocab_set = frozenset(v for v in vocab if v)
    if not vocab_set:
        raise GraphError("the vocabulary to count is empty")
    if window < 1:
        raise GraphError(f"`window` (={window}) must be at least 1")
    paths = [str(p) for p in expand_inputs(list(inputs))]
    total = WindowCounts(window)
    workers = max(1, min(workers or os.cpu_count() or 1, len(paths)))
    jobs = [(p, vocab_set, window) for p in paths]
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(paths), unit="file", desc="co-occurrence")
    with get_context("spawn").Pool(workers) as pool:
        for counts in pool.imap_unordered(_count_file, jobs):
            total.merge(counts)
            if bar is not None:
                bar.update(1)
    if bar is not None:
        bar.close()
    total.sources.sort()
    return total


def save_counts(counts: WindowCounts, path: str | os.PathLike[str]) -> None:
    """Write gzip-compressed JSON, atomically (the graph store's temporary-file-and-rename)."""
    from cause_effect_graph.store import _atomic_write_bytes

    data = {"format": COUNTS_FORMAT, "version": COUNTS_VERSION, "window": counts.window,
            "tokens": counts.tokens, "sources": counts.sources,
            "unigrams": dict(sorted(counts.unigrams.items())),
            "pairs": [[a, b, n] for (a, b), n in sorted(counts.pairs.items())]}
    _atomic_write_bytes(Path(path), gzip.compress(json.dumps(data).encode("utf-8")))


def load_counts(path: str | os.PathLike[str]) -> WindowCounts:
    """Read :func:`save_counts` output; anything else is a :class:`GraphError` naming the file."""
    try:
        with gzip.open(path, "rt", encoding="utf-8") as f:
            data = json.load(f)
    except FileNotFoundError:
        raise GraphError(f"co-occurrence counts {os.fspath(path)!r} do not exist") from None
    except (OSError, EOFError, ValueError) as err:
        raise GraphError(f"{os.fspath(path)!r} is not a co-occurrence counts file "
                         f"(dpc graph cooccur): {err}") from None
    if not isinstance(data, dict) or data.get("format") != COUNTS_FORMAT:
        raise GraphError(f"{os.fspath(path)!r} is not a co-occurrence counts file "
                         "(dpc graph cooccur)")
    if data.get("version") != COUNTS_VERSION:
        raise GraphError(f"{os.fspath(path)!r} has counts format version {data.get('version')}; "
                         f"this dpc reads version {COUNTS_VERSION}")
    return WindowCounts(int(data["window"]), int(data["tokens"]), Counter(data["unigrams"]),
                        Counter({(a, b): n for a, b, n in data["pairs"]}), list(data["sources"]))


class WindowPmiScorer:
    """COPA scorer: mean window PMI of (cause lemma, effect lemma) pairs, cause words first."""

    def __init__(self, counts: WindowCounts | str | os.PathLike[str], ordered: bool = True) -> None:
        self.counts = counts if isinstance(counts, WindowCounts) else load_counts(counts)
        self.ordered = ordered

    def phrase(self, cause: str, effect: str) -> float:
        """Mean of :func:`window_pmi` over the lemma pairs of two phrases (0.0 without any)."""
        c, e = content_lemmas(cause), content_lemmas(effect)
        if not c or not e:
            return 0.0
        return sum(window_pmi(self.counts, x, y, self.ordered)
                   for x in c for y in e) / (len(c) * len(e))

    def score(self, premise: str, asks_for: str, alternative: str) -> float:
        if asks_for == "cause":
            return self.phrase(alternative, premise)
        return self.phrase(premise, alternative)


def copa_vocabulary(paths: Sequence[str | os.PathLike[str]]) -> set[str]:
    """Content lemmas of every premise and alternative of COPA files (what the scorer looks up)."""
    from tasks.copa import read_copa

    vocab: set[str] = set()
    for path in paths:
        for item in read_copa(path):
            for text in (item.premise, *item.alternatives):
                vocab.update(content_lemmas(text))
    return vocab


def _counts_option(options: dict[str, Any]) -> str:
    counts = options.get("counts")
    if counts is None:
        raise GraphError("window-PMI scorers need co-occurrence counts: --counts PATH "
                         "(make them with dpc graph cooccur)")
    return counts


class GraphWindowScorer:
    """Causal strength from the graph, window PMI where the graph cannot decide
    (``--scorer graph-window``).

    The score is the pair (causal strength, window PMI), compared lexicographically: when the
    graph scores the two alternatives differently it decides; when it cannot (no known lemma
    pair for either, both 0.0) the window PMI does.
    """

    def __init__(self, graph: Any, counts: WindowCounts | str | os.PathLike[str]) -> None:
        from cause_effect_graph.copa_scorers import CausalStrengthScorer

        self.graph = CausalStrengthScorer(graph)
        self.window = WindowPmiScorer(counts)

    def score(self, premise: str, asks_for: str, alternative: str) -> tuple[float, float]:
        return (self.graph.score(premise, asks_for, alternative),
                self.window.score(premise, asks_for, alternative))


def _register() -> None:
    try:
        from tasks.copa import register_scorer
    except ModuleNotFoundError:  # pragma: no cover - tasks/ absent from a partial checkout
        return
    register_scorer("window-pmi", lambda **o: WindowPmiScorer(_counts_option(o)))
    register_scorer("window-pmi-any-order",
                    lambda **o: WindowPmiScorer(_counts_option(o), ordered=False))
    register_scorer("graph-window",
                    lambda **o: GraphWindowScorer(o.get("graph"), _counts_option(o)))


_register()
