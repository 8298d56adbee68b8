"""The AFLite tab (``POST /api/aflite``): a small dataset file in, the instances AFLite kept and
removed out, with the paper's Figure 1.

The work is ``dpc aflite``'s, unchanged (:func:`tasks.aflite.cli.run_aflite`, the command's own
parser and defaults): the file is read in its format (:mod:`tasks.aflite.formats`: WinoGrande or
multiple-choice JSON lines, a SWAG or an INLI CSV), embedded, filtered by
:func:`~tasks.aflite.algorithm.aflite`, measured (PC1 KL and the linear probe, before and after,
beside random and PMI reductions of the same size) and drawn
(:func:`tasks.aflite.measures.figure`), and the kept items are written in the input's format.
One difference, for a web request: the encoder is all-MiniLM-L6-v2 as it is pretrained
(``--finetune 0``: the paper's recipe fine-tunes on a share of the data, which a file of a few
hundred rows cannot spare), loaded once per server
(:func:`tasks.aflite.embeddings.pretrained_encoder`).

Uploads are capped at :data:`AFLITE_LIMITS` (bytes and instances; HTTP 413 beyond). The API
takes the file's text as ``input``; the page takes an upload.

>>> AfliteRequest('{"ctx": "x"}', "multiple-choice").view
'choices'
>>> AfliteRequest("x", "csv")
Traceback (most recent call last):
...
serve.service.ServeError: format (='csv') is not one of winogrande, inli, multiple-choice, swag-csv
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import html
import tempfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dpc_errors import DpcError, check_choice
from serve.render import error_html
from serve.service import (
    CancelledError,
    ServeError,
    Service,
    check_request_float,
    check_request_int,
    error_message,
    request_from_json,
)
from serve.tabs.base import Lazy, TaskTab
from tasks.aflite.formats import FORMATS, SUFFIXES, VIEWS

__all__ = ["AFLITE_LIMITS", "AfliteRequest", "AfliteTab", "TooLargeError", "aflite_html",
           "read_upload"]

#: The largest upload (bytes of the file) and dataset (instances) the tab filters, and the
#: most models a phase may train.
AFLITE_LIMITS: dict[str, int] = {"bytes": 200_000, "instances": 500, "n": 256}
UPLOAD = "upload"


class TooLargeError(ServeError):
    """An upload over :data:`AFLITE_LIMITS` (HTTP 413)."""

    status = 413


@dataclass(frozen=True)
class AfliteRequest:
    """One dataset (``input``: the file's text, at most ``AFLITE_LIMITS["bytes"]`` bytes in
    UTF-8) in one of :data:`~tasks.aflite.formats.FORMATS`, and ``dpc aflite``'s parameters
    (``m`` and ``k`` ``None``: the paper's proportions of the data size)."""

    input: str
    format: str
    view: str | None = None
    n: int = 64
    m: int | None = None
    k: int | None = None
    tau: float = 0.75
    seed: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.input, str):
            raise ServeError(f"input must be the file's text (got {type(self.input).__name__})")
        size = len(self.input.encode("utf-8", "surrogatepass"))
        lone = next((i for i, c in enumerate(self.input) if "\ud800" <= c <= "\udfff"), None)
        if lone is not None:  # JSON's "\ud800" escape: no UTF-8 file can hold it
            raise ServeError(f"input is not Unicode text (a lone surrogate at character {lone})")
        if size > AFLITE_LIMITS["bytes"]:
            raise TooLargeError(f"the file has {size} bytes: at most {AFLITE_LIMITS['bytes']}")
        if not self.input.strip():
            raise ServeError("the file is empty")
        lines = sum(1 for line in self.input.splitlines() if line.strip())
        if lines > AFLITE_LIMITS["instances"] + 1:  # a CSV's header
            raise TooLargeError(f"the file has {lines} lines: at most "
                                f"{AFLITE_LIMITS['instances']} rows")
        check_choice("format", self.format, FORMATS, error=ServeError, quote=False)
        view = VIEWS[self.format][0] if self.view in (None, "") else self.view
        check_choice("view", view, VIEWS[self.format], error=ServeError, quote=False)
        object.__setattr__(self, "view", view)
        object.__setattr__(self, "n", check_request_int("n", self.n, 1, AFLITE_LIMITS["n"]))
        for name in ("m", "k"):
            if getattr(self, name) is not None:
                object.__setattr__(self, name, check_request_int(
                    name, getattr(self, name), 1, AFLITE_LIMITS["instances"]))
        object.__setattr__(self, "tau", check_request_float("tau", self.tau, 0.0, 1.0,
                                                            open_low=True))
        object.__setattr__(self, "seed", check_request_int("seed", self.seed, 0, 2**31 - 1))

    @classmethod
    def from_json(cls, body: object) -> AfliteRequest:
        """A request from a JSON object (``input`` and ``format`` required)."""
        return request_from_json(cls, body, required=("input", "format"))


