"""Inputs longer than a model's position table: a :class:`DpcError` naming the input, its token
count and the limit, before anything runs (never the model's own ``RuntimeError`` or
``IndexError`` from deep inside); and :func:`cut_to_tokens`, which cuts any text to a budget."""

from __future__ import annotations

import warnings

import pytest

from dpc_decode import DpcError, generate, sample
from dpc_decode.batch import cut_to_tokens, encode_inputs, input_token_limit, position_limit
from tests.dpc_decode.conftest import FAMILIES
from tests.guided_generation.conftest import bert2bert
from train.models import placeholder_model

#: (family, positions of its input stack, positions of its output stack): the tiny models hold
#: 64 learned positions; T5 (relative) and Llama (rotary, though its config says 64) none.
LIMITS = [
    ("t5", None, None),
    ("bart", 64, 64),
    ("marian", 64, 64),
    ("gpt2", 64, 64),
    ("llama", None, None),
]


@pytest.mark.parametrize(("family", "source", "target"), LIMITS, ids=[r[0] for r in LIMITS])
def test_position_limits_of_each_family(family: str, source: int | None,
                                        target: int | None) -> None:
    model = FAMILIES[family]()
    if model.config.is_encoder_decoder:
        assert position_limit(model.get_encoder()) == source
        assert position_limit(model.get_decoder()) == target
        assert input_token_limit(model, max_new_tokens=10) == source
    else:
        assert position_limit(model) == target
        assert input_token_limit(model, max_new_tokens=10) == (None if target is None
                                                               else target - 10)


def test_the_bundled_architecture_reads_its_table() -> None:
    model, _ = bert2bert(positions=48)
    assert position_limit(model.get_encoder()) == 48 == position_limit(model.get_decoder())


#: (family, input tokens, max_new_tokens, max_input_tokens, words of the error or None: runs)
CASES = [
    ("bart", 2000, 4, None, "input 0 has 2000 tokens, more than the 64 the model's encoder"),
    ("bart", 64, 4, None, None),  # exactly the table
    ("bart", 65, 4, None, "input 0 has 65 tokens"),
    ("bart", 2000, 4, 64, None),  # max_input_tokens cuts it first
    ("bart", 2000, 4, 100, "input 0 has 100 tokens"),  # a cut still too long for the model
    ("bart", 8, 64, None, "max_new_tokens (=64) is more than the 63 new tokens"),
    ("marian", 2000, 4, None, "more than the 64 the model's encoder can read"),
    ("gpt2", 60, 5, None, ("input 0 has 60 tokens and max_new_tokens=5: 65 positions, more than "
                           "the model's 64; shorten it, or pass max_input_tokens (at most 59)")),
    ("gpt2", 59, 5, None, None),
    ("gpt2", 3, 64, None, "max_new_tokens must be below 64"),
    ("t5", 300, 4, None, None),  # relative positions: no limit
    ("llama", 100, 4, None, None),  # rotary: no limit
]


@pytest.mark.parametrize(("family", "length", "new", "max_input", "error"), CASES,
                         ids=[f"{c[0]}-{c[1]}+{c[2]}-cut{c[3]}" for c in CASES])
@pytest.mark.parametrize("decode", [generate, sample], ids=["beam", "sample"])
def test_too_long_is_one_error_before_decoding(decode, family: str, length: int, new: int,
                                              max_input: int | None, error: str | None) -> None:
    model = FAMILIES[family]()
    inputs = [[5 + i % 30 for i in range(length)]]
    values = {"num_beams": 2} if decode is generate else {"num_samples": 2, "seed": 0}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # max_input_tokens warns that it truncates
        if error is None:
            assert decode(model, None, inputs, None, max_new_tokens=new,
                          max_input_tokens=max_input, **values)
            return
        with pytest.raises(DpcError) as caught:
            decode(model, None, inputs, None, max_new_tokens=new, max_input_tokens=max_input,
                   **values)
    assert type(caught.value) is DpcError and error in str(caught.value)


def test_text_over_the_bundled_architectures_limit_is_a_dpc_error() -> None:
    # the case: 2,000 tokens of text to a seq2seq model of 512 positions (here 64)
    model, tokenizer = bert2bert()
    with pytest.raises(DpcError, match=r"input 1 has 2002 tokens, more than the 64"):
        generate(model, tokenizer, ["short", "word " * 2000], None, num_beams=2,
                 max_new_tokens=4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = generate(model, tokenizer, ["word " * 2000], None, num_beams=2, max_new_tokens=4,
                       max_input_tokens=64)
    assert len(out[0]) == 1


def test_max_input_tokens_keeps_the_special_tokens_of_text() -> None:
    tokenizer = placeholder_model().tokenizer
    with pytest.warns(UserWarning, match="input 0 has 6 tokens; truncated to max_input_tokens=3"):
        (ids,) = encode_inputs(["babies cry at night"], tokenizer, tokenizer.vocab_size, 3)
    assert ids[0] == tokenizer.cls_token_id and ids[-1] == tokenizer.sep_token_id
    assert tokenizer.decode(ids, skip_special_tokens=True) == "babies"
    with pytest.warns(UserWarning):  # token ids are cut as given
        assert encode_inputs([[5, 6, 7, 8]], None, 10, 2) == [[5, 6]]


# ---------------------------------------------------------------------- cut_to_tokens

TOKENIZER = placeholder_model().tokenizer
LONG_WORD = "antidisestablishmentarianism" * 3  # about 25 WordPiece tokens, one word

#: (what, the text, the budget, what comes back)
CUTS = [
    ("fits: unchanged", "babies cry", 5, "babies cry"),
    ("words: after a whole word", "babies cry at night", 3, "babies cry at"),
    ("a word that would be split is left out", "babies cry " + LONG_WORD, 3, "babies cry"),
    ("... unless that leaves under half the budget", "babies cry " + LONG_WORD, 8,
     "babies cry antidisestablishment"),
    ("one long word: inside it", LONG_WORD, 4, "antidisestab"),
    ("CJK: one token a character", "猫" * 1000, 7, "猫" * 7),
    ("a short word then CJK: inside the run", "cats " + "猫" * 1000, 10, "cats " + "猫" * 9),
    ("a budget of nothing", "babies cry", 0, ""),
    ("a trailing space is dropped", "babies cry ", 2, "babies cry"),
]


@pytest.mark.parametrize(("what", "text", "budget", "expected"), CUTS, ids=[c[0] for c in CUTS])
def test_cut_to_tokens(what: str, text: str, budget: int, expected: str) -> None:
    cut = cut_to_tokens(TOKENIZER, text, budget)
    assert cut == expected
    assert text.startswith(cut)  # a prefix: valid text, nothing made up
    assert len(TOKENIZER(cut, add_special_tokens=False)["input_ids"]) <= max(budget, 0)


class _NoOffsets:
    """A tokenizer that cannot map tokens to characters (a slow tokenizer)."""

    def __call__(self, text: str, **how: object) -> dict:
        if how.get("return_offsets_mapping"):
            raise NotImplementedError("no offsets")
        return TOKENIZER(text, **how)

    def decode(self, ids: list[int], **how: object) -> str:
        return TOKENIZER.decode(ids, **how)


@pytest.mark.parametrize(("what", "text", "budget", "expected"), CUTS, ids=[c[0] for c in CUTS])
def test_a_tokenizer_without_offsets_cuts_the_same(what: str, text: str, budget: int,
                                                   expected: str) -> None:
    # a binary search over the characters instead; [UNK] characters are kept, not lost
    assert cut_to_tokens(_NoOffsets(), text, budget) == expected
