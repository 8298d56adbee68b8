"""train.model_config: a model folder's config.json is checked by type, one line naming the file
and the field, before transformers reads it (issue 60, item 2)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from train.errors import ModelFolderError, TrainError
from train.model_config import check_model_config

ROOT = Path(__file__).resolve().parents[2]

GPT2 = {"model_type": "gpt2", "vocab_size": 50, "n_embd": 16, "n_layer": 1, "n_head": 2,
        "eos_token_id": 0, "layer_norm_epsilon": 1e-5, "scale_attn_weights": True}


def _folder(tmp_path: Path, config: Any) -> Path:
    text = config if isinstance(config, str) else json.dumps(config)
    (tmp_path / "config.json").write_text(text, encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize(("change", "word"), [
    ({"n_embd": "16"}, "`n_embd` (='16') must be an integer"),  # a string for an integer
    ({"n_layer": 1.0}, "`n_layer` (=1.0) must be an integer"),  # a float for an integer
    ({"n_head": True}, "`n_head` (=True) must be an integer"),  # a bool is not a number
    ({"vocab_size": None}, "`vocab_size` (=None) must be an integer"),
    ({"layer_norm_epsilon": "1e-5"}, "`layer_norm_epsilon` (='1e-5') must be a number"),
    ({"scale_attn_weights": "yes"}, "`scale_attn_weights` (='yes') must be true or false"),
    ({"eos_token_id": "0"}, "`eos_token_id` (='0') must be an integer"),
])
def test_a_field_of_the_wrong_type_is_named_in_one_line(tmp_path: Path, change: dict[str, Any],
                                                       word: str) -> None:
    folder = _folder(tmp_path, {**GPT2, **change})
    with pytest.raises(ModelFolderError) as raised:
        check_model_config(folder)
    message = str(raised.value)
    assert word in message and repr(str(folder / "config.json")) in message, message
    assert "\n" not in message


@pytest.mark.parametrize("change", [
    {},  # as transformers writes it
    {"layer_norm_epsilon": 1},  # an integer is a number
    {"eos_token_id": None},
    {"unknown_field": "kept"},  # a field the class does not declare: transformers' to judge
    {"n_inner": None},
])
def test_a_good_config_passes_and_is_returned(tmp_path: Path, change: dict[str, Any]) -> None:
    config = {**GPT2, **change}
    assert check_model_config(_folder(tmp_path, config)) == config


def test_nested_configs_are_checked_by_their_own_types(tmp_path: Path) -> None:
    config = json.loads((ROOT / "train" / "default_model" / "config.json").read_text())
    check_model_config(_folder(tmp_path, config))  # the bundled bert2bert passes
    config["decoder"]["num_attention_heads"] = "12"
    with pytest.raises(ModelFolderError, match=r"`decoder\.num_attention_heads` \(='12'\)"):
        check_model_config(_folder(tmp_path, config))


@pytest.mark.parametrize(("text", "word"), [
    ("{not json", "is not JSON"),
    ("[1, 2]", "is not a JSON object"),
])
def test_a_config_that_is_not_a_json_object_is_named(tmp_path: Path, text: str,
                                                      word: str) -> None:
    with pytest.raises(TrainError, match=word):
        check_model_config(_folder(tmp_path, text), error=TrainError)


def test_an_unknown_model_type_is_left_to_transformers(tmp_path: Path) -> None:
    config = {"model_type": "no-such-model", "n_embd": "16"}
    assert check_model_config(_folder(tmp_path, config)) == config


@pytest.mark.parametrize("folder", ["train/default_model", "guided_generation/verifier_model/encoder",
                                    "tasks/inli/model/encoder"])
def test_every_bundled_model_folder_passes(folder: str) -> None:
    assert check_model_config(ROOT / folder)["model_type"]
