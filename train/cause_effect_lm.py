"""A pretrained causal LM fine-tuned (LoRA) to write causes and effects of everyday events.

Asked zero-shot, a small pretrained LM continues ``"The car broke down because"`` with an essay
or a generic clause, and worked examples in the prompt leak into its answers ("nobody built it"
after "nobody watered it"). Fine-tuned on everyday (cause, effect) sentence pairs -- e-CARE's
14.9k, read by :func:`causal_mining.curated_pairs.read_ecare` -- in both directions, it answers the
plain question with one short clause about the input, with no examples in the prompt:

============================  ==========================================================
example                       model input → target
============================  ==========================================================
cause of an effect            ``"The man fell asleep because"`` → ``" he was tired."``
effect of a cause             ``"He was tired, so"`` → ``" he fell asleep."``
============================  ==========================================================

The inputs are :data:`train.prompts.CAUSAL_ZERO_SHOT`, the format ``dpc generate`` builds for
this model. The answer clause starts lower-case unless its first word is a name ("I", or a word
the data only ever writes capitalised); half the inputs (chosen by a hash, so every run agrees)
are lower-cased too, as users type them ("babies cry"). A pair whose cause and effect are
identical, or either under two words, is skipped.

The adapter is trained by :func:`train.lora.train_lora` and saved beside ``generator.json``
(:data:`CONFIG_FILE`); :func:`train.models.load_cause_effect_lm` merges it into the base model.
``dpc train lm-generator`` makes one; the bundled one (``train/cause_effect_lm/``, the default
generator, ``--model smollm2-ecare``) was made by the command in benchmarks/train/RESULTS.md.

>>> proper = proper_nouns(["Tom is sad.", "He met Tom.", "The dog barked."])
>>> sorted(proper)
['tom']
>>> clause("The dog barked.", proper), clause("Tom is sad!", proper), clause("I ran.", proper)
('the dog barked', 'Tom is sad', 'I ran')
>>> for prompt, target in cause_effect_examples([("He was tired.", "He fell asleep.")], proper):
...     print(repr(prompt), "->", repr(target))
'He fell asleep because' -> 'he was tired'
'He was tired, so' -> 'he fell asleep'
"""

from __future__ import annotations

import json
import os
import re
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dpc_errors import check_int
from dpc_files import write_json
from train.errors import TrainConfigError, TrainDataError, TrainError
from train.lora import LoraFiles, LoraOptions, check_run, merged_lora_folder, train_lora
from train.prompts import CAUSAL_ZERO_SHOT

__all__ = ["BUNDLED_LM", "BUNDLED_LM_DIR", "CONFIG_FILE", "FORMAT", "LmGeneratorOptions",
           "cause_effect_examples", "clause", "generator_base", "is_cause_effect_lm",
           "merged_folder", "proper_nouns", "read_config", "split_pairs", "swap_gender",
           "train_cause_effect_lm"]

#: The folder file that marks a fine-tuned cause/effect LM and says how to rebuild it.
CONFIG_FILE = "generator.json"
#: The options and data of a run, written when it starts (:func:`train.lora.check_run`).
RUN_FILE = "lm_generator_run.json"
FORMAT = "dpc-cause-effect-lm-1"
#: ``--model`` name of the bundled fine-tuned generator, and its folder (adapter + config).
BUNDLED_LM = "smollm2-ecare"
BUNDLED_LM_DIR = Path(__file__).resolve().parent / "cause_effect_lm"
#: The input format the model was trained on (:data:`train.prompts.CAUSAL_ZERO_SHOT`).
INPUT_FORMAT = "causal-zero-shot"
_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*")


def proper_nouns(sentences: Iterable[str]) -> set[str]:
    """Lower-cased words the sentences write capitalised, and never in lower case, when not
    first in the sentence: names ("Tom", "Paris"), which keep their capital at a clause start."""
    upper: set[str] = set()
    lower: set[str] = set()
    for sentence in sentences:
        for word in _WORD.findall(sentence)[1:]:
            (upper if word[0].isupper() else lower).add(word.lower())
    return upper - lower


def clause(sentence: str, proper: set[str]) -> str:
    """``sentence`` as a clause to follow "because" or ", so": spaces normalised, its final
    punctuation dropped, its first letter lower-cased unless the first word is "I" or a name."""
    text = " ".join(sentence.split()).rstrip(" .!?;")
    first = _WORD.match(text)
    if first is None:
        return text
    word = first.group(0)
    if word == "I" or word.startswith(("I'", "I’")) or word.lower() in proper \
            or (len(word) > 1 and word.isupper()):
        return text
    return text[0].lower() + text[1:]


