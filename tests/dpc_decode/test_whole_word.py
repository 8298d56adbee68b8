"""Whole-word constraints: a keyword is met by a word, not by the first pieces of a longer one.

Three tokenizer families, each built here from code with the ``tokenizers`` library (nothing is
downloaded): WordPiece (``##`` marks a continuation), SentencePiece (``▁`` marks a word start)
and byte-level BPE (``Ġ`` marks a word start). The hand-made ones share one layout of their
first eight ids, so a tiny random model over those eight can be searched exhaustively::

    0 pad   1 EOS   2 unknown   3 rain   4 ed   5 sun   6 ny   7 "."

(``rain``/``sun`` start a word, ``ed``/``ny`` continue one.) The trained ones (a few hundred
tokens, from a small corpus) check the word pieces against the tokenizer's own offsets, and drive
the guided pipeline.
"""

from __future__ import annotations

import random
import re
from unittest import mock

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers
from transformers import PreTrainedTokenizerFast, T5Config, T5ForConditionalGeneration

from dpc_decode import ConstraintError, TokenizeOptions, generate, sample, satisfies
from dpc_decode import automaton as automaton_module
from dpc_decode.automaton import Automaton, State
from dpc_decode.batch import DecodeBatch
from dpc_decode.exhaustive import exhaustive_best
from dpc_decode.tensor_automaton import TensorAutomaton
from dpc_decode.word_boundary import WordPieces, word_pieces

from .conftest import EOS, tiny_gpt2, tiny_t5

# ----------------------------------------------------------------------------- tokenizers

PIECES = [False, False, False, False, True, False, True, False]  # ed and ny continue a word


def _fast(tok: Tokenizer, pad: str, eos: str, unk: str) -> PreTrainedTokenizerFast:
    return PreTrainedTokenizerFast(tokenizer_object=tok, pad_token=pad, eos_token=eos, unk_token=unk)


