"""HTML for the page's results, from the JSON the API returns (no Gradio here).

Every piece of user or model text is escaped; the keyword or matched phrase is wrapped in
``<mark>``.

>>> highlight("they are hungry now", "hungry")
'they are <mark>hungry</mark> now'
>>> highlight("a <b> tag", None)
'a &lt;b&gt; tag'
>>> highlight("rained all day", "rain")  # only a whole word is marked
'rained all day'
"""

from __future__ import annotations

import html
import re
from typing import Any

__all__ = ["constrain_html", "error_html", "highlight", "highlight_spans", "results_html"]


def highlight(text: str, word: str | None) -> str:
    """``text`` escaped, with the first whole-word occurrence of ``word`` marked."""
    if word:
        found = re.search(rf"(?<!\w){re.escape(word)}(?!\w)", text)
        if found:
            return highlight_spans(text, [(found.start(), found.end())])
    return html.escape(text)


def highlight_spans(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` escaped, with each ``(start, end)`` character span marked (overlaps merged).

    >>> highlight_spans("rain and wind", [(9, 13), (0, 4)])
    '<mark>rain</mark> and <mark>wind</mark>'
    """
    out, at = [], 0
    for start, end in sorted(spans):
        start = max(start, at)
        if end <= start:
            continue
        out += [html.escape(text[at:start]), "<mark>", html.escape(text[start:end]), "</mark>"]
        at = end
    out.append(html.escape(text[at:]))
    return "".join(out)


def error_html(message: str) -> str:
    """A message shown where the results would be.

    >>> error_html("input is empty")
    '<p class="dpc-error" role="alert">input is empty</p>'
    """
    return f'<p class="dpc-error" role="alert">{html.escape(message)}</p>'


def results_html(response: dict[str, Any]) -> str:
    """The causes-and-effects table(s) of a ``/api/generate`` response: one row per output,
    its rank, the output with its keyword highlighted, the keyword and its score.

    >>> page = results_html({"results": [{"input": "babies cry", "direction": "cause",
    ...     "notes": [], "keywords": ["hungry"], "stats": {},
    ...     "outputs": [{"text": "they are hungry", "keyword": "hungry", "matched": "hungry",
    ...                  "nll": 1.5, "pmi": None}]}]})
    >>> "<mark>hungry</mark>" in page and 'data-keyword="hungry"' in page
    True
    """
    parts = []
    for result in response["results"]:
        what = "Causes" if result["direction"] == "cause" else "Effects"
        stats = result.get("stats", {})
        parts.append(f'<h3 class="dpc-title">{what} of “{html.escape(result["input"])}”</h3>')
        parts.append(f'<p class="dpc-summary">{int(stats.get("rows", 0))} keywords → '
                     f'{int(stats.get("outputs", 0))} outputs, top {len(result["outputs"])}</p>')
        rows = []
        for rank, out in enumerate(result["outputs"], start=1):
            keyword = out.get("keyword") or "-"
            score = f'{out["nll"]:.3f}' + (f' / {out["pmi"]:.3f}' if out.get("pmi") is not None
                                           else "")
            rows.append(
                f'<tr data-keyword="{html.escape(keyword)}" '
                f'data-matched="{html.escape(out.get("matched") or "")}">'
                f'<td class="dpc-rank">{rank}</td>'
                f'<td class="dpc-output">{highlight(out["text"], out.get("matched"))}</td>'
                f'<td class="dpc-keyword">{html.escape(keyword)}</td>'
                f'<td class="dpc-score">{score}</td></tr>')
        parts.append(f'<table class="dpc-results" data-direction="{result["direction"]}">'
                     "<thead><tr><th>#</th><th>output</th><th>keyword</th>"
                     "<th>NLL (/ PMI)</th></tr></thead>"
                     f'<tbody>{"".join(rows)}</tbody></table>')
        for note in result.get("notes", []):
            parts.append(f'<p class="dpc-note">note: {html.escape(note)}</p>')
    return '<div class="dpc-generate">' + "".join(parts) + "</div>"


def constrain_html(response: dict[str, Any]) -> str:
    """The constrained output (matched phrases highlighted, a flag per set) beside the
    unconstrained one.

    >>> page = constrain_html({"constrained": {"text": "rain and wind", "satisfied": True,
    ...     "nll": 2.0, "sets": [{"set": ["rain"], "satisfied": True, "matched": "rain",
    ...     "span": [0, 4]}]}, "unconstrained": {"text": "sun", "nll": 1.0, "sets": []}})
    >>> "<mark>rain</mark>" in page and 'data-satisfied="true"' in page
    True
    """
    con, plain = response["constrained"], response["unconstrained"]
    spans = [tuple(s["span"]) for s in con["sets"] if s.get("span")]
    flags = "".join(
        f'<li class="dpc-set" data-satisfied="{str(s["satisfied"]).lower()}">'
        f'{"✔" if s["satisfied"] else "✘"} {html.escape(" | ".join(s["set"]))}'
        + (f' — matched “{html.escape(s["matched"])}”' if s.get("matched") else "")
        + "</li>"
        for s in con["sets"])
    return (
        '<div class="dpc-constrain">'
        '<div class="dpc-column"><h3>Constrained</h3>'
        f'<p class="dpc-constrained" data-satisfied="{str(con["satisfied"]).lower()}">'
        f'{highlight_spans(con["text"], spans)}</p>'  # type: ignore[arg-type]
        f'<p class="dpc-summary">all sets met: {"yes" if con["satisfied"] else "no"} · '
        f'NLL {con["nll"]:.3f}</p><ul class="dpc-sets">{flags}</ul></div>'
        '<div class="dpc-column"><h3>Unconstrained (same beams)</h3>'
        f'<p class="dpc-unconstrained">{html.escape(plain["text"])}</p>'
        f'<p class="dpc-summary">NLL {plain["nll"]:.3f}</p></div></div>'
        + "".join(f'<p class="dpc-note">note: {html.escape(note)}</p>'
                  for note in response.get("notes", []))
    )
