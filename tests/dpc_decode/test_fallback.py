"""Every input gets its outputs: constraints that cannot all be met give the best hypothesis,
flagged ``satisfied=False``, never an empty list; ``custom_generate`` keeps one row per input and
returned sequence."""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch
from transformers import GenerationConfig

from dpc_decode import (
    CUSTOM_GENERATE_DIR,
    UnsatisfiableConstraintsError,
    generate,
    sample,
    satisfies,
)

from .conftest import EOS, tiny_gpt2, tiny_t5

PROMPTS = [[3, 4, 5], [5, 6]]

# Each cause cut off every hypothesis (or left no finished one) before the fallback.
CAUSES = {
    # EOS is held back until every set is met, so this alternative can never be finished.
    "eos inside an alternative": ({"constraints": [[[7, EOS, 8]]]}, {}),
    "eos as the alternative": ({"constraints": [[[EOS]], [[9]]]}, {}),
    # The only alternative repeats a token / a bigram, which no_repeat_ngram_size forbids.
    "no_repeat_ngram 1": ({"constraints": [[[7, 7]]]}, {"no_repeat_ngram_size": 1}),
    "no_repeat_ngram 2": ({"constraints": [[[7, 8, 7, 8]], [[9]]]}, {"no_repeat_ngram_size": 2}),
    # A ban inside every alternative, and a ban that blocks the alternative in context: only a
    # cause beyond the exact need's budget (PLAN_ONLY), whose plan does not see the ban.
    "ban inside": ({"constraints": [[[7, 8], [9, 8]]], "banned": [[8]]}, {}),
    "ban in context": ({"constraints": [[[3]], [[5, 7]]], "banned": [[3, 5]]},
                       {"max_new_tokens": 3}),
    # Too short a budget for the alternatives.
    "length too short": ({"constraints": [[[7, 8, 9, 10, 11]]]}, {"max_new_tokens": 3}),
    "length too short, two sets": ({"constraints": [[[7, 8]], [[9, 10]]]}, {"max_new_tokens": 3}),
}


PLAN_ONLY = {"ban in context"}  # causes only where need is the plan (conftest.plan_need_only)


def check_reports(outputs: list[list], sets, banned, want: int) -> None:
    """``want`` outputs per input, distinct, each reporting honestly whether it satisfies."""
    for per_input in outputs:
        assert len(per_input) == want
        assert len({(o.token_ids, o.finished) for o in per_input}) == want
        for o in per_input:
            assert o.satisfied == satisfies(o.token_ids, sets, banned or ())
            assert [m is not None for m in o.matches] == [satisfies(o.token_ids, [s]) for s in sets]
        # Satisfied outputs come first.
        flags = [o.satisfied for o in per_input]
        assert flags == sorted(flags, reverse=True)


@pytest.mark.parametrize("num_beams", [1, 3])
@pytest.mark.parametrize("cause", sorted(CAUSES))
def test_unsatisfiable_inputs_still_get_their_outputs(cause, num_beams, request):
    if cause in PLAN_ONLY:
        request.getfixturevalue("plan_need_only")
    given, options = CAUSES[cause]
    model = tiny_gpt2()
    kw = {"max_new_tokens": 6, **options}
    out = generate(model, None, PROMPTS, given["constraints"], banned=given.get("banned"),
                   num_beams=num_beams, num_return_sequences=num_beams, **kw)
    check_reports(out, given["constraints"], given.get("banned"), num_beams)
    if cause != "ban in context":  # the only cause that can be met (5 7 3)
        assert not any(o.satisfied for per in out for o in per)
    samples = sample(model, None, PROMPTS, given["constraints"], banned=given.get("banned"),
                     num_samples=3, unique=True, seed=0, **kw)
    check_reports(samples, given["constraints"], given.get("banned"), 3)


def test_the_causes_did_cut_every_hypothesis_off(plan_need_only):
    """Without the fallback (the search alone) the first causes leave inputs empty: the test
    above would pass on an engine that never dropped anything otherwise."""
    from dpc_decode.batch import DecodeBatch
    from dpc_decode.generation import _decode
    from dpc_decode.options import BeamSearchOptions
    from dpc_decode.processors import ScoreSettings

    model = tiny_gpt2()
    for cause in ["eos inside an alternative", "no_repeat_ngram 1", "ban in context"]:
        given, options = CAUSES[cause]
        batch = DecodeBatch.prepare(model, None, PROMPTS, given["constraints"],
                                    given.get("banned"), None, "model", None, None)
        opts = BeamSearchOptions(num_beams=1, **{"max_new_tokens": 6, **options})
        found = _decode(batch, range(2), opts, ScoreSettings(), batch.automaton(range(2), "cpu"))
        assert found == [[], []], cause