def _lower_input(text: str) -> bool:
    """Whether this input is lower-cased in training (half of them, by a hash)."""
    return zlib.crc32(text.encode("utf-8")) % 2 == 0


#: Gendered words and their counterparts (:func:`swap_gender`); "her" is "his" before a word
#: that is not in :data:`_NOT_POSSESSED`, else "him".
_SWAP = {"he": "she", "she": "he", "him": "her", "his": "her", "himself": "herself",
         "herself": "himself", "man": "woman", "woman": "man", "men": "women", "women": "men",
         "boy": "girl", "girl": "boy", "boys": "girls", "girls": "boys"}
_NOT_POSSESSED = {"a", "an", "the", "to", "and", "or", "but", "that", "in", "on", "at", "for",
                  "with", "from", "by", "of", "up", "down", "out", "off", "back", "away", "so",
                  "because", "when", "as", "if", "again", "too", "very", "this", "some", "any",
                  "his", "her", "him", "me", "it", "them", "us", "you", "hers", "their"}
_GENDERED = re.compile(r"\b(" + "|".join(sorted(_SWAP, key=len, reverse=True)) + r"|her)\b",
                       re.IGNORECASE)


def swap_gender(text: str) -> str:
    """``text`` with its gendered pronouns and person nouns swapped (he <-> she, his <-> her,
    man <-> woman, ...), capitals kept: counterfactual data augmentation against e-CARE's
    answers saying "he" 4.5 times as often as "she" (1.7 times after swapping half; the model
    trained on it still answers "she missed the bus" with "he ...": benchmarks/train/RESULTS.md).

    >>> swap_gender("She lost her keys, so he gave her his.")
    'He lost his keys, so she gave him her.'
    >>> swap_gender("The man told her that the boy was sick")
    'The woman told him that the girl was sick'
    """
    def swap(match: re.Match[str]) -> str:
        word = match.group(0)
        lower = word.lower()
        if lower == "her":
            rest = text[match.end():].split(maxsplit=1)
            after = rest[0].strip(".,;:!?").lower() if rest and rest[0][0].isalpha() else ""
            new = "his" if after and after not in _NOT_POSSESSED else "him"
        else:
            new = _SWAP[lower]
        return new[0].upper() + new[1:] if word[0].isupper() else new

    return _GENDERED.sub(swap, text)


def cause_effect_examples(pairs: Iterable[tuple[str, str]], proper: set[str],
                          directions: Sequence[str] = ("cause", "effect"), *,
                          drop_new_names: bool = False, swap_genders: bool = False
                          ) -> list[tuple[str, str]]:
    """``(prompt, target)`` training examples of ``(cause, effect)`` pairs, one per direction
    (see the module docstring); the prompt is :data:`train.prompts.CAUSAL_ZERO_SHOT`'s.

    ``drop_new_names``: leave out an example whose answer names someone the input does not
    (e-CARE's placeholder names: "Tom" is in 12% of its sentences, and a model trained on them
    answers "the car broke down" with "Tom drove ..."). ``swap_genders``: an example with a
    gendered word and no name has its genders swapped (:func:`swap_gender`), in prompt and answer
    alike, when a hash of it is odd (half of them, the same in every run).
    """
    examples: list[tuple[str, str]] = []
    for cause, effect in pairs:
        for direction in directions:
            given, asked = (effect, cause) if direction == "cause" else (cause, effect)
            text = " ".join(given.split())
            if _lower_input(text):
                text = clause(text, proper)
            answer = clause(asked, proper)
            named_in = {w.lower() for w in _WORD.findall(text)} & proper
            named_out = {w.lower() for w in _WORD.findall(answer)} & proper
            if drop_new_names and named_out - named_in:
                continue
            if swap_genders and not (named_in | named_out) and _GENDERED.search(text + " " + answer) \
                    and zlib.crc32((text + answer).encode("utf-8")) % 2:
                text, answer = swap_gender(text), swap_gender(answer)
            examples.append((CAUSAL_ZERO_SHOT.prompt(text, direction), answer))
    return examples


def split_pairs(pairs: Iterable[tuple[str, str]], dev_per_mille: int = 20
                ) -> tuple[list[tuple[str, str]], list[tuple[str, str]], int]:
    """Distinct usable pairs split into (train, dev) by a hash of the cause, and how many were
    skipped (identical sides, or a side under two words)."""
    train: list[tuple[str, str]] = []
    dev: list[tuple[str, str]] = []
    seen: set[tuple[str, str]] = set()
    skipped = 0
    for cause, effect in pairs:
        key = (" ".join(cause.lower().split()), " ".join(effect.lower().split()))
        if key in seen:
            continue
        seen.add(key)
        if key[0] == key[1] or len(key[0].split()) < 2 or len(key[1].split()) < 2:
            skipped += 1
            continue
        dev_pair = zlib.crc32(key[0].encode("utf-8")) % 1000 < dev_per_mille
        (dev if dev_pair else train).append((cause, effect))
    return train, dev, skipped


