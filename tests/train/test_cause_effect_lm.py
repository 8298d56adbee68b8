"""The cause/effect LM (train.cause_effect_lm): examples, splits, training into a folder, loading
it as a generator with its own input format, and `dpc train lm-generator`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dpc_errors import DpcError
from train.cause_effect_lm import (
    CONFIG_FILE,
    LmGeneratorOptions,
    cause_effect_examples,
    clause,
    is_cause_effect_lm,
    proper_nouns,
    split_pairs,
    train_cause_effect_lm,
)
from train.errors import TrainConfigError
from train.models import load_cause_effect_lm
from train.prompts import CAUSAL, CAUSAL_ZERO_SHOT, input_format_for

PAIRS = [("It rained all night.", "The ground was wet."), ("Tom lost his keys.", "He was locked out."),
         ("The road was icy.", "The car slid off the road."), ("She was hungry.", "She ate a sandwich."),
         ("The wind blew hard.", "The tree fell down."), ("He missed the bus.", "He was late for work.")]


@pytest.mark.parametrize("sentence, expected", [
    ("The dog barked.", "the dog barked"),          # an ordinary first word: lower-cased
    ("Tom lost his keys!", "Tom lost his keys"),    # a name the data writes capitalised
    ("I was late.", "I was late"),                  # "I" keeps its capital
    ("I'm tired.", "I'm tired"),
    ("NASA launched it.", "NASA launched it"),      # an acronym
    ("  the  sky  is blue . ", "the sky is blue"),  # spaces and final punctuation
    ("42 people came.", "42 people came"),          # no word first: unchanged
])
def test_clause(sentence: str, expected: str) -> None:
    assert clause(sentence, proper_nouns(["He met Tom.", "Tom is here."])) == expected


def test_examples_ask_both_directions_in_the_zero_shot_format() -> None:
    proper = proper_nouns([s for p in PAIRS for s in p] + ["She met Tom."])
    assert proper == {"tom"}  # capitalised where not first, never lower-case
    examples = cause_effect_examples(PAIRS[:2], proper)
    assert len(examples) == 4
    (p1, t1), (p2, t2), (p3, t3), _ = examples
    assert p1.endswith(" because") and t1 == "it rained all night"
    assert p2.endswith(", so") and t2 == "the ground was wet"
    assert p3.lower() == "he was locked out because" and t3 == "Tom lost his keys"
    for prompt, _ in examples:  # the prompt is exactly what dpc generate builds for the input
        direction = "cause" if prompt.endswith("because") else "effect"
        text = prompt.rsplit(" because", 1)[0] if direction == "cause" else prompt[:-4]
        assert CAUSAL_ZERO_SHOT.prompt(text, direction) == prompt


def test_split_is_stable_deduplicated_and_skips_unusable_pairs() -> None:
    pairs = PAIRS + [PAIRS[0], ("Same thing.", "same  thing."), ("Rain.", "The ground was wet.")]
    train, dev, skipped = split_pairs(pairs, dev_per_mille=500)
    assert skipped == 2 and len(train) + len(dev) == len(PAIRS)
    assert split_pairs(pairs, dev_per_mille=500) == (train, dev, skipped)
    assert dev and train  # half and half by hash: both sides non-empty on 6 pairs


def test_bad_options_name_the_value() -> None:
    with pytest.raises(TrainConfigError, match=r"`max_pairs` \(=0\)"):
        LmGeneratorOptions(max_pairs=0)
    with pytest.raises(TrainConfigError, match=r"`batch_size` \(=0\)"):
        LmGeneratorOptions(batch_size=0)


@pytest.fixture(autouse=True)
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Merged models go to a cache of the test's own, not the user's."""
    monkeypatch.setenv("DPC_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


@pytest.fixture(scope="module")
def lm_folder(tmp_path_factory: pytest.TempPathFactory, tiny_lm: Path) -> Path:
    folder = tmp_path_factory.mktemp("lm") / "run"
    options = LmGeneratorOptions(base=str(tiny_lm), r=2, alpha=4, batch_size=4, epochs=2,
                                 lr=1e-2, progress=False)
    summary = train_cause_effect_lm(PAIRS * 2, folder, options, ["pairs.jsonl"])
    assert summary["steps"] == summary["total_steps"] > 0
    # a finished run is returned, not retrained; other options in its folder are refused
    assert train_cause_effect_lm(PAIRS * 2, folder, options, ["pairs.jsonl"]) == summary
    with pytest.raises(DpcError, match="other options"):
        train_cause_effect_lm(PAIRS, folder, LmGeneratorOptions(base=str(tiny_lm), r=4,
                                                                progress=False))
    return folder


def test_a_trained_folder_loads_as_a_generator_with_its_input_format(lm_folder: Path) -> None:
    from train.models import resolve_generator

    config = json.loads((lm_folder / CONFIG_FILE).read_text(encoding="utf-8"))
    assert config["input_format"] == "causal-zero-shot" and config["run"]["sources"] == [
        "pairs.jsonl"]
    assert config["run"]["swap_genders"] is False and config["run"]["train_pairs"] > 0
    assert is_cause_effect_lm(lm_folder) and not is_cause_effect_lm(lm_folder.parent)
    loaded = resolve_generator(str(lm_folder))
    assert not loaded.model.training and "LoRA" in loaded.name
    assert input_format_for(loaded.model) is CAUSAL_ZERO_SHOT  # no worked examples
    assert input_format_for(load_cause_effect_lm(lm_folder).model) is not CAUSAL


def test_the_merged_cache_equals_merging_and_is_made_once(lm_folder: Path, tiny_lm: Path,
                                                          own_cache: Path) -> None:
    import torch

    from train.cause_effect_lm import merged_folder
    from train.lora import load_merged

    first = merged_folder(lm_folder, progress=False)
    assert first.parent.parent == own_cache and (first / "model.safetensors").is_file()
    stamp = (first / "model.safetensors").stat().st_mtime_ns
    assert merged_folder(lm_folder, progress=False) == first  # read, not merged again
    assert (first / "model.safetensors").stat().st_mtime_ns == stamp
    cached = load_cause_effect_lm(lm_folder, progress=False)
    merged, tokenizer = load_merged(tiny_lm, lm_folder / "adapter.safetensors", 2, 4)
    ids = tokenizer(["it rained because"], return_tensors="pt").input_ids
    with torch.no_grad():
        assert torch.allclose(cached.model(ids).logits, merged(ids).logits, atol=1e-6)
    assert not list(own_cache.glob("models/.*"))  # no temporary folder left behind


def test_a_folder_that_is_not_one_is_refused(tmp_path: Path) -> None:
    with pytest.raises(DpcError, match="is not a cause/effect LM"):
        load_cause_effect_lm(tmp_path)
    (tmp_path / CONFIG_FILE).write_text('{"format": "something else"}', encoding="utf-8")
    with pytest.raises(DpcError, match="format is not"):
        load_cause_effect_lm(tmp_path)


def test_the_command_trains_and_refuses_bad_pairs(tiny_lm: Path, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    from cli import main

    pairs = tmp_path / "e.jsonl"
    pairs.write_text("".join(json.dumps({"cause": c, "effect": e}) + "\n" for c, e in PAIRS),
                     encoding="utf-8")
    args = ["train", "lm-generator", "--pairs", str(pairs), "--out", str(tmp_path / "out"),
            "--base", str(tiny_lm), "--r", "2", "--alpha", "4", "--batch-size", "4",
            "--device", "cpu", "--no-progress"]
    assert main(args) == 0
    assert json.loads(capsys.readouterr().out)["steps"] > 0
    assert is_cause_effect_lm(tmp_path / "out")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"cause": "rain"}\n', encoding="utf-8")
    assert main(args[:3] + [str(bad)] + args[4:5] + [str(tmp_path / "out2")] + args[6:]) == 2
    err = capsys.readouterr().err
    assert "bad.jsonl:1: not an e-CARE row" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "out2").exists()  # nothing written for bad input


