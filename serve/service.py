"""What ``dpc serve`` computes, without the web: checked requests, models loaded once, a bounded
queue and cancellation. Gradio is not imported here (:mod:`serve.app` is the web layer).

Every request is checked before any model runs, and a bad value raises :class:`ServeError`
(a :class:`~dpc_errors.DpcError`) whose message names it; the web layer shows that message on
the page and answers the JSON API with a 4xx status. A full queue raises :class:`BusyError`
(HTTP 503) at once instead of waiting; a request whose client has gone raises
:class:`CancelledError` at the next decoding step (:meth:`Service.slot`).

>>> parse_constraint_sets("rain|rained\\n\\n umbrella ")
[['rain', 'rained'], ['umbrella']]
>>> parse_constraint_sets(" | ")
Traceback (most recent call last):
...
serve.service.ServeError: constraint line 1 (' | ') has an empty alternative: write alternatives as 'rain|rained'
>>> check_text("input", "babies\\x00 cry")
Traceback (most recent call last):
...
serve.service.ServeError: input holds a control character (U+0000) at position 6
>>> GenerateRequest("babies cry", n=10**9)
Traceback (most recent call last):
...
serve.service.ServeError: n (=1000000000) must be an integer from 1 to 300
"""

from __future__ import annotations

import logging
import threading
import time
import unicodedata
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import dpc_decode
from cause_effect_graph.lemmas import default_lemmatizer
from cause_effect_graph.show import draw_neighbourhood
from dpc_errors import DpcError, check_choice, check_float, check_int
from guided_generation.options import RANKS as _RANKS
from guided_generation.options import RERANKS as _RERANKS
from guided_generation.options import GuidedOptions

if TYPE_CHECKING:
    from guided_generation.pipeline import GuidedGenerator
    from train.models import LoadedModel

__all__ = ["DIRECTIONS", "LIMITS", "BusyError", "CancelledError", "ConstrainRequest",
           "GenerateRequest", "ServeError", "Service", "UnavailableError", "check_request_float",
           "check_request_int", "check_text", "error_message", "fit_input",
           "parse_constraint_sets", "parse_phrases", "request_from_json"]

log = logging.getLogger("dpc.serve")

#: What the page's direction choice may be: one of the pipeline's, or both one after the other.
DIRECTIONS = ("cause", "effect", "both")
RANKS, RERANKS = _RANKS, _RERANKS  # the pipeline's own choices (its options module is light)

#: The largest values a request may ask for: enough for the paper's settings (N = 300, M = 5),
#: small enough that no single request holds the server for long on a CPU.
LIMITS: dict[str, int] = {
    "chars": 1000,          # input characters (the pipeline keeps 64 tokens anyway)
    "n": 300,               # graph keywords (rows)
    "m": 10,                # outputs per keyword
    "k": 100,               # outputs returned
    "max_new_tokens": 64,
    "num_beams": 16,
    "sets": 10,             # constraint sets
    "alternatives": 50,     # alternatives per set
    "banned": 50,           # negative phrases
    "phrase_chars": 100,    # characters of one alternative or banned phrase
    "model_chars": 500,     # characters of a model's name
}


class ServeError(DpcError):
    """A request ``dpc serve`` cannot answer as asked (a 4xx on the API)."""

    status = 422


class BusyError(ServeError):
    """The queue is full: try again later (HTTP 503)."""

    status = 503


class CancelledError(ServeError):
    """The client went away while its request waited or decoded (HTTP 499, never sent)."""

    status = 499


class UnavailableError(ServeError):
    """A task tab whose model is absent or did not load (HTTP 503); its message says which."""

    status = 503


def error_message(err: BaseException) -> str:
    """What the page and the API say for ``err``: a :class:`ServeError`'s own message, else a
    one-line note (the traceback goes to the server log only).

    >>> error_message(ServeError("input is empty"))
    'input is empty'
    """
    if isinstance(err, ServeError):
        return str(err)
    log.exception("dpc serve: internal error")
    return f"internal error ({type(err).__name__}); the server log has the details"


