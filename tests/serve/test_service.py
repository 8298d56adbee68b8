"""The service without the web: checks, the queue, cancellation, results (a tiny model)."""

from __future__ import annotations

import re
import threading
import time

import pytest

from guided_generation.options import GuidedOptions
from guided_generation.pipeline import GuidedGenerator
from serve.service import (
    LIMITS,
    BusyError,
    CancelledError,
    ConstrainRequest,
    GenerateRequest,
    ServeError,
    Service,
    check_text,
    parse_constraint_sets,
    parse_phrases,
)

from .conftest import tiny_loader

SMALL = {"n": 3, "m": 2, "k": 3, "max_new_tokens": 6}


@pytest.mark.parametrize(("value", "message"), [
    ("", "input is empty"),                                   # empty
    ("   \n\t ", "input is empty"),                           # only whitespace
    ("x" * 10_000, "input has 10000 characters: at most 1000"),  # far too long
    ("babies\x00cry", "control character (U+0000) at position 6"),
    ("babies\x1b[31mcry", "control character (U+001B)"),      # a terminal escape
    (42, "input must be text (got int)"),
])
def test_bad_text_is_named(value: object, message: str) -> None:
    with pytest.raises(ServeError, match=re.escape(message)):
        GenerateRequest(value)  # type: ignore[arg-type]


def test_whitespace_is_collapsed() -> None:
    assert check_text("input", " babies \t cry\n") == "babies cry"


@pytest.mark.parametrize(("field", "value"), [
    ("n", 10**9), ("n", 0), ("m", 11), ("k", -1), ("n", 2.5), ("n", True), ("n", "7"),
    ("max_new_tokens", 10**6),
])
def test_out_of_range_numbers_are_refused(field: str, value: object) -> None:
    with pytest.raises(ServeError, match=rf"^{field} \(="):
        GenerateRequest("babies cry", **{field: value})  # type: ignore[arg-type]


def test_unknown_choices_and_fields_are_named() -> None:
    with pytest.raises(ServeError, match="direction \\(='why'\\) is not one of cause, effect, both"):
        GenerateRequest("babies cry", "why")
    with pytest.raises(ServeError, match="rerank"):
        GenerateRequest("babies cry", rerank="bleu")
    with pytest.raises(ServeError, match="unknown field\\(s\\) 'temperature'"):
        GenerateRequest.from_json({"input": "x", "temperature": 2})
    with pytest.raises(ServeError, match="JSON object"):
        GenerateRequest.from_json(["babies cry"])
    with pytest.raises(ServeError, match='needs an "input"'):
        ConstrainRequest.from_json({"sets": [["rain"]]})


def test_options_default_like_dpc_generate() -> None:
    # unset options are GuidedOptions' defaults, those of `dpc generate`
    assert GenerateRequest("babies cry").options() == GuidedOptions()
    assert GenerateRequest("x", n=5, k=3).options() == GuidedOptions(n=5, k=3)
    assert GenerateRequest("x", "both").directions() == ["cause", "effect"]


@pytest.mark.parametrize(("text", "message"), [
    ("|", "constraint line 1 \\('\\|'\\) has an empty alternative"),
    ("rain\n | ", "constraint line 2"),
    ("rain||wet", "empty alternative"),
    ("\n".join(["a"] * (LIMITS["sets"] + 1)), "at most 10"),
    ("rain\x07", "control character"),
])
def test_bad_constraint_lines_are_named(text: str, message: str) -> None:
    with pytest.raises(ServeError, match=message):
        parse_constraint_sets(text)


def test_constraint_lines_and_phrases() -> None:
    assert parse_constraint_sets("rain | rained\n\numbrella") == [["rain", "rained"], ["umbrella"]]
    assert parse_constraint_sets("") == []
    assert parse_phrases(" not \n\nnever") == ["not", "never"]
    with pytest.raises(ServeError, match="at most 50"):
        parse_phrases("\n".join(["x"] * 51))


def test_generate_returns_the_pipelines_dict(service: Service, generator: GuidedGenerator) -> None:
    request = GenerateRequest("babies cry", "cause", **SMALL)
    response = service.generate(request)
    assert len(response["results"]) == 1
    expected = generator.generate("babies cry", "cause", request.options()).to_dict()
    got = response["results"][0]
    # The cached decode: its stats come back too, its timings included; only the rerank,
    # run again for each call, is timed anew (its milliseconds move with the machine's load).
    assert got["stats"].pop("rerank_seconds") >= 0 and expected["stats"].pop("rerank_seconds") >= 0
    assert got == expected
    outputs = got["outputs"]
    assert 1 <= len(outputs) <= 3
    for out in outputs:  # every keyword row's output holds the form it matched
        assert out["keyword"] is None or out["matched"] in out["text"]


