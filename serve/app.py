"""The web page (Gradio Blocks) and the plain HTTP JSON API of ``dpc serve``, on one app.

:func:`build_app` returns a FastAPI application holding

* ``POST /api/generate`` and ``POST /api/constrain``: JSON in, JSON out (:mod:`serve.service`
  documents the fields); a bad request is a 4xx ``{"error": message}`` (400 for a body that
  is not JSON or nested deeper than :data:`MAX_DEPTH`, 413 for one over :data:`MAX_BODY`
  bytes, 415 for one not sent as ``application/json``, 422 for a bad value, 404/405 for
  another route or method under ``/api/``), a full queue 503 ``{"error": "busy: ..."}``, a bug
  500 ``{"error": "internal error ..."}`` (never a traceback); ``GET /api/health`` says how many
  requests are held;
* ``POST /api/inli``, ``/api/swag`` and ``/api/aflite``: the task tabs (:mod:`serve.tabs`),
  checked and answered the same way (503 when the tab's model is absent);
* the page at ``/``, whose tabs call the same :class:`~serve.service.Service` (causes and
  effects, constraints, then one tab per task);
* Gradio's own API (``/gradio_api/...``) with the endpoints ``/generate`` and ``/constrain`` for
  ``gradio_client``.

Offline by construction: system fonts in the theme, analytics off, no server-side rendering
(no Node), nothing fetched from outside (the browser test checks every request the page makes).
A JSON request whose client disconnects is cancelled at the next decoding step.

Every request, Gradio's included, passes :class:`serve.guard.RequestGuard` first: a foreign
``Origin``, a ``Host`` that is not this machine (on a loopback listener), or a JSON API body
not sent as ``application/json`` is refused with ``{"error": ...}`` (403, 415).
"""

from __future__ import annotations

import os

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")  # before gradio is imported

import asyncio
import logging
import threading
from typing import Any

import gradio as gr
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from dpc_inputs import InputError
from dpc_inputs import parse_json as parse_json_text
from guided_generation.options import GuidedOptions
from serve.guard import RequestGuard, allowed_hosts
from serve.render import constrain_html, error_html, results_html
from serve.service import (
    DIRECTIONS,
    LIMITS,
    RANKS,
    RERANKS,
    CancelledError,
    ConstrainRequest,
    GenerateRequest,
    ServeError,
    Service,
    error_message,
    parse_constraint_sets,
    parse_phrases,
)
from serve.tabs import TaskTab, default_tabs

__all__ = ["MAX_BODY", "MAX_DEPTH", "MAX_UPLOAD", "THEME_FONTS", "build_app", "build_blocks",
           "parse_json", "theme"]

log = logging.getLogger("dpc.serve")

#: The largest JSON body the API reads (bytes): the largest valid request is about 60 kB.
MAX_BODY = 1_000_000
#: How deeply a JSON body may nest: a valid request nests 3 levels (sets of alternatives).
MAX_DEPTH = 20
#: The largest file the page accepts at all (Gradio refuses it before a handler runs); the
#: AFLite tab's own, smaller limit names the size (:data:`serve.tabs.aflite.AFLITE_LIMITS`).
MAX_UPLOAD = 5_000_000

#: System fonts only: Gradio's default theme would otherwise ask for web fonts.
THEME_FONTS = ("ui-sans-serif", "system-ui", "-apple-system", "Segoe UI", "Roboto", "Helvetica",
               "Arial", "sans-serif")
MONO_FONTS = ("ui-monospace", "SFMono-Regular", "Menlo", "Consolas", "Liberation Mono",
              "monospace")

CSS = """
.dpc-results { border-collapse: collapse; width: 100%; table-layout: auto; }
.dpc-results td.dpc-output { overflow-wrap: anywhere; }
.dpc-results th, .dpc-results td { border-bottom: 1px solid #ddd; padding: 4px 8px;
  text-align: left; vertical-align: top; }
.dpc-results td.dpc-rank, .dpc-results td.dpc-score { white-space: nowrap; }
.dpc-results mark, .dpc-constrain mark { background: #f9e79f; padding: 0 2px; border-radius: 3px; }
.dpc-error { color: #b03a2e; font-weight: 600; }
.dpc-note, .dpc-summary { color: #666; font-size: 90%; margin: 2px 0; }
.dpc-constrain { display: flex; gap: 24px; flex-wrap: wrap; }
.dpc-constrain .dpc-column { flex: 1 1 280px; }
.dpc-sets { list-style: none; padding-left: 0; }
.dpc-set[data-satisfied="false"] { color: #b03a2e; }
"""

