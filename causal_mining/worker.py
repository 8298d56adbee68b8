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
from collections.abc import Callable
from pathlib import Path
from typing import Any

from causal_mining.extract import Extractor
from causal_mining.filters import BoilerplateFilter, Deduplicator, DropReason
from causal_mining.options import MineOptions
from causal_mining.pair import CausalPair
from causal_mining.patterns import PRESCAN
from causal_mining.readers import Document, ReadStats, read_documents
from causal_mining.sentences import count_sentences, normalise_space, split_sentences
from causal_mining.shards import read_json, write_json, write_pairs
from causal_mining.tagging import Tagger

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
    boilerplate = BoilerplateFilter()
    position = [0, 0]  # raw bytes read, reported so far

    def at(offset: int) -> None:
        position[0] = offset

    batch: list[Document] = []
    batch_chars = 0
    skipped_paragraphs = 0
    batch_number = 0
    mined = resumed = pairs_total = 0

    def finish() -> None:
        nonlocal batch, batch_chars, skipped_paragraphs, batch_number, mined, resumed, pairs_total
        stats_path = folder / f"{batch_number:06d}.json"
        if stats_path.exists():
            resumed += 1
            pairs_total += read_json(stats_path)["pairs"]
        else:
            pairs, stats = process_batch(batch, extractor)
            stats["boilerplate_paragraphs"] = skipped_paragraphs
            if skipped_paragraphs:
                stats["drops"][DropReason.BOILERPLATE.value] = skipped_paragraphs
            write_pairs(folder / f"{batch_number:06d}.tsv", pairs)
            write_json(stats_path, stats)
            mined += 1
            pairs_total += len(pairs)
        if progress is not None:
            progress(position[0] - position[1])
            position[1] = position[0]
        batch, batch_chars, skipped_paragraphs = [], 0, 0
        batch_number += 1

    for document in read_documents(Path(path), read_stats, options.reader, at):
        batch_chars += len(document.text)
        if boilerplate.keep(document.text):
            text = normalise_space(document.text)
            if text:
                batch.append(Document(document.source, text))
        else:
            skipped_paragraphs += 1
        if batch_chars >= options.batch_chars:
            finish()
    if batch_chars or batch_number == 0:
        finish()
    if progress is not None:
        progress(read_stats.input_bytes - position[1])
    summary = {
        "index": index,
        "path": path,
        "batches": batch_number,
        "pairs": pairs_total,
        "read": read_stats.to_dict(),
    }
    write_json(done_path, summary)
    return summary | {"mined_batches": mined, "resumed_batches": resumed}
