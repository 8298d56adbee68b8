"""Beam search on tiny random models of every family."""

from __future__ import annotations

import itertools
import random

import pytest
import torch

from dpc_decode import (
    ConstraintError,
    DpcError,
    UnsatisfiableConstraintsError,
    generate,
    satisfies,
)
from dpc_decode.exhaustive import exhaustive_best

from .conftest import EOS, tiny_gpt2, tiny_t5

INPUTS = [[5, 6, 7, 8], [9, 10], [11, 12, 13, 3, 4]]


def hf_outputs(model, prompt, **kw):
    ids = torch.tensor([prompt])
    out = model.generate(ids, attention_mask=torch.ones_like(ids), do_sample=False,
                         return_dict_in_generate=True, output_scores=True, **kw)
    start = 1 if model.config.is_encoder_decoder else len(prompt)
    result = []
    for seq, score in zip(out.sequences.tolist(), out.sequences_scores.tolist()):
        gen = seq[start:]
        if EOS in gen:
            gen = gen[: gen.index(EOS)]
        else:  # ran to max_new_tokens; drop padding of shorter beams (none here)
            gen = gen[: kw["max_new_tokens"]]
        result.append((gen, score))
    return result


@pytest.mark.parametrize(("length_penalty", "score_slots", "early_stopping"),
                         [(1.0, 0, False), (0.0, 0, False), (2.0, 0, False), (1.0, 4, False),
                          (1.0, 0, True)])
def test_unconstrained_equals_transformers_beam_search(family, length_penalty, score_slots,
                                                       early_stopping):
    name, build = family
    model = build()
    ours = generate(model, None, INPUTS, num_beams=4, num_return_sequences=4, max_new_tokens=10,
                    length_penalty=length_penalty, score_slots=score_slots,
                    early_stopping=early_stopping)
    for prompt, outputs in zip(INPUTS, ours):
        theirs = hf_outputs(model, prompt, num_beams=4, num_return_sequences=4, max_new_tokens=10,
                            length_penalty=length_penalty, early_stopping=early_stopping)
        assert [list(o.token_ids) for o in outputs] == [t for t, _ in theirs], name
        assert [o.score for o in outputs] == pytest.approx([s for _, s in theirs], abs=1e-4)


def random_constraints(rng: random.Random, vocab: int, n_sets: int) -> list[list[list[int]]]:
    return [
        [[rng.randrange(2, vocab) for _ in range(rng.randint(1, 3))] for _ in range(rng.randint(1, 3))]
        for _ in range(n_sets)
    ]


@pytest.mark.parametrize("seed", range(4))
def test_every_output_satisfies_when_the_budget_allows(family, seed):
    name, build = family
    model = build(seed=seed)
    rng = random.Random(seed)
    per_input = [random_constraints(rng, 40, rng.randint(1, 4)) for _ in INPUTS]
    banned = [[[rng.randrange(2, 40)]] for _ in INPUTS]
    results = generate(model, None, INPUTS, per_input, banned=banned, num_beams=6,
                       num_return_sequences=3, max_new_tokens=12)
    for sets, bans, outputs in zip(per_input, banned, results):
        assert outputs, name
        for out in outputs:
            # The report agrees with the reference check.
            assert out.satisfied == satisfies(list(out.token_ids), sets, bans)
            # At most 4 sets x 3 tokens = 12 = max_new_tokens: satisfiable unless a banned token
            # sits inside every alternative of some set.
            if not any(all(b[0] in alt for alt in s) for s in sets for b in bans):
                assert out.satisfied, (name, sets, bans, out)
            for m in out.matches:
                if m is not None:
                    assert list(out.token_ids[m.start : m.end]) == list(m.token_ids)
        scores = [o.score for o in outputs]
        assert scores == sorted(scores, reverse=True)


