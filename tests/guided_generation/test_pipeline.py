"""The guided-generation pipeline on an untrained tiny T5 and a hand-made graph."""

from __future__ import annotations

import pytest

from dpc_decode import satisfies
from guided_generation.errors import GuidedGenerationError
from guided_generation.keywords import keyword_set
from guided_generation.pipeline import GuidedGenerator
from tests.guided_generation.conftest import paper_options

SMALL = {"m": 3, "k": 6, "max_new_tokens": 8}


def has_form(text: str, keyword: str) -> bool:
    words = text.lower().replace(",", " ").replace(".", " ").split()
    return any(form.lower() in words for form in keyword_set(keyword))


def test_every_output_contains_a_form_of_its_keyword(generator):
    result = generator.generate("babies cry", "cause", paper_options(n=4, **SMALL))
    assert result.keywords == ["hungry", "tired", "love", "pain"]  # graph order: weight sums
    assert len(result.outputs) == 6
    for out in result.outputs:
        assert out.keyword in result.keywords and out.source == "graph"
        assert out.matched in keyword_set(out.keyword)
        assert has_form(out.text, out.keyword), (out.keyword, out.text)


def test_outputs_are_distinct_and_ranked_by_mean_nll(generator):
    result = generator.generate("babies cry", "cause", paper_options(n=4, m=3, k=12,
                                                                      max_new_tokens=8))
    texts = [" ".join(o.text.lower().split()).rstrip(".") for o in result.outputs]
    assert len(set(texts)) == len(texts)
    nlls = [o.nll for o in result.outputs]
    assert nlls == sorted(nlls)
    stats = result.stats
    assert stats["rows"] == 4 and stats["outputs"] == 12 - stats["missed"]
    assert len(result.outputs) == min(12, stats["outputs"] - stats["duplicates"])


def test_direction_effect_uses_successors(generator):
    result = generator.generate("babies cry", "effect", paper_options(n=5, **SMALL))
    assert result.keywords == ["tear", "wake"]


def test_batched_rows_give_the_same_outputs_as_one_row_at_a_time(generator):
    batched = generator.generate("babies cry", "cause", paper_options(n=4, batch_rows=100, **SMALL))
    single = generator.generate("babies cry", "cause", paper_options(n=4, batch_rows=1, **SMALL))
    assert [o.text for o in batched.outputs] == [o.text for o in single.outputs]
    assert [o.nll for o in batched.outputs] == pytest.approx([o.nll for o in single.outputs], abs=1e-4)


def test_user_keywords_combine_with_the_graph(generator):
    result = generator.generate("babies cry", "cause", paper_options(n=3, m=2, k=20, max_new_tokens=8),
                                constraints=["rain"])
    assert result.keywords == ["rain", "hungry", "tired"]
    sources = {o.keyword: o.source for o in result.outputs}
    assert sources.get("rain") == "user" and sources.get("hungry") == "graph"


def test_require_mode_puts_the_user_keyword_in_every_output(generator):
    result = generator.generate("babies cry", "cause",
                                paper_options(n=3, constraint_mode="require", **SMALL),
                                constraints=["night"])
    assert result.outputs
    for out in result.outputs:
        assert has_form(out.text, "night") and has_form(out.text, out.keyword)


def test_banned_phrases_never_appear(generator):
    free = generator.generate("babies cry", "cause", paper_options(n=2, **SMALL))
    common = free.outputs[0].text.split()[0]
    banned = generator.generate("babies cry", "cause", paper_options(n=2, **SMALL), banned=[common])
    assert all(common not in o.text.split() for o in banned.outputs)


def test_mmr_with_lambda_one_is_the_nll_order_and_lower_lambda_diversifies(generator):
    base = dict(n=4, m=3, k=5, max_new_tokens=8)
    nll = generator.generate("babies cry", "cause", paper_options(**base))
    same = generator.generate("babies cry", "cause", paper_options(rerank="mmr", mmr_lambda=1.0, **base))
    assert [o.text for o in same.outputs] == [o.text for o in nll.outputs]
    div = generator.generate("babies cry", "cause", paper_options(rerank="mmr", mmr_lambda=0.0, **base))
    assert div.outputs[0].text == nll.outputs[0].text  # the most likely output always comes first