def read_upload(path: str | Path) -> str:
    """An uploaded file's text: a :class:`TooLargeError` over ``AFLITE_LIMITS["bytes"]``
    (checked before it is read), a :class:`~serve.service.ServeError` when it is not UTF-8."""
    path = Path(path)
    size = path.stat().st_size
    if size > AFLITE_LIMITS["bytes"]:
        raise TooLargeError(f"the file has {size} bytes: at most {AFLITE_LIMITS['bytes']}")
    data = path.read_bytes()
    try:
        return data.decode("utf-8").removeprefix("\ufeff")  # a BOM is no text, as everywhere
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        raise ServeError(f"the file is not UTF-8 text (line {line}, byte "
                         f"0x{data[err.start]:02x})") from None


class AfliteTab(TaskTab):
    """The AFLite tab; ``encoder`` names the encoder as ``dpc aflite --encoder`` does
    (``None``: all-MiniLM-L6-v2), loaded once, at the first request. Each answer's files (the
    figure, the kept items) stay in the tab's temporary folder while the server runs."""

    title = "AFLite"
    key = "aflite"

    def __init__(self, encoder: str | None = None) -> None:
        self.encoder_name = encoder
        self.encoder = Lazy("the AFLite encoder", self._load_encoder)
        self._folder: Path | None = None

    def _load_encoder(self) -> Any:
        from tasks.aflite.embeddings import pretrained_encoder

        return pretrained_encoder(self.encoder_name)

    def missing(self) -> str | None:
        if self.encoder_name is not None:
            return None
        try:
            from train.models import minilm_tokenizer_path

            minilm_tokenizer_path()
        except (DpcError, OSError, ImportError) as err:
            return f"this tab needs the all-MiniLM-L6-v2 encoder: {err}"
        return None

    def parse(self, body: object) -> AfliteRequest:
        return AfliteRequest.from_json(body)

    def answer(self, service: Service, request: AfliteRequest,
               cancel: Callable[[], bool] | None = None,
               reserved: bool = False) -> dict[str, Any]:
        """``{"format", "view", "instances", "kept", "removed", "report", "items",
        "figure_png", "kept_file"}``: ``report`` is what ``dpc aflite`` writes to
        ``report.json`` (its local paths left out), ``items`` every instance (``text``,
        ``label``, ``kept``), ``figure_png`` the figure in base64; ``kept_file`` the kept items
        in the input's format (as text)."""

        return self.answer_files(service, request, cancel, reserved)[0]

    def answer_files(self, service: Service, request: AfliteRequest,
                     cancel: Callable[[], bool] | None = None, reserved: bool = False
                     ) -> tuple[dict[str, Any], dict[str, str]]:
        """:meth:`answer` and the paths of its files on the server (``figure``, ``kept``),
        which the page shows and the API does not tell."""

        def work() -> tuple[dict[str, Any], dict[str, str]]:
            encoder = self.encoder.get()
            return self._run(request, encoder)

        return service.run(work, cancel, reserved)

    def _run(self, request: AfliteRequest, encoder: Any
             ) -> tuple[dict[str, Any], dict[str, str]]:
        from tasks.aflite.cli import add_aflite_parser, run_aflite
        from tasks.aflite.formats import load_instances

        if self._folder is None:
            self._folder = Path(tempfile.mkdtemp(prefix="dpc-serve-aflite-"))
        key = hashlib.sha256(repr((request.input, request.format, request.view, request.n,
                                   request.m, request.k, request.tau,
                                   request.seed)).encode("utf-8", "surrogatepass"))
        run = Path(tempfile.mkdtemp(prefix=key.hexdigest()[:12] + "-", dir=self._folder))
        data = run / (UPLOAD + SUFFIXES[request.format])
        data.write_text(request.input, encoding="utf-8")
        try:
            instances = load_instances(data, request.format, request.view)
            if len(instances) > AFLITE_LIMITS["instances"]:
                raise TooLargeError(f"the file holds {len(instances)} instances: at most "
                                    f"{AFLITE_LIMITS['instances']}")
            words = ["aflite", str(data), "--format", request.format, "--view", request.view,
                     "--out", str(run / "out"), "--finetune", "0", "--n", str(request.n),
                     "--tau", repr(request.tau), "--seed", str(request.seed),
                     "--cache", str(self._folder / "cache")]
            for name in ("m", "k"):
                if getattr(request, name) is not None:
                    words += [f"--{name}", str(getattr(request, name))]
            parser = argparse.ArgumentParser(prog="dpc")
            add_aflite_parser(parser.add_subparsers())
            report = run_aflite(parser.parse_args(words), encoder_model=encoder)
            out = run / "out"
            kept = load_instances(out / report["kept_file"], request.format, request.view)
        except (ServeError, CancelledError):
            raise
        except DpcError as err:  # the file's errors name the file: its name here is "upload"
            raise ServeError(str(err).replace(str(data), UPLOAD + SUFFIXES[request.format])
                             .replace(str(run), "")) from None
        left = Counter(_key(kept, i) for i in range(len(kept)))
        items = []
        for i in range(len(instances)):
            key_i = _key(instances, i)
            is_kept = left[key_i] > 0
            left[key_i] -= is_kept
            items.append({"text": _text(instances, i),
                          "label": instances.label_names[int(instances.labels[i])],
                          "kept": is_kept})
        figure = out / "figure.png"
        public = {k: v for k, v in report.items() if k not in ("file", "embedding_cache")}
        answer = {"format": request.format, "view": request.view, "instances": len(instances),
                  "kept": sum(item["kept"] for item in items),
                  "removed": sum(not item["kept"] for item in items),
                  "report": _finite(public), "items": items,
                  "figure_png": base64.b64encode(figure.read_bytes()).decode("ascii"),
                  "kept_file": (out / report["kept_file"]).read_text(encoding="utf-8")}
        return answer, {"figure": str(figure), "kept": str(out / report["kept_file"])}

    def build(self, service: Service) -> None:
        import gradio as gr

        with gr.Tab(self.title, id=self.key):
            gr.Markdown(
                f"A small labelled dataset (at most {AFLITE_LIMITS['bytes'] // 1000} kB and "
                f"{AFLITE_LIMITS['instances']} instances: WinoGrande or multiple-choice JSON "
                "lines, a SWAG CSV or an INLI CSV) → `dpc aflite` on it: the instances a "
                "linear ensemble "
                "finds easy are removed; the figure is the paper's Figure 1 (PCA and the PC1 "
                "histograms per label). The encoder is the pretrained all-MiniLM-L6-v2 "
                "(`--finetune 0`).")
            self.missing_note()
            with gr.Row():
                with gr.Column(scale=2):
                    upload = gr.File(label="Dataset file", file_types=[".jsonl", ".csv"],
                                     type="filepath", elem_id="aflite-file")
                    fmt = gr.Dropdown(list(FORMATS), value="winogrande", label="Format",
                                      elem_id="aflite-format")
                    with gr.Row():
                        n = gr.Number(64, label="n (models a phase)", precision=0, minimum=1,
                                      maximum=AFLITE_LIMITS["n"], elem_id="aflite-n")
                        tau = gr.Number(0.75, label="tau", minimum=0.01, maximum=1.0,
                                        elem_id="aflite-tau")
                        seed = gr.Number(0, label="Seed", precision=0, minimum=0,
                                         elem_id="aflite-seed")
                    go = gr.Button("Filter", variant="primary", elem_id="aflite-submit")
                with gr.Column(scale=3):
                    figure = gr.Image(label="Figure 1: all / random / PMI / AFLite",
                                      type="filepath", elem_id="aflite-figure")
                    kept_file = gr.File(label="Kept items (input format)",
                                        elem_id="aflite-kept")
                    out = gr.HTML(elem_id="aflite-results")

            def on_click(path: str | None, fmt: str, n: float, tau: float,
                         seed: float) -> tuple[str, str | None, str | None]:
                try:
                    if not path:
                        raise ServeError("no file: upload a dataset file first")
                    request = AfliteRequest(read_upload(path), fmt, None, n,  # type: ignore[arg-type]
                                            tau=tau, seed=seed)  # type: ignore[arg-type]
                    response, files = self.answer_files(service, request)
                except Exception as err:  # noqa: BLE001 (a message on the page, never a traceback)
                    return error_html(error_message(err)), None, None
                return aflite_html(response), files["figure"], files["kept"]

            go.click(on_click, [upload, fmt, n, tau, seed], [out, figure, kept_file],
                     api_visibility="private")