def test_prefix_alternatives_and_tight_budget():
    model = tiny_t5()
    # {[7], [7, 8], [7, 9]} is one set; two more sets; 5 tokens of budget for 1 + 2 + 2 tokens.
    sets = [[[7], [7, 8], [7, 9]], [[20, 21]], [[30, 31], [32, 33]]]
    out = generate(model, None, INPUTS, sets, num_beams=4, max_new_tokens=5)
    for outputs in out:
        assert outputs[0].satisfied
        assert len(outputs[0].token_ids) <= 5


def test_prompt_never_counts():
    model = tiny_gpt2()
    prompt = [5, 6, 7, 8]  # contains the constraint [7, 8]
    out = generate(model, None, [prompt], [[[7, 8]]], num_beams=4, max_new_tokens=6)[0][0]
    assert satisfies(list(out.token_ids), [[[7, 8]]])


def test_banned_phrases_never_appear():
    model = tiny_gpt2()
    free = generate(model, None, INPUTS, num_beams=4, max_new_tokens=8)
    # Ban the first two tokens every unconstrained output starts with.
    banned = [[list(o[0].token_ids[:2])] for o in free]
    out = generate(model, None, INPUTS, banned=banned, num_beams=4, num_return_sequences=4,
                   max_new_tokens=8)
    for bans, outputs in zip(banned, out):
        for o in outputs:
            assert satisfies(list(o.token_ids), [], bans)


def test_options_are_honoured():
    model = tiny_gpt2()
    out = generate(model, None, INPUTS, [[[3]]], num_beams=4, num_return_sequences=2,
                   max_new_tokens=12, min_new_tokens=6, no_repeat_ngram_size=2)
    for outputs in out:
        assert len(outputs) == 2
        for o in outputs:
            ids = list(o.token_ids)
            assert len(ids) + int(o.finished) >= 6
            bigrams = list(itertools.pairwise(ids))
            assert len(bigrams) == len(set(bigrams))


def test_chunked_batches_give_the_same_outputs():
    model = tiny_t5()
    sets = [[[7], [7, 8]], [[20]]]
    whole = generate(model, None, INPUTS, sets, num_beams=4, max_new_tokens=8)
    chunked = generate(model, None, INPUTS, sets, num_beams=4, max_new_tokens=8, batch_size=1)
    assert [[o.token_ids for o in r] for r in whole] == [[o.token_ids for o in r] for r in chunked]


def test_strict_mode_names_the_unsatisfiable_set():
    model = tiny_t5()
    with pytest.raises(UnsatisfiableConstraintsError, match=r"constraint set 1 of input 0") as err:
        generate(model, None, INPUTS[:1], [[[5]], [[6, 7, 8]]], banned=[[7]], strict=True,
                 num_beams=2, max_new_tokens=8)
    assert err.value.set_index == 1
    with pytest.raises(UnsatisfiableConstraintsError, match="needs at least 4 tokens"):
        generate(model, None, INPUTS[:1], [[[5, 6, 7, 8]]], strict=True, num_beams=2,
                 max_new_tokens=3)
    # Not strict: the best partial output comes back, flagged.
    out = generate(model, None, INPUTS[:1], [[[5, 6, 7, 8]]], num_beams=2, max_new_tokens=3)[0]
    assert out and not out[0].satisfied and out[0].matches == (None,)


# Sets that fit in the budget only because their alternatives overlap (the shortest
# alternatives added up exceed it), and the one output of that length that meets them (None:
# several do).
OVERLAPS = {
    "suffix is a prefix": ([[[5, 6, 7]], [[6, 7, 8]]], 4, (5, 6, 7, 8)),
    "containment": ([[[5, 6, 7]], [[6]]], 3, (5, 6, 7)),
    "chain of three": ([[[5, 6]], [[6, 7]], [[7, 5]]], 4, None),  # 5 6 7 5, 6 7 5 6, 7 5 6 7
    "two alternatives each": ([[[9, 10, 11], [5, 6, 7]], [[6, 7, 8], [11, 12, 13]]], 4,
                              (5, 6, 7, 8)),  # 9 10 11 12 13 overlaps too, in 5
}


