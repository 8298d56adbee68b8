from pathlib import Path

import pytest
from transformers import AutoTokenizer

from train.errors import ModelFolderError, TrainDataError
from train.tokenizer import load_tokenizer, train_tokenizer


def test_saved_tokenizer_loads_with_autotokenizer(tiny_tokenizer: Path) -> None:
    tok = AutoTokenizer.from_pretrained(str(tiny_tokenizer))
    ids = tok("the dog barked loudly").input_ids
    assert ids[-1] == tok.eos_token_id == 1
    assert tok.pad_token_id == 0
    assert tok.decode(ids, skip_special_tokens=True) == "the dog barked loudly"
    assert (tiny_tokenizer / "spm.model").is_file()


def test_unknown_characters_map_to_unk(tiny_tokenizer: Path) -> None:
    tok = load_tokenizer(tiny_tokenizer)
    assert tok.unk_token_id in tok("ЖЖЖ", add_special_tokens=False).input_ids


def test_bpe_variant_trains(tmp_path: Path) -> None:
    tok = train_tokenizer(["the cat sat on the mat"] * 30, tmp_path, vocab_size=20,
                          model_type="bpe")
    assert tok.decode(tok("the cat").input_ids, skip_special_tokens=True) == "the cat"


def test_missing_tokenizer_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ModelFolderError, match="has no tokenizer.json"):
        load_tokenizer(tmp_path)
    with pytest.raises(ModelFolderError, match="does not exist"):
        load_tokenizer(tmp_path / "nope")


def test_no_text_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(TrainDataError, match="no text"):
        train_tokenizer(["", "  "], tmp_path, vocab_size=20)


def test_readable_decoding_keeps_a_folders_own_choice(tmp_path) -> None:
    import train
    from train.models import load_model, minilm_tokenizer_path

    tok = AutoTokenizer.from_pretrained(str(minilm_tokenizer_path()))
    tok.clean_up_tokenization_spaces = False
    tok.init_kwargs["clean_up_tokenization_spaces"] = False
    tok.save_pretrained(str(tmp_path))
    ids = tok("they can't go")["input_ids"]
    assert load_tokenizer(tmp_path).decode(ids, skip_special_tokens=True) == "they can ' t go"
    assert load_tokenizer(minilm_tokenizer_path()).decode(ids, skip_special_tokens=True) == (
        "they can't go")
    bundled = load_model(Path(train.__file__).parent / "default_model").tokenizer
    assert bundled.decode(bundled("it isn't")["input_ids"], skip_special_tokens=True) == "it isn't"