def tiny_wordpiece() -> PreTrainedTokenizerFast:
    words = ["[PAD]", "[SEP]", "[UNK]", "rain", "##ed", "sun", "##ny", ".", "x"]
    tok = Tokenizer(models.WordPiece({w: i for i, w in enumerate(words)}, unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece(prefix="##")
    return _fast(tok, "[PAD]", "[SEP]", "[UNK]")


def tiny_sentencepiece() -> PreTrainedTokenizerFast:
    pieces = ["<pad>", "</s>", "<unk>", "▁rain", "ed", "▁sun", "ny", ".", "▁x"]
    tok = Tokenizer(models.Unigram([(p, 0.0 if i < 3 else -1.0) for i, p in enumerate(pieces)],
                                   unk_id=2))
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.decoder = decoders.Metaspace()
    return _fast(tok, "<pad>", "</s>", "<unk>")


def tiny_bytelevel() -> PreTrainedTokenizerFast:
    # The eight ids first; then what BPE needs to spell " rain", " sun" and "x" (never generated).
    words = ["<pad>", "<eos>", "<unk>", "Ġrain", "ed", "Ġsun", "ny", ".", "x", "Ġ", "r", "a", "i",
             "n", "s", "u", "e", "d", "y", "Ġr", "Ġra", "Ġrai", "Ġs", "Ġsu"]
    merges = [("Ġ", "r"), ("Ġr", "a"), ("Ġra", "i"), ("Ġrai", "n"), ("Ġ", "s"), ("Ġs", "u"),
              ("Ġsu", "n"), ("e", "d"), ("n", "y")]
    tok = Tokenizer(models.BPE({w: i for i, w in enumerate(words)}, merges))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    return _fast(tok, "<pad>", "<eos>", "<unk>")


TINY = {"wordpiece": tiny_wordpiece, "sentencepiece": tiny_sentencepiece,
        "byte-level": tiny_bytelevel}

CORPUS = [
    "The baby was hungry and tired, so she cried all night.",
    "He loved the rain; it rained and kept raining for days.",
    "Hungrier children cry louder than the hungriest ones.",
    "She loves loving people who love painting in pain.",
    "The pains of the painless painter pained him.",
    "Tiredness makes tired babies cry, and crying babies wake their parents.",
    "A sunny day followed the rainy night; the sun shone on wet streets.",
    "Jealousy and jealous lovers, twad twaddle twa, hungryish loveliness at the café.",
] * 4


def trained(kind: str) -> PreTrainedTokenizerFast:
    """A SentencePiece-style or byte-level BPE tokenizer trained on :data:`CORPUS`."""
    specials = ["<pad>", "</s>", "<unk>"]
    if kind == "sentencepiece":
        tok = Tokenizer(models.Unigram())
        tok.pre_tokenizer = pre_tokenizers.Metaspace()
        tok.decoder = decoders.Metaspace()
        trainer = trainers.UnigramTrainer(vocab_size=160, special_tokens=specials, unk_token="<unk>")
    else:
        tok = Tokenizer(models.BPE())
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        tok.decoder = decoders.ByteLevel()
        trainer = trainers.BpeTrainer(vocab_size=330, special_tokens=specials,
                                      initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(CORPUS, trainer)
    return _fast(tok, "<pad>", "</s>", "<unk>")


def minilm() -> PreTrainedTokenizerFast:
    """The WordPiece tokenizer of the bundled placeholder generator (all-MiniLM-L6-v2)."""
    from train.models import placeholder_model

    return placeholder_model().tokenizer


# ----------------------------------------------------------------------------- word pieces


@pytest.mark.parametrize("family", sorted(TINY))
def test_word_pieces_of_hand_made_vocabularies(family):
    assert list(word_pieces(TINY[family](), vocab_size=8)) == PIECES


@pytest.mark.parametrize("family", ["wordpiece (MiniLM)", "sentencepiece", "byte-level"])
def test_word_pieces_agree_with_the_tokenizers_offsets(family):
    """A token glued to a word continues it exactly where the text it covers starts with a
    word character; a token after a space does not: read from the offsets, not the markers."""
    tok = minilm() if family.startswith("wordpiece") else trained(family)
    pieces = word_pieces(tok)
    text = "Jealousyed babies, twad hungrier; the rain rained (sunny) tiredness lovelies 42nd café."
    enc = tok(text, add_special_tokens=False, return_offsets_mapping=True)
    checked = 0
    previous_end = 0
    for t, (start, end) in zip(enc["input_ids"], enc["offset_mapping"]):
        spaced_by_previous = start == previous_end and start > 0 and text[start - 1].isspace()
        previous_end = end
        while start < end and text[start].isspace():  # byte-level offsets may hold the space
            start += 1
        if start == 0 or start == end or spaced_by_previous:
            continue  # (the space was a token of its own: the word starts there)
        before = text[start - 1]
        if not (before.isspace() or before.isalnum()):
            continue  # after punctuation: whether it would glue to a word is not in the text
        expected = before.isalnum() and text[start].isalnum()
        assert pieces[t] == expected, (family, tok.convert_ids_to_tokens([t]), text[start:end])
        checked += expected
    assert checked >= 5  # the sentence does hold word pieces


def test_word_pieces_are_kept_per_tokenizer_and_ids_past_it_continue():
    tok = tiny_wordpiece()
    assert word_pieces(tok, 8) is word_pieces(tok, 8)
    wider = word_pieces(tok, 12)  # logits beyond the tokenizer's 9 tokens
    assert list(wider)[9:] == [True, True, True] and wider[100]
    assert WordPieces(PIECES).with_boundaries([4])[4] is False
    with pytest.raises(ConstraintError, match=r"`vocab_size` \(=-1\)"):
        word_pieces(tok, -1)


# ----------------------------------------------------------------------------- the reference


CONT = [False, False, False, False, True, False, True, False, False, True]  # 8: new word, 9: piece


@pytest.mark.parametrize(
    ("tokens", "met"),
    [
        ([3], True),  # rain, then the end of the output
        ([3, 4], False),  # rain + ed: rained
        ([3, 7], True),  # rain.
        ([3, 5], True),  # rain sun: the next word confirms it
        ([3, 4, 3], True),  # rained rain
        ([3, 9, 5], False),  # a piece outside the alphabet cancels it too
        ([5, 3, 6, 7], False),  # sun rainny.
    ],
)
def test_reference_walk(tokens, met):
    a = Automaton([[[3]]], whole_word=[[True]], continues=CONT)
    assert a.is_satisfied(a.run(tokens)) is met
    assert satisfies(tokens, [[[3]]], whole_word=[[True]], continues=CONT) is met
    assert satisfies(tokens, [[[3]]])  # as given: met inside the word too
    assert bool(a.first_matches(tokens)) is met


def test_whole_word_and_as_given_alternatives_of_one_set():
    # rain as a whole word, or [rain, ed] as given: "rained" meets the second.
    a = Automaton([[[3], [3, 4]]], whole_word=[[True, False]], continues=CONT)
    assert a.pending[a.run([3]).node] == 1 and a.run([3]).met == 0
    assert [(m.alternative_index, m.start, m.end) for m in a.matches([3, 4, 7])] == [(1, 0, 2)]
    assert [(m.alternative_index, m.end) for m in a.matches([3, 7])] == [(0, 1)]


def test_whole_word_needs_to_know_the_word_pieces():
    with pytest.raises(ConstraintError, match="whole-word alternatives need `continues`"):
        Automaton([[[3]]], whole_word=[[True]])
    with pytest.raises(ConstraintError, match=r"one flag per alternative .* got \[\[True, True\]\]"):
        Automaton([[[3]]], whole_word=[[True, True]], continues=CONT)


phrase = st.lists(st.integers(2, 7), min_size=1, max_size=3)
row = st.tuples(
    st.lists(st.lists(st.tuples(phrase, st.booleans()), min_size=1, max_size=3), max_size=3),
    st.lists(phrase, max_size=1),
)


def _automaton(sets_flags, banned) -> Automaton:
    sets = [[p for p, _ in alts] for alts in sets_flags]
    flags = [[f for _, f in alts] for alts in sets_flags]
    return Automaton(sets, banned, flags, CONT)


def _bfs_need(a: Automaton, start: State) -> int:
    """Fewest tokens to a state whose output, ended there, meets every possible set, by a walk
    of the reference over the letters, a new word outside them (8) and a piece outside (9)."""
    live = a.all_met & ~sum(1 << s for s in a.impossible_sets)
    tokens = sorted({t for alts in a.sets for alt in alts for t in alt} | {8, 9})
    frontier, seen, n = [start], {start}, 0
    while frontier:
        if any(a.met_if_ended(s) & live == live for s in frontier):
            return n
        nxt = []
        for s in frontier:
            for t in tokens:
                u = a.advance(s, t)
                if not u.violated and u not in seen:
                    seen.add(u)
                    nxt.append(u)
        frontier, n = nxt, n + 1
    return 1 << 30


@settings(max_examples=150, deadline=None)
@given(r=row, walk=st.lists(st.integers(2, 9), max_size=5))
def test_exact_need_counts_the_word_boundary(r, walk):
    """need() is the exact fewest tokens, a whole word's cancelling piece counted."""
    a = _automaton(*r)
    state = a.run(walk)
    if state.violated:
        return
    assert a.need_is_exact
    assert min(a.need(state), 1 << 30) == _bfs_need(a, state)


@pytest.mark.parametrize("mode", ["exact", "plan"])
@settings(max_examples=60, deadline=None)
@given(rows=st.lists(row, min_size=1, max_size=3), data=st.data())
def test_tensor_walk_and_needs_equal_reference(mode, rows, data):
    """The compiled automata walk and count as the reference does: sets met (confirmed), met
    if the output ended, and the needs of a tight step: now, after each letter, after a new
    word outside the alphabet and after a word piece outside it (exact tables and plans)."""
    with mock.patch.object(automaton_module, "EXACT_NEED_BUDGET", 0 if mode == "plan" else 2**22):
        automata = [_automaton(*r) for r in rows]
        for a in automata:
            _ = a.exact_need_table
    ta = TensorAutomaton.compile(automata, vocab_size=10)
    assert ta.has_whole_word == any(a.has_whole_word for a in automata)
    r = torch.arange(len(rows))
    node, met = ta.initial_state(r)
    states = [a.start() for a in automata]
    for _ in range(data.draw(st.integers(0, 6))):
        tables = ta.for_rows(r)
        successors = ta.successors(tables, node, met)
        if ta.has_whole_word:
            now, after, at_root, piece = ta.step_needs(tables, node, met, successors)
            for i, (a, s) in enumerate(zip(automata, states)):
                if s.violated:
                    continue
                assert int(now[i]) == min(a.need(s), 2**15 - 1)
                assert int(at_root[i]) == min(a.need(a.advance(s, 8)), 2**15 - 1)
                assert int(piece[i]) == min(a.need(a.advance(s, 9)), 2**15 - 1)
                letters = ta.alphabet[i][ta.alphabet_valid[i]].tolist()
                assert after[i, : len(letters)].tolist() == [
                    min(a.need(a.advance(s, t)), 2**15 - 1) for t in letters]
        tokens = data.draw(st.lists(st.integers(0, 9), min_size=len(rows), max_size=len(rows)))
        node, met = ta.advance(r, node, met, torch.tensor(tokens))
        states = [a.advance(s, t) for a, s, t in zip(automata, states, tokens)]
        ended = ta.met_if_ended(node, met)
        for i, (a, s) in enumerate(zip(automata, states)):
            assert int(node[i] - ta.root[i]) == s.node
            for k in range(a.num_sets):
                if k not in a.impossible_sets:
                    assert bool(met[i, k]) == bool((s.met >> k) & 1)
                    assert bool(ended[i, k]) == bool((a.met_if_ended(s) >> k) & 1)


# ----------------------------------------------------------------------------- the engine


class _PushPieces:
    """A forward hook on the output layer: word pieces get ``+bias``, so a model that likes to
    continue words (and would meet a keyword inside a longer one)."""

    def __init__(self, pieces, bias: float) -> None:
        self.bias = torch.tensor([bias if p else 0.0 for p in pieces])

    def __call__(self, module, args, output):
        return output + self.bias[: output.shape[-1]]


def _model(build, seed: int, pieces, bias: float = 1.5):
    model = build(vocab=8, seed=seed)
    model.lm_head.register_forward_hook(_PushPieces(pieces, bias))
    return model


SHAPES = [[["rain"]], [["rain"], ["sun"]], [["rain", "sun"]], [["sun"]]]


def _whole_word_ends(out, pieces) -> bool:
    """Every reported match ends where the next token starts a word, or at the end."""
    ids = out.token_ids
    return all(m.end == len(ids) or not pieces[ids[m.end]] for m in out.matches if m is not None)


@pytest.mark.parametrize("family", sorted(TINY))
def test_beam_search_and_sampling_against_the_exhaustive_oracle(family):
    """Beam search (8 beams, 3 new tokens, a model that favours word pieces) never beats the
    exhaustive optimum under the whole-word rule, always satisfies it, and finds the optimum in
    most cases; every sample satisfies it too. The rule matters here: without it, beam search
    meets a keyword inside a longer word in some cases."""
    tok = TINY[family]()
    pieces = word_pieces(tok, 8).with_boundaries([EOS])
    found = differs = cases = 0
    for seed in range(4):
        build = tiny_t5 if seed % 2 else tiny_gpt2
        model = _model(build, seed, pieces)
        rng = random.Random(seed)
        text_sets = SHAPES[seed % len(SHAPES)]
        prompt = [rng.randrange(3, 8) for _ in range(3)]
        batch = DecodeBatch.prepare(model, tok, [prompt], text_sets, None,
                                    TokenizeOptions(whole_word=True), "model", None, None)
        sets, flags = batch.constraints[0].sets, batch.constraints[0].whole_word
        assert all(all(f) for f in flags)
        best_lp, _ = exhaustive_best(model, prompt, sets, 8, 3, EOS, whole_word=flags,
                                        continues=pieces)
        out = generate(model, tok, [prompt], text_sets, num_beams=8, max_new_tokens=3,
                       length_penalty=0.0, tokenize=TokenizeOptions(whole_word=True))[0][0]
        assert out.satisfied and _whole_word_ends(out, pieces), (family, seed, out)
        assert satisfies(out.token_ids, sets, whole_word=flags, continues=pieces)
        assert out.log_prob <= best_lp + 1e-4
        plain = generate(model, tok, [prompt], text_sets, num_beams=8, max_new_tokens=3,
                         length_penalty=0.0)[0][0]
        differs += not _whole_word_ends(plain, pieces)
        found += abs(out.log_prob - best_lp) < 1e-4
        cases += 1
        draws = sample(model, tok, [prompt], text_sets, num_samples=8, max_new_tokens=3,
                       seed=seed, tokenize=TokenizeOptions(whole_word=True))[0]
        assert all(o.satisfied and _whole_word_ends(o, pieces) for o in draws), (family, seed)
    assert differs >= 1, "the whole-word rule never mattered: the test could not fail"
    assert found >= cases - 1, f"{family}: optimum found in {found}/{cases}"


def test_off_by_default_and_token_id_alternatives_are_as_given():
    """Without the option a keyword is met inside a longer word (the old behaviour, kept); with
    it, text alternatives are whole words but token-id alternatives still match as given."""
    tok = tiny_wordpiece()
    pieces = word_pieces(tok, 8)
    model = _model(tiny_t5, 0, pieces, bias=6.0)  # word pieces all but certain
    plain = generate(model, tok, [[5, 7]], [["rain"]], num_beams=4, max_new_tokens=4)[0][0]
    assert plain.satisfied and not _whole_word_ends(plain, pieces)
    whole = generate(model, tok, [[5, 7]], [["rain"]], num_beams=4, max_new_tokens=4,
                     tokenize=TokenizeOptions(whole_word=True))[0][0]
    assert whole.satisfied and _whole_word_ends(whole, pieces)
    ids = generate(model, tok, [[5, 7]], [[[3]]], num_beams=4, max_new_tokens=4,
                   tokenize=TokenizeOptions(whole_word=True))[0][0]
    assert ids.token_ids == plain.token_ids
    batch = DecodeBatch.prepare(model, tok, [[5]], [["rain", [3]]], None,
                                TokenizeOptions(whole_word=True), "model", None, None)
    assert batch.constraints[0].whole_word == ((True, False),)  # same tokens, two alternatives


@pytest.mark.parametrize("search", ["dba", "neurologic"])
def test_packed_met_sets_keep_pending_words_as_the_booleans(request, search):
    """With whole-word alternatives (pending sets, confirmed or cancelled by the next token),
    the search on packed met-bits returns what it returns on (B, C, S) booleans."""
    tok = tiny_wordpiece()
    pieces = word_pieces(tok, 8)
    model = _model(tiny_t5, 1, pieces)
    prompts = [[5, 7], [6], [3, 4, 5]]

    def decode():
        return [[(o.token_ids, round(o.log_prob, 5), o.satisfied) for o in r]
                for sets in SHAPES
                for r in generate(model, tok, prompts, sets, num_beams=4, max_new_tokens=4,
                                  num_return_sequences=2, search=search,
                                  tokenize=TokenizeOptions(whole_word=True))]

    packed = decode()
    request.getfixturevalue("unpacked")
    assert decode() == packed


def test_custom_generate_passes_the_option_on(monkeypatch):
    from dpc_decode import CUSTOM_GENERATE_DIR

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    tok = tiny_bytelevel()
    pieces = word_pieces(tok, 8)
    model = _model(tiny_gpt2, 0, pieces, bias=6.0)
    out = model.generate(torch.tensor([[5, 7]]), custom_generate=str(CUSTOM_GENERATE_DIR),
                         trust_remote_code=True, constraints=[["rain"]], tokenizer=tok,
                         tokenize=TokenizeOptions(whole_word=True), num_beams=4,
                         max_new_tokens=4, return_dict_in_generate=True)
    best = out["dpc_outputs"][0][0]
    assert best.satisfied and _whole_word_ends(best, pieces)


def test_strict_mode_and_a_budget_only_the_end_of_the_output_meets():
    """``rain`` in the last place is met by the end of the output; strict mode accepts it."""
    tok = tiny_sentencepiece()
    pieces = word_pieces(tok, 8)
    model = _model(tiny_gpt2, 1, pieces, bias=6.0)
    out = generate(model, tok, [[5, 7]], [["sun"], ["rain"]], num_beams=2, max_new_tokens=2,
                   eos_token_id=None, strict=True, tokenize=TokenizeOptions(whole_word=True))[0][0]
    assert out.satisfied and len(out.token_ids) == 2 and _whole_word_ends(out, pieces)


def test_the_rule_keeps_plain_outputs_that_are_whole_words():
    """Where the search without the rule finds whole words, the search with it finds the same
    outputs: a pending set ranks in the bank of the met ones. (Ranked as partial progress, the
    2-beam search lost "babies ..." to "ba ##bie ##d ...", 1.3 nats worse.)"""
    from train.models import placeholder_model

    loaded = placeholder_model()
    model, tok = loaded.model, loaded.tokenizer
    pieces = word_pieces(tok, model.config.vocab_size)
    sets = [["babied", "babies", "baby", "babying"]]
    compared = 0
    for beams in (2, 4):
        kw = {"num_beams": beams, "num_return_sequences": 2, "max_new_tokens": 8}
        plain = generate(model, tok, ["cause: The babies cried."], sets, **kw)[0]
        whole = generate(model, tok, ["cause: The babies cried."], sets, **kw,
                         tokenize=TokenizeOptions(whole_word=True))[0]
        if all(_whole_word_ends(o, pieces) for o in plain):
            assert [o.token_ids for o in whole] == [o.token_ids for o in plain], beams
            compared += 1
    assert compared


# ----------------------------------------------------------------------------- the guided pipeline


def _guided_model(family: str):
    """A tiny random T5 over the family's tokenizer (the bundled placeholder generator for
    WordPiece) that favours word pieces, and the tokenizer."""
    from train.models import placeholder_model

    if family == "wordpiece":
        loaded = placeholder_model()
        model, tok = loaded.model, loaded.tokenizer
    else:
        tok = trained(family)
        torch.manual_seed(0)
        model = T5ForConditionalGeneration(T5Config(
            vocab_size=len(tok), d_model=32, d_ff=64, d_kv=8, num_heads=4, num_layers=2,
            decoder_start_token_id=tok.pad_token_id, pad_token_id=tok.pad_token_id,
            eos_token_id=tok.eos_token_id)).eval()
    model.lm_head.register_forward_hook(_PushPieces(word_pieces(tok, model.config.vocab_size), 3.0))
    return model, tok


def _whole_word_in(text: str, form: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(form)}(?!\w)", text, flags=re.IGNORECASE) is not None


@pytest.mark.parametrize("family", ["wordpiece", "sentencepiece", "byte-level"])
def test_guided_outputs_never_meet_a_keyword_inside_a_longer_word(family, monkeypatch):
    """Every output of the guided pipeline holds its keyword as a word of its text. The same
    pipeline with the rule switched off meets a keyword inside a longer word (so the check can
    fail): the model favours word pieces."""
    from guided_generation import pipeline
    from guided_generation.options import GuidedOptions
    from tests.guided_generation.conftest import toy_graph, toy_lemmatizer

    options = GuidedOptions(n=3, m=2, k=6, max_new_tokens=6, plain_row=False)
    model, tok = _guided_model(family)
    generator = pipeline.GuidedGenerator(model, tok, toy_graph(), lemmatizer=toy_lemmatizer,
                                verifier=None)
    result = generator.generate("babies cry", "cause", options)
    assert len(result.outputs) >= 3
    for out in result.outputs:
        assert out.matched is not None and _whole_word_in(out.text, out.matched), (family, out)

    monkeypatch.setattr(pipeline, "TokenizeOptions", lambda **_: TokenizeOptions())
    generator = pipeline.GuidedGenerator(model, tok, toy_graph(), lemmatizer=toy_lemmatizer,
                                verifier=None)
    plain = generator.generate("babies cry", "cause", options)
    assert any(not _whole_word_in(o.text, o.matched) for o in plain.outputs if o.matched), family