def test_exact_need_steers_around_a_ban_in_context():
    """With the exact need, the ban-in-context cause cuts nothing off: 3 then 5 7 would complete
    the ban [3, 5], so 3 is forbidden first and every beam and every sample is 5 7 3, the only
    output of 3 tokens that meets both sets."""
    given, options = CAUSES["ban in context"]
    out = generate(tiny_gpt2(), None, PROMPTS, given["constraints"], banned=given["banned"],
                   num_beams=1, **options)
    assert [per[0].token_ids for per in out] == [(5, 7, 3), (5, 7, 3)]
    with pytest.warns(UserWarning, match="1 of 3 requested samples"):
        samples = sample(tiny_gpt2(), None, PROMPTS, given["constraints"], banned=given["banned"],
                         num_samples=3, unique=True, seed=0, max_rounds=3, **options)
    assert [[o.token_ids for o in per] for per in samples] == [[(5, 7, 3)], [(5, 7, 3)]]


def test_a_short_input_is_filled_and_its_satisfied_output_stays_first():
    """With 3 beams the ban-in-context case finds one satisfying output; the fallback adds
    unsatisfied ones after it instead of returning one output."""
    given, options = CAUSES["ban in context"]
    out = generate(tiny_gpt2(), None, PROMPTS, given["constraints"], banned=given["banned"],
                   num_beams=3, num_return_sequences=3, **options)
    for per_input in out:
        assert per_input[0].satisfied and per_input[0].token_ids == (5, 7, 3)
        assert len(per_input) == 3 and not any(o.satisfied for o in per_input[1:])


def test_satisfiable_inputs_are_untouched_by_an_unsatisfiable_neighbour():
    model = tiny_gpt2()
    good = [[[20], [21, 22]], [[30]]]
    bad = [[[7, EOS, 8]]]
    alone = generate(model, None, PROMPTS[:1], good, num_beams=3, num_return_sequences=2,
                     max_new_tokens=8)
    mixed = generate(model, None, PROMPTS, [good, bad], num_beams=3, num_return_sequences=2,
                     max_new_tokens=8)
    assert _same_outputs(mixed[0], alone[0])
    assert len(mixed[1]) == 2 and not any(o.satisfied for o in mixed[1])
    chunked = generate(model, None, PROMPTS, [good, bad], num_beams=3, num_return_sequences=2,
                       max_new_tokens=8, batch_size=1)
    assert all(_same_outputs(c, m) for c, m in zip(chunked, mixed, strict=True))


def _same_outputs(a, b) -> bool:
    """The same outputs; their scores equal to float rounding (a batch of two runs the model's
    matrix products in another blocking than a batch of one, which can move the last bits)."""
    floats = ("log_prob", "score", "nll")

    def split(o):
        return replace(o, **dict.fromkeys(floats, 0.0)), [getattr(o, f) for f in floats]

    pairs = [(split(x), split(y)) for x, y in zip(a, b)]
    return len(a) == len(b) and all(
        rest_x == rest_y and nums_x == pytest.approx(nums_y, rel=1e-5)
        for (rest_x, nums_x), (rest_y, nums_y) in pairs
    )


def test_forced_eos_before_the_sets_are_met():
    """``forced_eos_token_id`` at the last step meets EOS held back by unmet sets."""
    model = tiny_t5()
    out = generate(model, None, PROMPTS, [[[7, 8, 9, 10, 11]]], num_beams=2,
                   num_return_sequences=2, max_new_tokens=3,
                   generation_config=GenerationConfig(forced_eos_token_id=EOS))
    check_reports(out, [[[7, 8, 9, 10, 11]]], None, 2)


def test_strict_mode_still_raises():
    given, _ = CAUSES["eos inside an alternative"]
    with pytest.raises(UnsatisfiableConstraintsError, match="constraint set 0"):
        generate(tiny_gpt2(), None, PROMPTS, given["constraints"], num_beams=2, max_new_tokens=6,
                 strict=True)
    with pytest.raises(UnsatisfiableConstraintsError, match="constraint set 0"):
        sample(tiny_gpt2(), None, PROMPTS, given["constraints"], num_samples=2, max_new_tokens=6,
               strict=True, seed=0)


@pytest.mark.parametrize("do_sample", [False, True], ids=["beam", "sample"])
def test_custom_generate_keeps_a_row_per_input_and_sequence(do_sample, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    model = tiny_gpt2()
    ids = torch.tensor([[3, 4, 5], [0, 5, 6]])
    mask = torch.tensor([[1, 1, 1], [0, 1, 1]])
    sets = [[[7, EOS, 8]]]
    out = model.generate(ids, attention_mask=mask, custom_generate=str(CUSTOM_GENERATE_DIR),
                         trust_remote_code=True, constraints=sets, num_beams=1 if do_sample else 3,
                         num_return_sequences=3, do_sample=do_sample, max_new_tokens=6,
                         return_dict_in_generate=True)
    assert out["sequences"].shape[0] == 2 * 3
    assert torch.isfinite(out["sequences_scores"]).all()
    reports = [o for per in out["dpc_outputs"] for o in per]
    assert len(reports) == 6 and not any(o.satisfied for o in reports)
    for row, report in zip(out["sequences"].tolist(), reports):
        assert row[3 : 3 + len(report.token_ids)] == list(report.token_ids)