@pytest.mark.parametrize("strict", [False, True], ids=["generate", "strict"])
@pytest.mark.parametrize("num_beams", [1, 4])
@pytest.mark.parametrize("build", [tiny_t5, tiny_gpt2], ids=["t5", "gpt2"])
@pytest.mark.parametrize("case", sorted(OVERLAPS))
def test_overlapping_alternatives_fit_a_budget_only_overlap_allows(case, build, num_beams, strict):
    sets, budget, only = OVERLAPS[case]
    assert sum(min(len(alt) for alt in alts) for alts in sets) > budget
    out = generate(build(), None, INPUTS, sets, num_beams=num_beams, max_new_tokens=budget,
                   strict=strict)
    for outputs in out:
        assert outputs[0].satisfied, case
        assert len(outputs[0].token_ids) <= budget
        assert outputs[0].token_ids == only or only is None


def test_strict_mode_refuses_sets_over_their_exact_minimum():
    model = tiny_t5()
    sets = OVERLAPS["suffix is a prefix"][0]
    with pytest.raises(UnsatisfiableConstraintsError, match="need at least 4 tokens together "
                       r"\(the exact minimum"):
        generate(model, None, INPUTS[:1], sets, strict=True, num_beams=2, max_new_tokens=3)


def test_strict_mode_beyond_the_exact_budget_checks_single_sets_only(plan_need_only):
    """The plan counts 6 tokens for sets that fit in 4: without the exact minimum, strict mode
    does not refuse them before decoding (the plan's count is not a lower bound)."""
    from dpc_decode.batch import DecodeBatch

    sets = OVERLAPS["suffix is a prefix"][0]
    batch = DecodeBatch.prepare(tiny_t5(), None, INPUTS[:1], sets, None, None, "model", None, None)
    assert not batch.automata[0].need_is_exact
    batch.check_feasible(4)  # does not raise
    with pytest.raises(UnsatisfiableConstraintsError, match="needs at least 3 tokens"):
        batch.check_feasible(2)


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"constraints": [[]]}, ConstraintError, "constraint set 0 is empty"),
        ({"constraints": [[[5], []]]}, ConstraintError, "alternative 1 is empty"),
        ({"constraints": [[[5, 400]]]}, ConstraintError, "token id 400 .* outside the vocabulary"),
        ({"constraints": [["rain"]]}, ConstraintError, "'rain' of set 0 is text, but no tokenizer"),
        ({"constraints": [[[[[5]]]]]}, ConstraintError, "nested 5 levels"),
        ({"constraints": [[[5]]], "num_beams": 2, "num_return_sequences": 3}, DpcError,
         r"`num_return_sequences` \(=3\) must be at most `num_beams` \(=2\)"),
        ({"constraints": [[[5]]], "max_new_tokens": 0}, DpcError, r"`max_new_tokens` \(=0\)"),
        ({"inputs": [[5, 999]]}, DpcError, "input 0 holds token id 999"),
        ({"inputs": [[5], 7]}, DpcError, "input 1 must be text or a list of token ids, got 7"),
    ],
)
def test_bad_input_gets_a_clear_error(kwargs, error, message):
    model = tiny_t5()
    kwargs = {"inputs": INPUTS[:1], **kwargs}
    with pytest.raises(error, match=message):
        generate(model, None, **kwargs)


