"""CausalBank miner: cause–effect pairs from raw text with the patterns of Li et al. (2020).

The pipeline, one module per step: :mod:`~causal_mining.readers` stream a corpus;
:mod:`~causal_mining.patterns` pre-scans and matches the causal patterns;
:mod:`~causal_mining.extract` turns a sentence into a (cause, effect) pair, applying
:mod:`~causal_mining.filters`; :mod:`~causal_mining.worker` mines one file into part files;
:mod:`~causal_mining.local_runner` and :mod:`~causal_mining.spark_runner` run the workers;
:mod:`~causal_mining.merge` de-duplicates into the final shards; :mod:`~causal_mining.report`
writes the statistics; :mod:`~causal_mining.release` reads and writes the official CausalBank
release layout.

Examples
--------
>>> from causal_mining import Extractor, ExtractOptions
>>> extractor = Extractor(ExtractOptions(use_tags=False))
>>> pairs = extractor.extract([("-", "It rained, so we stayed in.")])
>>> pairs[0].cause, pairs[0].effect, pairs[0].cls
('It rained', 'we stayed in', 'CPE')
"""

from causal_mining.errors import (
    BankFormatError,
    MiningConfigError,
    MiningError,
    MiningInputError,
    ResumeError,
)
from causal_mining.extract import ExtractOptions, Extractor, extract_sentence
from causal_mining.mine import mine
from causal_mining.options import MineOptions
from causal_mining.pair import COLUMNS, CausalPair
from causal_mining.patterns import PATTERNS, PATTERNS_BY_NAME, Category, PatternClass
from causal_mining.readers import ReaderOptions
from causal_mining.shards import read_bank

__all__ = [
    "BankFormatError",
    "COLUMNS",
    "CausalPair",
    "Category",
    "ExtractOptions",
    "Extractor",
    "MineOptions",
    "MiningConfigError",
    "MiningError",
    "MiningInputError",
    "PATTERNS",
    "PATTERNS_BY_NAME",
    "PatternClass",
    "ReaderOptions",
    "ResumeError",
    "extract_sentence",
    "mine",
    "read_bank",
]