# ---------------------------------------------------------------------- checks


def check_text(name: str, value: object, max_chars: int = LIMITS["chars"],
               empty_ok: bool = False) -> str:
    """``value`` as a string with its whitespace runs collapsed, or a :class:`ServeError` naming
    what is wrong: not text, empty, longer than ``max_chars``, or holding a control character
    (tabs and line breaks count as spaces).

    >>> check_text("input", "  babies\\ncry ")
    'babies cry'
    >>> check_text("input", "x" * 10_000)
    Traceback (most recent call last):
    ...
    serve.service.ServeError: input has 10000 characters: at most 1000
    """
    if not isinstance(value, str):
        raise ServeError(f"{name} must be text (got {type(value).__name__})")
    if len(value) > max_chars:
        raise ServeError(f"{name} has {len(value)} characters: at most {max_chars}")
    for position, char in enumerate(value):
        if char not in "\t\n\r" and unicodedata.category(char) in ("Cc", "Cs"):
            raise ServeError(f"{name} holds a control character (U+{ord(char):04X}) at position "
                             f"{position}")
    text = " ".join(value.split())
    if not text and not empty_ok:
        raise ServeError(f"{name} is empty")
    return text


def check_request_int(name: str, value: object, low: int, high: int) -> int:
    """``value`` if it is an integer in ``[low, high]``: :func:`dpc_errors.check_int`, where a
    whole float from a web form or a JSON number counts, and the message names the field as the
    request does.

    >>> check_request_int("k", 5.0, 1, 100)
    5
    >>> check_request_int("k", "five", 1, 100)
    Traceback (most recent call last):
    ...
    serve.service.ServeError: k (='five') must be an integer from 1 to 100
    """
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return check_int(name, value, low, high, error=ServeError, quote=False)


def check_request_float(name: str, value: object, low: float, high: float, *,
                        open_low: bool = False) -> float:
    """``value`` as a float in ``[low, high]`` (``(low, high]`` with ``open_low``), or a
    :class:`ServeError` naming it (NaN, infinities, booleans and text are refused):
    :func:`dpc_errors.check_float`, the field named as the request names it.

    >>> check_request_float("tau", 1, 0.0, 1.0, open_low=True)
    1.0
    >>> check_request_float("tau", 0, 0.0, 1.0, open_low=True)
    Traceback (most recent call last):
    ...
    serve.service.ServeError: tau (=0) has to be a finite number in (0.0, 1.0]
    """
    return check_float(name, value, low, high, open_min=open_low, error=ServeError, quote=False)


def _check_choice(name: str, value: object, choices: tuple[str, ...]) -> str:
    return check_choice(name, value, choices, error=ServeError, quote=False)