@pytest.mark.parametrize("feasible", [True, False], ids=["feasible", "plain-dba"])
@pytest.mark.parametrize("build", [tiny_t5, tiny_gpt2], ids=["t5", "gpt2"])
def test_against_exhaustive_search(build, feasible):
    """DPC beam search never beats the exhaustive optimum (that would be a scoring bug), always
    satisfies, and finds the optimum in a good share of cases: the rate is printed and must stay
    above a floor. The budget is tight on purpose (3 constraint tokens in 4), where beam search
    is hardest; benchmarks/oracle.py measures the rate over more cases and beam sizes."""
    vocab, max_new, found, cases = 6, 4, 0, 0
    for seed in range(10):
        model = build(vocab=vocab, seed=seed)
        rng = random.Random(seed)
        sets = [[[rng.randrange(2, vocab)]], [[rng.randrange(2, vocab), rng.randrange(2, vocab)]]]
        prompt = [2, 3, 4]
        best_lp, _ = exhaustive_best(model, prompt, sets, vocab, max_new, EOS)
        out = generate(model, None, [prompt], sets, num_beams=8, max_new_tokens=max_new,
                       length_penalty=0.0, feasible=feasible)[0][0]
        assert out.satisfied
        assert out.log_prob <= best_lp + 1e-4
        cases += 1
        found += abs(out.log_prob - best_lp) < 1e-4
    print(f"\n{build.__name__} feasible={feasible}: DPC beam search (8 beams) found the "
          f"exhaustive optimum in {found}/{cases} cases")
    assert found >= 0.5 * cases


def test_done_inputs_leave_the_batch_without_changing_the_outputs(family, step_rows):
    """Dropping the beams of finished inputs from the model's batch is an optimisation only: the
    outputs are those of a runner that cannot shrink (every input runs to the last step)."""
    model = family[1]()
    sizes = step_rows
    prompts = [[5, 6], [10, 11, 12], [7], [20, 21], [30, 3, 4], [8]]
    sets = [[[7], [8, 9]], [[20]], [[5]], [[12], [13]], [[14]], [[9, 10]]]

    def run(bias: float) -> list:
        def eos_bias(input_ids, scores):  # inputs end early, at different steps
            scores = scores.clone()
            scores[:, EOS] += bias
            return scores

        kwargs = {"num_beams": 3, "num_return_sequences": 2, "max_new_tokens": 30,
                  "logits_processor": [eos_bias]}
        return [generate(model, None, prompts, [[s] for s in sets], **kwargs),
                generate(model, None, prompts, None, **kwargs)]

    # a bias that staggers this family's endings
    for bias in (0.3, 0.5, 0.2, 0.8, 0.1, 1.2, 1.6, 2.0, 2.5, 3.0):
        sizes.clear()
        compacted = run(bias)
        if min(sizes) < max(sizes):
            break
    assert min(sizes) < max(sizes) == 18  # finished inputs left the batch
    sizes.full_batch()
    sizes.clear()
    full = run(bias)
    assert set(sizes) == {18}
    for a, b in zip(compacted, full):
        assert [[o.token_ids for o in x] for x in a] == [[o.token_ids for o in x] for x in b]
        assert [[round(o.score, 4) for o in x] for x in a] == [
            [round(o.score, 4) for o in x] for x in b]


@pytest.mark.parametrize("enabled", [True, False])
def test_the_garbage_collector_is_left_as_it_was(enabled):
    """Set-up and reporting pause the collector (``batch.gc_paused``); it comes back as it was,
    after a decode, a sample and an error alike."""
    import gc

    from dpc_decode import sample

    model = tiny_t5()
    (gc.enable if enabled else gc.disable)()
    try:
        generate(model, None, INPUTS, [[[7]]], num_beams=2, max_new_tokens=4)
        assert gc.isenabled() is enabled
        sample(model, None, INPUTS, [[[7]]], num_samples=2, max_new_tokens=4, seed=0)
        assert gc.isenabled() is enabled
        with pytest.raises(DpcError):
            generate(model, None, INPUTS, [[[7, 99999]]], num_beams=2, max_new_tokens=4)
        assert gc.isenabled() is enabled
    finally:
        gc.enable()


