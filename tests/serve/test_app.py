"""The HTTP JSON API and the page's handlers, in-process with a tiny model: every bad input is a
4xx JSON error on the API and a message on the page, the server stays up, a full queue is a
503, and the API's JSON equals ``dpc generate --json`` for the same input and options."""

from __future__ import annotations

import contextlib
import io
import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("gradio", reason="dpc serve needs the demo extra: pip install -e '.[demo]'")

from fastapi.testclient import TestClient

from guided_generation.pipeline import GuidedGenerator
from serve.app import _constrain_page, _generate_page, build_app
from serve.service import Service

from .conftest import LOCAL, tiny_loader, toy_graph

SMALL = {"n": 3, "m": 2, "k": 3, "max_new_tokens": 6}
TIMINGS = ("keyword_seconds", "decode_seconds", "rerank_seconds")


@pytest.fixture()
def client(service: Service) -> TestClient:
    return TestClient(build_app(service, tasks=[]), base_url=LOCAL)


#: (what is wrong, the endpoint, the body, the status, words of the message)
BAD_REQUESTS = [
    ("empty input", "/api/generate", {"input": ""}, 422, "input is empty"),
    ("10,000 characters", "/api/generate", {"input": "a" * 10_000}, 422,
     "input has 10000 characters"),
    ("control characters", "/api/generate", {"input": "babies\x00\x1bcry"}, 422,
     "control character (U+0000)"),
    ("N = 10^9", "/api/generate", {"input": "babies cry", "n": 10**9}, 422,
     "n (=1000000000) must be an integer from 1 to 300"),
    ("unknown direction", "/api/generate", {"input": "x", "direction": "why"}, 422, "direction"),
    ("unknown field", "/api/generate", {"input": "x", "nn": 3}, 422, "unknown field(s) 'nn'"),
    ("no input", "/api/generate", {"n": 3}, 422, 'needs an "input"'),
    ("a list, not an object", "/api/generate", ["babies cry"], 422, "JSON object"),
    ("unknown model path", "/api/constrain",
     {"input": "the weather", "sets": [["rain"]], "model": "/no/such/model"}, 422,
     "model is not one this server offers"),
    ("a set without alternatives", "/api/constrain", {"input": "x", "sets": [[]]}, 422,
     "set 1 has no alternative"),
    ("an empty alternative", "/api/constrain", {"input": "x", "sets": [["", " "]]}, 422,
     "set 1 is empty"),
    ("sets not a list of lists", "/api/constrain", {"input": "x", "sets": "rain|wet"}, 422,
     "sets must be a list"),
    ("beams = 10^9", "/api/constrain", {"input": "x", "num_beams": 10**9}, 422,
     "num_beams (=1000000000)"),
]


@pytest.mark.parametrize(("what", "path", "body", "status", "message"), BAD_REQUESTS,
                         ids=[case[0] for case in BAD_REQUESTS])
def test_bad_input_is_a_4xx_json_error(client: TestClient, what: str, path: str, body: Any,
                                       status: int, message: str) -> None:
    response = client.post(path, json=body)
    assert response.status_code == status, response.text
    assert message in response.json()["error"]
    assert "Traceback" not in response.text
    assert client.get("/api/health").json()["status"] == "ok"  # the server is alive


def test_a_body_that_is_not_json_is_a_400(client: TestClient) -> None:
    response = client.post("/api/generate", content=b"{not json",
                           headers={"content-type": "application/json"})
    assert response.status_code == 400
    assert response.json() == {"error": "the request body is not JSON (Expecting property name "
                                        "enclosed in double quotes at column 2)"}
    latin1 = client.post("/api/generate", content=b'{"input": "caf\xe9"}',
                         headers={"content-type": "application/json"})
    assert latin1.status_code == 400
    assert latin1.json() == {"error": "the request body is not UTF-8 text (byte 15 is 0xe9)"}


#: The page's handlers with the same bad inputs: a message where the results go.
BAD_PAGE_INPUTS = [
    ("empty input", ("", "cause", 3, 2, 3, "mix", "mmr"), "input is empty"),
    ("10,000 characters", ("a" * 10_000, "cause", 3, 2, 3, "mix", "mmr"), "10000 characters"),
    ("control characters", ("babies\x07cry", "cause", 3, 2, 3, "mix", "mmr"), "U+0007"),
    ("N = 10^9", ("babies cry", "cause", 1e9, 2, 3, "mix", "mmr"), "n (=1000000000)"),
    ("N = -1", ("babies cry", "cause", -1, 2, 3, "mix", "mmr"), "n (=-1)"),
]


