"""The SWAG tab (``POST /api/swag``): a context in, endings sampled for it out, each with the
AF committee's scores when the server has a committee.

Endings are sampled as ``dpc swag oversample`` samples them (:mod:`tasks.swag.oversample`):
the bundled ending model (``tasks/swag/ending_lm``, SmolLM2-135M with its LoRA adapter) reads
:func:`~tasks.swag.ending_model.ending_prompt` of the context, :func:`dpc_decode.sample` draws
distinct endings (``unique=True``) ended by :func:`~tasks.swag.ending_model.end_token_ids`, each
goes through :func:`~tasks.swag.ending_model.normalise_ending`, and an ending cut off at
``max_new_tokens``, empty or repeated is dropped (counted in ``dropped``).

**The committee.** No committee is bundled: ``dpc swag filter`` trains one per AF iteration
and saves none. ``dpc serve --swag-committee DIR`` names a pool folder of ``dpc swag
oversample`` (filtered by ``dpc swag filter`` or not): at the first request the server fits a
committee of all four members (MLP on LM features, bag of words, CNN, BiLSTM) and their joint
ensemble on that pool's 4-way questions (:func:`tasks.swag.adversarial_filter.fitted_committee`:
the final negatives AF chose, or a random draw), once, and scores each sampled ending with it
(:meth:`~tasks.swag.committee.EndingTable.featurise` reads a new ending with the pool's
vocabularies). A score is a member's logit that the ending is the real one; ``ensemble`` is the
joint model's over the members' features, the rule AF uses. Without ``--swag-committee`` the endings come with the ending
model's log-probabilities only, and the tab and the answer's ``committee`` say so.

>>> SwagRequest("A man is sitting on a roof. he", endings=3).endings
3
>>> SwagRequest("A man is on a roof.", top_p=1.5)
Traceback (most recent call last):
...
serve.service.ServeError: top_p (=1.5) has to be a finite number in (0.0, 1.0]
"""

from __future__ import annotations

import html
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dpc_errors import DpcError
from serve.render import error_html
from serve.service import (
    CancelledError,
    ServeError,
    Service,
    check_request_float,
    check_request_int,
    check_text,
    error_message,
    request_from_json,
)
from serve.tabs.base import Lazy, TaskTab

__all__ = ["NO_COMMITTEE", "SWAG_LIMITS", "SwagRequest", "SwagTab", "endings_html"]

#: The largest values a SWAG request may ask for.
SWAG_LIMITS: dict[str, int] = {"chars": 1000, "endings": 16, "max_new_tokens": 64,
                               "seed": 2**31 - 1}
#: What the tab and the answer say when the server has no committee.
NO_COMMITTEE = ("no committee: this server was started without --swag-committee DIR (a pool "
                "folder of `dpc swag oversample`, filtered or not), and none is bundled; the "
                "endings come with the ending model's log-probabilities only")
MEMBERS = ("mlp", "bow", "cnn", "lstm")
EXAMPLE = "A man is sitting on a roof. he"


@dataclass(frozen=True)
class SwagRequest:
    """One context and how its endings are sampled (``dpc swag oversample``'s
    ``--temperature``, ``--top-p``, ``--max-new-tokens``, ``--seed``; ``endings`` distinct
    endings are asked for)."""

    input: str
    endings: int = 4
    max_new_tokens: int = 40
    temperature: float = 1.0
    top_p: float = 0.95
    seed: int = 0

    def __post_init__(self) -> None:
        text = check_text("input", self.input, SWAG_LIMITS["chars"])
        if len(text.split()) < 2:
            raise ServeError(f"input ({text!r}) is one word: a context needs at least two "
                             "(as for dpc swag oversample)")
        object.__setattr__(self, "input", text)
        object.__setattr__(self, "endings", check_request_int("endings", self.endings, 1,
                                                              SWAG_LIMITS["endings"]))
        object.__setattr__(self, "max_new_tokens", check_request_int(
            "max_new_tokens", self.max_new_tokens, 1, SWAG_LIMITS["max_new_tokens"]))
        object.__setattr__(self, "temperature", check_request_float(
            "temperature", self.temperature, 0.0, 5.0, open_low=True))
        object.__setattr__(self, "top_p", check_request_float("top_p", self.top_p, 0.0, 1.0,
                                                              open_low=True))
        object.__setattr__(self, "seed", check_request_int("seed", self.seed, 0,
                                                           SWAG_LIMITS["seed"]))

    @classmethod
    def from_json(cls, body: object) -> SwagRequest:
        """A request from a JSON object (``input``, the context, required)."""
        return request_from_json(cls, body)