def parse_constraint_sets(text: str) -> list[list[str]]:
    """Constraint sets from the page's text: one set per line, alternatives separated by ``|``;
    blank lines are skipped. An empty alternative (a line of only ``|``, or ``rain||wet``) is an
    error naming the line.
    """
    text = "" if text is None else text
    if not isinstance(text, str):
        raise ServeError(f"constraint sets must be text (got {type(text).__name__})")
    sets: list[list[str]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        check_text(f"constraint line {number}", line, LIMITS["phrase_chars"] * 10)
        alternatives = [" ".join(a.split()) for a in line.split("|")]
        if not all(alternatives):
            raise ServeError(f"constraint line {number} ({line!r}) has an empty alternative: "
                             "write alternatives as 'rain|rained'")
        _check_phrases(f"constraint line {number}", alternatives, LIMITS["alternatives"])
        sets.append(alternatives)
    if len(sets) > LIMITS["sets"]:
        raise ServeError(f"{len(sets)} constraint sets: at most {LIMITS['sets']}")
    return sets


def parse_phrases(text: str, name: str = "negative phrases") -> list[str]:
    """Phrases, one per line (blank lines skipped).

    >>> parse_phrases("not\\n\\n never ")
    ['not', 'never']
    """
    text = "" if text is None else text
    if not isinstance(text, str):
        raise ServeError(f"{name} must be text (got {type(text).__name__})")
    phrases = [check_text(f"{name} line {n}", line, LIMITS["phrase_chars"])
               for n, line in enumerate(text.splitlines(), start=1) if line.strip()]
    _check_phrases(name, phrases, LIMITS["banned"])
    return phrases


def _check_phrases(name: str, phrases: list[str], most: int) -> None:
    if len(phrases) > most:
        raise ServeError(f"{name} has {len(phrases)} phrases: at most {most}")
    for phrase in phrases:
        check_text(name, phrase, LIMITS["phrase_chars"])


def _string_list(name: str, value: object) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise ServeError(f"{name} must be a list of strings")
    return list(value)


# ---------------------------------------------------------------------- requests


@dataclass(frozen=True)
class GenerateRequest:
    """One causes-and-effects request (the page's first tab, ``POST /api/generate``).

    Unset options take :class:`~guided_generation.options.GuidedOptions`' defaults, the same as
    ``dpc generate``'s, so the same request gives the same JSON as ``dpc generate --json``.
    ``constraints`` are the user's own keywords (``"hungry|hunger"``), ``banned`` phrases no
    output may hold.
    """

    input: str
    direction: str = "cause"
    n: int | None = None
    m: int | None = None
    k: int | None = None
    rank: str | None = None
    rerank: str | None = None
    max_new_tokens: int | None = None
    constraints: list[str] = field(default_factory=list)
    banned: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        object.__setattr__(self, "input", check_text("input", self.input))
        _check_choice("direction", self.direction, DIRECTIONS)
        for name in ("n", "m", "k", "max_new_tokens"):
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, check_request_int(name, value, 1, LIMITS[name]))
        if self.rank is not None:
            _check_choice("rank", self.rank, RANKS)
        if self.rerank is not None:
            _check_choice("rerank", self.rerank, RERANKS)
        constraints = _string_list("constraints", self.constraints)
        for keyword in constraints:
            parse_constraint_sets(keyword)  # each a line of alternatives
        banned = _string_list("banned", self.banned)
        _check_phrases("banned", banned, LIMITS["banned"])
        object.__setattr__(self, "constraints", constraints)
        object.__setattr__(self, "banned", banned)

    @classmethod
    def from_json(cls, body: object) -> GenerateRequest:
        """A request from a JSON object (unknown keys are an error naming them)."""
        return request_from_json(cls, body)

    def options(self) -> GuidedOptions:
        """The pipeline's options: the set values over the defaults."""
        values = {name: getattr(self, name) for name in ("n", "m", "k", "rank", "rerank",
                                                         "max_new_tokens")
                  if getattr(self, name) is not None}
        try:
            return GuidedOptions(**values)
        except DpcError as err:
            raise ServeError(str(err)) from None

    def directions(self) -> list[str]:
        """The pipeline directions this request runs, in order."""
        return ["cause", "effect"] if self.direction == "both" else [self.direction]


