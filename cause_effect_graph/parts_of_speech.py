"""Parts of speech of the graph's lemmas, counted in the kind of text the graph was built from.

The Cause Effect Graph's nodes are bare lemmas: *purse* is one node whether the text said "her
purse" or "she pursed her lips". Inflecting a keyword across every part of speech lemminflect
knows therefore forces nouns into verb slots ("purse" → "pursed"). A :class:`PartsOfSpeech`
profile says, for each lemma, how often spaCy tagged it NOUN, VERB, ADJ or ADV in that text, and
:meth:`PartsOfSpeech.of` gives the parts of speech worth inflecting
(:func:`cause_effect_graph.word_forms.variants` with ``pos=``).

The counts are made as the graph's lemmas are (:mod:`cause_effect_graph.lemmas`): the same spaCy
model (:data:`~cause_effect_graph.lemmas.SPACY_MODEL`, parser and NER off) and the same rule for
which tokens are content lemmas (:func:`~cause_effect_graph.lemmas.keep_lemma`), so the profile's
lemmas are the graph's node names. Every kept token counts once under its (lower-cased lemma,
UPOS) pair.

The bundled profile (:data:`DEFAULT_PARTS_OF_SPEECH`, ``data/parts_of_speech.tsv.gz``) was built
by :func:`build_parts_of_speech` from a random sample of 200,000 lines of the shared Gutenberg
text, every e-CARE explanation-generation training sentence and every ConceptNet cause and
effect phrase (the graph's three sources), keeping lemmas seen at least twice::

    OMP_NUM_THREADS=1 dpc graph parts-of-speech --data ../shared/data \\
        --out cause_effect_graph/data/parts_of_speech.tsv.gz

in 327 s on one core (5 min 30 s wall, the spaCy load included): 21,482 lemmas, 111 KB, knowing
77.0% of the bundled graph's nodes, which hold 99.1% of its node weight
(``cause_effect_graph/README.md`` has more).

File format: gzip-compressed UTF-8 text, the first line ``# dpc-parts-of-speech-1``, then one
lemma a line, ``lemma<TAB>NOUN:12,VERB:3`` (positive counts, most frequent first), sorted by
lemma.

Examples
--------
>>> profile = PartsOfSpeech({"purse": {"NOUN": 40, "VERB": 3}, "cry": {"VERB": 30, "NOUN": 10}})
>>> profile.of("purse"), profile.of("cry"), profile.of("unseen")
(('NOUN',), ('VERB', 'NOUN'), ())
>>> profile.of("cry", min_share=0.5)
('VERB',)
>>> "purse" in profile, len(profile)
(True, 2)
"""

from __future__ import annotations

import gzip
import lzma
import math
import os
import random
import re
import zlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from cause_effect_graph.errors import GraphError, GraphFormatError, GraphVersionError
from cause_effect_graph.everyday import read_conceptnet, read_ecare
from cause_effect_graph.lemmas import CONTENT_POS, Lemmatizer, default_lemmatizer, keep_lemma
from dpc_errors import check_float, check_int
from dpc_files import atomic_open

__all__ = ["DEFAULT_PARTS_OF_SPEECH", "FORMAT", "PartsOfSpeech", "build_parts_of_speech",
           "count_parts_of_speech", "default_parts_of_speech", "gutenberg_sample",
           "profile_texts"]

#: The bundled profile (see the module docstring for how it was made).
DEFAULT_PARTS_OF_SPEECH = Path(__file__).resolve().parent / "data" / "parts_of_speech.tsv.gz"
#: The first line of a profile file.
FORMAT = "# dpc-parts-of-speech-1"
_FORMAT_PREFIX = "# dpc-parts-of-speech-"
_GUTENBERG_MARK = re.compile(r"\*\*\* ?(START|END) OF TH(?:IS|E) PROJECT GUTENBERG", re.I)