class SwagTab(TaskTab):
    """The SWAG tab over an ending model (default: the bundled one) and, with ``committee`` (a
    pool folder), the committee fitted on it. ``load_model`` replaces the ending model's
    loader (tests give a tiny one); models load once, at the first request."""

    title = "SWAG endings"
    key = "swag"

    def __init__(self, model: str | Path | None = None, committee: str | Path | None = None, *,
                 load_model: Callable[[], tuple[Any, Any]] | None = None) -> None:
        from tasks.swag.ending_model import BUNDLED_ENDING_MODEL

        self.model_folder = Path(model) if model is not None else BUNDLED_ENDING_MODEL
        self._custom = load_model is not None
        self.model = Lazy("the SWAG ending model", load_model or self._load_model)
        self.committee_folder = Path(committee) if committee is not None else None
        self.committee = (Lazy(f"the SWAG committee of {self.committee_folder}",
                               self._fit_committee)
                          if self.committee_folder is not None else None)

    def _load_model(self) -> tuple[Any, Any]:
        from tasks.swag.ending_model import load_ending_model

        return load_ending_model(self.model_folder)

    def _fit_committee(self) -> tuple[Any, Any, dict[str, Any]]:
        from tasks.swag.adversarial_filter import fitted_committee

        return fitted_committee(self.committee_folder)  # type: ignore[arg-type]

    def missing(self) -> str | None:
        from tasks.swag.ending_model import MARKER

        if self._custom or (self.model_folder / MARKER).is_file():
            return None
        return f"this tab needs the ending model ({self.model_folder / MARKER}), absent"

    def parse(self, body: object) -> SwagRequest:
        return SwagRequest.from_json(body)

    def answer(self, service: Service, request: SwagRequest,
               cancel: Callable[[], bool] | None = None,
               reserved: bool = False) -> dict[str, Any]:
        """``{"input", "endings": [{"text", "log_prob", "tokens", "scores"}], "dropped",
        "committee"}``: ``scores`` maps each committee member and ``ensemble`` to its logit
        (``None`` without a committee), the endings sorted by ``ensemble``, highest (the one
        the committee takes likeliest for the real ending) first; ``committee`` says what
        scored them (``{"folder", "contexts", "choices", "filtered", "members", "ensemble"}``) or, as a string,
        why nothing did."""

        def work() -> dict[str, Any]:
            model, tokenizer = self.model.get()
            service.watch(model)
            try:
                endings, dropped = _sample(model, tokenizer, request)
            except CancelledError:
                raise
            except DpcError as err:
                raise ServeError(str(err)) from None
            about: dict[str, Any] | str = NO_COMMITTEE
            if self.committee is not None and endings:
                committee, table, fitted = self.committee.get()
                _score(committee, table, request.input, endings)
                endings.sort(key=lambda e: -e["scores"]["ensemble"])
                about = {"folder": str(self.committee_folder), **fitted}
            elif self.committee is not None:
                about = {"folder": str(self.committee_folder)}
            return {"input": request.input, "endings": endings, "dropped": dropped,
                    "committee": about}

        return service.run(work, cancel, reserved)

    def build(self, service: Service) -> None:
        import gradio as gr

        with gr.Tab(self.title, id=self.key):
            gr.Markdown("A context → endings sampled by the SWAG ending model, as `dpc swag "
                        "oversample` samples them, with the Adversarial Filtering committee's "
                        "scores (higher: the committee takes it for the real ending).")
            self.missing_note()
            if self.committee is None:
                gr.HTML(f'<p class="dpc-note" id="swag-no-committee">{html.escape(NO_COMMITTEE)}'
                        "</p>")
            with gr.Row():
                with gr.Column(scale=2):
                    context = gr.Textbox(label="Context", value=EXAMPLE, lines=2,
                                         elem_id="swag-input", max_length=SWAG_LIMITS["chars"])
                    with gr.Row():
                        count = gr.Number(4, label="Endings", precision=0, minimum=1,
                                          maximum=SWAG_LIMITS["endings"], elem_id="swag-endings")
                        new_tokens = gr.Number(40, label="Max new tokens", precision=0,
                                               minimum=1, maximum=SWAG_LIMITS["max_new_tokens"],
                                               elem_id="swag-max-new-tokens")
                        seed = gr.Number(0, label="Seed", precision=0, minimum=0,
                                         elem_id="swag-seed")
                    go = gr.Button("Sample endings", variant="primary", elem_id="swag-submit")
                with gr.Column(scale=3):
                    out = gr.HTML(elem_id="swag-results")
                    with gr.Accordion("JSON", open=False):
                        as_json = gr.JSON(elem_id="swag-json")

            def on_click(context: str, count: float, new_tokens: float,
                         seed: float) -> tuple[str, dict[str, Any]]:
                try:
                    request = SwagRequest(context, count, new_tokens,  # type: ignore[arg-type]
                                          seed=seed)  # type: ignore[arg-type]
                    response = self.answer(service, request)
                except Exception as err:  # noqa: BLE001 (a message on the page, never a traceback)
                    message = error_message(err)
                    return error_html(message), {"error": message}
                return endings_html(response), response

            go.click(on_click, [context, count, new_tokens, seed], [out, as_json],
                     api_visibility="private")


