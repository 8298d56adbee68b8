"""What the fuzz scripts share (``fuzz_inputs.py``, ``fuzz_values.py``): how one answer of
``cli.main`` is sorted, and the report's counts.

* ``one line``: exit 2 and exactly one line on stderr, no traceback (what every case must give);
* ``traceback``: a Python traceback reached the user (or an exception escaped ``cli.main``);
* ``accepted``: exit 0 (a bad input or value was taken as good);
* ``other``: any other exit status, or more than one line.

>>> answer_kind(2, "dpc generate: error: --seed ...\\n")
'one line'
>>> answer_kind(None, ""), answer_kind(0, ""), answer_kind(1, "a\\nb\\n")
('traceback', 'accepted', 'other')
"""

from __future__ import annotations

from collections import Counter
from typing import Any


def stderr_lines(text: str) -> list[str]:
    """The lines of stderr that are not blank."""
    return [line for line in text.splitlines() if line.strip()]


def answer_kind(code: int | None, stderr: str) -> str:
    """The kind of one answer (module notes): ``code`` is ``None`` where an exception escaped."""
    if code is None or "Traceback" in stderr:
        return "traceback"
    if code == 0:
        return "accepted"
    return "one line" if code == 2 and len(stderr_lines(stderr)) == 1 else "other"


def tally(cases: list[dict[str, Any]]) -> dict[str, Any]:
    """The counts of ``cases`` (each with ``command``, ``class``, ``kind`` and ``left_behind``):
    in all, by class and by command, and every case that is not one line or left something."""
    by_class: dict[str, Counter] = {}
    by_command: dict[str, Counter] = {}
    for case in cases:
        by_class.setdefault(case["class"], Counter())[case["kind"]] += 1
        by_command.setdefault(case["command"], Counter())[case["kind"]] += 1
    return {
        "cases": len(cases),
        "kinds": dict(Counter(c["kind"] for c in cases)),
        "left_behind": sum(bool(c["left_behind"]) for c in cases),
        "by_class": {k: dict(v) for k, v in by_class.items()},
        "by_command": {k: dict(v) for k, v in by_command.items()},
        "not_one_line": [c for c in cases if c["kind"] != "one line" or c["left_behind"]],
    }
