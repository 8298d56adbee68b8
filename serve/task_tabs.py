"""The page's task tabs: one per task pipeline that has landed, found when the page is built.

A :class:`TaskTab` names a public function of a task package as ``"module:function"`` (or gives
the function itself). The function takes one text and returns a list of texts (or of objects with
a ``text`` attribute or key, or anything JSON-ready); the tab is a text box, a button and the
returned list. A tab whose module or function does not exist (the pipeline has not landed, or
the ``tasks`` extra is missing) is left out, so the page never breaks on an absent task.

To add a task: append ``TaskTab("INLI variants", "tasks.inli.hypotheses:premise_variants",
"Premise")`` to :data:`TASK_TABS`.

>>> TaskTab("Nothing", "no_such_module:f", "Text").function() is None
True
>>> [tab.title for tab in available_tabs([TaskTab("Upper", str.upper, "Text")])]
['Upper']
"""

from __future__ import annotations

import html
import importlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from serve.render import error_html
from serve.service import ServeError, Service, check_text

__all__ = ["TASK_TABS", "TaskTab", "available_tabs", "items_html"]


@dataclass(frozen=True)
class TaskTab:
    """One task tab: its title, its function (``"module:function"`` or a callable) and the
    label of its text box."""

    title: str
    target: str | Callable[[str], Any]
    label: str = "Text"

    def function(self) -> Callable[[str], Any] | None:
        """The function, or ``None`` when its module or name does not exist."""
        if callable(self.target):
            return self.target
        module, _, name = self.target.partition(":")
        try:
            found = getattr(importlib.import_module(module), name, None)
        except ImportError:
            return None
        return found if callable(found) else None

    def run(self, text: str) -> str:
        """The tab's answer for ``text`` as HTML (an error message for bad input)."""
        function = self.function()
        if function is None:
            return error_html(f"{self.title}: the task is not installed")
        try:
            return items_html(function(check_text(self.label.lower(), text)))
        except ServeError as err:
            return error_html(str(err))
        except ValueError as err:  # the project's errors (DpcError) are ValueErrors
            return error_html(f"{self.title}: {err}")

    def build(self, service: Service) -> None:
        """Add the tab to the Blocks being built (Gradio is imported here only)."""
        import gradio as gr

        with gr.Tab(self.title):
            text = gr.Textbox(label=self.label)
            go = gr.Button("Run", variant="primary")
            out = gr.HTML()
            go.click(self.run, [text], [out], api_visibility="private")


def items_html(items: Any) -> str:
    """A task's answer as an HTML list (texts escaped).

    >>> items_html(["a <b>", {"text": "c"}])
    '<ol class="dpc-task"><li>a &lt;b&gt;</li><li>c</li></ol>'
    """
    if not isinstance(items, (list, tuple)):
        items = [items]
    cells = []
    for item in items:
        text = item if isinstance(item, str) else (
            item.get("text") if isinstance(item, dict) else getattr(item, "text", None))
        if not isinstance(text, str):
            text = json.dumps(item, default=str, ensure_ascii=False)
        cells.append(f"<li>{html.escape(text)}</li>")
    return '<ol class="dpc-task">' + "".join(cells) + "</ol>"


#: The task tabs the page offers when their functions exist (none has landed yet: see the
#: module docstring to add one).
TASK_TABS: list[TaskTab] = []


def available_tabs(candidates: list[TaskTab] | None = None) -> list[TaskTab]:
    """The tabs (of :data:`TASK_TABS` by default) whose functions exist."""
    return [tab for tab in (TASK_TABS if candidates is None else candidates)
            if tab.function() is not None]