def _finite(value: Any) -> Any:
    """``value`` with every NaN or infinite float as ``None`` (JSON has no NaN: the probe's
    accuracy is NaN on a set whose rarest label has one member).

    >>> _finite({"probe": float("nan"), "sets": [1.5, float("inf")]})
    {'probe': None, 'sets': [1.5, None]}
    """
    import math

    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def _num(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _key(instances: Any, i: int) -> tuple[str, str, int]:
    """What identifies instance ``i`` across a file and the kept file written from it."""
    b = None if instances.b is None else instances.b[i]
    return instances.a[i], repr(b), int(instances.labels[i])


def _text(instances: Any, i: int) -> str:
    """Instance ``i`` as one line: its text and its second text or choices."""
    b = None if instances.b is None else instances.b[i]
    if b is None:
        return instances.a[i]
    if isinstance(b, list):
        return f"{instances.a[i]} [{' / '.join(b)}]"
    return f"{instances.a[i]} → {b}"


def aflite_html(response: dict[str, Any]) -> str:
    """The summary (kept, removed, PC1 KL and probe accuracy before and after) and every
    instance with its label and whether it was kept.

    >>> page = aflite_html({"instances": 2, "kept": 1, "removed": 1, "format": "winogrande",
    ...     "view": "twins", "report": {"kl_before": 0.5, "kl_after": 0.1, "probe_before": 0.9,
    ...     "probe_after": 0.5, "chance_after": 0.5, "aflite": {"phases": [{}]}},
    ...     "items": [{"text": "a <b>", "label": "option1", "kept": True},
    ...               {"text": "c", "label": "option2", "kept": False}]})
    >>> 'data-kept="true"' in page and 'data-kept="false"' in page and "a &lt;b&gt;" in page
    True
    """
    r = response["report"]
    rows = "".join(
        f'<tr class="dpc-instance" data-kept="{str(item["kept"]).lower()}">'
        f'<td>{"kept" if item["kept"] else "removed"}</td>'
        f'<td>{html.escape(item["label"])}</td>'
        f'<td class="dpc-output">{html.escape(item["text"])}</td></tr>'
        for item in response["items"])
    return ('<div class="dpc-aflite">'
            f'<p class="dpc-summary" id="aflite-summary">kept {response["kept"]}, removed '
            f'{response["removed"]} of {response["instances"]} instances '
            f'({html.escape(response["format"])}, {html.escape(response["view"])}) in '
            f'{len(r["aflite"]["phases"])} phases · PC1 KL {_num(r["kl_before"])} → '
            f'{_num(r["kl_after"])} · probe accuracy {_num(r["probe_before"])} → '
            f'{_num(r["probe_after"])} (chance {_num(r["chance_after"])})</p>'
            '<table class="dpc-results"><thead><tr><th></th><th>label</th><th>instance</th>'
            f'</tr></thead><tbody>{rows}</tbody></table></div>')