@dataclass(frozen=True)
class ConstrainRequest:
    """One constrained decode (the page's second tab, ``POST /api/constrain``).

    ``model`` is ``"default"`` (the server's generator) or one of the other models the server
    was started with (``dpc serve --model A --model B``: ``"B"``, :attr:`Service.model_names`);
    never a path the client chooses. ``sets`` are constraint sets (alternatives), ``banned``
    negative phrases; ``num_beams`` is shared by the constrained and the unconstrained search.
    """

    input: str
    sets: list[list[str]] = field(default_factory=list)
    banned: list[str] = field(default_factory=list)
    whole_word: bool = True
    model: str = "default"
    num_beams: int = 4
    max_new_tokens: int = 20

    def __post_init__(self) -> None:
        object.__setattr__(self, "input", check_text("input", self.input))
        if not isinstance(self.sets, (list, tuple)) or not all(
                isinstance(s, (list, tuple)) for s in self.sets):
            raise ServeError("sets must be a list of lists of alternatives")
        sets = [[check_text(f"set {i + 1}", a, LIMITS["phrase_chars"]) for a in s]
                for i, s in enumerate(self.sets)]
        for i, alternatives in enumerate(sets):
            if not alternatives:
                raise ServeError(f"set {i + 1} has no alternative")
            _check_phrases(f"set {i + 1}", alternatives, LIMITS["alternatives"])
        if len(sets) > LIMITS["sets"]:
            raise ServeError(f"{len(sets)} constraint sets: at most {LIMITS['sets']}")
        banned = _string_list("banned", self.banned)
        _check_phrases("banned", banned, LIMITS["banned"])
        if not isinstance(self.whole_word, bool):
            raise ServeError(f"whole_word (={self.whole_word!r}) must be true or false")
        model = check_text("model", self.model, LIMITS["model_chars"])
        object.__setattr__(self, "sets", sets)
        object.__setattr__(self, "banned", banned)
        object.__setattr__(self, "model", model)
        object.__setattr__(self, "num_beams", check_request_int("num_beams", self.num_beams, 1,
                                                        LIMITS["num_beams"]))
        object.__setattr__(self, "max_new_tokens", check_request_int("max_new_tokens", self.max_new_tokens,
                                                             1, LIMITS["max_new_tokens"]))

    @classmethod
    def from_json(cls, body: object) -> ConstrainRequest:
        """A request from a JSON object (unknown keys are an error naming them)."""
        return request_from_json(cls, body)


R = TypeVar("R")


def request_from_json(cls: type[R], body: object,
                      required: tuple[str, ...] = ("input",)) -> R:
    """The request dataclass ``cls`` from a JSON object: unknown keys and missing
    ``required`` ones are errors naming them; ``cls`` checks the values.

    >>> request_from_json(GenerateRequest, {"input": "babies cry", "nn": 3})
    Traceback (most recent call last):
    ...
    serve.service.ServeError: unknown field(s) 'nn': the fields are banned, constraints, direction, input, k, m, max_new_tokens, n, rank, rerank
    """
    if not isinstance(body, dict):
        raise ServeError("the request body must be a JSON object")
    known = set(cls.__dataclass_fields__)  # type: ignore[attr-defined]
    unknown = sorted(set(body) - known)
    if unknown:
        raise ServeError(f"unknown field(s) {', '.join(map(repr, unknown))}: the fields are "
                         f"{', '.join(sorted(known))}")
    for name in required:
        if name not in body:
            raise ServeError(f'the request needs an "{name}" string')
    return cls(**body)




# ---------------------------------------------------------------------- the service


