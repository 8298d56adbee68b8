"""INLI hypothesis variants (tasks.inli.hypotheses): labels, measures, constraints, LoRA training on a tiny LM, decoding, CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import cli
from dpc_errors import DpcError
from tasks.datasets import read_inli
from tasks.inli.hypotheses import (
    EDIT_TARGETS,
    SENTENCE_END,
    ChoiceRule,
    GeneratorTrainOptions,
    VariantGenerator,
    choose_variant,
    copy_ban,
    keep_constraints,
    label_log_posteriors,
    negated,
    parse_labels,
    satisfied,
    word_edit_distance,
)
from tests.tasks.inli.conftest import inli_rows, write_csv


def test_labels_and_measures() -> None:
    assert parse_labels("neutral, explicit,neutral") == ["neutral", "explicit_entailment"]
    with pytest.raises(DpcError) as err:
        parse_labels("entailment")
    assert all(lab in str(err.value) for lab in ("implied_entailment", "explicit_entailment",
                                                 "neutral", "contradiction"))
    assert negated("Tom is not here.") and negated("Tom won't go.") and negated("No one came.")
    assert not negated("Tom is nowhere near knowing.")
    assert word_edit_distance("Tom likes the red house.", "Tom hates the red house.") == 1
    assert word_edit_distance("a b c", "") == 3


def test_keep_constraints() -> None:
    k = keep_constraints("Robbie is unfamiliar with the neighborhoods near his cousin.")
    assert k.people == [["Robbie"]]
    assert {"neighborhood", "neighborhoods", "cousin", "cousins"} <= set(k.nouns)
    assert len(k.sets()) == 2
    assert satisfied("Robbie knows every neighborhood.", k.sets())
    assert not satisfied("Robbie knows every street.", k.sets())
    assert keep_constraints("He is glad.").sets() == []


def test_generate_constrained_and_not(generator: Path) -> None:
    gen = VariantGenerator.load(generator / "model")
    premises = ["Robbie said the house was red.", "He was glad."]
    implied = ["Robbie likes the red house.", "He is glad."]
    out = gen.generate(premises, implied, ["contradiction", "neutral"], num_beams=2,
                       max_new_tokens=8)
    assert [v.label for v in out] == ["contradiction", "neutral"]
    assert out[0].satisfied is True and out[0].constrained
    sets = keep_constraints(implied[0]).sets()
    assert len(sets) == 2 and satisfied(out[0].text, sets)
    assert not negated(out[0].text)
    assert out[1].satisfied is None  # nothing to keep: decoded without sets
    free = gen.generate(premises[:1], implied[:1], ["neutral"], constrained=False, num_beams=2,
                        max_new_tokens=8)
    assert free[0].satisfied is None and not free[0].constrained


def test_constrained_decoding_bans_a_copy_of_the_implied_entailment(generator: Path,
                                                                     monkeypatch) -> None:
    import dpc_decode

    calls = []
    real = dpc_decode.generate
    monkeypatch.setattr(dpc_decode, "generate",
                        lambda *a, **k: calls.append(k.get("banned")) or real(*a, **k))
    gen = VariantGenerator.load(generator / "model")
    implied = ["Robbie likes the red house.", "He is glad!"]
    out = gen.generate(["Robbie said the house was red.", "He was glad."], implied,
                       ["neutral", "contradiction"], num_beams=2, max_new_tokens=8)
    assert calls[-1][0] == ["Robbie likes the red house"]
    assert calls[-1][1][0] == "He is glad" and "not" in calls[-1][1]  # copy, then negation
    assert all(copy_ban(h) not in v.text for h, v in zip(implied, out))
    gen.generate(["p."], implied[:1], ["neutral"], ban_copy=False, num_beams=2, max_new_tokens=4)
    assert calls[-1] is None
    gen.generate(["p."], implied[:1], ["neutral"], constrained=False, num_beams=2,
                 max_new_tokens=4)
    assert calls[-1] is None


def test_label_rerank_keeps_the_beam_the_generator_is_surest_of(generator: Path) -> None:
    import math

    gen = VariantGenerator.load(generator / "model")
    premises = ["Robbie said the house was red.", "Anna left early."]
    implied = ["Robbie likes the red house.", "Anna was tired of the party."]
    labels = ["contradiction", "neutral"]
    # the posteriors of one text over the three labels are a distribution
    text = "Robbie hates the red house."
    post = label_log_posteriors(gen, [(premises[0], implied[0], lab, text) for lab in
                                      ("explicit_entailment", "neutral", "contradiction")])
    assert sum(math.exp(x) for x in post) == pytest.approx(1.0, abs=1e-4)
    best = gen.generate(premises, implied, labels, num_beams=3, max_new_tokens=8,
                        rerank="none")
    chosen = gen.generate(premises, implied, labels, num_beams=3, max_new_tokens=8)  # default
    assert [v.label for v in chosen] == labels and all(v.label_log_posterior is None
                                                       for v in best)
    for v, p, h in zip(chosen, premises, implied):
        assert v.label_log_posterior is not None and v.label_log_posterior <= 0
        # it is the posterior of the text kept, and no other beam output of the search beats it
        assert v.label_log_posterior == pytest.approx(
            label_log_posteriors(gen, [(p, h, v.label, v.text)])[0], abs=1e-3)
    # unconstrained, the kept output is the best of every beam output by the posterior
    import dpc_decode
    free = gen.generate(premises[1:], implied[1:], labels[1:], constrained=False, num_beams=3,
                        max_new_tokens=8, rerank="label")[0]
    outs = dpc_decode.generate(gen.model, gen.tokenizer,
                               [f"Premise: {premises[1]}\nImplied: {implied[1]}\nNeutral:"],
                               None, num_beams=3, num_return_sequences=3, max_new_tokens=8,
                               eos_token_id=gen.eos, generation_config=None)[0]
    texts = [" ".join(o.text.split("\n")[0].split()) for o in outs]
    scores = label_log_posteriors(gen, [(premises[1], implied[1], "neutral", t) for t in texts
                                        if t])
    assert scores.index(max(scores)) > 0  # here the beam's best is not the one kept
    assert free.label_log_posterior == pytest.approx(max(scores), abs=1e-3)
    assert free.text in texts
    assert chosen[0].satisfied is True  # among the outputs that meet the constraints
    with pytest.raises(DpcError, match="rerank 'best'"):
        gen.generate(premises, implied, labels, rerank="best")
    with pytest.raises(DpcError, match="label 'implied_entailment'"):
        label_log_posteriors(gen, [("p", "h", "implied_entailment", "t")])


def test_choose_variant_filters_then_ranks_by_the_classifier_less_the_edit_penalty() -> None:
    implied = "Tom likes the red house."
    texts = ["Tom likes the red house!",              # a copy, whatever ends it
             "Tom does not like the red house.",      # negated
             "Anna hates the blue car.",              # keeps neither Tom nor a noun
             "Tom hates the red house.",
             "Tom hates the red house and every single thing about the whole long street it "
             "is on in this old town today."]
    probs = [0.99, 0.95, 0.9, 0.5, 0.6]
    free = ChoiceRule(edit_penalty=0.0, require_keep=True)
    banded = ChoiceRule(edit_penalty=0.1, edit_band=2.0, require_keep=True)
    # contradiction: the copy and the negated one are out, the one that keeps nothing too
    assert choose_variant("contradiction", implied, texts, probs, free) == 4
    # at 0.1 a word beyond 7 +- 2, the long edit (18 words) costs 0.9 and the short one (1
    # word) 0.4: log 0.6 - 0.9 < log 0.5 - 0.4
    assert [word_edit_distance(t, implied) for t in texts[3:]] == [1, 18]
    assert choose_variant("contradiction", implied, texts, probs, banded) == 3
    assert banded.penalty(18, "contradiction") == pytest.approx(0.9)
    assert banded.penalty(1, "contradiction") == pytest.approx(0.4)
    assert banded.penalty(EDIT_TARGETS["neutral"] + 2, "neutral") == 0
    # the default: no band, 0.05 a word from the target, no keep filter
    assert ChoiceRule().penalty(18, "contradiction") == pytest.approx(0.55)
    assert choose_variant("contradiction", implied, texts, probs) == 2
    # without require_keep the one that keeps nothing may win; neutrals may be negated
    assert choose_variant("neutral", implied, texts, probs, free) == 1
    # ban_copy=False: the copy is a candidate like the others
    assert choose_variant("neutral", implied, texts, probs, free, ban_copy=False) == 0
    # "doesnt" is negation too
    assert choose_variant("contradiction", implied, ["Tom doesnt like the red house.",
                                                     "Tom hates the red house."],
                          [0.9, 0.1], free) == 1
    # a filter nothing passes is not applied: the best remaining one is chosen
    assert choose_variant("contradiction", implied, texts[:2], [0.2, 0.3], free) == 1
    assert choose_variant("contradiction", implied, texts[1:2], [0.3], free) == 0
    # ties: the first
    assert choose_variant("neutral", implied, texts[3:4] * 2, [0.5, 0.5], free) == 0
    with pytest.raises(DpcError, match="2 candidate texts but 1 probabilities"):
        choose_variant("neutral", implied, texts[:2], [0.5])
    with pytest.raises(DpcError, match="edit_penalty \\(=-1"):
        ChoiceRule(edit_penalty=-1).check()
    with pytest.raises(DpcError, match="sources \\['beam'\\]"):
        ChoiceRule(sources=("beam",)).check()


def test_classifier_rerank_pools_both_searches_and_keeps_what_the_classifier_prefers(
        generator: Path) -> None:
    import numpy as np

    from tasks.datasets import INLI_LABELS

    gen = VariantGenerator.load(generator / "model")
    premises = ["Robbie said the house was red.", "Anna left early."]
    implied = ["Robbie likes the red house.", "Anna was tired of the party."]
    labels = ["contradiction", "neutral"]
    seen: list[tuple[str, str]] = []

    class ByLength:
        """A stand-in classifier: the longer the hypothesis, the likelier every label."""

        def probabilities(self, ps, hs):
            seen.extend(zip(ps, hs))
            return np.array([[min(0.99, len(h) / 100)] * len(INLI_LABELS) for h in hs])

    rule = ChoiceRule(edit_penalty=0.0, require_keep=False)
    chosen = gen.generate(premises, implied, labels, num_beams=3, max_new_tokens=8,
                          rerank="classifier", classifier=ByLength(), choice=rule)
    pools = {src: gen.candidates(premises, implied, labels, constrained=src == "constrained",
                                 num_beams=3, max_new_tokens=8) for src in ("constrained",
                                                                             "unconstrained")}
    for i, v in enumerate(chosen):
        texts = {c.text for src in pools for c in pools[src][i]}
        # every candidate of both searches was read with its own premise
        assert {h for p, h in seen if p == premises[i]} == texts
        allowed = [t for t in texts if not (labels[i] == "contradiction" and negated(t))
                   and word_edit_distance(t, implied[i]) > 0] or list(texts)
        assert v.text == max(allowed, key=len)
        assert v.label_probability == pytest.approx(min(0.99, len(v.text) / 100), abs=1e-4)
        assert v.constrained == (v.text in {c.text for c in pools["constrained"][i]})
        assert v.satisfied == satisfied(v.text, keep_constraints(implied[i]).sets())
    # constrained pool only: the chosen text is one of the constrained search's
    only = gen.generate(premises, implied, labels, num_beams=3, max_new_tokens=8,
                        rerank="classifier", classifier=ByLength(),
                        choice=ChoiceRule(sources=("constrained",)))
    assert all(v.constrained and v.text in {c.text for c in pools["constrained"][i]}
               for i, v in enumerate(only))
    with pytest.raises(DpcError, match="needs the INLI classifier"):
        gen.generate(premises, implied, labels, rerank="classifier")


def test_a_variant_is_one_sentence(generator: Path, monkeypatch) -> None:
    from types import SimpleNamespace

    import dpc_decode
    from tasks.inli.hypotheses import _variant_text

    gen = VariantGenerator.load(generator / "model")
    texts = gen.tokenizer.batch_decode([[i] for i in range(len(gen.tokenizer))])
    period = gen.tokenizer(".", add_special_tokens=False).input_ids
    assert len(period) == 1 and gen.sentence_ends[period[0]] == "."
    for end in (".", "!", "?", ".\"", "?\"", "!\")", ".)", "!!", "?!", ".'", "?]"):
        assert SENTENCE_END.fullmatch(end), end
    for other in ("..", "...", "...\"", ",", ".,", "a.", "\"", "", ".a", "?.!"):
        assert not SENTENCE_END.fullmatch(other), other
    for i, t in enumerate(texts):
        if t.strip() in {"...", "..", ",", "", "\n"} or i in gen.eos:
            assert i not in gen.sentence_ends
    assert gen.sentence_end == list(gen.sentence_ends)
    assert not set(gen.sentence_end) & set(gen.eos)
    ends = []
    real = dpc_decode.generate
    monkeypatch.setattr(dpc_decode, "generate",
                        lambda *a, **k: ends.append(k["eos_token_id"]) or real(*a, **k))
    args = (["Robbie said the house was red."], ["Robbie likes the red house."], ["neutral"])
    gen.generate(*args, num_beams=2, max_new_tokens=4)
    gen.generate(*args, num_beams=2, max_new_tokens=4, one_sentence=False)
    assert ends == [gen.eos + gen.sentence_end, gen.eos]

    ends = {1: ".", 2: "!\"", 3: "?"}
    eos = gen.eos[0]

    def text(raw: str, end: int | None) -> str:
        out = SimpleNamespace(text=raw, finished=end is not None, end_token_id=end)
        return _variant_text(out, ends)

    assert text(" Robbie  hates the house", 1) == "Robbie hates the house."
    assert text("Robbie shouted \"stop", 2) == "Robbie shouted \"stop!\""  # the end written back
    assert text("Is it red", 3) == "Is it red?"
    assert text("Robbie hates the house", eos) == "Robbie hates the house."  # EOS: a period
    assert text("Is it red?", eos) == "Is it red?"
    assert text("Robbie hates the", None) == "Robbie hates the"  # cut, not ended
    assert text("Robbie left.\nThen", None) == "Robbie left."
    assert text("Robbie left\nThen", eos) == "Robbie left"  # a first line that did not end
    assert text("", 1) == ""


def test_cli(generator: Path, tmp_path: Path, capsys) -> None:
    model = str(generator / "model")
    assert cli.main(["inli", "variants", "--premise", "Anna said the house was red.",
                     "--implied", "Anna likes the red house.", "--labels", "explicit",
                     "--generator", model, "--json", "--max-new-tokens", "8",
                     "--num-beams", "2", "--device", "cpu", "--rerank", "label"]) == 0
    record = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert record["satisfied"] == {"explicit_entailment": True}
    assert "anna" in record["explicit_entailment"].lower()
    src = write_csv(tmp_path / "in.csv", inli_rows(3))
    out = tmp_path / "variants.jsonl"
    assert cli.main(["inli", "variants", "--file", str(src), "--out", str(out), "--generator",
                     model, "--max-new-tokens", "6", "--num-beams", "2"]) == 0
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(lines) == 3 and {"explicit_entailment", "neutral", "contradiction"} <= set(lines[0])
    # the default rerank is the bundled classifier's: each variant has its probability
    assert all(0 < p <= 1 for x in lines for p in x["label_probability"].values())
    # an INLI CSV that `dpc inli train` reads: the input's rows, the variants in their columns
    table = tmp_path / "variants.csv"
    assert cli.main(["inli", "variants", "--file", str(src), "--out", str(table), "--generator",
                     model, "--max-new-tokens", "6", "--num-beams", "2"]) == 0
    given, written = read_inli(src).rows, read_inli(table)
    assert [(r.index, r.dataset, r.premise, r.implied_entailment) for r in written.rows] == \
        [(r.index, r.dataset, r.premise, r.implied_entailment) for r in given]
    assert [r.explicit_entailment for r in written.rows] == \
        [x["explicit_entailment"] for x in lines]
    assert not written.skipped and written.index_column == read_inli(src).index_column
    capsys.readouterr()
    # bad input: one line, exit 2
    for argv, word in (
            (["--premise", "p", "--implied", "h", "--labels", "implied"], "is the input"),
            (["--premise", "p", "--implied", "h", "--labels", "entail"], "contradiction"),
            (["--premise", "", "--implied", "h"], "--premise"),
            (["--file", str(src), "--out", str(out)], "exists"),
            (["--file", str(src), "--out", str(tmp_path / "few.csv"), "--labels", "neutral"],
             "--labels must be"),
            (["--premise", "p", "--implied", "h", "--generator", str(tmp_path)],
             "variant_generator.json"),
            (["--premise", "p", "--implied", "h", "--rerank", "label", "--pool", "both"],
             "only apply with --rerank classifier"),
            (["--premise", "p", "--implied", "h", "--classifier", str(tmp_path)],
             "is not an INLI classifier"),
            (["--premise", "p", "--implied", "h", "--unconstrained", "--pool", "both"],
             "--unconstrained with --pool both"),
            (["--premise", "p", "--implied", "h", "--edit-penalty", "-1"],
             "edit_penalty (=-1.0)")):
        assert cli.main(["inli", "variants", *argv]) == 2, argv
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and word in err[0], (argv, err)


def test_cli_trains_on_the_cpu(tiny_lm: Path, tmp_path: Path, monkeypatch, capsys) -> None:
    import functools

    import tasks.inli.hypotheses as hypotheses

    # the command trains SmolLM2-135M; here the tiny LM, with a small adapter
    monkeypatch.setattr(hypotheses, "GeneratorTrainOptions", functools.partial(
        GeneratorTrainOptions, base=str(tiny_lm), r=2, alpha=4, progress=False))
    src = write_csv(tmp_path / "train.csv", inli_rows(4))
    out = tmp_path / "gen"
    assert cli.main(["inli", "variants", "--train", str(src), "--out", str(out),
                     "--batch-size", "4", "--device", "cpu"]) == 0
    summary = json.loads(capsys.readouterr().out.split(": ", 1)[1])
    assert summary["steps"] == 3  # 4 premises x 3 labels, batches of 4
    assert cli.main(["inli", "variants", "--premise", "Anna said the house was red.",
                     "--implied", "Anna likes the red house.", "--labels", "neutral",
                     "--generator", str(out), "--json", "--max-new-tokens", "4",
                     "--num-beams", "2", "--device", "cpu", "--dtype", "bfloat16"]) == 0
    assert "neutral" in json.loads(capsys.readouterr().out.strip().splitlines()[-1])


def test_tokens_holding_a_line_break_are_never_generated(generator: Path, monkeypatch) -> None:
    """A variant is its first line: a token like ``."\\n`` mid-decode would cut off the rest,
    with a kept word the engine had counted as met. Such tokens are suppressed."""
    import dpc_decode

    gen = VariantGenerator.load(generator / "model")
    texts = gen.tokenizer.batch_decode([[i] for i in range(len(gen.tokenizer))])
    assert gen.line_breaks == [i for i, t in enumerate(texts) if "\n" in t and i not in gen.eos]
    decoded = []
    real = dpc_decode.generate
    monkeypatch.setattr(dpc_decode, "generate",
                        lambda *a, **k: decoded.append(real(*a, **k)[0][0]) or [[decoded[-1]]])
    args = (["Robbie said the house was red."], ["Robbie likes the red house."], ["neutral"])
    gen.generate(*args, constrained=False, num_beams=2, max_new_tokens=6)
    first = decoded[-1].token_ids
    gen.line_breaks = [first[0]]  # the token the free decode starts with now "holds a break"
    gen.generate(*args, constrained=False, num_beams=2, max_new_tokens=6)
    assert first[0] not in decoded[-1].token_ids and decoded[-1].token_ids != first
