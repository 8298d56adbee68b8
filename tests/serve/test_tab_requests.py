"""The task tabs' routes (POST /api/inli, /api/swag, /api/aflite) over HTTP: bad input is a 4xx
JSON error naming the value and runs no model; an absent model is a 503 saying so; a good
request is answered; the page has the three tabs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("gradio", reason="dpc serve needs the demo extra: pip install -e '.[demo]'")

from fastapi.testclient import TestClient

from serve.app import build_app, build_blocks
from serve.service import Service
from serve.tabs import Lazy, default_tabs
from serve.tabs.aflite import AFLITE_LIMITS, AfliteTab
from serve.tabs.inli import InliTab
from serve.tabs.swag import SwagTab
from tests.tasks.aflite.conftest import winogrande_lines

from .conftest import LOCAL

JSON = {"content-type": "application/json"}
WINOGRANDE = "".join(json.dumps(line) + "\n" for line in winogrande_lines(40))

CASES = [
    # (route, body, status, words of the error)
    ("inli", {"premise": "Tom won."}, 422, 'needs an "implied"'),
    ("inli", {"premise": "", "implied": "Tom is happy."}, 422, "premise is empty"),
    ("inli", {"premise": "Tom won.", "implied": "Tom is happy.", "labels": ["implied"]}, 422,
     "implied_entailment is the input"),
    ("inli", {"premise": "Tom won.", "implied": "Tom is happy.", "labels": "neutral"}, 422,
     "labels must be a list"),
    ("inli", {"premise": "Tom won.", "implied": "Tom is happy.", "num_beams": 10**9}, 422,
     "num_beams (=1000000000)"),
    ("inli", {"premise": "Tom won.", "implied": "Tom is happy.", "rerank": "best"}, 422,
     "rerank (='best')"),
    ("inli", {"premise": "Tom\x00 won.", "implied": "Tom is happy."}, 422,
     "control character"),
    ("swag", {"input": "hello"}, 422, "is one word"),
    ("swag", {"input": "a man walks", "endings": 0}, 422, "endings (=0)"),
    ("swag", {"input": "a man walks", "top_p": "high"}, 422, "top_p (='high')"),
    ("swag", {"input": "a man walks", "temperature": -1}, 422, "temperature (=-1)"),
    ("swag", {"input": "a man walks", "seed": -1}, 422, "seed (=-1)"),
    ("swag", {"input": "a man walks", "model": "/etc"}, 422, "unknown field(s) 'model'"),
    ("aflite", {"input": WINOGRANDE}, 422, 'needs an "format"'),
    ("aflite", {"input": WINOGRANDE, "format": "csv"}, 422, "format (='csv')"),
    ("aflite", {"input": "x" * (AFLITE_LIMITS["bytes"] + 1), "format": "winogrande"}, 413,
     f"at most {AFLITE_LIMITS['bytes']}"),
    ("aflite", {"input": "{}\n" * 600, "format": "winogrande"}, 413, "600 lines"),
    ("aflite", {"input": "   ", "format": "inli"}, 422, "the file is empty"),
    ("aflite", {"input": WINOGRANDE, "format": "winogrande", "tau": 2}, 422, "tau (=2)"),
    ("aflite", {"input": WINOGRANDE, "format": "winogrande", "n": 10**6}, 422, "n (=1000000)"),
    ("aflite", {"input": WINOGRANDE, "format": "winogrande", "m": 0}, 422, "m (=0)"),
    ("aflite", {"input": 5, "format": "winogrande"}, 422, "must be the file's text"),
]


@pytest.fixture(scope="module")
def tabs(tiny_variant_generator, tiny_classifier, tiny_ending_model,
         tiny_bert: str) -> list:
    return [InliTab(load_generator=lambda: tiny_variant_generator,
                    load_classifier=lambda: tiny_classifier),
            SwagTab(load_model=lambda: tiny_ending_model), AfliteTab(encoder=tiny_bert)]


@pytest.fixture(scope="module")
def client(generator, tabs) -> TestClient:
    service = Service(generator, max_queue=4)
    return TestClient(build_app(service, tasks=tabs), base_url=LOCAL)


@pytest.mark.parametrize("route, body, status, words", CASES,
                         ids=[f"{c[0]}: {c[3]}" for c in CASES])
def test_bad_input_is_a_4xx_json_error(client: TestClient, tabs: list, route: str, body: dict,
                                       status: int, words: str) -> None:
    response = client.post(f"/api/{route}", headers=JSON, content=json.dumps(body))
    assert response.status_code == status, response.text[:300]
    assert set(response.json()) == {"error"} and words in response.json()["error"]
    assert "Traceback" not in response.text
    # (these run before any good request: no tab has loaded a model yet)
    assert not [name for tab in tabs for name, lazy in vars(tab).items()
                if isinstance(lazy, Lazy) and lazy.loaded], "a refused request loaded a model"


def test_the_routes_refuse_other_methods_and_plain_text(client: TestClient) -> None:
    got = client.get("/api/swag")
    assert got.status_code == 405 and got.json()["error"].endswith("use POST")
    plain = client.post("/api/inli", headers={"content-type": "text/plain"},
                        content=json.dumps({"premise": "a", "implied": "b"}))
    assert plain.status_code == 415


def test_good_requests_are_answered(client: TestClient) -> None:
    inli = client.post("/api/inli", headers=JSON, content=json.dumps(
        {"premise": "Tom said the house was red.", "implied": "Tom likes the red house.",
         "labels": ["neutral"], "num_beams": 2, "max_new_tokens": 6}))
    assert inli.status_code == 200, inli.text
    assert [v["label"] for v in inli.json()["variants"]] == ["neutral"]
    swag = client.post("/api/swag", headers=JSON, content=json.dumps(
        {"input": "a man walks to the car . he", "endings": 4, "max_new_tokens": 8, "seed": 3}))
    assert swag.status_code == 200, swag.text
    assert swag.json()["endings"] and isinstance(swag.json()["committee"], str)
    aflite = client.post("/api/aflite", headers=JSON, content=json.dumps(
        {"input": WINOGRANDE, "format": "winogrande", "n": 8}))
    assert aflite.status_code == 200, aflite.text
    body = aflite.json()
    assert body["instances"] == 40 and len(body["items"]) == 40
    assert "/tmp" not in json.dumps(body["report"])  # no server path told


def test_an_absent_model_is_a_503_and_the_page_still_starts(generator, tmp_path: Path) -> None:
    service = Service(generator, max_queue=4)
    tabs = [InliTab(generator=tmp_path / "none"), SwagTab(model=tmp_path / "none")]
    client = TestClient(build_app(service, tasks=tabs), base_url=LOCAL)
    response = client.post("/api/inli", headers=JSON, content=json.dumps(
        {"premise": "Tom won.", "implied": "Tom is happy."}))
    assert response.status_code == 503
    assert "the INLI variant generator is not available" in response.json()["error"]
    page = client.get("/")
    assert page.status_code == 200
    blocks = build_blocks(service, tasks=tabs)
    shown = {b.elem_id: b.value for b in blocks.blocks.values()
             if getattr(b, "elem_id", None) in ("inli-missing", "swag-missing")}
    assert "absent from this install" in shown["inli-missing"]
    assert "ending model" in shown["swag-missing"]


def test_the_page_has_the_three_task_tabs(service: Service) -> None:
    page = build_blocks(service, tasks=default_tabs())
    ids = {getattr(b, "elem_id", None) for b in page.blocks.values()}
    assert {"inli-submit", "swag-submit", "aflite-submit", "aflite-file"} <= ids
    assert "swag-no-committee" not in ids  # an HTML block's id is in its value
    notes = [b.value for b in page.blocks.values() if "without --swag-committee"
             in str(getattr(b, "value", ""))]
    assert len(notes) == 1
    assert not {"inli-missing", "swag-missing", "aflite-missing"} & ids  # all bundled
