"""SentencePiece tokenizer trained on CausalBank, saved as a Hugging Face tokenizer.

SentencePiece (unigram by default, BPE on request) is trained on the cause and effect texts,
then its pieces and scores are wrapped in a :class:`transformers.T5Tokenizer` (a ``tokenizers``
Unigram model with the Metaspace pre-tokenizer), so every part of dpc loads it with
``AutoTokenizer.from_pretrained(folder)``. Ids: ``<pad>`` 0, ``</s>`` 1, ``<unk>`` 2. Text is
NFKC-normalised before training and by the saved tokenizer, so both see the same characters.

Examples
--------
>>> import tempfile
>>> texts = [f"the {w} fell because it rained on the {w}" for w in ("tree", "roof", "car")] * 50
>>> folder = tempfile.mkdtemp()
>>> tok = train_tokenizer(texts, folder, vocab_size=60)
>>> tok.pad_token_id, tok.eos_token_id, tok.unk_token_id
(0, 1, 2)
>>> ids = tok("the tree fell").input_ids
>>> ids[-1] == tok.eos_token_id, tok.decode(ids, skip_special_tokens=True)
(True, 'the tree fell')
>>> load_tokenizer(folder).vocab_size == tok.vocab_size
True
"""

from __future__ import annotations

import tempfile
import unicodedata
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from dpc_errors import check_float, check_int, check_seed
from dpc_files import check_output_folder, claim_output_folder
from train.errors import ModelFolderError, TrainDataError

__all__ = ["end_token_id", "load_tokenizer", "normalize", "prompt_start_ids", "readable_decoding",
           "target_ids", "tokens_per_word", "train_tokenizer"]

ModelType = Literal["unigram", "bpe"]


def normalize(text: str) -> str:
    """NFKC and collapsed whitespace: the form the tokenizer is trained on.

    >>> normalize("ﬁne  \\t day")
    'fine day'
    """
    return " ".join(unicodedata.normalize("NFKC", text).split())


def train_tokenizer(
    texts: Iterable[str],
    folder: str | Path,
    *,
    vocab_size: int = 12000,
    model_type: ModelType = "unigram",
    character_coverage: float = 0.9999,
    seed: int = 0,
    max_sentences: int = 2_000_000,
) -> Any:
    """Train SentencePiece on ``texts`` and save it as a Hugging Face tokenizer in ``folder``.

    Parameters
    ----------
    texts
        Training texts (one sentence-like string each); empty strings are skipped.
    folder
        Output folder; it receives ``tokenizer.json``, ``tokenizer_config.json`` and the
        SentencePiece model ``spm.model`` it was made from.
    vocab_size
        Number of pieces, the 3 special tokens included.
    model_type
        ``"unigram"`` or ``"bpe"``.

    Returns
    -------
    transformers.T5Tokenizer
        The tokenizer, as ``AutoTokenizer`` will load it back.
    """
    import sentencepiece as spm

    if model_type not in ("unigram", "bpe"):
        raise TrainDataError(f"model_type {model_type!r} is not 'unigram' or 'bpe'")
    check_int("vocab_size", vocab_size, 8, 2**31 - 1, error=TrainDataError)  # SentencePiece's
    check_seed("seed", seed, error=TrainDataError)
    check_int("max_sentences", max_sentences, 1, 2**31 - 1, error=TrainDataError)
    check_float("character_coverage", character_coverage, 0, 1, open_min=True,
                error=TrainDataError)
    folder = check_output_folder(folder, "--out", command="dpc train tokenizer")
    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp) / "corpus.txt"
        n = 0
        with open(corpus, "w", encoding="utf-8") as out:
            for text in texts:
                text = normalize(text)
                if text:
                    out.write(text + "\n")
                    n += 1
        if n == 0:
            raise TrainDataError("no text to train the tokenizer on")
        # the texts read and every value checked: a refused run leaves no folder behind
        claim_output_folder(folder, "dpc train tokenizer")
        spm.set_random_generator_seed(seed)
        spm.SentencePieceTrainer.train(
            input=str(corpus),
            model_prefix=str(folder / "spm"),
            vocab_size=vocab_size,
            model_type=model_type,
            character_coverage=character_coverage,
            normalization_rule_name="identity",
            pad_id=0,
            eos_id=1,
            unk_id=2,
            bos_id=-1,
            input_sentence_size=max_sentences,
            shuffle_input_sentence=True,
            seed_sentencepiece_size=1_000_000,
            hard_vocab_limit=False,
            minloglevel=2,
            num_threads=1,
        )
    processor = spm.SentencePieceProcessor(model_file=str(folder / "spm.model"))
    vocab: list[tuple[str, float]] = []
    for i in range(processor.get_piece_size()):
        piece = processor.id_to_piece(i)
        score = processor.get_score(i)
        if model_type == "bpe" and not processor.is_control(i) and not processor.is_unknown(i):
            # BPE pieces carry merge ranks as scores; a unigram model over them prefers earlier
            # (more frequent) merges, which approximates the BPE segmentation.
            score = -float(i)
        vocab.append((piece, float(score)))
    tokenizer = _wrap(vocab)
    tokenizer.save_pretrained(str(folder))
    return load_tokenizer(folder)


def _wrap(vocab: list[tuple[str, float]]) -> Any:
    from tokenizers import normalizers
    from transformers import T5Tokenizer

    tokenizer = T5Tokenizer(vocab=vocab, extra_ids=0, model_max_length=512)
    tokenizer.backend_tokenizer.normalizer = normalizers.NFKC()
    return tokenizer


