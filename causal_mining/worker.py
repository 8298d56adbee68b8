"""Mining one input file into part files: the unit of work both engines run.

A file is read as a stream and cut into *batches* of about ``batch_chars`` characters of text
(cut points depend only on the input and that option). Each batch becomes one part file
``parts/<file>/<batch>.tsv`` plus its statistics ``<batch>.json``, both written atomically; the
JSON is written last and is the batch's commit record. When the whole file is done,
``parts/<file>/DONE.json`` records the reader statistics. A resumed run re-reads a file whose
``DONE.json`` is missing, skips every batch that has its JSON, and mines the rest, so no pair is
lost or written twice.

Examples
--------
>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> text = "It rained, so we stayed in.\\n\\nThe war led to a famine.\\n"
>>> _ = (folder / "in.txt").write_text(text)
>>> options = MineOptions(inputs=(str(folder),), out=str(folder / "out"))
>>> summary = mine_file(0, str(folder / "in.txt"), str(folder / "out"), options)
>>> summary["batches"], summary["pairs"]
(1, 2)
>>> sorted(p.name for p in (folder / "out" / "parts" / "00000").iterdir())
['000000.json', '000000.tsv', 'DONE.json']
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from causal_mining.boilerplate import BoilerplateFilter
from causal_mining.dedup import Deduplicator
from causal_mining.extract import Extractor
from causal_mining.filters import DropReason
from causal_mining.options import MineOptions
from causal_mining.pair import CausalPair
from causal_mining.patterns import PRESCAN
from causal_mining.readers import Document, ReadStats, read_documents
from causal_mining.sentences import count_sentences, normalise_space, split_sentences
from causal_mining.shards import write_pairs
from causal_mining.tagging import Tagger
from dpc_files import read_json, write_json

__all__ = ["mine_file", "part_folder", "process_batch"]

_TAGGERS: dict[bool, Tagger] = {}


def part_folder(out: str | Path, index: int) -> Path:
    """Folder of the part files of input number ``index``."""
    return Path(out) / "parts" / f"{index:05d}"


def _tagger(parse: bool) -> Tagger:
    if parse not in _TAGGERS:
        _TAGGERS[parse] = Tagger(parse=parse)
    return _TAGGERS[parse]


def process_batch(
    paragraphs: list[Document], extractor: Extractor
) -> tuple[list[CausalPair], dict[str, Any]]:
    """Pairs of one batch of (already boilerplate-filtered, normalised) paragraphs.

    Returns the pairs (deduplicated within the batch) and the batch statistics.
    """
    started = time.process_time()
    drops_before = Counter(extractor.drops)
    tagged_before, candidates_before = extractor.tagged, extractor.candidates
    sentences = 0
    items: list[tuple[str, str]] = []
    chars = 0
    for document in paragraphs:
        text = document.text
        chars += len(text)
        if PRESCAN.search(text) is None:
            sentences += count_sentences(text)
            continue
        for sentence in split_sentences(text):
            sentences += 1
            if PRESCAN.search(sentence) is not None:
                items.append((document.source, sentence))
    pairs: list[CausalPair] = []
    dedup = Deduplicator()
    for pair in extractor.extract(items):
        reason = dedup.check(pair.cause, pair.effect)
        if reason is None:
            pairs.append(pair)
        else:
            extractor.drops[reason.value] += 1
    drops = Counter(extractor.drops)
    drops.subtract(drops_before)
    stats = {
        "chars": chars,
        "paragraphs": len(paragraphs),
        "sentences": sentences,
        "prescan_sentences": len(items),
        "candidate_sentences": extractor.candidates - candidates_before,
        "tagged_sentences": extractor.tagged - tagged_before,
        "pairs": len(pairs),
        "drops": {k: v for k, v in sorted(drops.items()) if v},
        "cpu_seconds": round(time.process_time() - started, 3),
    }
    return pairs, stats


@dataclass
class _Batch:
    """The paragraphs of one batch, as they are read.

    ``chars`` counts the raw text read into the batch, boilerplate included (it decides where
    batches are cut); ``boilerplate`` counts the paragraphs skipped as boilerplate.
    """

    number: int
    paragraphs: list[Document] = field(default_factory=list)
    chars: int = 0
    boilerplate: int = 0

    def add(self, document: Document, content: bool) -> None:
        """Count ``document`` in; keep it, space-normalised and if not empty, if it is content."""
        self.chars += len(document.text)
        if not content:
            self.boilerplate += 1
            return
        text = normalise_space(document.text)
        if text:
            self.paragraphs.append(Document(document.source, text))


def _batches(documents: Iterable[Document], batch_chars: int) -> Iterator[_Batch]:
    """Cut ``documents`` into batches of at least ``batch_chars`` characters of raw text.

    The last batch may be shorter; an input without text gives one empty batch. A batch is
    yielded as soon as the document that fills it is read, before the next one is.
    """
    boilerplate = BoilerplateFilter()
    batch = _Batch(0)
    for document in documents:
        batch.add(document, boilerplate.keep(document.text))
        if batch.chars >= batch_chars:
            yield batch
            batch = _Batch(batch.number + 1)
    if batch.chars or batch.number == 0:
        yield batch


def _committed_pairs(folder: Path, number: int) -> int | None:
    """Pairs of batch ``number`` if an earlier run committed it (wrote its JSON), else ``None``."""
    stats_path = folder / f"{number:06d}.json"
    return read_json(stats_path)["pairs"] if stats_path.exists() else None


def _mine_batch(batch: _Batch, folder: Path, extractor: Extractor) -> int:
    """Mine ``batch``; write its part file, then its statistics (the commit); its pair count."""
    pairs, stats = process_batch(batch.paragraphs, extractor)
    stats["boilerplate_paragraphs"] = batch.boilerplate
    if batch.boilerplate:
        stats["drops"][DropReason.BOILERPLATE.value] = batch.boilerplate
    write_pairs(folder / f"{batch.number:06d}.tsv", pairs)
    write_json(folder / f"{batch.number:06d}.json", stats)
    return len(pairs)


@dataclass
class _Tally:
    """The batches of one file: how many, how many mined now or found done, and their pairs."""

    batches: int = 0
    mined: int = 0
    resumed: int = 0
    pairs: int = 0

    def count(self, pairs: int, resumed: bool) -> None:
        """Count one batch of ``pairs`` pairs, found done (``resumed``) or mined now."""
        self.batches += 1
        self.pairs += pairs
        if resumed:
            self.resumed += 1
        else:
            self.mined += 1


@dataclass
class _Progress:
    """Input bytes read, handed to a ``progress`` callback in increments."""

    callback: Callable[[int], None] | None
    offset: int = 0  # raw bytes read so far, set by the reader through :meth:`at`
    reported: int = 0  # of which already handed to the callback

    def at(self, offset: int) -> None:
        """Record the reader's position."""
        self.offset = offset

    def report(self, offset: int) -> None:
        """Hand the bytes from the last report up to ``offset`` to the callback, if any."""
        if self.callback is not None:
            self.callback(offset - self.reported)
            self.reported = offset


