"""Shared fixtures of the causal_mining tests."""

from __future__ import annotations

import lzma
from pathlib import Path

import pytest

from causal_mining.extract import Extractor

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
GUTENBERG = DATA / "gutenberg"


def outcome(extractor: Extractor, sentence: str) -> str | tuple[str, str, str]:
    """The pair (pattern, cause, effect), or the drop reasons recorded for the sentence."""
    before = dict(extractor.drops)
    pairs = extractor.extract([("t", sentence)])
    if pairs:
        return pairs[0].pattern, pairs[0].cause, pairs[0].effect
    new = {k: v - before.get(k, 0) for k, v in extractor.drops.items() if v != before.get(k, 0)}
    return ",".join(sorted(new)) or "none"


def gutenberg_slice(name: str, chars: int) -> str:
    """The first ``chars`` characters of one Gutenberg author file (streamed, not loaded)."""
    path = GUTENBERG / name
    if not path.exists():
        pytest.skip(f"shared data {path} is absent (see ../shared/data/README.md)")
    with lzma.open(path, "rt", encoding="utf-8") as handle:
        return handle.read(chars)


@pytest.fixture(scope="session")
def gutenberg_sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with slices of three Gutenberg authors (about 1.2 MB of text, two compressed)."""
    folder = tmp_path_factory.mktemp("gutenberg_sample")
    (folder / "bronte.txt").write_text(gutenberg_slice("bronte-charlotte.txt.xz", 500_000))
    with lzma.open(folder / "alcott.txt.xz", "wt", encoding="utf-8") as handle:
        handle.write(gutenberg_slice("alcott-louisa-may.txt.xz", 400_000))
    import gzip

    with gzip.open(folder / "andersen.txt.gz", "wt", encoding="utf-8") as handle:
        handle.write(gutenberg_slice("andersen-h-c-hans-christian.txt.xz", 300_000))
    return folder


BATCH_CHARS = 50_000  # small parts, so a run has many resumption points


def bank_bytes(out: Path) -> dict[str, bytes]:
    """Every final shard of a run, by name."""
    return {p.name: p.read_bytes() for p in sorted((out / "causalbank").glob("*.tsv"))}


@pytest.fixture(scope="session")
def local_run(gutenberg_sample: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An uninterrupted local-engine run over the Gutenberg sample (two workers)."""
    from causal_mining import MineOptions, mine

    out = tmp_path_factory.mktemp("local_run") / "out"
    mine(MineOptions(inputs=(str(gutenberg_sample),), out=str(out), workers=2,
                     batch_chars=BATCH_CHARS, shard_pairs=500))
    return out