@pytest.mark.parametrize(("what", "args", "message"), BAD_PAGE_INPUTS,
                         ids=[case[0] for case in BAD_PAGE_INPUTS])
def test_bad_input_is_a_message_on_the_page(service: Service, what: str, args: tuple,
                                            message: str) -> None:
    page, figures, data = _generate_page(service, *args)
    assert page.startswith('<p class="dpc-error"') and message in page.replace("&#x27;", "'")
    assert figures == [] and message in data["error"]


@pytest.mark.parametrize(("what", "args", "message"), [
    ("a line of only |", ("default", "the weather", "|", "", True, 4, 8),
     "constraint line 1 ('|') has an empty alternative"),
    ("unknown model path", ("/no/such/model", "the weather", "rain", "", True, 4, 8),
     "model is not one this server offers ('default', 'tiny')"),
    ("empty input", ("default", " ", "rain", "", True, 4, 8), "input is empty"),
    ("beams = 10^9", ("default", "x", "rain", "", True, 1e9, 8), "num_beams"),
])
def test_bad_constraints_are_a_message_on_the_page(service: Service, what: str, args: tuple,
                                                   message: str) -> None:
    page, data = _constrain_page(service, *args)
    assert page.startswith('<p class="dpc-error"')
    assert message in page.replace("&#x27;", "'") and message in data["error"]


def test_the_page_shows_highlighted_results(service: Service) -> None:
    page, figures, data = _generate_page(service, "babies cry", "cause", 3, 2, 3, "weight", "nll")
    assert page.count("<tr data-keyword=") == len(data["results"][0]["outputs"]) >= 1
    for out in data["results"][0]["outputs"]:
        if out["keyword"]:
            assert f"<mark>{out['matched']}</mark>" in page
    assert [Path(path).read_bytes()[:4] for path, _ in figures] == [b"\x89PNG"] * 2  # baby, cry
    page, data = _constrain_page(service, "default", "the weather", "rain|rained\nwet", "", True,
                                 4, 8)
    assert page.count('data-satisfied="true"') == 3  # the output, and each of its two sets


def test_generate_and_constrain_over_http(client: TestClient) -> None:
    response = client.post("/api/generate", json={"input": "babies cry", "direction": "both",
                                                  **SMALL})
    assert response.status_code == 200
    assert [r["direction"] for r in response.json()["results"]] == ["cause", "effect"]
    response = client.post("/api/constrain", json={"input": "the weather",
                                                   "sets": [["rain", "rained"], ["wet"]],
                                                   "banned": ["sun"], "max_new_tokens": 8})
    assert response.status_code == 200
    body = response.json()
    assert body["constrained"]["satisfied"] and "sun" not in body["constrained"]["text"].split()


def test_a_full_queue_answers_503_busy(generator: GuidedGenerator) -> None:
    service = Service(generator, max_queue=1)
    client = TestClient(build_app(service, tasks=[]), base_url=LOCAL)
    with service.slot():  # one request holds the only place
        response = client.post("/api/generate", json={"input": "babies cry", **SMALL})
    assert response.status_code == 503
    assert response.json()["error"].startswith("busy:")
    assert client.post("/api/generate", json={"input": "babies cry", **SMALL}).status_code == 200