def _bad_counts(lemma: object, tags: object) -> str | None:
    """Why ``lemma: tags`` is not a profile entry, or ``None``."""
    if not isinstance(lemma, str) or not lemma or lemma != lemma.strip() or "\t" in lemma:
        return f"lemma {lemma!r} is not a word"
    if not isinstance(tags, Mapping) or not tags:
        return f"the counts of {lemma!r} (={tags!r}) are not a non-empty mapping of tags"
    for tag, n in tags.items():
        if tag not in CONTENT_POS:
            return (f"part of speech {tag!r} of {lemma!r} is not one of "
                    f"{', '.join(sorted(CONTENT_POS))}")
        if not isinstance(n, int) or isinstance(n, bool) or n < 1:
            return f"count {tag}:{n!r} of {lemma!r} is not a positive integer"
    return None


@dataclass
class PartsOfSpeech:
    """How often each lemma was tagged with each content part of speech.

    Parameters
    ----------
    counts
        lemma → {UPOS: count}, the tags among ``NOUN``, ``VERB``, ``ADJ``, ``ADV`` and the counts
        positive integers.

    Raises
    ------
    GraphError
        Naming the first lemma, tag or count that is not of that form.

    >>> PartsOfSpeech({"purse": {"PROPN": 2}})
    Traceback (most recent call last):
    ...
    cause_effect_graph.errors.GraphError: part of speech 'PROPN' of 'purse' is not one of ADJ, ...
    """

    counts: dict[str, dict[str, int]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for lemma, tags in self.counts.items():
            problem = _bad_counts(lemma, tags)
            if problem is not None:
                raise GraphError(problem)

    def __len__(self) -> int:
        return len(self.counts)

    def __contains__(self, lemma: object) -> bool:
        return lemma in self.counts

    def of(self, lemma: str, min_share: float = 0.1) -> tuple[str, ...]:
        """The parts of speech of ``lemma`` that hold at least ``min_share`` of its counts, most
        frequent first (ties in tag order); ``()`` for a lemma the profile has not seen.

        ``lemma`` is looked up lower-cased, as the graph's nodes are written.

        Raises
        ------
        GraphError
            If ``min_share`` is not a number between 0 and 1.

        >>> profile = PartsOfSpeech({"fast": {"ADV": 6, "ADJ": 3, "NOUN": 1}})
        >>> profile.of("Fast"), profile.of("fast", 0.0), profile.of("fast", 0.5)
        (('ADV', 'ADJ', 'NOUN'), ('ADV', 'ADJ', 'NOUN'), ('ADV',))
        >>> profile.of("fast", 1.5)
        Traceback (most recent call last):
        ...
        cause_effect_graph.errors.GraphError: `min_share` (=1.5) has to be a finite number in [0, 1]
        """
        check_float("min_share", min_share, 0, 1, error=GraphError)
        tags = self.counts.get(lemma.lower())
        if not tags:
            return ()
        total = sum(tags.values())
        ranked = sorted(tags.items(), key=lambda kv: (-kv[1], kv[0]))
        return tuple(tag for tag, n in ranked if n >= min_share * total)

    def pruned(self, min_count: int) -> PartsOfSpeech:
        """The lemmas seen at least ``min_count`` times in all (a new profile).

        >>> PartsOfSpeech({"a": {"NOUN": 1}, "bb": {"VERB": 1, "NOUN": 1}}).pruned(2).counts
        {'bb': {'VERB': 1, 'NOUN': 1}}
        """
        return PartsOfSpeech({lemma: dict(tags) for lemma, tags in self.counts.items()
                              if sum(tags.values()) >= min_count})

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the profile to ``path`` (the format of the module docstring), atomically;
        the same profile always gives the same bytes."""
        lines = [FORMAT]
        for lemma in sorted(self.counts):
            ranked = sorted(self.counts[lemma].items(), key=lambda kv: (-kv[1], kv[0]))
            lines.append(f"{lemma}\t" + ",".join(f"{tag}:{n}" for tag, n in ranked))
        data = ("\n".join(lines) + "\n").encode("utf-8")
        with atomic_open(path, "wb") as handle:
            with gzip.GzipFile(filename="", fileobj=handle, mode="wb", mtime=0) as out:
                out.write(data)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> PartsOfSpeech:
        """Read a profile written by :meth:`save`.

        Raises
        ------
        GraphFormatError
            Naming ``path`` when it is missing, not gzip, truncated, or not a profile (and the
            line, for a bad line).
        GraphVersionError
            Naming ``path`` when it is a profile of another format version.

        >>> import tempfile, pathlib
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "pos.tsv.gz"
        >>> PartsOfSpeech({"rain": {"NOUN": 5, "VERB": 2}}).save(path)
        >>> PartsOfSpeech.load(path).counts
        {'rain': {'NOUN': 5, 'VERB': 2}}
        >>> _ = path.write_bytes(gzip.compress(b"rain,NOUN\\n"))
        >>> PartsOfSpeech.load(path)
        Traceback (most recent call last):
        ...
        cause_effect_graph.errors.GraphFormatError: '.../pos.tsv.gz' is not a parts-of-speech ...
        """
        name = repr(os.fspath(path))
        try:
            with gzip.open(path, "rt", encoding="utf-8", newline="\n") as handle:
                lines = handle.read().split("\n")
        except FileNotFoundError:
            raise GraphFormatError(f"parts-of-speech file {name} does not exist") from None
        except (OSError, EOFError, zlib.error, UnicodeDecodeError) as err:
            raise GraphFormatError(f"{name} is not a parts-of-speech file (a gzip TSV whose "
                                   f"first line is {FORMAT!r}): {err}") from None
        header = lines[0].rstrip("\r")
        if header != FORMAT:
            if header.startswith(_FORMAT_PREFIX):
                raise GraphVersionError(f"{name} is a parts-of-speech file of format "
                                        f"{header[len(_FORMAT_PREFIX):]!r}; this code reads "
                                        f"format {FORMAT[len(_FORMAT_PREFIX):]!r}")
            raise GraphFormatError(f"{name} is not a parts-of-speech file (its first line is "
                                   f"{header[:60]!r}, not {FORMAT!r})")
        counts: dict[str, dict[str, int]] = {}
        for number, line in enumerate(lines[1:], 2):
            if not line:
                continue
            lemma, _, rest = line.partition("\t")
            tags = _parse_tags(rest)
            problem = ("a line is 'lemma<TAB>TAG:count,...'" if tags is None
                       else _bad_counts(lemma, tags))
            if problem is None and lemma in counts:
                problem = f"lemma {lemma!r} is given twice"
            if problem is not None or tags is None:
                raise GraphFormatError(f"{name}, line {number}: {problem}: {line[:60]!r}")
            counts[lemma] = tags
        return cls(counts)


def _parse_tags(text: str) -> dict[str, int] | None:
    """``{"NOUN": 12, "VERB": 3}`` of ``"NOUN:12,VERB:3"``; ``None`` if it is not of that shape
    (a tag given twice included)."""
    tags: dict[str, int] = {}
    for item in text.split(","):
        tag, colon, n = item.partition(":")
        if not colon or not n.isdigit() or tag in tags:
            return None
        tags[tag] = int(n)
    return tags


@lru_cache(maxsize=1)
def _default() -> PartsOfSpeech:
    return PartsOfSpeech.load(DEFAULT_PARTS_OF_SPEECH)


def default_parts_of_speech() -> PartsOfSpeech:
    """The bundled profile (:data:`DEFAULT_PARTS_OF_SPEECH`), loaded once per process.

    Treat it as read-only: it is shared by every caller in the process.

    >>> default_parts_of_speech().of("purse")
    ('NOUN',)
    """
    if not DEFAULT_PARTS_OF_SPEECH.is_file():
        raise GraphFormatError(
            f"the bundled parts-of-speech file {os.fspath(DEFAULT_PARTS_OF_SPEECH)!r} is missing "
            "from this installation; build one with `dpc graph parts-of-speech`")
    return _default()


def count_parts_of_speech(texts: Iterable[str], lemmatizer: Lemmatizer | None = None,
                          progress: bool = False) -> PartsOfSpeech:
    """Count the (lemma, part of speech) of every content token of ``texts``.

    Parameters
    ----------
    texts
        Sentences, lines or phrases; read lazily (``nlp.pipe`` batches of the lemmatizer's
        ``batch_size``).
    lemmatizer
        Whose spaCy pipeline tags the texts (parser and NER off); default: the process-wide
        :func:`~cause_effect_graph.lemmas.default_lemmatizer`, the graph build's model.
    progress
        Show a progress bar (texts done).

    Returns
    -------
    PartsOfSpeech
        Every lemma :func:`~cause_effect_graph.lemmas.keep_lemma` keeps, with the tags it had.

    >>> profile = count_parts_of_speech(["She pursed her lips.", "Her purse was empty."])
    >>> profile.counts["purse"], profile.counts["lip"], "she" in profile
    ({'VERB': 1, 'NOUN': 1}, {'NOUN': 1}, False)
    """
    lemmatizer = lemmatizer or default_lemmatizer()
    if progress:
        from tqdm.auto import tqdm

        texts = tqdm(texts, unit=" texts", desc="tagging", mininterval=5)
    counts: dict[str, dict[str, int]] = {}
    for doc in lemmatizer.nlp.pipe(texts, batch_size=lemmatizer.batch_size):
        for token in doc:
            pos = token.pos_
            lemma = keep_lemma(token.lemma_, pos, token.is_stop)
            if lemma is not None:
                tags = counts.setdefault(lemma, {})
                tags[pos] = tags.get(pos, 0) + 1
    return PartsOfSpeech(counts)


def _gutenberg_lines(path: Path) -> Iterator[str]:
    """The non-empty lines of one ``.txt.xz`` file outside Project Gutenberg's licence texts
    (from a ``*** END OF ...`` marker to the next ``*** START OF ...``), stripped."""
    skip = False
    try:
        with lzma.open(path, "rt", encoding="utf-8", errors="replace") as handle:
            for line in handle:
                line = line.strip()
                if not line:
                    continue
                mark = _GUTENBERG_MARK.match(line)
                if mark:
                    skip = mark.group(1).upper() == "END"
                elif not skip:
                    yield line
    except (OSError, EOFError, lzma.LZMAError) as err:
        raise GraphError(f"cannot read {os.fspath(path)!r}: {err}") from None


def gutenberg_sample(files: Iterable[str | os.PathLike[str]], n: int,
                     seed: int = 0) -> list[str]:
    """A uniform random sample of ``n`` lines (all if there are fewer) from all of ``files``
    (``.txt.xz``), in the order they occur: non-empty lines outside the Gutenberg licence texts.

    One pass over the files (reservoir sampling, Li's Algorithm L); the same files and
    ``seed`` give the same lines.

    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "book.txt.xz"
    >>> text = "\\n".join(["*** START OF THIS PROJECT GUTENBERG EBOOK X ***", "one", "",
    ...                   "two", "three", "*** END OF THIS PROJECT GUTENBERG EBOOK X ***",
    ...                   "licence"])
    >>> _ = f.write_bytes(lzma.compress(text.encode()))
    >>> gutenberg_sample([f], 5)
    ['one', 'two', 'three']
    >>> len(gutenberg_sample([f], 2, seed=1))
    2
    """
    check_int("the number of Gutenberg lines", n, 0, error=GraphError, quote=False)
    rng = random.Random(seed)
    kept: list[tuple[int, str]] = []
    if n == 0:
        return []
    w = math.exp(math.log(rng.random() or 1e-300) / n)
    next_index = n - 1 + _skip(rng, w)
    index = -1
    for path in files:
        for line in _gutenberg_lines(Path(path)):
            index += 1
            if index < n:
                kept.append((index, line))
            elif index == next_index:
                kept[rng.randrange(n)] = (index, line)
                w *= math.exp(math.log(rng.random() or 1e-300) / n)
                next_index += _skip(rng, w)
    return [line for _, line in sorted(kept)]


def _skip(rng: random.Random, w: float) -> int:
    """Algorithm L: how many items on from the last replacement the next one is."""
    if w >= 1.0:
        return 1
    return int(math.floor(math.log(rng.random() or 1e-300) / math.log1p(-w))) + 1


def _source_files(data: Path) -> tuple[list[Path], Path, Path]:
    """The Gutenberg files, the e-CARE file and the ConceptNet file under ``data``."""
    gutenberg = sorted((data / "gutenberg").glob("*.txt.xz"))
    ecare = data / "ecare" / "explanation_generation_train.jsonl"
    conceptnet = data / "conceptnet" / "conceptnet_cause_sets.txt"
    if not gutenberg:
        raise GraphError(f"no Gutenberg text (*.txt.xz) in {os.fspath(data / 'gutenberg')!r}")
    for path in (ecare, conceptnet):
        if not path.is_file():
            raise GraphError(f"{os.fspath(path)!r} does not exist (--data {os.fspath(data)!r} "
                             "needs gutenberg/*.txt.xz, ecare/explanation_generation_train.jsonl "
                             "and conceptnet/conceptnet_cause_sets.txt)")
    return gutenberg, ecare, conceptnet


def profile_texts(data: str | os.PathLike[str], gutenberg_lines: int = 200_000,
                  seed: int = 0) -> Iterator[str]:
    """The texts :func:`build_parts_of_speech` tags: :func:`gutenberg_sample` of
    ``data/gutenberg/*.txt.xz``, then every distinct cause and effect of
    ``data/ecare/explanation_generation_train.jsonl`` and of
    ``data/conceptnet/conceptnet_cause_sets.txt`` (``_`` read as a space).

    Raises
    ------
    GraphError
        Naming a missing input or a bad line, before any text is given.
    """
    gutenberg, ecare, conceptnet = _source_files(Path(data))
    everyday: dict[str, None] = {}
    for read, path in ((read_ecare, ecare), (read_conceptnet, conceptnet)):
        for cause, effect in read(path):
            everyday.setdefault(cause, None)
            everyday.setdefault(effect, None)
    sample = gutenberg_sample(gutenberg, gutenberg_lines, seed)

    def texts() -> Iterator[str]:
        yield from sample
        yield from everyday

    return texts()


def build_parts_of_speech(data: str | os.PathLike[str], out: str | os.PathLike[str],
                          gutenberg_lines: int = 200_000, seed: int = 0,
                          progress: bool = True, min_count: int = 2) -> PartsOfSpeech:
    """Build a profile from the graph's sources under ``data`` and save it to ``out``.

    Parameters
    ----------
    data
        The shared data folder: ``gutenberg/*.txt.xz``, ``ecare/explanation_generation_train.
        jsonl``, ``conceptnet/conceptnet_cause_sets.txt`` (:func:`profile_texts`).
    out
        The file to write (replaced if it exists; the command line checks first).
    gutenberg_lines
        How many Gutenberg lines to sample (tagging them is most of the time: about 8,000
        words a second on one core, 11 words a line).
    seed
        Seed of the sample.
    progress
        Show a progress bar.
    min_count
        Keep lemmas seen at least this often in all.

    Returns
    -------
    PartsOfSpeech
        The profile written.
    """
    check_int("min_count", min_count, 1, error=GraphError)
    texts = profile_texts(data, gutenberg_lines, seed)
    profile = count_parts_of_speech(texts, progress=progress).pruned(min_count)
    profile.save(out)
    return profile