@dataclass
class LmGeneratorOptions(LoraOptions):
    """``dpc train lm-generator``: the adapter's training (:class:`train.lora.LoraOptions`), the
    base model and the data used."""

    batch_size: int = 16
    lr: float = 3e-4
    base: str = "smollm2-135m"
    max_pairs: int | None = None
    drop_new_names: bool = False
    swap_genders: bool = False

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.max_pairs is not None:
            check_int("max_pairs", self.max_pairs, 1, error=TrainConfigError)


def train_cause_effect_lm(pairs: Iterable[tuple[str, str]], out: str | Path,
                          options: LmGeneratorOptions, sources: Sequence[str] = (), *,
                          device: str | Any | None = None, dtype: str | Any | None = None
                          ) -> dict[str, Any]:
    """Fine-tune the cause/effect LM on ``(cause, effect)`` pairs into ``out`` (resumable: the
    same call continues an interrupted run; other options are refused). Returns the training
    summary, which ``out/generator.json`` keeps."""
    import random


    pairs = list(pairs)
    train, dev, skipped = split_pairs(pairs)
    if options.max_pairs is not None:
        train = random.Random(options.seed).sample(train, min(options.max_pairs, len(train)))
    if not train:
        raise TrainDataError("no usable (cause, effect) pair to train on")
    proper = proper_nouns(s for pair in pairs for s in pair)
    shaping = {"drop_new_names": options.drop_new_names, "swap_genders": options.swap_genders}
    examples = cause_effect_examples(train, proper, **shaping)
    dev_examples = cause_effect_examples(dev[:250], proper, **shaping)
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    run = options.run_record()
    run.update(train_pairs=len(train), dev_pairs=len(dev), skipped_pairs=skipped,
               sources=[os.path.basename(str(s)) for s in sources])
    finished = check_run(folder, run, RUN_FILE, CONFIG_FILE, LoraFiles())
    if finished is not None:
        return finished
    summary = train_lora(examples, folder, options, options.base, end=".", dev=dev_examples,
                         desc="training cause/effect LM", device=device, dtype=dtype)
    write_json(folder / CONFIG_FILE, {
        "format": FORMAT, "base": options.base, "r": options.r, "alpha": options.alpha,
        "input_format": INPUT_FORMAT, "summary": summary, "run": run})
    return summary


def is_cause_effect_lm(path: str | Path) -> bool:
    """Whether ``path`` is a folder holding a fine-tuned cause/effect LM (its config file)."""
    return (Path(path) / CONFIG_FILE).is_file()


def read_config(folder: Path) -> dict[str, Any]:
    """The ``generator.json`` of the fine-tuned LM in ``folder``; a clear error naming the folder
    when it is missing, not JSON, or of another format."""
    path = folder / CONFIG_FILE
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise TrainError(f"{os.fspath(folder)!r} is not a cause/effect LM (no {CONFIG_FILE}); "
                         "make one with `dpc train lm-generator`") from None
    except (OSError, ValueError) as err:
        raise TrainError(f"{os.fspath(path)!r} is not valid JSON ({err})") from None
    if not isinstance(config, dict) or config.get("format") != FORMAT:
        raise TrainError(f"{os.fspath(path)!r} is not a cause/effect LM config (format is not "
                         f"{FORMAT!r})")
    return config


def generator_base(folder: str | Path = BUNDLED_LM_DIR) -> str:
    """The base model the fine-tuned LM in ``folder`` adapts: a :mod:`train.pretrained` name or
    a model folder (its config's ``base``)."""
    return str(read_config(Path(folder))["base"])


def merged_folder(folder: str | Path = BUNDLED_LM_DIR, progress: bool = True) -> Path:
    """A Hugging Face folder holding the base model with the adapter of ``folder`` merged in
    (:func:`train.lora.merged_lora_folder` of its config's base, r and alpha: made once under
    the cache, named after the adapter's and those settings' SHA-256); later loads read it
    directly, as fast as the base model (``benchmarks/guided/cold_start.py``'s model phase:
    0.6 s), without importing ``peft`` or wrapping and merging every projection again."""
    folder = Path(folder)
    config = read_config(folder)
    return merged_lora_folder(str(config["base"]), folder / LoraFiles().adapter, config["r"],
                              config["alpha"], progress=progress)