def test_unknown_words_fall_back_to_unconstrained_n_best(generator):
    result = generator.generate("the quantum flux", "cause", paper_options(n=5, **SMALL))
    assert result.keywords == [] and len(result.outputs) == SMALL["k"]
    assert all(o.keyword is None and o.source == "none" for o in result.outputs)
    assert any("unconstrained N-best" in note for note in result.notes)


def test_long_input_is_cut_and_the_result_says_so(generator):
    text = "babies cry " * 100
    result = generator.generate(text, "cause", paper_options(n=2, max_input_tokens=10, **SMALL))
    assert len(generator.tokenizer(result.input, add_special_tokens=False)["input_ids"]) <= 10
    assert result.input.startswith("babies cry")
    assert any("cut to its first" in note for note in result.notes)
    assert result.outputs


@pytest.mark.parametrize(
    ("text", "direction", "message"),
    [
        ("", "cause", "the input '' is empty"),
        ("   ", "effect", "the input '   ' is empty"),
        ("babies cry", "why", "--direction 'why' is not one of cause, effect"),
    ],
)
def test_bad_input_is_a_clear_error(generator, text, direction, message):
    with pytest.raises(GuidedGenerationError, match=message):
        generator.generate(text, direction, paper_options(n=2, **SMALL))


def test_load_names_a_missing_or_corrupt_path(tmp_path):
    bad = tmp_path / "bad.ceg"
    bad.write_bytes(b"\x00garbage")
    with pytest.raises(Exception, match="is not a Cause Effect Graph file"):
        GuidedGenerator.load(graph=bad)
    with pytest.raises(Exception, match="is not a folder"):
        GuidedGenerator.load(model=tmp_path / "nope")


def test_outputs_satisfy_the_engine_check(generator):
    """The engine's own checker agrees with the pipeline: each output meets its row's set."""
    result = generator.generate("babies cry", "cause", paper_options(n=3, **SMALL))
    tok = generator.tokenizer
    for out in result.outputs:
        ids = tok(out.text, add_special_tokens=False)["input_ids"]
        forms = [tok(" " + f, add_special_tokens=False)["input_ids"] for f in keyword_set(out.keyword)]
        forms += [tok(f, add_special_tokens=False)["input_ids"] for f in keyword_set(out.keyword)]
        assert satisfies(ids, [forms]), out


def test_pmi_rerank_orders_by_the_likelihood_gain_over_an_empty_input(generator):
    from train.metrics import sequence_log_probs

    result = generator.generate("babies cry", "cause", paper_options(n=3, rerank="pmi", **SMALL))
    pmis = [o.pmi for o in result.outputs]
    assert all(p is not None for p in pmis) and pmis == sorted(pmis, reverse=True)
    top = result.outputs[0]
    cond, prior = sequence_log_probs(generator.model, generator.tokenizer,
                                     ["cause: babies cry", "cause: "], [top.text, top.text])
    tokens = len(generator.tokenizer(top.text)["input_ids"])
    assert top.pmi == pytest.approx((cond - prior) / tokens, abs=1e-4)


def test_reranking_again_reuses_the_decode(generator, monkeypatch):
    calls = []
    decode = generator.decode_rows
    monkeypatch.setattr(generator, "decode_rows", lambda *a, **k: calls.append(1) or decode(*a, **k))
    base = dict(n=3, m=2, k=4, max_new_tokens=7)  # options no other test uses: a fresh decode
    nll = generator.generate("babies cry", "effect", paper_options(**base))
    mmr = generator.generate("babies cry", "effect", paper_options(rerank="mmr", **base))
    assert len(calls) == 1
    assert {o.text for o in mmr.outputs} <= {o.text for o in nll.outputs} | {
        o.text for o in generator.generate("babies cry", "effect", paper_options(**{**base, "k": 50})).outputs}
    generator.generate("babies cry", "effect", paper_options(**{**base, "m": 1}))
    assert len(calls) == 3  # k=50 and m=1 change the decode
    generator.clear_cache()
    generator.generate("babies cry", "effect", paper_options(**base))
    assert len(calls) == 4  # a cleared cache decodes again (what the speed benchmark times)
