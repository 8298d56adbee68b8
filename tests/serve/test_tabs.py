"""The task tabs' work (serve.tabs): each answer is what the task's own functions give for the
same input, models load once, an absent model makes the tab say so. Tiny models built from code
(seconds); the real bundled ones are driven by tests/serve/test_browser.py."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
import pytest

from serve.service import ServeError, Service, UnavailableError
from serve.tabs.aflite import AFLITE_LIMITS, AfliteRequest, AfliteTab, TooLargeError, aflite_html
from serve.tabs.inli import InliRequest, InliTab, variants_html
from serve.tabs.swag import NO_COMMITTEE, SwagRequest, SwagTab, endings_html
from tests.tasks.aflite.conftest import winogrande_lines

from .conftest import write_pool

PREMISE, IMPLIED = "Tom said the house was red.", "Tom likes the red house."


def counted(load):
    calls: list[int] = []

    def loader():
        calls.append(1)
        return load()

    return loader, calls


# ---------------------------------------------------------------------- INLI


@pytest.fixture(scope="module")
def inli_tab(tiny_variant_generator, tiny_classifier) -> tuple[InliTab, list[int]]:
    load, calls = counted(lambda: tiny_variant_generator)
    return InliTab(load_generator=load, load_classifier=lambda: tiny_classifier), calls


def test_inli_variants_come_with_the_classifiers_label(service: Service, inli_tab,
                                                       tiny_variant_generator,
                                                       tiny_classifier) -> None:
    tab, calls = inli_tab
    labels = ["contradiction", "explicit_entailment"]
    request = InliRequest(PREMISE, IMPLIED, labels, num_beams=2, max_new_tokens=6)
    answer = tab.answer(service, request)
    again = tab.answer(service, request)
    assert calls == [1], "the generator loads once, at the first request"
    # what `dpc inli variants` and `dpc inli predict` give for the same input
    direct = tiny_variant_generator.generate([PREMISE] * 2, [IMPLIED] * 2, labels, num_beams=2,
                                             max_new_tokens=6, rerank="classifier",
                                             classifier=tiny_classifier)
    probs = tiny_classifier.probabilities([PREMISE] * 2, [v.text for v in direct])
    assert [v["label_probability"] for v in answer["variants"]] == [
        v.label_probability for v in direct]
    # the label rerank, asked for, is what `dpc inli variants --rerank label` gives
    by_label = tab.answer(service, InliRequest(PREMISE, IMPLIED, labels, num_beams=2,
                                               max_new_tokens=6, rerank="label"))
    assert [v["text"] for v in by_label["variants"]] == [v.text for v in (
        tiny_variant_generator.generate([PREMISE] * 2, [IMPLIED] * 2, labels, num_beams=2,
                                        max_new_tokens=6, rerank="label"))]
    assert [v["label"] for v in answer["variants"]] == labels
    assert [v["text"] for v in answer["variants"]] == [v.text for v in direct]
    assert answer == again
    for variant, p in zip(answer["variants"], probs):
        best = int(p.argmax())
        assert variant["predicted"] == ["implied_entailment", "explicit_entailment", "neutral",
                                        "contradiction"][best]
        assert variant["probability"] == pytest.approx(float(p[best]), abs=1e-4)
        assert sum(variant["probabilities"].values()) == pytest.approx(1.0, abs=1e-3)
        assert variant["agrees"] == (variant["predicted"] == variant["label"])
    page = variants_html(answer)
    assert page.count('class="dpc-variant"') == 2 and 'data-label="contradiction"' in page


def test_inli_requests_name_the_bad_value() -> None:
    with pytest.raises(ServeError, match="premise is empty"):
        InliRequest("  ", IMPLIED)
    with pytest.raises(ServeError, match="unknown INLI label 'entailment'"):
        InliRequest(PREMISE, IMPLIED, ["entailment"])
    with pytest.raises(ServeError, match=r"num_beams \(=9\) must be an integer from 1 to 8"):
        InliRequest(PREMISE, IMPLIED, num_beams=9)
    with pytest.raises(ServeError, match="premise has 501 characters"):
        InliRequest("x" * 501, IMPLIED)


def test_an_absent_inli_model_makes_the_tab_say_so(service: Service, tmp_path: Path) -> None:
    tab = InliTab(generator=tmp_path / "none", classifier=tmp_path / "none")
    assert "variant generator" in tab.missing() and "classifier" in tab.missing()
    with pytest.raises(UnavailableError, match="the INLI variant generator is not available"):
        tab.answer(service, InliRequest(PREMISE, IMPLIED))
    assert service.pending == 0  # the place in the queue is given back
    assert InliTab().missing() is None  # the bundled models are there


# ---------------------------------------------------------------------- SWAG


@pytest.fixture(scope="module")
def pool(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_pool(tmp_path_factory.mktemp("pool") / "pool")


def test_swag_endings_are_scored_by_the_committee_fitted_once(service: Service, pool: Path,
                                                               tiny_ending_model) -> None:
    from tasks.swag.adversarial_filter import fitted_committee
    from tasks.swag.committee import pos_tags

    tab = SwagTab(committee=pool, load_model=lambda: tiny_ending_model)
    request = SwagRequest("a man walks to the car . he", endings=4, max_new_tokens=8, seed=3)
    answer = tab.answer(service, request)
    endings = answer["endings"]
    assert endings, answer
    assert answer["committee"]["contexts"] == 12 and answer["committee"]["filtered"] is False
    texts = [e["text"] for e in endings]
    assert len(set(texts)) == len(texts) and all(t.strip() for t in texts)
    ensemble = [e["scores"]["ensemble"] for e in endings]
    assert ensemble == sorted(ensemble, reverse=True)
    assert all(set(e["scores"]) == {"mlp", "bow", "cnn", "lstm", "ensemble"} for e in endings)
    assert answer["committee"]["ensemble"] == "joint" and answer["committee"]["choices"] == 4
    # the same scores from the task's own functions: a committee fitted on the pool, the
    # endings read with the pool's vocabularies
    committee, table, _ = fitted_committee(pool)
    new = table.featurise(texts, [e["log_prob"] for e in endings], [e["tokens"] for e in endings],
                          [8] * len(texts), pos_tags(texts))
    direct = committee.scores(new, np.arange(len(texts)))["ensemble"]
    assert ensemble == pytest.approx(direct.tolist(), abs=1e-3)
    fitted = tab.committee._value
    tab.answer(service, request)
    assert tab.committee._value is fitted  # fitted once
    assert "committee: mlp, bow, cnn, lstm" in endings_html(answer)


def test_swag_without_a_committee_says_so(service: Service, tiny_ending_model) -> None:
    tab = SwagTab(load_model=lambda: tiny_ending_model)
    answer = tab.answer(service, SwagRequest("a man walks to the car . he", endings=4,
                                             max_new_tokens=8, seed=3))
    assert answer["committee"] == NO_COMMITTEE
    assert answer["endings"] and all(e["scores"] is None for e in answer["endings"])
    assert all(e["log_prob"] < 0 for e in answer["endings"])
    assert "without --swag-committee" in endings_html(answer)


def test_swag_requests_name_the_bad_value() -> None:
    with pytest.raises(ServeError, match="is one word"):
        SwagRequest("hello")
    with pytest.raises(ServeError, match=r"endings \(=17\)"):
        SwagRequest("a man walks", endings=17)
    with pytest.raises(ServeError, match=r"temperature \(=nan\)"):
        SwagRequest("a man walks", temperature=float("nan"))


def test_a_bad_committee_folder_makes_the_tab_say_so(service: Service, tmp_path: Path,
                                                     tiny_ending_model) -> None:
    few = write_pool(tmp_path / "few", contexts=3)
    tab = SwagTab(committee=few, load_model=lambda: tiny_ending_model)
    with pytest.raises(UnavailableError, match="only 3 contexts"):
        tab.answer(service, SwagRequest("a man walks to the car . he", max_new_tokens=8))


# ---------------------------------------------------------------------- AFLite


def winogrande_text(count: int = 40) -> str:
    return "".join(json.dumps(line) + "\n" for line in winogrande_lines(count))


def test_aflite_keeps_what_dpc_aflite_keeps(service: Service, tiny_bert: str,
                                            tmp_path: Path) -> None:
    from tasks.aflite.cli import add_aflite_parser, run_aflite

    tab = AfliteTab(encoder=tiny_bert)
    text = winogrande_text()
    answer = tab.answer(service, AfliteRequest(text, "winogrande", n=16, seed=1))
    assert answer["instances"] == 40 == answer["kept"] + answer["removed"]
    assert answer["removed"] > 0
    # the command itself, on the same file and settings
    data = tmp_path / "wg.jsonl"
    data.write_text(text)
    import argparse

    parser = argparse.ArgumentParser()
    add_aflite_parser(parser.add_subparsers())
    report = run_aflite(parser.parse_args(
        ["aflite", str(data), "--format", "winogrande", "--out", str(tmp_path / "out"),
         "--finetune", "0", "--n", "16", "--seed", "1", "--encoder", tiny_bert]))
    assert answer["kept"] == report["kept"]
    assert answer["report"]["kl_after"] == pytest.approx(report["kl_after"])
    kept_file = (tmp_path / "out" / report["kept_file"]).read_text()
    assert answer["kept_file"] == kept_file
    kept_sentences = {json.loads(line)["sentence"] for line in kept_file.splitlines()}
    shown = {item["text"].split(" [")[0] for item in answer["items"] if item["kept"]}
    assert shown == kept_sentences
    assert base64.b64decode(answer["figure_png"])[:4] == b"\x89PNG"
    page = aflite_html(answer)
    assert page.count('data-kept="false"') == answer["removed"]
    assert tab.encoder.loaded


def test_aflite_refuses_large_and_bad_files(service: Service, tiny_bert: str) -> None:
    with pytest.raises(TooLargeError, match=f"at most {AFLITE_LIMITS['bytes']}"):
        AfliteRequest("x" * (AFLITE_LIMITS["bytes"] + 1), "winogrande")
    with pytest.raises(TooLargeError, match="at most 500 rows"):
        AfliteRequest(winogrande_text(502), "winogrande")
    with pytest.raises(ServeError, match="view"):
        AfliteRequest(winogrande_text(), "inli", view="twins")
    with pytest.raises(ServeError, match="a lone surrogate at character 1"):
        AfliteRequest("a\ud800b", "winogrande")  # JSON's "\ud800": no UTF-8 file holds it
    tab = AfliteTab(encoder=tiny_bert)
    with pytest.raises(ServeError, match=r"upload\.jsonl:1") as err:
        tab.answer(service, AfliteRequest("{not json\n", "winogrande"))
    assert "/tmp" not in str(err.value)
    with pytest.raises(ServeError, match=r"`m` \(=40\) must be smaller"):
        tab.answer(service, AfliteRequest(winogrande_text(), "winogrande", m=40))


def test_aflite_reads_a_swag_csv_and_gives_it_back(service: Service, tiny_bert: str) -> None:
    from tasks.aflite.formats import FORMATS

    rows = "".join(f'{i},v{i},{i},"Person {i} walks. he","Person {i} walks.",he,gold,'
                   f'sits {i}.,runs.,eats {i % 3}.,waves.,{i % 4}\n' for i in range(24))
    text = (",video-id,fold-ind,startphrase,sent1,sent2,gold-source,ending0,ending1,ending2,"
            "ending3,label\n" + rows)
    assert "swag-csv" in FORMATS  # every format dpc aflite reads is one the tab takes
    answer = AfliteTab(encoder=tiny_bert).answer(service, AfliteRequest(text, "swag-csv", n=8,
                                                                         seed=0))
    assert answer["instances"] == 24 == answer["kept"] + answer["removed"]
    assert answer["kept_file"].startswith(",video-id,fold-ind,startphrase,sent1,sent2")
    assert len(answer["kept_file"].splitlines()) == answer["kept"] + 1
