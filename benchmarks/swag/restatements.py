"""Choosing the threshold of :mod:`tasks.swag.restatements` on a hand-checked sample.

``sample`` draws pool endings stratified by their all-MiniLM-L6-v2 similarity to the gold
(bins of 0.1 from ``--low`` up; the same number from each bin, so the rare high-similarity ones
are seen) and writes them as JSON lines with ``"restates": null`` for a person to fill in
(true: the ending says what the gold says, so it would be a second right answer; false: it
does not). ``score`` reads the filled file and gives, for each threshold, the share of the pool
above it and the precision and recall of "similarity >= threshold" against the hand labels, each
label weighted by its bin's share of the pool (the sample over-represents the high bins).

CONTEXTS is ``N`` (the pool's first N contexts) or ``A:B`` (contexts A to B - 1), so that a
second sample for confirming a threshold can come from contexts the first one never saw.

Usage: python benchmarks/swag/restatements.py sample POOL_DIR OUT.jsonl [PER_BIN] [LOW] [CONTEXTS]
       python benchmarks/swag/restatements.py score LABELS.jsonl POOL_DIR [CONTEXTS]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from tasks.swag.oversample import read_pool
from tasks.swag.restatements import pool_similarities


def _pool(folder: str, contexts: str | None) -> tuple[list, list[np.ndarray]]:
    """The pool's contexts with endings, ``contexts`` of them: ``N`` (the first N) or
    ``A:B`` (a slice), and their similarities."""
    entries = [e for e in read_pool(folder) if e.endings]
    if contexts:
        a, _, b = contexts.rpartition(":")
        entries = entries[int(a) if a else 0:int(b) if b else None]
    return entries, pool_similarities(folder, entries)


def _bin(similarity: float, low: float) -> int:
    """The 0.1-wide bin of ``similarity`` counted from ``low`` (-1: below ``low``)."""
    return -1 if similarity < low else min(int((similarity - low) * 10 + 1e-9), round((1 - low) * 10) - 1)


def sample(folder: str, out: str, per_bin: int = 12, low: float = 0.5,
           contexts: str | None = None) -> None:
    entries, sims = _pool(folder, contexts)
    rows = [(e, j, float(s[j])) for e, s in zip(entries, sims) for j in range(len(e.endings))]
    rng = np.random.default_rng(0)
    chosen = []
    for b in range(round((1 - low) * 10)):
        here = [r for r in rows if _bin(r[2], low) == b]
        for i in rng.permutation(len(here))[:per_bin]:
            e, j, s = here[i]
            chosen.append({"ind": str(e.ind), "bin": round(low + b / 10, 1), "similarity": round(s, 4),
                           "ctx": e.ctx[-200:], "gold": e.gold, "ending": e.endings[j],
                           "restates": None})
    Path(out).write_text("".join(json.dumps(c, ensure_ascii=False) + "\n" for c in chosen))
    counts = {round(low + b / 10, 1): sum(_bin(r[2], low) == b for r in rows)
              for b in range(round((1 - low) * 10))}
    print(json.dumps({"pool_endings": len(rows), "by_bin": counts, "sampled": len(chosen)}))


def score(labels_path: str, folder: str, contexts: str | None = None) -> None:
    labels = [json.loads(line) for line in Path(labels_path).read_text().splitlines() if line]
    if any(row["restates"] is None for row in labels):
        raise SystemExit(f"{labels_path}: some rows are not labelled yet")
    low = min(row["bin"] for row in labels)
    _, sims = _pool(folder, contexts)
    values = np.concatenate(sims)
    population = {b: int(sum(_bin(float(v), low) == b for v in values))
                  for b in range(round((1 - low) * 10))}
    sampled = {b: sum(_bin(row["similarity"], low) == b for row in labels) for b in population}
    weight = [population[_bin(row["similarity"], low)] / sampled[_bin(row["similarity"], low)]
              for row in labels]
    truth = np.array([bool(row["restates"]) for row in labels])
    sim = np.array([row["similarity"] for row in labels])
    w = np.array(weight)
    table = []
    for t in np.arange(low, 1.0, 0.025):
        flagged = sim >= t
        tp = float(w[flagged & truth].sum())
        precision = tp / float(w[flagged].sum()) if flagged.any() else float("nan")
        recall = tp / float(w[truth].sum()) if truth.any() else float("nan")
        table.append({"threshold": round(float(t), 3),
                      "pool_share_dropped": round(float((values >= t).mean()), 4),
                      "precision": round(precision, 3), "recall": round(recall, 3),
                      "labelled_flagged": int(flagged.sum())})
    by_bin = {round(low + b / 10, 1): {"labelled": sampled[b], "restates": int(
        sum(truth[i] for i in range(len(labels)) if _bin(sim[i], low) == b)),
        "pool": population[b]} for b in population}
    print(json.dumps({"labelled": len(labels), "restating": int(truth.sum()),
                      "pool_endings": int(len(values)),
                      "below_low": int((values < low).sum()), "by_bin": by_bin,
                      "thresholds": table}, indent=1))


if __name__ == "__main__":
    command, *rest = sys.argv[1:]
    if command == "sample":
        sample(rest[0], rest[1], *(int(rest[2]) for _ in rest[2:3]),
               *(float(rest[3]) for _ in rest[3:4]), *rest[4:5])
    elif command == "score":
        score(rest[0], rest[1], *rest[2:3])
    else:
        raise SystemExit(__doc__)
