"""``search="neurologic"``: NeuroLogic decoding's selection with real endings, on tiny random
models of every family, against plain beam search and the exhaustive optimum."""

from __future__ import annotations

import random

import pytest
import torch

from dpc_decode import DpcError, generate, satisfies
from dpc_decode import lookahead as lookahead_module
from dpc_decode.exhaustive import exhaustive_best
from dpc_decode.lookahead import Lookahead

from .conftest import EOS, tiny_gpt2, tiny_t5
from .test_search import INPUTS, random_constraints


def test_without_constraints_it_is_plain_beam_search(family):
    name, build = family
    model = build()
    for early_stopping in (False, True):
        plain = generate(model, None, INPUTS, num_beams=4, num_return_sequences=4,
                         max_new_tokens=10, early_stopping=early_stopping)
        neuro = generate(model, None, INPUTS, num_beams=4, num_return_sequences=4,
                         max_new_tokens=10, early_stopping=early_stopping, search="neurologic")
        assert [[o.token_ids for o in r] for r in neuro] == \
               [[o.token_ids for o in r] for r in plain], name


@pytest.mark.parametrize("seed", range(4))
def test_every_output_satisfies_when_the_budget_allows(family, seed):
    name, build = family
    model = build(seed=seed)
    rng = random.Random(seed)
    per_input = [random_constraints(rng, 40, rng.randint(1, 4)) for _ in INPUTS]
    banned = [[[rng.randrange(2, 40)]] for _ in INPUTS]
    results = generate(model, None, INPUTS, per_input, banned=banned, num_beams=6,
                       num_return_sequences=3, max_new_tokens=12, search="neurologic",
                       prune_factor=8, sat_tolerance=1)
    for sets, bans, outputs in zip(per_input, banned, results):
        assert outputs, name
        for out in outputs:
            assert out.satisfied == satisfies(list(out.token_ids), sets, bans)
            if not any(all(b[0] in alt for alt in s) for s in sets for b in bans):
                assert out.satisfied, (name, sets, bans, out)
        scores = [o.score for o in outputs]
        assert scores == sorted(scores, reverse=True)


@pytest.mark.parametrize("build", [tiny_t5, tiny_gpt2], ids=["t5", "gpt2"])
def test_against_exhaustive_search(build):
    """Never beats the exhaustive optimum (a scoring bug would), always satisfies (a met answer
    exists within the budget), and finds the optimum in a good share of cases, on the tight
    budgets of ``test_search.test_against_exhaustive_search``."""
    vocab, max_new, found, cases = 6, 4, 0, 0
    for seed in range(10):
        model = build(vocab=vocab, seed=seed)
        rng = random.Random(seed)
        sets = [[[rng.randrange(2, vocab)]], [[rng.randrange(2, vocab), rng.randrange(2, vocab)]]]
        best_lp, _ = exhaustive_best(model, [2, 3, 4], sets, vocab, max_new, EOS)
        out = generate(model, None, [[2, 3, 4]], sets, num_beams=8, max_new_tokens=max_new,
                       length_penalty=0.0, search="neurologic")[0][0]
        assert out.satisfied
        assert out.log_prob <= best_lp + 1e-4
        cases += 1
        found += abs(out.log_prob - best_lp) < 1e-4
    print(f"\n{build.__name__}: NeuroLogic (8 beams) found the exhaustive optimum in "
          f"{found}/{cases} cases")
    assert found >= 0.5 * cases


def _log_probs_after(model, prompt: list[int], generated: list[int]) -> torch.Tensor:
    """The model's next-token log-probabilities after ``prompt`` and ``generated``."""
    with torch.no_grad():
        if model.config.is_encoder_decoder:
            start = model.config.decoder_start_token_id
            out = model(input_ids=torch.tensor([prompt]),
                        decoder_input_ids=torch.tensor([[start, *generated]]))
        else:
            out = model(input_ids=torch.tensor([prompt + generated]))
    return torch.log_softmax(out.logits[0, -1], -1)


