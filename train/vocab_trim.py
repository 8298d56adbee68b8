"""Vocabulary trimming: a BERT-style model cut down to the WordPiece tokens a corpus uses.

all-MiniLM-L6-v2 spends half of its 22.7M parameters on a 30,522-token embedding matrix, of
which CausalBank from Project Gutenberg uses about 22k tokens (the rest: ``[unusedN]``, scripts
and names that never occur). :func:`trim_vocabulary` counts the corpus's tokens, keeps those
seen at least ``min_count`` times plus every special and single-character token (so any text
still tokenizes without ``[UNK]``), and writes a new model folder whose embedding rows and
WordPiece vocabulary are the kept ones, in their original order. It is the step that lets a
warm-started generator fit the 50 MB bundle (``dpc train trim-vocab``, then
``dpc train generator --warm-start FOLDER --tokenizer FOLDER``).

WordPiece matches greedily, longest piece first; a word whose pieces are all kept therefore gets
exactly the same pieces from the trimmed vocabulary. :func:`trim_vocabulary` checks this on every
text it counted and raises if one differs, so the trimmed model computes the same function as the
original on that corpus; with ``min_count`` > 1 the texts holding a dropped token fall back to
shorter pieces (counted as ``retokenized``), and so do words outside the corpus.

Examples
--------
>>> import tempfile
>>> result = trim_vocabulary("minilm", ["the rain fell", "it rained all day"], tempfile.mkdtemp())
>>> result.original, result.kept < 2500, result.texts
(30522, True, 2)
>>> from train.tokenizer import load_tokenizer
>>> load_tokenizer(result.out).tokenize("it rained")
['it', 'rained']
"""

from __future__ import annotations

import json
import shutil
import tempfile
from array import array
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass
from itertools import islice
from pathlib import Path

import numpy as np
import torch

from dpc_errors import check_int
from dpc_files import check_output_folder, claim_output_folder
from train.errors import TrainDataError, TrainError
from train.generator import count_parameters, resolve_warm_start
from train.model_config import check_model_config
from train.tokenizer import load_tokenizer
from train.weight_files import require_safetensors

__all__ = ["TrimResult", "trim_vocabulary"]

#: Name of the record written beside the trimmed model.
RECORD = "dpc_vocab_trim.json"


@dataclass(frozen=True)
class TrimResult:
    """What :func:`trim_vocabulary` kept: token counts, parameters and the texts it checked.

    ``retokenized``: texts with a token below ``min_count``, whose pieces changed; every other
    text was checked to tokenize exactly as before.
    """

    source: str
    out: str
    original: int
    kept: int
    min_count: int
    texts: int
    tokens: int
    retokenized: int
    parameters_before: int
    parameters_after: int


def _batches(texts: Iterable[str], size: int) -> Iterator[list[str]]:
    it = iter(texts)
    while batch := list(islice(it, size)):
        yield batch


def _single_character(token: str) -> bool:
    return len(token) == 1 or (token.startswith("##") and len(token) == 3)


