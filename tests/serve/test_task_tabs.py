"""The task tabs' extension point: present functions get a tab, absent ones are left out."""

from __future__ import annotations

import pytest

from serve.service import Service
from serve.task_tabs import TASK_TABS, TaskTab, available_tabs, items_html


def words(text: str) -> list[str]:
    """A stand-in task: one output per word."""
    if text == "boom":
        raise ValueError("the task refused 'boom'")
    return text.split()


def test_absent_pipelines_are_left_out() -> None:
    tabs = [TaskTab("Missing module", "tasks.no_such_task:variants"),
            TaskTab("Missing function", "serve.task_tabs:no_such_function"),
            TaskTab("Words", words)]
    assert [tab.title for tab in available_tabs(tabs)] == ["Words"]
    assert all(tab.function() is not None for tab in available_tabs())  # the registered ones


def test_a_tab_answers_and_names_bad_input() -> None:
    tab = TaskTab("Words", words, "Premise")
    assert tab.run("a <b>") == '<ol class="dpc-task"><li>a</li><li>&lt;b&gt;</li></ol>'
    assert "premise is empty" in tab.run("  ")
    assert "Words: the task refused" in tab.run("boom")
    assert "not installed" in TaskTab("Gone", "no.such:thing").run("x")


def test_items_render_texts_objects_and_json() -> None:
    class Variant:
        text = "an object"

    page = items_html([{"text": "a dict"}, Variant(), {"label": 1}])
    assert page == ('<ol class="dpc-task"><li>a dict</li><li>an object</li>'
                    '<li>{&quot;label&quot;: 1}</li></ol>')


def test_a_registered_tab_is_on_the_page(service: Service) -> None:
    pytest.importorskip("gradio", reason="the page needs the demo extra")
    from serve.app import build_blocks

    page = build_blocks(service, tasks=[TaskTab("Word list", words)])
    labels = [c.get("props", {}).get("label") for c in page.config["components"]]
    assert "Word list" in labels
    assert TASK_TABS == [] or all(isinstance(t, TaskTab) for t in TASK_TABS)