def test_outputs_end_only_as_the_model_ends_them(family):
    """Real endings: a finished output ends with an end token the model ranks among its top
    ``2 * num_beams`` at that point (NeuroLogic offers no ending the model did not choose), and
    its log-probability is the model's own, end token included. Under ``"dba"`` an ending is
    offered to every beam whatever its rank: that is what the option changes."""
    name, build = family
    ends = list(range(10, 40))  # many end tokens, so that a random model ends at all
    beams, ended = 4, 0
    for seed in range(4):
        model = build(seed=seed)
        rng = random.Random(seed)
        sets = [random_constraints(rng, 10, 2) for _ in INPUTS]
        results = generate(model, None, INPUTS, sets, num_beams=beams,
                           num_return_sequences=beams, max_new_tokens=12, search="neurologic",
                           eos_token_id=ends)
        for prompt, outputs in zip(INPUTS, results):
            for out in outputs:
                if not out.finished:
                    continue
                ended += 1
                assert out.end_token_id in ends
                tokens = list(out.token_ids)
                log_probs = _log_probs_after(model, prompt, tokens)
                rank = int((log_probs > log_probs[out.end_token_id]).sum())
                assert rank < 2 * beams, (name, rank)
                total = sum(float(_log_probs_after(model, prompt, tokens[:i])[t])
                            for i, t in enumerate(tokens)) + float(log_probs[out.end_token_id])
                assert out.log_prob == pytest.approx(total, abs=1e-3), name
    assert ended, name


def test_its_options_are_checked():
    model = tiny_gpt2()
    with pytest.raises(DpcError, match=r"`search` \(='astar'\) is not one of dba, neurologic"):
        generate(model, None, INPUTS, [[[3]]], search="astar")
    with pytest.raises(DpcError, match=r"`prune_factor` \(=0\) must be an integer"):
        generate(model, None, INPUTS, [[[3]]], search="neurologic", prune_factor=0)
    with pytest.raises(DpcError, match=r"`sat_tolerance` \(=-1\) must be an integer"):
        generate(model, None, INPUTS, [[[3]]], search="neurologic", sat_tolerance=-1)


def test_a_forked_runner_steps_as_its_rows_would_and_leaves_them_alone(family):
    """The lookahead's rollouts run on :meth:`ModelRunner.fork`: its rows step exactly as the
    rows they copy, and stepping it changes nothing of the runner it came from."""
    from dpc_decode.model_runner import ModelRunner

    name, build = family
    model = build()
    ids = torch.tensor([[5, 6, 7, 8], [0, 9, 10, 11]])
    mask = torch.tensor([[1, 1, 1, 1], [0, 1, 1, 1]])

    def runner() -> ModelRunner:
        r = ModelRunner(model)
        r.start(ids, mask)
        r.expand(2)
        r.step(torch.tensor([3, 4, 5, 6]))
        return r

    original, untouched = runner(), runner()
    fork = original.fork(torch.tensor([1, 1, 2]))
    forked = fork.step(torch.tensor([8, 8, 9]))
    fork.step(torch.tensor([12, 13, 14]))
    after = original.step(torch.tensor([7, 8, 9, 10]))
    assert torch.allclose(forked, after[[1, 1, 2]], atol=1e-5), name
    assert torch.allclose(after, untouched.step(torch.tensor([7, 8, 9, 10])), atol=1e-5), name


@pytest.mark.parametrize("seed", range(3))
def test_the_lookahead_keeps_every_promise(family, seed):
    """With a lookahead every output still satisfies when the budget allows, best first; the
    lookahead reorders candidates only, so without constraints it changes nothing."""
    name, build = family
    model = build(seed=seed)
    rng = random.Random(seed)
    per_input = [random_constraints(rng, 40, rng.randint(1, 3)) for _ in INPUTS]
    results = generate(model, None, INPUTS, per_input, num_beams=4, num_return_sequences=2,
                       max_new_tokens=10, search="neurologic", lookahead=3, lookahead_weight=1.0)
    for sets, outputs in zip(per_input, results):
        for out in outputs:
            assert out.satisfied == satisfies(list(out.token_ids), sets, [])
            assert out.satisfied, (name, sets, out)
        assert [o.score for o in outputs] == sorted((o.score for o in outputs), reverse=True)
    plain = generate(model, None, INPUTS, num_beams=4, max_new_tokens=10)
    looked = generate(model, None, INPUTS, num_beams=4, max_new_tokens=10, search="neurologic",
                      lookahead=3)
    assert [[o.token_ids for o in r] for r in looked] == [[o.token_ids for o in r] for r in plain]


