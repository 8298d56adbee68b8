"""The INLI tab (``POST /api/inli``): a premise and its implied entailment in, the generated
variants out, each with the INLI classifier's label and probability.

The work is ``dpc inli variants``' (:mod:`tasks.inli.hypotheses`): :meth:`VariantGenerator.load`
of the bundled generator (``tasks/inli/generator``, SmolLM2-135M with its LoRA adapter) and
:meth:`VariantGenerator.generate` with the command's defaults (the classifier rerank: the
outputs of a constrained search, people and a key noun kept, negation banned in contradictions,
the word-for-word copy banned, and of an unconstrained one, chosen by the classifier); then
:meth:`tasks.inli.classifier.InliClassifier.probabilities` of the bundled classifier
(``tasks/inli/model``) on each ``(premise, variant)``, as ``dpc inli predict`` does. A variant
*agrees* when the classifier's most probable label is the one it was written for.

>>> r = InliRequest("Tom won the race.", "Tom is happy.", labels=["neutral"])
>>> r.labels, r.num_beams
(['neutral'], 4)
>>> InliRequest("Tom won.", "Tom is happy.", labels=["implied"])
Traceback (most recent call last):
...
serve.service.ServeError: labels: implied_entailment is the input, not a variant: choose from explicit_entailment, neutral, contradiction
>>> InliRequest.from_json({"premise": "Tom won."})
Traceback (most recent call last):
...
serve.service.ServeError: the request needs an "implied" string
"""

from __future__ import annotations

import html
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dpc_errors import DpcError, check_choice
from serve.render import error_html
from serve.service import (
    CancelledError,
    ServeError,
    Service,
    check_request_int,
    check_text,
    error_message,
    request_from_json,
)
from serve.tabs.base import Lazy, TaskTab
from tasks.datasets import INLI_LABELS
from tasks.inli.hypotheses import DEFAULT_GENERATOR, GENERATED_LABELS, RERANKS, parse_labels

__all__ = ["INLI_LIMITS", "InliRequest", "InliTab", "variants_html"]

#: The largest values an INLI request may ask for.
INLI_LIMITS: dict[str, int] = {"chars": 500, "num_beams": 8, "max_new_tokens": 64}
EXAMPLE = ("Tom was looking at the clock all through the meeting and left the moment it ended.",
           "Tom wanted the meeting to be over.")


@dataclass(frozen=True)
class InliRequest:
    """One premise and its implied entailment, the variants asked for (labels of
    :data:`~tasks.inli.hypotheses.GENERATED_LABELS`; short names work) and the decoding
    settings of ``dpc inli variants`` (``--num-beams``, ``--max-new-tokens``, ``--rerank``)."""

    premise: str
    implied: str
    labels: list[str] = field(default_factory=lambda: list(GENERATED_LABELS))
    num_beams: int = 4
    max_new_tokens: int = 40
    rerank: str = "classifier"

    def __post_init__(self) -> None:
        object.__setattr__(self, "premise", check_text("premise", self.premise,
                                                       INLI_LIMITS["chars"]))
        object.__setattr__(self, "implied", check_text("implied", self.implied,
                                                       INLI_LIMITS["chars"]))
        if not isinstance(self.labels, (list, tuple)) or not all(
                isinstance(label, str) for label in self.labels):
            raise ServeError("labels must be a list of label names")
        try:
            labels = parse_labels(list(self.labels))
        except DpcError as err:
            raise ServeError(f"labels: {err}") from None
        object.__setattr__(self, "labels", labels)
        for name in ("num_beams", "max_new_tokens"):
            object.__setattr__(self, name, check_request_int(name, getattr(self, name), 1,
                                                             INLI_LIMITS[name]))
        check_choice("rerank", self.rerank, RERANKS, error=ServeError, quote=False)

    @classmethod
    def from_json(cls, body: object) -> InliRequest:
        """A request from a JSON object (``premise`` and ``implied`` required)."""
        return request_from_json(cls, body, required=("premise", "implied"))


