"""Word co-occurrence in a sliding window over raw text, and the window PMI of two phrases.

Roemmele, Bejan & Gordon (2011) answered COPA with the pointwise mutual information of word
pairs that co-occur within a few words of each other in Project Gutenberg (57.8% on dev with
a 5-word window). This module computes such counts from any corpus the miner can read and
scores phrases with them (COPA's window-PMI scorers, :mod:`tasks.copa.window`), beside the
Cause Effect Graph, which holds only the cause–effect pairs the miner extracted:

* :func:`count_windows` streams the text (every reader of :mod:`causal_mining.readers`),
  lower-cases it, lemmatises each word with lemminflect
  (:func:`~cause_effect_graph.lemmas.word_lemma`: a dictionary look-up, cached per word form;
  spaCy would be ~100x slower over 120M words), and counts, for every pair of lemmas of a
  given vocabulary, how often the first occurs 1 to ``window`` words *before* the second. Stop
  words are not in the vocabulary but still take their place in the window. One process per
  input file.
* :func:`window_pmi` is ``log(c(x before y) * N / (c(x) * c(y) * window))``;
  :func:`phrase_window_pmi` gives a (cause, effect) pair of phrases the mean of
  ``window_pmi(c, e)`` over their lemma pairs, a pair never seen counting 0, so the cause words
  must come *before* the effect words, as causes tend to precede effects in narrative (or in
  either order, ``ordered=False``).

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
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from multiprocessing import get_context
from pathlib import Path

from causal_mining.readers import ReadStats, expand_inputs, read_documents
from cause_effect_graph.errors import GraphError
from cause_effect_graph.lemmas import dictionary_lemmas, is_stop_word, text_words, word_lemma
from dpc_errors import check_int
from dpc_files import atomic_write_bytes

__all__ = [
    "COUNTS_FORMAT",
    "WindowCounts",
    "count_windows",
    "load_counts",
    "phrase_window_pmi",
    "save_counts",
    "text_vocabulary",
    "window_pmi",
]

COUNTS_FORMAT = "dpc-window-counts"
COUNTS_VERSION = 1


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
        forms = text_words(text)
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
    cache: dict[str, str | None] = {}

    def lemma_of(form: str) -> str | None:
        try:
            return cache[form]
        except KeyError:
            lemma = None if is_stop_word(form) else word_lemma(form)
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
    vocab_set = frozenset(v for v in vocab if v)
    if not vocab_set:
        raise GraphError("the vocabulary to count is empty")
    check_int("window", window, 1, error=GraphError)
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
    data = {"format": COUNTS_FORMAT, "version": COUNTS_VERSION, "window": counts.window,
            "tokens": counts.tokens, "sources": counts.sources,
            "unigrams": dict(sorted(counts.unigrams.items())),
            "pairs": [[a, b, n] for (a, b), n in sorted(counts.pairs.items())]}
    atomic_write_bytes(Path(path), gzip.compress(json.dumps(data).encode("utf-8")))


def load_counts(path: str | os.PathLike[str]) -> WindowCounts:
    """Read :func:`save_counts` output; anything else is a :class:`GraphError` naming the file."""
    try:
        with gzip.open(path, "rt", encoding="utf-8") as f:
            data = json.load(f)
    except FileNotFoundError:
        raise GraphError(f"co-occurrence counts {os.fspath(path)!r} do not exist") from None
    except (OSError, EOFError, ValueError, RecursionError) as err:
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


def phrase_window_pmi(counts: WindowCounts, cause: str, effect: str,
                      ordered: bool = True) -> float:
    """Mean of :func:`window_pmi` over the (cause lemma, effect lemma) pairs of two phrases
    (:func:`~cause_effect_graph.lemmas.dictionary_lemmas`; 0.0 when either has none): with
    ``ordered``, the cause words must come *before* the effect words.

    >>> counts = WindowCounts.from_texts(["rain made it wet"], vocab={"rain", "wet"})
    >>> round(phrase_window_pmi(counts, "It rained.", "The floor was wet."), 3)
    -0.112
    >>> phrase_window_pmi(counts, "wet", "rain"), phrase_window_pmi(counts, "the", "rain")
    (0.0, 0.0)
    """
    c, e = dictionary_lemmas(cause), dictionary_lemmas(effect)
    if not c or not e:
        return 0.0
    return sum(window_pmi(counts, x, y, ordered) for x in c for y in e) / (len(c) * len(e))


def text_vocabulary(texts: Iterable[str]) -> set[str]:
    """The :func:`~cause_effect_graph.lemmas.dictionary_lemmas` of texts: the lemmas to count
    for the phrases that will be looked up (``dpc graph cooccur --vocab-copa``).

    >>> sorted(text_vocabulary(["The floor was wet.", "It rained."]))
    ['floor', 'rain', 'wet']
    """
    return {lemma for text in texts for lemma in dictionary_lemmas(text)}