def test_a_client_that_goes_away_stops_its_decode(generator: GuidedGenerator) -> None:
    # The API polls the connection while the decode runs; a disconnect sets the request's
    # cancel flag, which the model hook checks at every step. Each step is slowed to 50 ms, so
    # the whole decode (2 x 64 steps) would take over 6 s; the client hangs up after 0.3 s.
    import asyncio

    service = Service(generator)
    seen: list[bool] = []
    original = service.constrain

    def constrain(request: Any, cancel: Any, **how: Any) -> Any:
        seen.append(cancel())
        try:
            return original(request, cancel, **how)
        finally:
            seen.append(cancel())

    service.constrain = constrain  # type: ignore[method-assign]
    app = build_app(service, tasks=[])
    replies: list[dict[str, Any]] = []
    body = json.dumps({"input": "the weather", "sets": [["rain"]], "num_beams": 2,
                       "max_new_tokens": 64}).encode()

    forwards: list[int] = []  # one entry a model forward
    at_hang_up: list[int] = []  # the forwards made when the client left

    async def call() -> None:
        sent = False
        hang_up = time.perf_counter() + 0.3

        async def receive() -> dict[str, Any]:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            while time.perf_counter() < hang_up:  # nothing to read until the client leaves
                await asyncio.sleep(0.01)
            at_hang_up.append(len(forwards))
            return {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            replies.append(message)

        scope = {"type": "http", "method": "POST", "path": "/api/constrain",
                 "headers": [(b"content-type", b"application/json"),
                             (b"host", b"127.0.0.1:7860")], "query_string": b"",
                 "http_version": "1.1", "scheme": "http", "server": ("t", 80),
                 "client": ("t", 1), "root_path": ""}
        await app(scope, receive, send)

    def paced(*_: Any) -> None:  # paces the decode so that the client leaves during it
        forwards.append(1)
        time.sleep(0.05)

    slow = generator.model.register_forward_pre_hook(paced)
    try:
        asyncio.run(call())
    finally:
        slow.remove()
    assert seen == [False, True]  # running when it started, cancelled when it ended
    assert replies[0]["status"] == 499
    # the work done, not the time taken: the decode stops within a few steps of the hang-up
    # (the cancel flag is read at the next step), far short of its 64
    assert at_hang_up and len(forwards) <= at_hang_up[0] + 3, (at_hang_up, len(forwards))
    assert service.pending == 0


def test_the_json_equals_dpc_generate_json(tmp_path: Path, monkeypatch) -> None:
    import numpy as np

    import guided_generation.pipeline as pipeline
    from cause_effect_graph.store import save_graph
    from cli import main
    from train.models import placeholder_model

    class Lenient:  # the bundled verifier rejects the untrained model's every output
        threshold = None

        def scores(self, text, direction, candidates):
            return np.full(len(candidates), 100.0)

    monkeypatch.setattr(pipeline, "default_verifier", Lenient)

    folder, graph = tmp_path / "model", tmp_path / "toy.ceg"
    m = placeholder_model()
    m.model.save_pretrained(folder)
    m.tokenizer.save_pretrained(folder)
    save_graph(toy_graph(), graph)
    options = {"n": 3, "m": 2, "k": 4, "max_new_tokens": 6, "rerank": "nll"}
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert main(["generate", "--input", "babies cry", "--direction", "effect", "--json",
                     "--model", str(folder), "--graph", str(graph), "--device", "cpu",
                     *[f"--{k.replace('_', '-')}={v}" for k, v in options.items()]]) == 0
    expected = json.loads(printed.getvalue())
    service = Service(model=str(folder), graph=str(graph), loader=tiny_loader)
    response = TestClient(build_app(service, tasks=[]), base_url=LOCAL).post(
        "/api/generate", json={"input": "babies cry", "direction": "effect", **options})
    assert response.status_code == 200
    (got,) = response.json()["results"]
    assert expected.pop("index") == 0
    for result in (expected, got):
        for key in TIMINGS:
            result["stats"].pop(key)
    assert got == expected
    assert got["outputs"], "nothing generated: the comparison would be empty"


def test_many_clients_at_once_all_answered(service: Service) -> None:
    client = TestClient(build_app(service, tasks=[]), base_url=LOCAL)
    answers: list[int] = []

    def ask() -> None:
        answers.append(client.post("/api/generate", json={"input": "babies cry", **SMALL})
                       .status_code)

    threads = [threading.Thread(target=ask) for _ in range(4)]  # max_queue=4: all fit
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert answers == [200] * 4


def test_gradio_client_calls_the_same_functions(service: Service) -> None:
    # The README's gradio_client example, against a real server on a free port.
    gradio_client = pytest.importorskip("gradio_client")
    import socket

    import uvicorn

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(build_app(service, tasks=[]), host="127.0.0.1",
                                           port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        while not server.started:
            time.sleep(0.05)
        client = gradio_client.Client(f"http://127.0.0.1:{port}/", verbose=False)
        got = client.predict("babies cry", "cause", 3, 2, 3, "mix", "mmr", api_name="/generate")
        assert [r["input"] for r in got["results"]] == ["babies cry"]
        got = client.predict("the weather", "rain|rained\nwet", "", True, "default", 4, 8,
                             api_name="/constrain")
        assert [s["satisfied"] for s in got["constrained"]["sets"]] == [True, True]
        with pytest.raises(Exception, match="constraint line 1"):  # gradio_client's AppError
            client.predict("the weather", "|", api_name="/constrain")
    finally:
        server.should_exit = True
        thread.join(timeout=10)