def _sample(model: Any, tokenizer: Any, request: SwagRequest
            ) -> tuple[list[dict[str, Any]], int]:
    """Distinct finished endings of the context, as ``dpc swag oversample`` keeps them, and
    how many samples were dropped."""
    import dpc_decode
    from tasks.swag.ending_model import end_token_ids, ending_prompt, normalise_ending

    ends = end_token_ids(model, tokenizer)
    options = dpc_decode.SamplingOptions(
        num_samples=request.endings, temperature=request.temperature, top_p=request.top_p,
        unique=True, max_rounds=4, max_new_tokens=request.max_new_tokens, seed=request.seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # fewer distinct endings than asked: counted below
        found = dpc_decode.sample(model, tokenizer, [ending_prompt(model, request.input)], None,
                                  options=options,
                                  eos_token_id=ends if ends is not None else "model")[0]
    texts = normalise_ending(tokenizer, [o.text or "" for o in found])
    endings: list[dict[str, Any]] = []
    seen: set[str] = set()
    for output, text in zip(found, texts):
        if not output.finished or not text.split() or text in seen:
            continue  # cut off at max_new_tokens, empty, or a repeat
        seen.add(text)
        endings.append({"text": text, "log_prob": round(float(output.log_prob), 4),
                        "tokens": len(output.token_ids) + 1, "scores": None})
    return endings, len(found) - len(endings)


def _score(committee: Any, table: Any, context: str, endings: list[dict[str, Any]]) -> None:
    """Each member's logit (and the ensemble's) of each ending, into ``ending["scores"]``."""
    import numpy as np

    from tasks.swag.committee import pos_tags

    texts = [e["text"] for e in endings]
    new = table.featurise(texts, [e["log_prob"] for e in endings],
                          [e["tokens"] for e in endings], [len(context.split())] * len(texts),
                          pos_tags(texts))
    scores = committee.scores(new, np.arange(len(texts)))
    for i, ending in enumerate(endings):
        ending["scores"] = {name: round(float(values[i]), 4) for name, values in scores.items()}


def endings_html(response: dict[str, Any]) -> str:
    """The endings as a table: the ending, its log-probability under the ending model and,
    with a committee, each member's score and the ensemble's.

    >>> page = endings_html({"input": "He sits.", "dropped": 0, "committee": {"folder": "p",
    ...     "contexts": 9, "choices": 4, "filtered": True, "members": ["mlp"],
    ...     "ensemble": "joint"},
    ...     "endings": [{"text": "he <b>", "log_prob": -3.0, "tokens": 3,
    ...                  "scores": {"mlp": 0.5, "ensemble": 0.5}}]})
    >>> "he &lt;b&gt;" in page and 'data-ensemble="0.5"' in page
    True
    """
    about = response["committee"]
    names = [m for m in (*MEMBERS, "ensemble")
             if response["endings"] and (response["endings"][0]["scores"] or {}).get(m) is not None]
    head = "".join(f"<th>{name}</th>" for name in names)
    rows = []
    for rank, ending in enumerate(response["endings"], start=1):
        scores = ending["scores"] or {}
        cells = "".join(f'<td class="dpc-score">{scores[name]:.3f}</td>' for name in names)
        ensemble = scores.get("ensemble")
        rows.append(f'<tr class="dpc-ending" data-ensemble="{"" if ensemble is None else ensemble}">'
                    f'<td class="dpc-rank">{rank}</td>'
                    f'<td class="dpc-output">{html.escape(ending["text"])}</td>'
                    f'<td class="dpc-score">{ending["log_prob"]:.2f}</td>{cells}</tr>')
    if isinstance(about, dict) and "contexts" in about:
        kind = "AF's chosen negatives" if about["filtered"] else "random pool negatives"
        rule = ("one model over the members' features" if about.get("ensemble") == "joint"
                else "their sum")
        note = (f'committee: {", ".join(about["members"])}, fitted on {about["contexts"]} '
                f'{about["choices"]}-way questions of {html.escape(about["folder"])} ({kind}); '
                f"score = logit that the ending is the real one, ensemble = {rule}")
    elif isinstance(about, dict):
        note = "committee: no ending to score"
    else:
        note = html.escape(about)
    return ('<div class="dpc-swag">'
            f'<p class="dpc-summary">context: {html.escape(response["input"])} · '
            f'{len(response["endings"])} endings ({response["dropped"]} samples dropped: cut '
            "off, empty or repeated)</p>"
            '<table class="dpc-results"><thead><tr><th>#</th><th>ending</th>'
            f"<th>log-prob</th>{head}</tr></thead>"
            f'<tbody>{"".join(rows)}</tbody></table>'
            f'<p class="dpc-note dpc-committee">{note}</p></div>')
