"""Table 3 methods and their evaluation, on the toy generator and hand-made COPA items."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import pytest

from dpc_errors import DpcError
from guided_generation.baselines import METHODS, run_method
from guided_generation.errors import GuidedGenerationError
from guided_generation.retrieval import KnnRetriever
from tasks.copa import CopaItem
from tasks.copa.generation import evaluate_generation, format_table, model_prefers_correct
from tests.guided_generation.conftest import paper_options

from .conftest import toy_lemmatizer

OPTIONS = paper_options(n=3, m=2, k=4, max_new_tokens=8)
ITEMS = [
    CopaItem("1", "The babies cried.", "cause", "The babies were hungry.", "It rained.", 1),
    CopaItem("2", "It rained.", "effect", "The babies cried.", "The streets were wet.", 2),
]
BANK = [("the babies were hungry", "the babies cried all night"),
        ("the storm broke", "it rained for days"), ("it rained", "the streets were wet"),
        ("it rained hard", "the river rose")]


@pytest.fixture(scope="module")
def retriever() -> KnnRetriever:
    return KnnRetriever.from_pairs(BANK)


@pytest.mark.parametrize("method", METHODS)
def test_every_method_returns_at_most_k_outputs(generator, retriever, method):
    outputs, _ = run_method(method, generator, "babies cry", "cause", OPTIONS,
                            gold="the babies were hungry", retriever=retriever,
                            lemmatize=toy_lemmatizer)
    assert 0 < len(outputs) <= OPTIONS.k
    assert all(o.text for o in outputs)


def test_gold_method_decodes_the_gold_lemmas_as_keywords(generator):
    outputs, stats = run_method("gold", generator, "it rained", "effect", OPTIONS,
                                gold="the streets were wet", lemmatize=toy_lemmatizer)
    assert stats["rows"] == 2  # street, wet
    assert {o.keyword for o in outputs} <= {"street", "wet"} and all(o.source == "user" for o in outputs)


def test_knn_returns_the_other_side_of_matching_pairs(generator, retriever):
    outputs, _ = run_method("knn", generator, "it rained", "effect", OPTIONS, retriever=retriever)
    assert {o.text for o in outputs} == {"the streets were wet", "the river rose"}
    assert all(math.isnan(o.nll) for o in outputs)


def test_sampling_is_seeded(generator):
    a, _ = run_method("sample", generator, "babies cry", "cause", OPTIONS, seed=3)
    b, _ = run_method("sample", generator, "babies cry", "cause", OPTIONS, seed=3)
    assert [o.text for o in a] == [o.text for o in b]
    assert len({o.text for o in a}) == len(a)  # distinct samples


@pytest.mark.parametrize(
    ("method", "kwargs", "message"),
    [
        ("beam", {}, "method 'beam' is not one of guided, guided-pmi, guided-mmr, guided-verifier, nbest, sample, knn, gold"),
        ("knn", {}, "method 'knn' needs a CausalBank retriever"),
        ("gold", {}, "method 'gold' needs the gold answer"),
    ],
)
def test_bad_methods_are_clear_errors(generator, method, kwargs, message):
    with pytest.raises(GuidedGenerationError, match=message):
        run_method(method, generator, "babies cry", "cause", OPTIONS, **kwargs)


def test_evaluation_table_and_resume(generator, retriever, tmp_path):
    scores = evaluate_generation(ITEMS, generator, ["guided", "nbest", "knn", "gold"], OPTIONS,
                                 retriever=retriever, lemmatize=toy_lemmatizer, out=tmp_path,
                                 progress=False)
    by = {s.method: s for s in scores}
    assert [s.items for s in scores] == [2, 2, 2, 2]
    assert by["gold"].gold_hit == 1.0 and by["gold"].coverage == 1.0
    assert math.isnan(by["nbest"].coverage)
    assert 0 <= by["guided"].div <= 100 and 0 < by["guided"].distinct1 <= 1
    header, *logged = (tmp_path / "outputs.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(logged) == 8 and json.loads(header)["run"]["n"] == OPTIONS.n
    # a re-run reads the log instead of decoding again: a changed log changes the scores
    rows = [json.loads(line) for line in logged]
    for row in rows:
        if row["method"] == "knn":
            row["outputs"] = [row["gold"]] * 3
    (tmp_path / "outputs.jsonl").write_text(
        header + "\n" + "".join(json.dumps(r) + "\n" for r in rows) + '{"torn', encoding="utf-8")
    again = evaluate_generation(ITEMS, generator, ["knn"], OPTIONS, retriever=retriever,
                                lemmatize=toy_lemmatizer, out=tmp_path, progress=False)
    assert again[0].div == pytest.approx(100.0)
    # another run (other options, another seed) into the same folder is refused, the log kept
    kept = (tmp_path / "outputs.jsonl").read_bytes()
    with pytest.raises(DpcError, match="--seed is 1 here and 0 in the file"):
        evaluate_generation(ITEMS, generator, ["knn"], OPTIONS, retriever=retriever,
                            lemmatize=toy_lemmatizer, out=tmp_path, progress=False, seed=1)
    with pytest.raises(DpcError, match="--k is 1 here"):
        evaluate_generation(ITEMS, generator, ["knn"], replace(OPTIONS, k=1),
                            retriever=retriever, lemmatize=toy_lemmatizer, out=tmp_path,
                            progress=False)
    assert (tmp_path / "outputs.jsonl").read_bytes() == kept
    table = format_table(scores, 0.5)
    assert table.splitlines()[2].startswith("| guided | 2 |")
    assert "the wrong one under the generator: 0.500" in table


def test_model_prefers_correct_is_a_share_of_items(generator):
    value = model_prefers_correct(generator, ITEMS)
    assert value in (0.0, 0.5, 1.0)
    flipped = [CopaItem(i.id, i.premise, i.asks_for, i.alternative2, i.alternative1, 3 - i.answer)
               for i in ITEMS]
    assert model_prefers_correct(generator, flipped) == value  # the same question, reordered
