"""Text constraints the tokenizer cannot spell are errors, not matches on the unknown token."""

from __future__ import annotations

import pytest
from transformers import BertTokenizer

from dpc_decode import ConstraintError, generate
from dpc_decode.constraints import prepare_constraints

from .conftest import tiny_t5

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "x", "it", "was", "grey", "rain",
         "umbrella", "not", "##s"]


@pytest.fixture
def wordpiece() -> BertTokenizer:
    """A WordPiece tokenizer (BERT's kind): an emoji becomes [UNK]."""
    tok = BertTokenizer(vocab={w: i for i, w in enumerate(VOCAB)})
    assert tok.encode("rain ☂", add_special_tokens=False) == [9, tok.unk_token_id]
    return tok


@pytest.mark.parametrize(
    ("constraints", "banned", "message"),
    [
        # An alternative that is all unknown, or partly.
        ([["rain", "☂"]], None, r"set 0: alternative '☂' tokenises to the unknown token '\[UNK\]'"),
        ([["rain"], ["umbrella ☂"]], None, r"set 1: alternative 'umbrella ☂' tokenises to the unknown"),
        # Per input: the message names the input.
        ([[["rain"]], [["😀"]]], None, r"set 0 of input 1: alternative '😀'"),
        # Banned phrases too: banning [UNK] would ban every unknown text instead.
        ([["rain"]], ["not", "😀"], r"`banned`: banned phrase '😀' tokenises to the unknown token"),
        ([["rain"]], [["not"], ["☂"]], r"`banned` of input 1: banned phrase '☂'"),
    ],
)
def test_unknown_token_in_a_constraint_is_an_error(wordpiece, constraints, banned, message):
    per_input = "of input" in message
    inputs = ["it was grey", "it was"] if per_input else ["it was grey"]
    with pytest.raises(ConstraintError, match=message):
        prepare_constraints(constraints, banned, len(inputs), wordpiece)
    with pytest.raises(ConstraintError, match=message):
        generate(tiny_t5(), wordpiece, inputs, constraints, banned=banned, num_beams=2,
                 max_new_tokens=4)


def test_known_words_and_a_written_out_unknown_token_pass(wordpiece):
    prepared = prepare_constraints([["rain", "umbrellas"], ["[UNK]"]], ["not"], 1, wordpiece)[0]
    assert prepared.sets == (((9,), (10, 12)), ((1,),))
    assert prepared.banned == ((11,),)


def test_generate_stays_the_function_after_its_module_is_imported():
    """The beam-search entry lives in ``dpc_decode.generation``: importing that module (as the
    guided pipeline does) must not shadow ``dpc_decode.generate``, the function."""
    import importlib

    import dpc_decode

    importlib.import_module("dpc_decode.generation")
    assert callable(dpc_decode.generate) and dpc_decode.generate.__name__ == "generate"
