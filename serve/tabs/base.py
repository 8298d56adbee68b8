"""What every task tab of the page is (:class:`TaskTab`) and how its models load (:class:`Lazy`);
the tabs themselves, one module each: :mod:`serve.tabs.inli` (hypothesis variants and the
classifier's labels), :mod:`serve.tabs.swag` (sampled endings and the AF committee's scores),
:mod:`serve.tabs.aflite` (an uploaded dataset filtered, with the paper's Figure 1).

A tab is a :class:`TaskTab`: its request (a dataclass checked where it is built, like
:class:`serve.service.GenerateRequest`), ``answer`` (the work, run through
:meth:`serve.service.Service.run`, so one model runs at a time whatever the tab), ``html`` (the
page's rendering of the answer's JSON), the route ``POST /api/<key>`` that :mod:`serve.app`
adds for it, and ``build`` (its Gradio tab; Gradio is imported there only). Each tab's models
are :class:`Lazy`: loaded at its first request, once per server, and kept; a model that is
absent or does not load makes the tab say so (:meth:`TaskTab.missing` on the page, and HTTP 503
:class:`~serve.service.UnavailableError` on the API) while the rest of the page works.

>>> calls = []
>>> model = Lazy("the toy model", lambda: calls.append(1) or "loaded")
>>> model.get(), model.get(), len(calls)
('loaded', 'loaded', 1)
>>> Lazy("the absent model", lambda: open("/no/such/file")).get()
Traceback (most recent call last):
...
serve.service.UnavailableError: the absent model is not available: [Errno 2] No such file or directory: '/no/such/file'
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from dpc_errors import DpcError
from serve.render import error_html
from serve.service import Service, UnavailableError

__all__ = ["Lazy", "TaskTab"]

T = TypeVar("T")


class Lazy(Generic[T]):
    """A model loaded by ``load()`` at the first :meth:`get`, once (under a lock), and kept; a
    load that fails (a :class:`~dpc_errors.DpcError` or an ``OSError``: files absent or
    unreadable) is remembered and every :meth:`get` raises
    :class:`~serve.service.UnavailableError` naming ``name`` and the reason."""

    def __init__(self, name: str, load: Callable[[], T]) -> None:
        self.name = name
        self._load = load
        self._lock = threading.Lock()
        self._value: T | None = None
        self._error: str | None = None

    @property
    def loaded(self) -> bool:
        """Whether the model is loaded (a failed load is not)."""
        return self._value is not None

    def get(self) -> T:
        """The model, loaded now if it is the first call."""
        with self._lock:
            if self._value is None and self._error is None:
                try:
                    self._value = self._load()
                except (DpcError, OSError) as err:
                    self._error = str(err)
            if self._error is not None:
                raise UnavailableError(f"{self.name} is not available: {self._error}")
            return self._value  # type: ignore[return-value]


class TaskTab:
    """What :mod:`serve.app` needs of a task tab (the subclasses are the tabs)."""

    #: The tab's title on the page.
    title: str = ""
    #: Its route: ``POST /api/<key>``; its Gradio tab's id and its elements' prefix.
    key: str = ""

    def missing(self) -> str | None:
        """Why the tab cannot answer (a model's files are absent), or ``None``; checked without
        loading anything, when the page is built."""
        return None

    def missing_note(self) -> None:
        """On the Gradio tab being built: why it cannot answer (:meth:`missing`), when it
        cannot (an element ``<key>-missing``)."""
        absent = self.missing()
        if absent:
            import gradio as gr

            gr.HTML(error_html(f"{self.title}: {absent}"), elem_id=f"{self.key}-missing")

    def parse(self, body: object) -> Any:
        """The tab's request from a JSON body (a :class:`~serve.service.ServeError` naming
        the bad value)."""
        raise NotImplementedError

    def answer(self, service: Service, request: Any, cancel: Callable[[], bool] | None = None,
               reserved: bool = False) -> dict[str, Any]:
        """The answer's JSON (through :meth:`Service.run`)."""
        raise NotImplementedError

    def build(self, service: Service) -> None:
        """Add the tab to the Gradio Blocks being built."""
        raise NotImplementedError