class Service:
    """The models, loaded once, and the requests answered one at a time.

    Parameters
    ----------
    generator : GuidedGenerator, optional
        The generator and graph (default: :meth:`GuidedGenerator.load` of ``model`` and
        ``graph`` on first use, or at :meth:`load`).
    model, graph
        What ``dpc serve --model/--graph`` name (``None``: the defaults of ``dpc generate``).
    models : sequence of str
        The other models the constraints tab may use (``dpc serve --model A --model B``: B, ...),
        by the names given: a request names one of them or ``"default"`` (:attr:`model_names`),
        and any other name is refused with the same message, whether or not a folder of that
        name exists (the server never reads a path a client chooses, nor tells whether it
        exists). Each is loaded on first use, or at :meth:`load`, and kept.
    max_queue : int
        Requests held at once, the running one included; one more is :class:`BusyError`.
    loader : callable, optional
        ``name -> LoadedModel`` for the constraints tab's other models (default
        :func:`train.models.resolve_generator`).

    Decoding is serialised (one request at a time: two decodes on a small CPU only thrash) and
    runs on one worker thread of its own, whichever thread the request came in on: the
    allocator then keeps one arena for the model's tensors instead of one per server thread.
    A request's ``cancel`` callable is asked at every model step (a hook on the model's output
    layer) and before it starts: when it says true, :class:`CancelledError` ends the decode.
    """

    def __init__(self, generator: GuidedGenerator | None = None, *, model: str | None = None,
                 graph: str | None = None, models: Sequence[str] = (), max_queue: int = 32,
                 loader: Callable[[str], LoadedModel] | None = None) -> None:
        self.max_queue = check_int("--max-queue", max_queue, 1, 10_000, error=ServeError,
                                   quote=False)
        self._generator = generator
        self._model_name, self._graph_path = model, graph
        extra = [check_text("--model", name, LIMITS["model_chars"]) for name in models]
        self._extra = tuple(dict.fromkeys(n for n in extra if n not in ("default", model)))
        self._loader = loader
        self._models: dict[str, Any] = {}
        self._load_lock = threading.Lock()
        self._decode_lock = threading.Lock()
        self._count_lock = threading.Lock()
        self._pending = 0
        self._cancel: Callable[[], bool] | None = None
        self._hooked: set[int] = set()
        if generator is not None:
            self._hook(generator.model)
        self.load_seconds: float | None = None
        self._figures: Path | None = None
        self._draw_lock = threading.Lock()
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="dpc-decode")

    # ------------------------------------------------------------------ models

    @property
    def generator(self) -> GuidedGenerator:
        """The guided generator (loaded on first use)."""
        if self._generator is None:
            with self._load_lock:
                if self._generator is None:
                    from guided_generation.pipeline import GuidedGenerator

                    started = time.perf_counter()
                    self._generator = GuidedGenerator.load(self._model_name, self._graph_path)
                    self.load_seconds = time.perf_counter() - started
                    self._hook(self._generator.model)
        return self._generator

    @property
    def model_names(self) -> tuple[str, ...]:
        """What a constrain request's ``model`` may be: ``"default"`` (the generator), then the
        other models the server was started with."""
        return ("default", *self._extra)

    def load(self) -> Service:
        """Load the generator, the graph, the lemmatiser and the other models now (``dpc
        serve`` does, before it listens, so the first request does not pay for them and a
        model that cannot load stops the start, not a request)."""
        self.lemmas("babies cry")
        for name in self._extra:
            self.model(name)
        return self

    def model(self, name: str) -> tuple[Any, Any]:
        """``(model, tokenizer)`` for the constraints tab: ``"default"`` (or the generator's own
        name) is the generator's; another name must be one of :attr:`model_names`, else a
        :class:`ServeError` that does not repeat it (the same answer for every other name)."""
        if name in ("default", self._model_name):
            return self.generator.model, self.generator.tokenizer
        if name not in self._extra:
            raise ServeError("model is not one this server offers ("
                             f"{', '.join(map(repr, self.model_names))}): dpc serve --model "
                             "GENERATOR --model OTHER offers another")
        with self._load_lock:
            if name not in self._models:
                loader = self._loader
                if loader is None:
                    from train.models import resolve_generator as loader
                try:
                    loaded = loader(name)
                except DpcError as err:
                    raise ServeError(f"model {name!r}: {err}") from None
                self._hook(loaded.model)
                self._models[name] = (loaded.model, loaded.tokenizer)
            return self._models[name]

    def watch(self, model: Any) -> None:
        """Ask the running request's ``cancel`` at every forward pass of ``model``'s output
        layer (once per model, however often it is called): a task tab's model stops like the
        generator when its client goes away."""
        self._hook(model)

    def run(self, work: Callable[[], R], cancel: Callable[[], bool] | None = None,
            reserved: bool = False) -> R:
        """``work()`` on the decoding thread, holding a place in the queue and then the
        decoder (:meth:`slot`), as a task tab's request does: one model runs at a time."""
        with self.slot(cancel, reserved):
            return self._worker.submit(work).result()

    def _hook(self, model: Any) -> None:
        """Ask the running request's ``cancel`` at every forward pass of the output layer."""
        if id(model) in self._hooked:
            return
        head = model.get_output_embeddings() if hasattr(model, "get_output_embeddings") else None
        (head if head is not None else model).register_forward_pre_hook(self._check_cancel)
        self._hooked.add(id(model))

    def _check_cancel(self, *_: Any) -> None:
        cancel = self._cancel
        if cancel is not None and cancel():
            raise CancelledError("the client went away: decoding stopped")

    # ------------------------------------------------------------------ the queue

    @property
    def pending(self) -> int:
        """Requests held now (waiting or running)."""
        return self._pending

    def reserve(self) -> None:
        """Take one place in the queue now, or raise :class:`BusyError` when ``max_queue``
        requests are already held (give it back with :meth:`slot` ``(reserved=True)``, which
        releases it when done)."""
        with self._count_lock:
            if self._pending >= self.max_queue:
                raise BusyError(f"busy: {self._pending} requests are queued (--max-queue "
                                f"{self.max_queue}); try again shortly")
            self._pending += 1

    @contextmanager
    def slot(self, cancel: Callable[[], bool] | None = None,
             reserved: bool = False) -> Iterator[None]:
        """Hold one place in the queue (already taken with :meth:`reserve` when ``reserved``),
        then the decoder, for the ``with`` block; the place is given back after it.

        :class:`BusyError` at once when ``max_queue`` requests are already held;
        :class:`CancelledError` when ``cancel()`` turns true while waiting or decoding.
        """
        if not reserved:
            self.reserve()
        try:
            while not self._decode_lock.acquire(timeout=0.2):
                if cancel is not None and cancel():
                    raise CancelledError("the client went away while its request waited")
            try:
                if cancel is not None and cancel():
                    raise CancelledError("the client went away while its request waited")
                self._cancel = cancel
                yield
            finally:
                self._cancel = None
                self._decode_lock.release()
        finally:
            with self._count_lock:
                self._pending -= 1

    # ------------------------------------------------------------------ the work

    def generate(self, request: GenerateRequest, cancel: Callable[[], bool] | None = None,
                 progress: bool = False, reserved: bool = False) -> dict[str, Any]:
        """Causes and/or effects: ``{"results": [GuidedResult.to_dict(), ...]}``, one per
        direction (each what ``dpc generate --json`` prints for it, ``index`` aside)."""
        with self.slot(cancel, reserved):  # first: a reserved place is given back whatever
            options = request.options()
            generator = self.generator
            try:
                results = self._worker.submit(lambda: [
                    generator.generate(request.input, direction, options, request.constraints,
                                       progress=progress, banned=request.banned).to_dict()
                    for direction in request.directions()]).result()
            except ServeError:  # CancelledError among them
                raise
            except DpcError as err:  # options the model cannot take, ...
                raise ServeError(str(err)) from None
        return {"results": results}

    def lemmas(self, text: str) -> list[str]:
        """The input's content lemmas that the graph holds (what the figure draws)."""
        generator = self.generator
        if generator.lemmatizer is not None:
            found = generator.lemmatizer(text)
        else:
            found = default_lemmatizer()(text)
        return [lemma for lemma in dict.fromkeys(found) if lemma in generator.graph]

    def neighbourhood_png(self, lemma: str, n: int = 8) -> Path:
        """``lemma``'s neighbourhood in the graph as a PNG (what ``dpc graph show`` draws),
        drawn once per lemma into the service's own temporary folder."""
        import hashlib
        import tempfile

        if self._figures is None:
            self._figures = Path(tempfile.mkdtemp(prefix="dpc-serve-"))
        out = self._figures / f"{hashlib.sha1(f'{n} {lemma}'.encode()).hexdigest()[:20]}.png"
        with self._draw_lock:  # pyplot is not thread-safe
            if not out.is_file():
                draw_neighbourhood(self.generator.graph, lemma, out, n=n)
        return out

    def constrain(self, request: ConstrainRequest, cancel: Callable[[], bool] | None = None,
                  reserved: bool = False) -> dict[str, Any]:
        """The best constrained output (with its matches per set) next to the best
        unconstrained one of the same beam size."""
        with self.slot(cancel, reserved):  # first: a reserved place is given back whatever
            options = dpc_decode.BeamSearchOptions(num_beams=request.num_beams,
                                                   num_return_sequences=1,
                                                   max_new_tokens=request.max_new_tokens)
            model, tokenizer = self.model(request.model)
            text, notes = fit_input(model, tokenizer, request.input, request.max_new_tokens)
            started = time.perf_counter()
            try:
                sets = [request.sets] if request.sets else None  # one input's sets
                constrained = self._worker.submit(
                    dpc_decode.generate, model, tokenizer, [text], sets,
                    banned=request.banned or None, options=options,
                    tokenize=dpc_decode.TokenizeOptions(whole_word=request.whole_word),
                ).result()[0][0]
                middle = time.perf_counter()
                plain = self._worker.submit(dpc_decode.generate, model, tokenizer, [text], None,
                                            options=options).result()[0][0]
            except CancelledError:
                raise
            except DpcError as err:  # a phrase the tokenizer cannot spell, ...
                raise ServeError(str(err)) from None
            ended = time.perf_counter()
        return {
            "input": text, "model": request.model, "notes": notes, "sets": request.sets,
            "banned": request.banned, "whole_word": request.whole_word,
            "num_beams": request.num_beams,
            "constrained": _sequence(constrained, tokenizer, request.sets),
            "unconstrained": _sequence(plain, tokenizer, []),
            "stats": {"constrained_seconds": round(middle - started, 3),
                      "unconstrained_seconds": round(ended - middle, 3)},
        }