DEFAULTS = {"input": "babies cry", "n": GuidedOptions.n, "m": GuidedOptions.m, "k": GuidedOptions.k,
            "rank": GuidedOptions.rank, "rerank": GuidedOptions.rerank}  # the pipeline's defaults


def theme() -> Any:
    """Gradio's default theme with system fonts (no font is fetched)."""
    return gr.themes.Default(font=list(THEME_FONTS), font_mono=list(MONO_FONTS))


# ---------------------------------------------------------------------- page handlers


def _generate_page(service: Service, text: str, direction: str, n: float, m: float, k: float,
                   rank: str, rerank: str) -> tuple[str, list[tuple[str, str]], dict[str, Any]]:
    try:
        request = GenerateRequest(text, direction, n=n, m=m, k=k, rank=rank,  # type: ignore[arg-type]
                                  rerank=rerank)
        response = service.generate(request, progress=True)
        figures = _figures(service, request.input)
    except Exception as err:  # noqa: BLE001 (a message on the page, never a traceback)
        message = error_message(err)
        return error_html(message), [], {"error": message}
    return results_html(response), figures, response


def _figures(service: Service, text: str, most: int = 3) -> list[tuple[str, str]]:
    return [(str(service.neighbourhood_png(lemma)), f"'{lemma}' in the Cause Effect Graph")
            for lemma in service.lemmas(text)[:most]]


def _constrain_page(service: Service, model: str, text: str, sets: str, banned: str,
                    whole_word: bool, num_beams: float,
                    max_new_tokens: float) -> tuple[str, dict[str, Any]]:
    try:
        request = ConstrainRequest(text, parse_constraint_sets(sets), parse_phrases(banned),
                                   bool(whole_word), model or "default",
                                   num_beams, max_new_tokens)  # type: ignore[arg-type]
        response = service.constrain(request)
    except Exception as err:  # noqa: BLE001 (a message, never a traceback)
        message = error_message(err)
        return error_html(message), {"error": message}
    return constrain_html(response), response


# ---------------------------------------------------------------------- the page


def build_blocks(service: Service, tasks: list[TaskTab] | None = None) -> gr.Blocks:
    """The page: a tab for causes and effects, one for constraints, then the task tabs
    (:mod:`serve.tabs`; ``None``: :func:`serve.tabs.default_tabs`, ``[]``: none)."""
    with gr.Blocks(title="dpc: causes, effects and constraints", analytics_enabled=False) as page:
        gr.Markdown("## dpc — guided generation of causes and effects, and constrained decoding")
        with gr.Tab("Causes and effects", id="causes"):
            with gr.Row():
                with gr.Column(scale=2):
                    text = gr.Textbox(label="Sentence", value=DEFAULTS["input"],
                                      elem_id="ce-input", max_length=LIMITS["chars"])
                    direction = gr.Radio(list(DIRECTIONS), value="cause", label="Direction",
                                         elem_id="ce-direction")
                    with gr.Row():
                        n = gr.Number(DEFAULTS["n"], label="N (keywords)", precision=0,
                                      minimum=1, maximum=LIMITS["n"], elem_id="ce-n")
                        m = gr.Number(DEFAULTS["m"], label="M (per keyword)", precision=0,
                                      minimum=1, maximum=LIMITS["m"], elem_id="ce-m")
                        k = gr.Number(DEFAULTS["k"], label="K (returned)", precision=0,
                                      minimum=1, maximum=LIMITS["k"], elem_id="ce-k")
                    with gr.Row():
                        rank = gr.Dropdown(list(RANKS), value=DEFAULTS["rank"],
                                           label="Keyword ranking")
                        rerank = gr.Dropdown(list(RERANKS), value=DEFAULTS["rerank"],
                                             label="Reranker")
                    go = gr.Button("Generate", variant="primary", elem_id="ce-submit")
                    figures = gr.Gallery(label="The input's lemmas in the Cause Effect Graph",
                                         columns=1, height=340, object_fit="contain",
                                         elem_id="ce-graph")
                with gr.Column(scale=3):
                    results = gr.HTML(elem_id="ce-results")
                    with gr.Accordion("JSON", open=False):
                        ce_json = gr.JSON(elem_id="ce-json")
            def on_generate(text: str, direction: str, n: float, m: float, k: float, rank: str,
                            rerank: str, progress: Any = gr.Progress(track_tqdm=True)) -> Any:  # noqa: B008
                return _generate_page(service, text, direction, n, m, k, rank, rerank)

            go.click(on_generate, [text, direction, n, m, k, rank, rerank],
                     [results, figures, ce_json],
                     api_visibility="private")
        with gr.Tab("Constraints", id="constraints"):
            with gr.Row():
                with gr.Column(scale=2):
                    model = gr.Dropdown(list(service.model_names), value="default",
                                        allow_custom_value=False, elem_id="cs-model",
                                        label="Model (those the server was started with)")
                    c_text = gr.Textbox(label="Input", value="The weather today", elem_id="cs-input",
                                        max_length=LIMITS["chars"])
                    sets = gr.Textbox(label="Constraint sets: one per line, alternatives a|b",
                                      value="rain|rained|raining\numbrella|umbrellas", lines=3,
                                      elem_id="cs-sets")
                    banned = gr.Textbox(label="Negative phrases, one per line", lines=2,
                                        elem_id="cs-banned")
                    whole = gr.Checkbox(True, label="Whole words only", elem_id="cs-whole")
                    with gr.Row():
                        beams = gr.Number(4, label="Beams", precision=0, minimum=1,
                                          maximum=LIMITS["num_beams"], elem_id="cs-beams")
                        new_tokens = gr.Number(20, label="Max new tokens", precision=0, minimum=1,
                                               maximum=LIMITS["max_new_tokens"],
                                               elem_id="cs-max-new-tokens")
                    c_go = gr.Button("Decode", variant="primary", elem_id="cs-submit")
                with gr.Column(scale=3):
                    c_out = gr.HTML(elem_id="cs-results")
                    with gr.Accordion("JSON", open=False):
                        c_json = gr.JSON(elem_id="cs-json")
            def on_constrain(model: str, text: str, sets: str, banned: str, whole: bool,
                             beams: float, new_tokens: float) -> Any:
                return _constrain_page(service, model, text, sets, banned, whole, beams,
                                       new_tokens)

            c_go.click(on_constrain,
                       [model, c_text, sets, banned, whole, beams, new_tokens], [c_out, c_json],
                       api_visibility="private")
        for tab in (tasks if tasks is not None else default_tabs()):
            tab.build(service)
        _gradio_api(service)
    return page