@pytest.mark.parametrize("text, expected", [
    ("he lost his keys", "she lost her keys"),
    ("She gave her book to him", "He gave his book to her"),   # possessive her -> his
    ("the nurse helped her.", "the nurse helped him."),         # object her -> him
    ("the men and the girls left", "the women and the boys left"),
    ("there was a heater", "there was a heater"),               # whole words only
])
def test_swap_gender(text: str, expected: str) -> None:
    from train.cause_effect_lm import swap_gender

    assert swap_gender(text) == expected
    assert swap_gender(swap_gender(expected)) == expected


def test_new_names_are_dropped_and_genders_swapped_for_half() -> None:
    pairs = [("Tom was tired.", "He fell asleep."), ("He was tired.", "Tom fell asleep."),
             ("The road was icy.", "The car slid off the road.")]
    proper = {"tom"}
    every = cause_effect_examples(pairs, proper)
    kept = cause_effect_examples(pairs, proper, drop_new_names=True)
    # the answer "Tom was tired" to "he fell asleep because", and "Tom fell asleep" to
    # "he was tired, so", name someone the input does not
    assert len(every) == 6 and len(kept) == 4
    assert all("Tom" not in answer or "tom" in prompt.lower() for prompt, answer in kept)
    gendered = [(f"The man saw {i} dogs.", f"He fed the {i} dogs.") for i in range(40)]
    swapped = cause_effect_examples(gendered, set(), swap_genders=True)
    women = sum("woman" in p + a for p, a in swapped)
    assert 10 < women < 70  # about half of the 80 examples, by a hash
    for prompt, answer in swapped:  # prompt and answer swapped together
        assert ("woman" in prompt + answer) == ("she" in f"{prompt} {answer}".lower().split())