def fit_input(model: Any, tokenizer: Any, text: str, max_new_tokens: int) -> tuple[str, list[str]]:
    """``text`` cut to what ``model`` can read when it has an absolute position table (the
    bundled bert2bert reads 512 tokens; SmolLM2 and T5 have no such limit), and a note saying
    so (:func:`dpc_decode.batch.cut_to_tokens`); a :class:`ServeError` when nothing fits."""
    from dpc_decode.batch import cut_to_tokens, input_token_limit

    limit = input_token_limit(model, max_new_tokens)
    if limit is None:
        return text, []
    count = len(tokenizer(text)["input_ids"])  # special tokens included, as the engine reads it
    if count <= limit:
        return text, []
    frame = count - len(tokenizer(text, add_special_tokens=False)["input_ids"])
    cut = cut_to_tokens(tokenizer, text, limit - frame)
    if not cut:
        raise ServeError(f"max_new_tokens (={max_new_tokens}) leaves the model no room for the "
                         "input")
    kept = len(tokenizer(cut)["input_ids"])
    room = ("" if getattr(model.config, "is_encoder_decoder", False)
            else f" beside max_new_tokens={max_new_tokens}")
    note = f"the input has {count} tokens: cut to its first {kept}, the most the model reads{room}"
    return cut, [note]


def _sequence(seq: Any, tokenizer: Any, sets: list[list[str]]) -> dict[str, Any]:
    """A decoded output as JSON: its text, scores and, per set, what met it and where."""
    text = (seq.text or "").strip()
    lead = len(seq.text or "") - len((seq.text or "").lstrip())
    report = []
    for index, alternatives in enumerate(sets):
        match = seq.matches[index] if index < len(seq.matches) else None
        span = None
        if match is not None:
            piece = tokenizer.decode(list(match.token_ids), skip_special_tokens=True).strip()
            before = tokenizer.decode(list(seq.token_ids[:match.start]), skip_special_tokens=True)
            at = text.find(piece, max(0, len(before) - lead - 2)) if piece else -1
            if at < 0:
                at = text.find(piece) if piece else -1
            span = [at, at + len(piece)] if at >= 0 else None
        report.append({"set": alternatives, "satisfied": match is not None,
                       "matched": match.alternative if match is not None
                       and isinstance(match.alternative, str) else None,
                       "span": span})
    return {"text": text, "satisfied": bool(seq.satisfied), "sets": report,
            "nll": seq.nll, "log_prob": seq.log_prob, "finished": bool(seq.finished)}