def test_the_lookahead_needs_neurologic():
    with pytest.raises(DpcError, match=r"`lookahead` \(=2\) is NeuroLogic A\*esque's"):
        generate(tiny_gpt2(), None, INPUTS, [[[3]]], lookahead=2)


def _decoded(model, per_input, options):
    return generate(model, None, INPUTS, per_input, **options)


def _same(mine, theirs, name):
    assert [[o.token_ids for o in r] for r in mine] == [[o.token_ids for o in r] for r in theirs], name
    for a, b in zip(mine, theirs):
        assert [o.log_prob for o in a] == pytest.approx([o.log_prob for o in b], abs=1e-4), name


def _case(family, seed: int, sets: tuple[int, int], **options):
    """A tiny model of the family, between ``sets`` random sets per input, and NeuroLogic +
    lookahead options."""
    name, build = family
    rng = random.Random(seed)
    per_input = [random_constraints(rng, 40, rng.randint(*sets)) for _ in INPUTS]
    options = dict(num_beams=4, num_return_sequences=3, search="neurologic",
                   lookahead_weight=1.0, **options)
    return name, build(seed=seed), per_input, options


def _recording(monkeypatch, owner, attr: str, record) -> list:
    """Wrap ``owner.attr`` so that ``record(result)`` of each call is appended to the list
    returned: whether the saving it makes took place."""
    original, seen = getattr(owner, attr), []

    def recorded(*args, **kwargs):
        result = original(*args, **kwargs)
        seen.append(record(result))
        return result

    monkeypatch.setattr(owner, attr, recorded)
    return seen


@pytest.mark.parametrize("steps", [1, 3])
def test_the_lookaheads_first_step_is_the_searchs_next(family, steps, monkeypatch):
    """The new beams take the lookahead's first model step as their own (``Lookahead.adopt``):
    the outputs are those of a search that steps the model again, and the step is taken over in
    most steps."""
    name, model, per_input, options = _case(family, steps, (1, 3), max_new_tokens=10, lookahead=steps)
    taken = _recording(monkeypatch, Lookahead, "adopt", lambda result: result is not None)
    adopted = _decoded(model, per_input, options)
    assert sum(taken) >= len(taken) / 2, (name, taken)
    monkeypatch.setattr(Lookahead, "adopt", lambda self, *args, **kwargs: None)
    _same(adopted, _decoded(model, per_input, options), name)


@pytest.mark.parametrize("steps", [2, 3, 5])
def test_a_beams_rollout_continues_as_a_new_one_would(family, steps, monkeypatch):
    """A candidate that extends a beam by its rollout's next token continues that rollout (the
    positions kept from the last step, ``Lookahead.keep``): the outputs are those of rolling
    every candidate out anew, and rollouts are continued."""
    name, model, per_input, options = _case(family, steps, (2, 4), max_new_tokens=12, lookahead=steps)
    kept = _recording(monkeypatch, Lookahead, "_continued", lambda result: int((result >= 0).sum()))
    reused = _decoded(model, per_input, options)
    assert sum(kept) > 0, name
    monkeypatch.setattr(Lookahead, "_continued",
                        lambda self, at_input, parent, token: torch.full_like(token, -1))
    _same(reused, _decoded(model, per_input, options), name)


def test_the_lookahead_rolls_out_only_candidates_that_could_be_chosen(family, monkeypatch):
    """Candidates that cannot be among the next beams whatever their estimate get no rollout
    (``never_chosen``): the outputs are those of rolling every candidate out, and some are
    marked."""
    name, model, per_input, options = _case(family, 5, (2, 4), max_new_tokens=12, lookahead=2,
                                            score_slots=1)
    marked = _recording(monkeypatch, lookahead_module, "never_chosen",
                        lambda result: int(result.sum()))
    pruned = _decoded(model, per_input, options)
    assert sum(marked) > 0, name
    monkeypatch.setattr(lookahead_module, "never_chosen",
                        lambda score, *args: torch.zeros_like(score, dtype=torch.bool))
    _same(pruned, _decoded(model, per_input, options), name)