def mine_file(
    index: int,
    path: str,
    out: str,
    options: MineOptions,
    progress: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """Mine input file number ``index`` into ``out/parts/<index>/``, resuming if possible.

    Parameters
    ----------
    index
        Position of the file in the run's sorted input list (names its part folder).
    path
        The input file.
    out
        Output folder of the run.
    options
        Run options (batch size, extraction and reader options).
    progress
        Called with the number of input bytes consumed since the last call.

    Returns
    -------
    dict
        The file's summary (also stored as ``DONE.json``): reader statistics, number of
        batches, pairs, and how many batches were mined now versus found done.
    """
    folder = part_folder(out, index)
    done_path = folder / "DONE.json"
    if done_path.exists():
        summary: dict[str, Any] = read_json(done_path)
        if progress is not None:
            progress(summary["read"]["input_bytes"])
        return summary
    read_stats = ReadStats()
    extractor = Extractor(options.extract, _tagger(options.extract.parses))
    meter = _Progress(progress)
    tally = _Tally()
    documents = read_documents(Path(path), read_stats, options.reader, meter.at)
    for batch in _batches(documents, options.batch_chars):
        committed = _committed_pairs(folder, batch.number)
        if committed is None:
            tally.count(_mine_batch(batch, folder, extractor), resumed=False)
        else:
            tally.count(committed, resumed=True)
        meter.report(meter.offset)
    meter.report(read_stats.input_bytes)
    summary = {
        "index": index,
        "path": path,
        "batches": tally.batches,
        "pairs": tally.pairs,
        "read": read_stats.to_dict(),
    }
    write_json(done_path, summary)
    return summary | {"mined_batches": tally.mined, "resumed_batches": tally.resumed}