def _gradio_api(service: Service) -> None:
    """Typed endpoints for ``gradio_client`` (``api_name="/generate"``, ``"/constrain"``)."""

    def generate(input: str, direction: str = "cause", n: int = GuidedOptions.n,
                 m: int = GuidedOptions.m, k: int = GuidedOptions.k, rank: str = GuidedOptions.rank,
                 rerank: str = GuidedOptions.rerank) -> dict:
        """Causes and/or effects of a sentence: what POST /api/generate returns."""
        try:
            return service.generate(GenerateRequest(input, direction, n=n, m=m, k=k, rank=rank,
                                                    rerank=rerank))
        except Exception as err:  # noqa: BLE001 (a message, never a traceback)
            raise gr.Error(error_message(err), print_exception=False) from None

    def constrain(input: str, sets: str, banned: str = "", whole_word: bool = True,
                  model: str = "default", num_beams: int = 4, max_new_tokens: int = 20) -> dict:
        """Constrained beam search (sets: one per line, alternatives a|b) beside the
        unconstrained search: what POST /api/constrain returns."""
        try:
            return service.constrain(ConstrainRequest(
                input, parse_constraint_sets(sets), parse_phrases(banned), whole_word, model,
                num_beams, max_new_tokens))
        except Exception as err:  # noqa: BLE001 (a message, never a traceback)
            raise gr.Error(error_message(err), print_exception=False) from None

    gr.api(generate, api_name="generate")
    gr.api(constrain, api_name="constrain")


# ---------------------------------------------------------------------- the JSON API


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


async def _answer(request: Request, service: Service, parse: Any, work: Any) -> JSONResponse:
    """Parse the JSON body, take a place in the queue, run ``work(parsed, cancel)`` (which
    gives the place back) in a thread, and cancel it when the client disconnects; errors become
    ``{"error": ...}`` with their status."""
    raw = bytearray()
    async for chunk in request.stream():
        raw += chunk
        if len(raw) > MAX_BODY:
            return _error(413, f"the request body is over {MAX_BODY} bytes")
    try:
        body = parse_json(bytes(raw))
    except ServeError as err:
        return _error(err.status, str(err))
    try:
        parsed = parse(body)
    except ServeError as err:
        return _error(err.status, str(err))
    except (TypeError, ValueError) as err:
        return _error(422, str(err))
    try:
        service.reserve()  # counted now, so requests waiting for a thread count too
    except ServeError as err:
        return _error(err.status, str(err))
    gone = threading.Event()  # work() gives the place back when it ends
    task = asyncio.ensure_future(asyncio.to_thread(work, parsed, gone.is_set))
    while not task.done():
        done, _ = await asyncio.wait({task}, timeout=0.25)
        if not done and await request.is_disconnected():
            gone.set()  # the decode stops at its next step
    try:
        return JSONResponse(task.result())
    except CancelledError as err:
        return _error(err.status, str(err))  # nobody reads it
    except ServeError as err:
        return _error(err.status, str(err))
    except Exception as err:  # noqa: BLE001 (a message, never a traceback)
        return _error(500, error_message(err))