def load_tokenizer(folder: str | Path) -> Any:
    """Load a tokenizer folder with ``AutoTokenizer``; a clear error when it is missing.

    >>> load_tokenizer("/no/such/tokenizer")
    Traceback (most recent call last):
    ...
    train.errors.ModelFolderError: tokenizer folder '/no/such/tokenizer' does not exist
    """
    from transformers import AutoTokenizer

    path = Path(folder)
    if not path.is_dir():
        raise ModelFolderError(f"tokenizer folder {str(folder)!r} does not exist")
    if not (path / "tokenizer.json").is_file() and not (path / "tokenizer_config.json").is_file():
        raise ModelFolderError(
            f"tokenizer folder {str(folder)!r} has no tokenizer.json: train one with "
            "`dpc train tokenizer` first"
        )
    try:
        return readable_decoding(AutoTokenizer.from_pretrained(str(path), local_files_only=True))
    except (OSError, ValueError, TypeError) as err:
        raise ModelFolderError(f"cannot load a tokenizer from {str(folder)!r}: {err}") from err


def readable_decoding(tokenizer: Any) -> Any:
    """A WordPiece (BERT) tokenizer that decodes "can't" as "can't", not "can ' t".

    transformers 4 cleaned up tokenization spaces for BERT tokenizers by default; transformers 5
    does not, and all-MiniLM-L6-v2's config does not say. Unless a folder's config sets
    ``clean_up_tokenization_spaces`` itself, it is switched on for BERT tokenizers (and saved
    with them from then on); other tokenizers are returned unchanged.

    >>> from train.models import minilm_tokenizer_path
    >>> from transformers import AutoTokenizer
    >>> tok = AutoTokenizer.from_pretrained(str(minilm_tokenizer_path()))
    >>> ids = tok("they can't go")["input_ids"]
    >>> tok.decode(ids, skip_special_tokens=True)
    "they can ' t go"
    >>> readable_decoding(tok).decode(ids, skip_special_tokens=True)
    "they can't go"
    """
    from transformers import BertTokenizer

    if (isinstance(tokenizer, BertTokenizer)
            and "clean_up_tokenization_spaces" not in tokenizer.init_kwargs):
        tokenizer.clean_up_tokenization_spaces = True
        tokenizer.init_kwargs["clean_up_tokenization_spaces"] = True
    return tokenizer


def tokens_per_word(tokenizer: Any, texts: Iterable[str]) -> float:
    """Mean number of pieces per whitespace word (no special tokens): the segmentation cost.

    >>> class Chars:
    ...     def __call__(self, text, add_special_tokens=True):
    ...         return {"input_ids": list(text.replace(" ", ""))}
    >>> tokens_per_word(Chars(), ["ab cd", "e"])
    1.6666666666666667
    """
    pieces = words = 0
    for text in texts:
        pieces += len(tokenizer(text, add_special_tokens=False)["input_ids"])
        words += len(text.split())
    if words == 0:
        raise TrainDataError("no words to measure tokens per word on")
    return pieces / words


def prompt_start_ids(tokenizer: Any) -> list[int]:
    """The ids a causal LM's tokenizer puts before a text when it adds its special tokens: the
    BOS that Gemma's adds (``[2]``); none for SmolLM2's or GPT-2's, which add nothing. Whatever
    tokenises a prompt with ``add_special_tokens=False`` (to join it to a target by ids) puts
    these first, so a model is scored and trained on the prompts the decoder gives it
    (:mod:`dpc_decode` tokenises with the special tokens).

    >>> class Gemma:
    ...     bos_token_id = 2
    ...     def __call__(self, text, add_special_tokens=True):
    ...         return {"input_ids": ([2] if add_special_tokens else []) + [7]}
    >>> prompt_start_ids(Gemma()), prompt_start_ids(object())
    ([2], [])
    """
    bos = getattr(tokenizer, "bos_token_id", None)
    if bos is None or not callable(tokenizer):
        return []
    with_special = tokenizer("a", add_special_tokens=True)["input_ids"]
    without = tokenizer("a", add_special_tokens=False)["input_ids"]
    return [bos] if with_special[:1] == [bos] and without[:1] != [bos] else []


def end_token_id(tokenizer: Any) -> int:
    """The id that ends a sequence: EOS (dpc's tokenizers) or [SEP] (a BERT WordPiece one).

    >>> class Bert:
    ...     eos_token_id, sep_token_id = None, 102
    >>> end_token_id(Bert())
    102
    """
    end = tokenizer.eos_token_id if tokenizer.eos_token_id is not None else tokenizer.sep_token_id
    if end is None:
        raise ModelFolderError("the tokenizer has neither an EOS nor a [SEP] token")
    return int(end)


def target_ids(tokenizer: Any, texts: Iterable[str]) -> list[list[int]]:
    """Token ids of generator targets: the end token last and no leading start token.

    dpc's tokenizers append EOS only. A BERT WordPiece tokenizer (a warm-started generator)
    writes ``[CLS] ... [SEP]``; its ``[CLS]`` is the decoder's start token, which the model
    prepends itself, so it is dropped here.

    >>> class Bert:
    ...     cls_token_id = 101
    ...     def __call__(self, texts):
    ...         return {"input_ids": [[101, 7, 8, 102] for _ in texts]}
    >>> target_ids(Bert(), ["a b"])
    [[7, 8, 102]]
    """
    ids = tokenizer(list(texts))["input_ids"]
    start = getattr(tokenizer, "cls_token_id", None)
    if start is None:
        return [list(x) for x in ids]
    return [list(x[1:]) if x and x[0] == start else list(x) for x in ids]
