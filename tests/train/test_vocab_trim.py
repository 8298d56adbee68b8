import json
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from train.errors import TrainDataError, TrainError
from train.tokenizer import load_tokenizer
from train.vocab_trim import RECORD, trim_vocabulary

CORPUS = ["it rained all night", "the ground was wet", "the neighbours woke up",
          "cause: the baby cried", "effect: she lost her keys"] * 3 + ["a zeppelin passed once"]


def test_kept_tokens_tokenize_exactly_as_before(tiny_bert: Path, tmp_path: Path) -> None:
    result = trim_vocabulary(tiny_bert, CORPUS, tmp_path / "t")
    before, after = load_tokenizer(tiny_bert), load_tokenizer(tmp_path / "t")
    assert result.original == 30522 and result.kept == len(after) < 3000
    assert result.retokenized == 0 and result.texts == len(CORPUS)
    old_vocab, new_vocab = before.get_vocab(), after.get_vocab()
    for text in CORPUS:
        old_tokens = before.tokenize(text)
        assert after.tokenize(text) == old_tokens
    # special tokens and single characters survive, so an unseen word has no [UNK]
    assert {"[CLS]", "[SEP]", "[PAD]", "[UNK]", "[MASK]", "q", "##q"} <= new_vocab.keys()
    assert "[UNK]" not in after.tokenize("quixotic xylophones")
    # each kept row is the original embedding row of that token
    old_rows = load_file(str(tiny_bert / "model.safetensors"))
    new_rows = load_file(str(tmp_path / "t" / "model.safetensors"))
    key = next(k for k in new_rows if k.endswith("word_embeddings.weight"))
    old_key = next(k for k in old_rows if k.endswith("word_embeddings.weight"))
    for token in ("rained", "wet", "[SEP]", "##q"):
        assert torch.equal(new_rows[key][new_vocab[token]], old_rows[old_key][old_vocab[token]])
    record = json.loads((tmp_path / "t" / RECORD).read_text())
    assert record["kept"] == result.kept and record["parameters_after"] < record["parameters_before"]


def test_min_count_drops_rare_tokens_and_counts_the_texts_it_changes(tiny_bert: Path,
                                                                     tmp_path: Path) -> None:
    result = trim_vocabulary(tiny_bert, CORPUS, tmp_path / "t", min_count=2)
    after = load_tokenizer(tmp_path / "t")
    assert "zeppelin" not in after.get_vocab() and "rained" in after.get_vocab()
    assert result.retokenized == 1
    assert "".join(after.tokenize("zeppelin")).replace("#", "") == "zeppelin"


def test_bad_input_is_named(tiny_bert: Path, tiny_tokenizer: Path, tmp_path: Path) -> None:
    with pytest.raises(TrainError, match=r"`min_count` \(=0\) must be an integer >= 1"):
        trim_vocabulary(tiny_bert, CORPUS, tmp_path / "x", min_count=0)
    with pytest.raises(TrainDataError, match="no text"):
        trim_vocabulary(tiny_bert, [], tmp_path / "x")
    with pytest.raises(TrainError, match="only a WordPiece"):
        trim_vocabulary(tiny_tokenizer, CORPUS, tmp_path / "x")
    assert not (tmp_path / "x").exists()