class _BadJSON(ServeError):
    status = 400


def parse_json(raw: bytes) -> Any:
    """A request body as JSON (:func:`dpc_inputs.parse_json`, as every input file's line is
    read), or a :class:`ServeError` with status 400 when it is not UTF-8, not JSON, or nests
    deeper than :data:`MAX_DEPTH` (``[[[[...`` a hundred thousand deep is an answer, not a
    ``RecursionError``). A leading byte-order mark is dropped.

    >>> parse_json(b'{"input": "babies cry", "sets": [["rain"]]}')
    {'input': 'babies cry', 'sets': [['rain']]}
    >>> parse_json(b"[" * 100_000 + b"]" * 100_000)
    Traceback (most recent call last):
    ...
    serve.app._BadJSON: the request body nests arrays and objects deeper than 20 levels
    """
    try:
        text = raw.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as err:
        raise _BadJSON(f"the request body is not UTF-8 text (byte {err.start + 1} is "
                       f"0x{raw[err.start]:02x})") from None
    try:
        return parse_json_text(text, "the request body", max_depth=MAX_DEPTH)
    except InputError as err:
        raise _BadJSON(str(err)) from None


def build_app(service: Service, tasks: list[TaskTab] | None = None,
              host: str = "127.0.0.1") -> FastAPI:
    """The FastAPI app: the JSON routes (``POST /api/<key>`` for each task tab too), and the
    page mounted at ``/``, behind :class:`serve.guard.RequestGuard` for a server listening on
    ``host`` (a loopback address answers only ``Host`` names that mean this machine).
    ``tasks``: the task tabs (``None``: :func:`serve.tabs.default_tabs`)."""
    app = FastAPI(title="dpc serve", docs_url=None, redoc_url=None, openapi_url=None)
    tasks = default_tabs() if tasks is None else tasks

    @app.get("/api/health")
    def health() -> dict[str, Any]:
        return {"status": "ok", "pending": service.pending, "max_queue": service.max_queue}

    @app.post("/api/generate")
    async def api_generate(request: Request) -> JSONResponse:
        return await _answer(request, service, GenerateRequest.from_json,
                             lambda r, cancel: service.generate(r, cancel, reserved=True))

    @app.post("/api/constrain")
    async def api_constrain(request: Request) -> JSONResponse:
        return await _answer(request, service, ConstrainRequest.from_json,
                             lambda r, cancel: service.constrain(r, cancel, reserved=True))

    def task_route(tab: TaskTab) -> None:
        async def api_task(request: Request) -> JSONResponse:
            return await _answer(request, service, tab.parse,
                                 lambda r, cancel: tab.answer(service, r, cancel, reserved=True))

        app.post(f"/api/{tab.key}")(api_task)

    for tab in tasks:
        task_route(tab)

    routes = {"/api/generate": "POST", "/api/constrain": "POST",
              **{f"/api/{tab.key}": "POST" for tab in tasks}, "/api/health": "GET"}

    @app.api_route("/api/{rest:path}", methods=["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD",
                                                "OPTIONS"], include_in_schema=False)
    async def api_other(request: Request, rest: str) -> JSONResponse:
        allowed = routes.get(f"/api/{rest}")
        if allowed is not None:
            return JSONResponse({"error": f"{request.method} is not allowed here: use {allowed}"},
                                status_code=405, headers={"Allow": allowed})
        return _error(404, f"no route /api/{rest[:100]}: the routes are "
                      f"{', '.join(f'{m} {p}' for p, m in routes.items())}")

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, err: StarletteHTTPException) -> JSONResponse:
        return JSONResponse({"error": str(err.detail)}, status_code=err.status_code,
                            headers=getattr(err, "headers", None))

    @app.exception_handler(Exception)
    async def internal_error(request: Request, err: Exception) -> JSONResponse:
        return _error(500, error_message(err))

    app.add_middleware(RequestGuard, hosts=allowed_hosts(host))
    page = build_blocks(service, tasks)
    page.queue(default_concurrency_limit=1, max_size=service.max_queue)
    return gr.mount_gradio_app(app, page, path="/", theme=theme(), css=CSS, ssr_mode=False,
                               footer_links=["api"], mcp_server=False,
                               max_file_size=MAX_UPLOAD)
