"""The web API trusts nothing: hostile and malformed HTTP requests, one row each.

Every row states the request (method, path, headers, raw body) and the answer: its status and a
word of its JSON ``{"error": ...}`` (of the answer itself for a 200). No answer holds a
traceback, a refused request runs nothing (the model is never called), and the server answers
the next request. The generator is a tiny bert2bert whose position tables hold 64 tokens (the
bundled generator's architecture): 1,000 CJK characters used to reach it whole and crash it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("gradio", reason="dpc serve needs the demo extra: pip install -e '.[demo]'")

from fastapi.testclient import TestClient

from guided_generation.pipeline import GuidedGenerator
from serve.app import MAX_BODY, build_app, build_blocks
from serve.service import Service
from tests.guided_generation.conftest import bert2bert

from .conftest import LOCAL, tiny_loader, toy_graph, toy_lemmatizer

JSON = {"content-type": "application/json"}
SMALL = {"n": 2, "m": 1, "k": 2, "max_new_tokens": 4}
CJK = "猫が窓の外を見ている" * 100  # 1,000 characters (the limit), 1,000 tokens, no space
EXISTING = str(Path(__file__).resolve().parent)  # a folder that exists on the server


def js(value: Any) -> bytes:
    return json.dumps(value).encode()


def nested(depth: int) -> Any:
    value: Any = []
    for _ in range(depth - 1):
        value = [value]
    return value


def constrain(model: str) -> bytes:
    return js({"input": "the weather", "sets": [["rain"]], "model": model})


@dataclass(frozen=True)
class Case:
    """One request and its answer."""

    name: str
    method: str
    path: str
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes | None = None
    status: int = 200
    word: str = ""  # in the JSON error (in the answer, for a 200)


CASES = [
    # the model field names only what the server was started with; the same answer otherwise
    Case("model: an existing folder not offered", "POST", "/api/constrain", JSON,
         constrain(EXISTING), 422, "not one this server offers"),
    Case("model: a missing path", "POST", "/api/constrain", JSON, constrain("/no/such/model"),
         422, "not one this server offers"),
    Case("model: bundled, not offered", "POST", "/api/constrain", JSON, constrain("bundled"),
         422, "not one this server offers"),
    Case("model: a relative path up", "POST", "/api/constrain", JSON, constrain("../../.."),
         422, "not one this server offers"),
    # bodies are JSON, sent as such: a cross-origin page cannot send that without a preflight
    Case("text/plain POST (CSRF without a preflight)", "POST", "/api/generate",
         {"content-type": "text/plain"}, js({"input": "babies cry"}), 415, "application/json"),
    Case("no content type", "POST", "/api/generate", {}, js({"input": "babies cry"}), 415,
         "no content type"),
    Case("a form post", "POST", "/api/constrain",
         {"content-type": "application/x-www-form-urlencoded"}, b"input=the+weather", 415,
         "application/json"),
    Case("multipart", "POST", "/api/generate", {"content-type": "multipart/form-data; boundary=b"},
         b"--b\r\n\r\nbabies cry\r\n--b--", 415, "application/json"),
    # Origin: present, it must be the server's own
    Case("a foreign Origin", "POST", "/api/generate", {**JSON, "origin": "http://evil.example"},
         js({"input": "babies cry"}), 403, "Origin"),
    Case("a foreign Origin, text/plain", "POST", "/api/generate",
         {"content-type": "text/plain", "origin": "https://evil.example"},
         js({"input": "babies cry"}), 403, "Origin"),
    Case("Origin null (a sandboxed frame, a file)", "POST", "/api/generate",
         {**JSON, "origin": "null"}, js({"input": "babies cry"}), 403, "Origin"),
    Case("another port of this machine is another origin", "POST", "/api/generate",
         {**JSON, "origin": "http://127.0.0.1:9999"}, js({"input": "babies cry"}), 403, "Origin"),
    Case("a foreign Origin on Gradio's API", "GET", "/gradio_api/info",
         {"origin": "http://evil.example"}, None, 403, "Origin"),
    # Host: a loopback server answers only names of this machine (DNS rebinding)
    Case("DNS rebinding: a foreign Host", "POST", "/api/generate",
         {**JSON, "host": "evil.example:7860"}, js({"input": "babies cry"}), 403, "Host"),
    Case("a foreign Host on the page", "GET", "/", {"host": "evil.example"}, None, 403, "Host"),
    Case("a foreign Host whose Origin agrees", "POST", "/api/generate",
         {**JSON, "host": "evil.example:7860", "origin": "http://evil.example:7860"},
         js({"input": "babies cry"}), 403, "Host"),
    # bodies that are not what they say
    Case("nested JSON: 100,000 [", "POST", "/api/generate", JSON, b"[" * 100_000, 400, "nests"),
    Case("nested JSON that parses", "POST", "/api/generate", JSON, js(nested(500)), 400, "nests"),
    Case("nesting inside a field", "POST", "/api/constrain", JSON,
         js({"input": "x", "sets": nested(30)}), 400, "nests"),
    Case("not JSON", "POST", "/api/generate", JSON, b"{not json", 400, "not JSON"),
    Case("not UTF-8", "POST", "/api/generate", JSON, b'{"input": "\xff\xfe"}', 400, "not UTF-8 text"),
    Case("an integer of 5,000 digits", "POST", "/api/generate", JSON,
         b'{"input": "babies cry", "n": ' + b"9" * 5000 + b"}", 400, "not JSON dpc can read"),
    Case("a body over the limit", "POST", "/api/generate", JSON,
         js({"input": "x" * (MAX_BODY + 1)}), 413, "bytes"),
    # values
    Case("n = NaN", "POST", "/api/generate", JSON, b'{"input": "babies cry", "n": NaN}', 422,
         "n (=nan)"),
    Case("num_beams = 10^9", "POST", "/api/constrain", JSON,
         js({"input": "x", "num_beams": 10**9}), 422, "num_beams (=1000000000)"),
    Case("num_beams = 10^40", "POST", "/api/constrain", JSON,
         js({"input": "x", "num_beams": 10**40}), 422, "num_beams"),
    Case("1,001 characters", "POST", "/api/generate", JSON, js({"input": CJK + "猫"}), 422,
         "1001 characters"),
    # routes
    Case("GET on a POST route", "GET", "/api/generate", {}, None, 405, "use POST"),
    Case("an unknown API route", "POST", "/api/run", JSON, js({}), 404, "no route"),
    # what must pass
    Case("1,000 CJK characters: cut, with a note", "POST", "/api/generate", JSON,
         js({"input": CJK, **SMALL}), 200, "cut to its first"),
    Case("1,000 CJK characters, constrained: cut, with a note", "POST", "/api/constrain", JSON,
         js({"input": CJK, "sets": [["rain"]], "max_new_tokens": 4}), 200, "cut to its first"),
    Case("the server's own Origin", "GET", "/api/health", {"origin": LOCAL}, None, 200, "ok"),
    Case("localhost on another port (an SSH tunnel)", "GET", "/api/health",
         {"host": "localhost:9000"}, None, 200, "ok"),
    Case("[::1]", "GET", "/api/health", {"host": "[::1]:7860"}, None, 200, "ok"),
]


@pytest.fixture(scope="module")
def service() -> Iterator[Service]:
    model, tokenizer = bert2bert()
    generator = GuidedGenerator(model, tokenizer, toy_graph(), lemmatizer=toy_lemmatizer,
                                verifier=None)
    yield Service(generator, max_queue=4, loader=tiny_loader, models=["tiny"])


@pytest.fixture(scope="module")
def client(service: Service) -> TestClient:
    return TestClient(build_app(service, tasks=[]), base_url=LOCAL)


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_each_request_gets_its_answer(client: TestClient, service: Service, case: Case) -> None:
    steps: list[int] = []
    hook = service.generator.model.register_forward_pre_hook(lambda *_: steps.append(1))
    try:
        response = client.request(case.method, case.path, headers=case.headers,
                                  content=case.body)
    finally:
        hook.remove()
    assert response.status_code == case.status, response.text[:300]
    assert "Traceback" not in response.text
    body = response.json()
    if case.status == 200:
        assert "error" not in body and case.word in response.text
    else:
        assert set(body) == {"error"} and case.word in body["error"], body
        assert steps == [], "a refused request ran the model"
    assert client.get("/api/health").json()["status"] == "ok"  # the server goes on


def test_a_refused_model_does_not_tell_whether_the_path_exists(client: TestClient) -> None:
    answers = [client.post("/api/constrain", headers=JSON, content=constrain(path))
               for path in (EXISTING, "/no/such/model", EXISTING + "/conftest.py")]
    assert [a.status_code for a in answers] == [422] * 3
    assert answers[0].content == answers[1].content == answers[2].content
    assert EXISTING not in answers[0].text


def test_an_offered_model_is_used(client: TestClient) -> None:
    response = client.post("/api/constrain", headers=JSON, content=js(
        {"input": "the weather", "sets": [["rain"]], "model": "tiny", "max_new_tokens": 6}))
    assert response.status_code == 200, response.text
    assert response.json()["model"] == "tiny" and response.json()["notes"] == []


def test_the_page_offers_only_the_models_the_server_has(service: Service) -> None:
    page = build_blocks(service, tasks=[])
    (box,) = [b for b in page.blocks.values() if getattr(b, "elem_id", None) == "cs-model"]
    assert [value for _, value in box.choices] == ["default", "tiny"]
    assert box.allow_custom_value is False


def test_a_server_beyond_loopback_answers_any_host_but_checks_origin(service: Service) -> None:
    client = TestClient(build_app(service, tasks=[], host="0.0.0.0"),
                        base_url="http://lab-server.example:7860")
    assert client.get("/api/health").status_code == 200
    refused = client.get("/api/health", headers={"origin": "http://evil.example"})
    assert refused.status_code == 403 and "Origin" in refused.json()["error"]
    assert client.get("/api/health", headers={
        "origin": "http://lab-server.example:7860"}).status_code == 200