def trim_vocabulary(model: str | Path, texts: Iterable[str], out: str | Path, *,
                    min_count: int = 1, batch_size: int = 4096, progress: bool = False) -> TrimResult:
    """Write ``model`` with only the WordPiece tokens ``texts`` use to ``out``.

    Parameters
    ----------
    model
        A BERT-style model folder with a WordPiece (``BertTokenizer``) tokenizer, or ``"minilm"``
        for the packaged all-MiniLM-L6-v2.
    texts
        The corpus whose tokens are kept (for a generator: the sources and targets it trains on).
    out
        New folder: ``config.json``, ``model.safetensors``, the trimmed tokenizer and
        ``dpc_vocab_trim.json`` (this result).
    min_count
        Keep a token seen at least this many times (specials and single characters always).

    Raises
    ------
    TrainError
        Not a WordPiece model, no text, ``min_count`` < 1, or (a bug) a text that tokenizes
        differently after trimming.
    """
    from transformers import AutoModel, BertTokenizer


    check_int("min_count", min_count, 1, error=TrainError)
    check_output_folder(out, "--out", command="dpc train trim-vocab")
    path = resolve_warm_start(str(model))
    tokenizer = load_tokenizer(path)
    if not isinstance(tokenizer, BertTokenizer):
        raise TrainError(
            f"{str(model)!r} has a {type(tokenizer).__name__}; only a WordPiece (BERT) "
            "vocabulary can be trimmed"
        )
    corpus: list[str] = []
    pieces = array("i")  # every text's token ids, end to end: tokenized once, reused below
    lengths: list[int] = []
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(unit="text", desc="counting tokens")
    for batch in _batches(texts, batch_size):
        corpus.extend(batch)
        for ids in tokenizer(batch, add_special_tokens=False)["input_ids"]:
            pieces.extend(ids)
            lengths.append(len(ids))
        if bar is not None:
            bar.update(len(batch))
    if bar is not None:
        bar.close()
    if not corpus:
        raise TrainDataError("no text to count tokens on")
    flat = np.frombuffer(pieces, dtype=np.int32) if pieces else np.zeros(0, dtype=np.int32)
    starts = np.concatenate([[0], np.cumsum(lengths)])

    vocab: dict[str, int] = tokenizer.get_vocab()
    by_id = {i: t for t, i in vocab.items()}
    counts = np.bincount(flat, minlength=len(vocab))
    keep = {int(i) for i in np.flatnonzero(counts >= min_count)}
    keep |= set(tokenizer.all_special_ids)
    keep |= {i for t, i in vocab.items() if _single_character(t)}
    kept = sorted(keep)
    new_id = {old: new for new, old in enumerate(kept)}
    new_vocab = {by_id[old]: new for old, new in new_id.items()}

    require_safetensors(path, error=TrainError)  # never a pickle
    check_model_config(path, error=TrainError)  # each field's type: one line naming it
    try:
        encoder = AutoModel.from_pretrained(path, local_files_only=True, use_safetensors=True)
    except (OSError, ValueError) as err:
        raise TrainError(f"cannot load a model from {path!r}: {err}") from err
    before = count_parameters(encoder)
    old_rows = encoder.get_input_embeddings().weight.detach()
    if old_rows.shape[0] != len(vocab):
        raise TrainError(
            f"{str(model)!r}: the embedding has {old_rows.shape[0]} rows but the tokenizer "
            f"{len(vocab)} tokens"
        )
    rows = old_rows[torch.tensor(kept)].clone()
    pad = new_id.get(tokenizer.pad_token_id) if tokenizer.pad_token_id is not None else None
    encoder.set_input_embeddings(torch.nn.Embedding.from_pretrained(rows, freeze=False,
                                                                    padding_idx=pad))
    encoder.config.vocab_size = len(kept)
    encoder.config.pad_token_id = pad

    init = tokenizer.init_kwargs
    trimmed = BertTokenizer(
        vocab=new_vocab,
        do_lower_case=init.get("do_lower_case", True),
        tokenize_chinese_chars=init.get("tokenize_chinese_chars", True),
        strip_accents=init.get("strip_accents"),
        model_max_length=tokenizer.model_max_length,
    )
    new_of = np.full(len(vocab), -1, dtype=np.int64)
    new_of[kept] = np.arange(len(kept))
    mapped_flat = new_of[flat]
    retokenized = 0
    for first in range(0, len(corpus), batch_size):
        batch = corpus[first:first + batch_size]
        after_ids = trimmed(batch, add_special_tokens=False)["input_ids"]
        for n, (text, b) in enumerate(zip(batch, after_ids), start=first):
            mapped = mapped_flat[starts[n]:starts[n + 1]]
            if (mapped < 0).any():  # holds a token below min_count: falls back to shorter pieces
                retokenized += 1
            elif mapped.tolist() != b:
                raise TrainError(f"trimming changed how {text!r} is tokenized")

    folder = Path(out)
    folder.parent.mkdir(parents=True, exist_ok=True)
    # written whole beside OUT, then renamed: an interrupted run leaves no half folder
    tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", suffix=".tmp", dir=folder.parent))
    try:
        claim_output_folder(tmp, "dpc train trim-vocab")
        encoder.save_pretrained(str(tmp))
        trimmed.save_pretrained(str(tmp))
        result = TrimResult(str(model), str(folder), len(vocab), len(kept), min_count,
                            len(corpus), int(flat.size), retokenized, before,
                            count_parameters(encoder))
        (tmp / RECORD).write_text(json.dumps(asdict(result), indent=1) + "\n")
        shutil.rmtree(folder, ignore_errors=True)  # empty, or an earlier trim (checked above)
        tmp.rename(folder)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return result