class InliTab(TaskTab):
    """The INLI tab over a variant generator and a classifier (default: the bundled ones).

    ``load_generator``/``load_classifier`` replace the loaders (tests give tiny models); each
    runs once, at the first request.
    """

    title = "INLI variants"
    key = "inli"

    def __init__(self, generator: str | Path | None = None, classifier: str | Path | None = None,
                 *, load_generator: Callable[[], Any] | None = None,
                 load_classifier: Callable[[], Any] | None = None) -> None:
        from tasks.inli.classifier import MODEL_DIR

        self.generator_folder = Path(generator) if generator is not None else DEFAULT_GENERATOR
        self.classifier_folder = Path(classifier) if classifier is not None else MODEL_DIR
        self._custom = load_generator is not None and load_classifier is not None
        self.generator = Lazy("the INLI variant generator",
                              load_generator or self._load_generator)
        self.classifier = Lazy("the INLI classifier", load_classifier or self._load_classifier)

    def _load_generator(self) -> Any:
        from tasks.inli.hypotheses import VariantGenerator

        return VariantGenerator.load(self.generator_folder)

    def _load_classifier(self) -> Any:
        from tasks.inli.classifier import InliClassifier

        return InliClassifier.load(self.classifier_folder)

    def missing(self) -> str | None:
        from tasks.inli.classifier import CLASSIFIER_FILE
        from tasks.inli.hypotheses import CONFIG_FILE

        if self._custom:
            return None
        absent = []
        if not (self.generator_folder / CONFIG_FILE).is_file():
            absent.append(f"the variant generator ({self.generator_folder / CONFIG_FILE})")
        if not (self.classifier_folder / CLASSIFIER_FILE).is_file():
            absent.append(f"the classifier ({self.classifier_folder / CLASSIFIER_FILE})")
        return ("this tab needs " + " and ".join(absent) + ", absent from this install"
                if absent else None)

    def parse(self, body: object) -> InliRequest:
        return InliRequest.from_json(body)

    def answer(self, service: Service, request: InliRequest,
               cancel: Callable[[], bool] | None = None,
               reserved: bool = False) -> dict[str, Any]:
        """``{"premise", "implied", "variants": [{"label", "text", "satisfied", "constrained",
        "score", "label_log_posterior", "predicted", "probability", "probabilities",
        "agrees"}]}``, one variant a label asked for, in the order asked."""

        def work() -> dict[str, Any]:
            generator = self.generator.get()
            classifier = self.classifier.get()
            service.watch(generator.model)
            count = len(request.labels)
            try:
                variants = generator.generate(
                    [request.premise] * count, [request.implied] * count, request.labels,
                    num_beams=request.num_beams, max_new_tokens=request.max_new_tokens,
                    rerank=request.rerank, classifier=classifier)
                probs = classifier.probabilities([request.premise] * count,
                                                 [v.text for v in variants])
            except CancelledError:
                raise
            except DpcError as err:
                raise ServeError(str(err)) from None
            out = []
            for variant, p in zip(variants, probs):
                best = int(p.argmax())
                out.append({**variant.as_dict(), "predicted": INLI_LABELS[best],
                            "probability": round(float(p[best]), 4),
                            "probabilities": {lab: round(float(x), 4)
                                              for lab, x in zip(INLI_LABELS, p)},
                            "agrees": INLI_LABELS[best] == variant.label})
            return {"premise": request.premise, "implied": request.implied, "variants": out}

        return service.run(work, cancel, reserved)

    def build(self, service: Service) -> None:
        import gradio as gr

        with gr.Tab(self.title, id=self.key):
            gr.Markdown("A premise and the hypothesis it implies → the variants `dpc inli "
                        "variants` writes (minimal edits of the implied entailment, decoded "
                        "with constraints), each with the INLI classifier's label.")
            self.missing_note()
            with gr.Row():
                with gr.Column(scale=2):
                    premise = gr.Textbox(label="Premise", value=EXAMPLE[0], lines=2,
                                         elem_id="inli-premise", max_length=INLI_LIMITS["chars"])
                    implied = gr.Textbox(label="Implied entailment", value=EXAMPLE[1],
                                         elem_id="inli-implied", max_length=INLI_LIMITS["chars"])
                    labels = gr.CheckboxGroup(list(GENERATED_LABELS), value=list(GENERATED_LABELS),
                                              label="Variants", elem_id="inli-labels")
                    with gr.Row():
                        beams = gr.Number(4, label="Beams", precision=0, minimum=1,
                                          maximum=INLI_LIMITS["num_beams"], elem_id="inli-beams")
                        new_tokens = gr.Number(40, label="Max new tokens", precision=0, minimum=1,
                                               maximum=INLI_LIMITS["max_new_tokens"],
                                               elem_id="inli-max-new-tokens")
                    go = gr.Button("Write variants", variant="primary", elem_id="inli-submit")
                with gr.Column(scale=3):
                    out = gr.HTML(elem_id="inli-results")
                    with gr.Accordion("JSON", open=False):
                        as_json = gr.JSON(elem_id="inli-json")

            def on_click(premise: str, implied: str, labels: list[str], beams: float,
                         new_tokens: float) -> tuple[str, dict[str, Any]]:
                try:
                    request = InliRequest(premise, implied, list(labels or []),
                                          beams, new_tokens)  # type: ignore[arg-type]
                    response = self.answer(service, request)
                except Exception as err:  # noqa: BLE001 (a message on the page, never a traceback)
                    message = error_message(err)
                    return error_html(message), {"error": message}
                return variants_html(response), response

            go.click(on_click, [premise, implied, labels, beams, new_tokens], [out, as_json],
                     api_visibility="private")


def variants_html(response: dict[str, Any]) -> str:
    """The variants as a table: the label asked for, the variant, the classifier's label and
    its probability, and whether they agree.

    >>> page = variants_html({"premise": "P.", "implied": "I.", "variants": [{"label":
    ...     "neutral", "text": "a <b>", "predicted": "neutral", "probability": 0.61,
    ...     "satisfied": True, "agrees": True}]})
    >>> 'data-label="neutral"' in page and "a &lt;b&gt;" in page and "0.610" in page
    True
    """
    rows = []
    for v in response["variants"]:
        kept = {True: "yes", False: "no", None: "-"}[v.get("satisfied")]
        rows.append(
            f'<tr class="dpc-variant" data-label="{html.escape(v["label"])}" '
            f'data-predicted="{html.escape(v["predicted"])}" '
            f'data-agrees="{str(v["agrees"]).lower()}">'
            f'<td>{html.escape(v["label"])}</td>'
            f'<td class="dpc-output">{html.escape(v["text"]) or "<em>(empty)</em>"}</td>'
            f'<td class="dpc-predicted">{html.escape(v["predicted"])}</td>'
            f'<td class="dpc-score">{v["probability"]:.3f}</td>'
            f'<td>{"✔" if v["agrees"] else "✘"}</td><td>{kept}</td></tr>')
    return ('<div class="dpc-inli">'
            f'<p class="dpc-summary">premise: {html.escape(response["premise"])}<br>'
            f'implied: {html.escape(response["implied"])}</p>'
            '<table class="dpc-results"><thead><tr><th>written as</th><th>variant</th>'
            "<th>classifier's label</th><th>probability</th><th>agrees</th>"
            "<th>constraints met</th></tr></thead>"
            f'<tbody>{"".join(rows)}</tbody></table></div>')
