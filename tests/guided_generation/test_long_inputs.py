"""Inputs that cannot be cut at a space: one long word, a run of CJK text. The pipeline cuts
them by tokens, to ``max_input_tokens`` and to what the model can read, and says so in a note.

The models: the placeholder T5 (relative positions: only ``max_input_tokens`` bounds the input)
and a tiny bert2bert whose learned position tables hold 64 tokens (the bundled generator's
architecture, 512 there): an input cut only by words used to reach its encoder whole and crash
it (``RuntimeError``).
"""

from __future__ import annotations

import pytest

from guided_generation.errors import GuidedGenerationError
from guided_generation.pipeline import GuidedGenerator
from tests.guided_generation.conftest import bert2bert, paper_options, toy_graph

SMALL = {"n": 2, "m": 1, "k": 2, "max_new_tokens": 4}
#: A word of about 25 WordPiece tokens (under WordPiece's 100 characters per word, beyond
#: which a word is one [UNK]).
LONG_WORD = "antidisestablishmentarianism" * 3
CJK = "猫が窓の外を見ている" * 100  # 1,000 characters, no space: 1,000 tokens


def tokens(generator: GuidedGenerator, text: str) -> int:
    return len(generator.tokenizer(text, add_special_tokens=False)["input_ids"])


#: (what, the input, max_input_tokens, the kept input starts with, words of the note)
CUTS = [
    ("one long word", LONG_WORD, 10, "antidis", "inside a word"),
    ("1,000 CJK characters", CJK, 64, "猫が窓", "cut to its first 64 tokens, inside a word"),
    ("a short word, then CJK: cut inside the run, not after the one word", "cats " + CJK, 10,
     "cats 猫", "inside a word"),
    ("words: cut after a whole word", "babies cry " * 100, 9, "babies cry babies", "first 9 words"),
]


@pytest.mark.parametrize(("what", "text", "budget", "start", "note"), CUTS,
                         ids=[row[0] for row in CUTS])
def test_inputs_are_cut_by_tokens(generator: GuidedGenerator, what: str, text: str, budget: int,
                                  start: str, note: str) -> None:
    result = generator.generate(text, "cause", paper_options(max_input_tokens=budget, **SMALL))
    assert tokens(generator, result.input) <= budget < tokens(generator, text)
    assert result.input.startswith(start) and text.startswith(result.input)
    assert tokens(generator, result.input) >= budget // 2  # the cut keeps most of the budget
    (cut,) = [n for n in result.notes if n.startswith("the input has")]
    assert f"the input has {tokens(generator, text)} tokens" in cut and note in cut
    assert result.outputs


@pytest.mark.parametrize("text", [CJK, "a" * 5000, LONG_WORD * 20, "babies cry " * 300],
                         ids=["CJK", "a*5000", "long words", "many words"])
def test_the_model_limit_cuts_the_input(bert2bert_generator: GuidedGenerator, text: str) -> None:
    # max_input_tokens asks for more than the model reads: the model's 64 positions bound it
    generator = bert2bert_generator
    result = generator.generate(text, "cause", paper_options(max_input_tokens=1000, **SMALL))
    prompt = generator.prompt(result.input, "cause")
    assert len(generator.tokenizer(prompt)["input_ids"]) <= 64
    assert result.outputs
    if tokens(generator, text) > 1:  # "a" * 5000 is one [UNK]: nothing to cut
        assert any("the model reads 64" in note for note in result.notes), result.notes


def test_max_input_tokens_below_the_model_limit_is_kept(bert2bert_generator: GuidedGenerator) -> None:
    generator = bert2bert_generator
    result = generator.generate(CJK, "cause", paper_options(max_input_tokens=20, **SMALL))
    assert tokens(generator, result.input) == 20
    assert any("at most max_input_tokens=20" in note for note in result.notes)


def test_a_model_with_no_room_for_the_input_is_one_error() -> None:
    model, tokenizer = bert2bert(positions=4)  # [CLS] cause : [SEP] fill all four
    generator = GuidedGenerator(model, tokenizer, toy_graph(), lemmatizer=lambda s: [],
                                verifier=None)
    with pytest.raises(GuidedGenerationError, match="the model reads 4 tokens: no room"):
        generator.generate("babies cry", "cause", paper_options(**SMALL))