def test_both_directions(service: Service) -> None:
    response = service.generate(GenerateRequest("babies cry", "both", **SMALL))
    assert [r["direction"] for r in response["results"]] == ["cause", "effect"]


def test_constrain_reports_each_set(service: Service) -> None:
    response = service.constrain(ConstrainRequest("the weather", [["rain", "rained"], ["wet"]],
                                                  max_new_tokens=8))
    con = response["constrained"]
    assert con["satisfied"] is True
    assert [s["satisfied"] for s in con["sets"]] == [True, True]
    for report in con["sets"]:  # the span points at the matched phrase in the text
        start, end = report["span"]
        assert con["text"][start:end] == report["matched"]
    assert response["unconstrained"]["sets"] == []
    assert response["unconstrained"]["text"]


def test_whole_word_is_passed_to_the_engine(service: Service) -> None:
    # whole-word off lets a set be met inside a longer word; the request carries the flag
    request = ConstrainRequest("the weather", [["rain"]], whole_word=False, max_new_tokens=6)
    assert service.constrain(request)["whole_word"] is False


def test_only_the_models_the_server_offers_are_loaded(service: Service, tmp_path) -> None:
    # a folder that exists and one that does not: the same answer, which names neither
    answers = []
    for name in (str(tmp_path), "/no/such/model", "bundled"):
        with pytest.raises(ServeError) as caught:
            service.constrain(ConstrainRequest("the weather", [["rain"]], model=name))
        answers.append(str(caught.value))
    assert answers[0] == answers[1] == answers[2]
    assert answers[0].startswith("model is not one this server offers ('default', 'tiny')")
    assert str(tmp_path) not in answers[0]
    assert service.model_names == ("default", "tiny")


def test_other_models_are_loaded_once(service: Service) -> None:
    first = service.model("tiny")
    assert service.model("tiny") is first
    assert service.model("default")[0] is service.generator.model


def test_a_full_queue_answers_busy_at_once(generator: GuidedGenerator) -> None:
    service = Service(generator, max_queue=1)
    forwards: list[int] = []  # "at once": the refusal runs no model step, whatever the clock
    hook = generator.model.register_forward_pre_hook(lambda *_: forwards.append(1))
    try:
        with service.slot():
            with pytest.raises(BusyError, match="busy: 1 requests are queued"):
                service.generate(GenerateRequest("babies cry", **SMALL))
    finally:
        hook.remove()
    assert forwards == []
    assert service.pending == 0  # the place was given back
    assert service.generate(GenerateRequest("babies cry", **SMALL))["results"]


def test_a_cancelled_decode_stops_at_its_next_step(service: Service) -> None:
    steps = []

    def cancel() -> bool:
        steps.append(1)
        return len(steps) > 3  # gone after the third model step

    request = ConstrainRequest("the weather", [["rain"]], max_new_tokens=60, num_beams=8)
    with pytest.raises(CancelledError, match="client went away"):
        service.constrain(request, cancel)
    assert len(steps) == 4  # asked before starting, then once per step until it said yes
    assert service.pending == 0
    assert service.constrain(ConstrainRequest("the weather", [["rain"]], max_new_tokens=4))


def test_a_waiting_request_is_dropped_when_its_client_goes(service: Service) -> None:
    gone = threading.Event()
    errors: list[BaseException] = []

    def wait() -> None:
        try:
            service.generate(GenerateRequest("babies cry", **SMALL), gone.is_set)
        except BaseException as err:  # noqa: BLE001
            errors.append(err)

    with service.slot():  # the decoder is busy
        waiter = threading.Thread(target=wait)
        waiter.start()
        time.sleep(0.3)
        assert service.pending == 2
        gone.set()
        waiter.join(timeout=5)
    assert isinstance(errors[0], CancelledError)
    assert service.pending == 0


def test_a_reserved_place_is_given_back_on_error(service: Service) -> None:
    service.reserve()
    with pytest.raises(ServeError, match="not one this server offers"):  # after the reservation
        service.constrain(ConstrainRequest("x", [["rain"]], model="/no/such"), reserved=True)
    assert service.pending == 0
    for _ in range(service.max_queue):
        service.reserve()
    with pytest.raises(BusyError):
        service.reserve()
    for _ in range(service.max_queue):
        with service.slot(reserved=True):
            pass
    assert service.pending == 0


def test_the_offered_models_load_before_the_server_listens(generator: GuidedGenerator) -> None:
    loaded: list[str] = []

    def loader(name: str):
        loaded.append(name)
        return tiny_loader(name)

    service = Service(generator, loader=loader, models=["a", "default", "b", "a"])
    assert service.model_names == ("default", "a", "b")  # "default" is the generator's
    service.load()
    assert loaded == ["a", "b"]
    service.model("b")
    assert loaded == ["a", "b"]  # kept, not loaded again