def test_overlapping_pauses_of_the_collector_end_with_the_last():
    """Decodes in two threads (as ``dpc serve`` runs them) pause the process-wide collector
    together: the first to end leaves it paused for the other; the last brings it back."""
    import gc
    import threading

    from dpc_decode.batch import gc_paused

    first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()
    seen = {}

    def first():
        with gc_paused():
            first_in.set()
            second_in.wait(5)
        first_out.set()

    def second():
        first_in.wait(5)
        with gc_paused():
            second_in.set()
            first_out.wait(5)
            seen["after the first ended"] = gc.isenabled()

    gc.enable()
    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert seen == {"after the first ended": False}
    assert gc.isenabled()
    with gc_paused():
        with gc_paused():
            pass
        assert not gc.isenabled()  # nested: still paused after the inner one
    assert gc.isenabled()


def test_an_output_says_which_end_token_ended_it():
    from dpc_decode import sample

    model = tiny_gpt2()
    ends = list(range(10, 40))  # many end tokens: a random model takes one soon
    for out in (generate(model, None, INPUTS, [[[3]]], num_beams=4, num_return_sequences=4,
                         max_new_tokens=8, eos_token_id=ends),
                sample(model, None, INPUTS, [[[3]]], num_samples=4, max_new_tokens=8,
                       eos_token_id=ends, seed=0)):
        outputs = [o for row in out for o in row]
        assert any(o.finished for o in outputs)
        for o in outputs:
            if o.finished:
                assert o.end_token_id in ends and o.end_token_id not in o.token_ids[-1:]
            else:
                assert o.end_token_id is None
    cut = generate(model, None, INPUTS, num_beams=2, max_new_tokens=3, eos_token_id=None)
    assert all(o.end_token_id is None and not o.finished for row in cut for o in row)


@pytest.mark.parametrize("seed", range(6))
def test_score_slots_find_what_plain_search_finds(family, seed):
    """With every slot a score slot, the beams are plain beam search's (EOS aside), so when
    plain search's best output meets the sets, the constrained search returns one at least as
    good; dynamic beam allocation alone gives no such promise."""
    name, build = family
    model = build(seed=seed)
    rng = random.Random(seed)
    plain = generate(model, None, INPUTS, num_beams=4, max_new_tokens=10)
    sets = []
    for outputs in plain:
        ids = list(outputs[0].token_ids)
        picked = rng.sample(ids, min(2, len(ids)))
        sets.append([[[t], [rng.randrange(2, 40)]] for t in picked])  # each met by plain's best
    ours = generate(model, None, INPUTS, sets, num_beams=4, max_new_tokens=10, score_slots=4)
    for free, constrained in zip(plain, ours):
        assert constrained[0].satisfied, name
        assert constrained[0].score >= free[0].score - 1e-5, name


@pytest.mark.parametrize("search", ["dba", "neurologic"])
@pytest.mark.parametrize("family", [tiny_t5, tiny_gpt2])
def test_packed_met_sets_decode_as_the_booleans(request, family, search):
    """The search on met-sets packed as bits returns what it returns on (B, C, S) booleans (the
    layout beyond 62 sets): outputs, scores and sets met, over one to 20 sets (three bytes of
    bits), overlapping alternatives, tight budgets and EOS."""
    model = family(vocab=40, seed=3)
    rng = random.Random(7)
    cases = [[[[rng.randrange(2, 40) for _ in range(rng.randint(1, 2))] for _ in range(3)]
              for _ in range(n)] for n in (1, 3, 9, 20)] + [[[[5, 6, 7], [6]], [[7, 8]], [[8, 5]]]]

    def decode():
        return [[(o.token_ids, round(o.log_prob, 5), o.satisfied) for o in r]
                for sets in cases for eos in (None, "model")
                for r in generate(model, None, INPUTS, sets, num_beams=4, max_new_tokens=10,
                                  num_return_sequences=2, eos_token_id=eos, search=search)]

    packed = decode()
    request.getfixturevalue("unpacked")
    unpacked = decode()
    assert packed == unpacked
    assert any(o[2] for r in packed for o in r) and not all(o[2] for r in packed for o in r)
