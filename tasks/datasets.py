"""The task datasets read into typed items and written back in their own format.

Three formats, each read strictly (a malformed line is a :class:`~tasks.errors.DatasetError`
naming the file and the line) and written back so that reading the written file gives the same
items (keys a reader does not know are kept in ``extra`` and written again):

=====================  ==========================================  ================================
format                 file                                        item
=====================  ==========================================  ================================
multiple choice        HellaSwag / SWAG JSON lines: ``ind``,       :class:`MultipleChoiceItem`
                       ``ctx``, ``endings`` (list), ``label``
WinoGrande             JSON lines: ``qID``, ``sentence`` (one      :class:`WinograndeItem`
                       ``_``), ``option1``, ``option2``,
                       ``answer`` ("1" or "2")
Implied NLI (INLI)     CSV: ``dataset, premise,                    :class:`InliRow` in
                       implied_entailment, explicit_entailment,    :class:`InliData`
                       neutral, contradiction`` (+ an index
                       column)
=====================  ==========================================  ================================

Writers go through :func:`dpc_files.check_output_file` first (an existing file is replaced only
with ``overwrite=True``) and write atomically, so a failed write leaves no partial file.

Examples
--------
>>> import json, pathlib, tempfile
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> line = {"ind": 0, "activity_label": "Roofing", "ctx": "A man is on a roof. he",
...         "endings": ["a", "b", "c", "d"], "label": 3, "split": "val"}
>>> _ = (folder / "mc.jsonl").write_text(json.dumps(line) + "\\n")
>>> [item] = read_multiple_choice(folder / "mc.jsonl")
>>> item.gold, item.extra
('d', {'split': 'val'})
>>> write_multiple_choice([item], folder / "copy.jsonl")
>>> read_multiple_choice(folder / "copy.jsonl") == [item]
True
>>> twin = WinograndeItem("q-1", "Ian ate it because _ was hungry.", "Ian", "Dennis", 2)
>>> twin.filled(1), twin.filled(twin.answer)
('Ian ate it because Ian was hungry.', 'Ian ate it because Dennis was hungry.')
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dpc_files import atomic_open, check_output_file
from tasks.errors import DatasetError

__all__ = ["INLI_COLUMNS", "INLI_LABELS", "InliData", "InliRow", "MultipleChoiceItem",
           "WinograndeItem", "read_inli", "read_multiple_choice", "read_winogrande",
           "write_inli", "write_multiple_choice", "write_winogrande"]

#: The four hypotheses of an INLI premise, in the release's column order (the 4-way labels).
INLI_LABELS: tuple[str, ...] = ("implied_entailment", "explicit_entailment", "neutral",
                                "contradiction")
#: The columns an INLI CSV must have (an unnamed index column before them is kept if present).
INLI_COLUMNS: tuple[str, ...] = ("dataset", "premise", *INLI_LABELS)


def _json_lines(path: str | Path, kind: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) of every non-blank line of a JSON-lines file of ``kind``."""
    file = Path(path)
    if not file.is_file():
        raise DatasetError(f"{kind} file {str(path)!r} does not exist")
    with open(file, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except json.JSONDecodeError as err:
                raise DatasetError(f"{file}:{number}: not valid JSON ({err.msg})") from None
            if not isinstance(value, dict):
                raise DatasetError(f"{file}:{number}: a {kind} line must be a JSON object, "
                                   f"not {type(value).__name__}")
            yield number, value


def _text(value: dict[str, Any], key: str, where: str) -> str:
    text = value.get(key)
    if not isinstance(text, str):
        shown = "missing" if key not in value else f"{type(text).__name__} {text!r}"
        raise DatasetError(f"{where}: `{key}` must be a string ({shown})")
    return text


def _index(value: Any, key: str, where: str, choices: Sequence[int]) -> int:
    """An integer label given as a number or a digit string, checked against ``choices``."""
    label = value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        label = int(value)
    if isinstance(label, bool) or not isinstance(label, int) or label not in choices:
        raise DatasetError(f"{where}: `{key}` (={value!r}) must be one of "
                           f"{', '.join(map(str, choices))}")
    return label


def _write_lines(rows: Iterable[dict[str, Any]], path: str | Path, overwrite: bool) -> None:
    target = check_output_file(path, "--out", overwrite=overwrite)
    with atomic_open(target) as out:
        for row in rows:
            out.write(json.dumps(row, ensure_ascii=False) + "\n")


# -- multiple choice (HellaSwag, SWAG) --------------------------------------------------------

@dataclass(frozen=True)
class MultipleChoiceItem:
    """A context, its candidate endings and the index of the right one (HellaSwag/SWAG)."""

    ind: int | str
    ctx: str
    endings: tuple[str, ...]
    label: int
    activity_label: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def gold(self) -> str:
        """The right ending."""
        return self.endings[self.label]

    @property
    def negatives(self) -> tuple[str, ...]:
        """The wrong endings, in order."""
        return tuple(e for i, e in enumerate(self.endings) if i != self.label)

    def to_json(self) -> dict[str, Any]:
        """The item as a JSON object of the format (``extra`` keys after the known ones)."""
        row: dict[str, Any] = {"ind": self.ind}
        if self.activity_label is not None:
            row["activity_label"] = self.activity_label
        row.update(ctx=self.ctx, endings=list(self.endings), label=self.label)
        row.update({k: v for k, v in self.extra.items() if k not in row})
        return row


_MC_KEYS = frozenset({"ind", "activity_label", "ctx", "endings", "label"})


def read_multiple_choice(path: str | Path) -> list[MultipleChoiceItem]:
    """Read HellaSwag/SWAG JSON lines: ``ctx``, ``endings`` (≥ 2 strings), ``label`` (an index
    of ``endings``), optional ``ind`` (default: the 0-based line count) and ``activity_label``.
    """
    items = []
    for number, value in _json_lines(path, "multiple-choice"):
        where = f"{path}:{number}"
        ctx = _text(value, "ctx", where)
        endings = value.get("endings")
        if (not isinstance(endings, list) or len(endings) < 2
                or not all(isinstance(e, str) for e in endings)):
            raise DatasetError(f"{where}: `endings` must be a list of at least 2 strings "
                               f"(got {endings!r:.80})")
        if "label" not in value:
            raise DatasetError(f"{where}: `label` is missing")
        label = _index(value["label"], "label", where, range(len(endings)))
        ind = value.get("ind", len(items))
        if not isinstance(ind, (int, str)) or isinstance(ind, bool):
            raise DatasetError(f"{where}: `ind` (={ind!r}) must be an integer or a string")
        activity = value.get("activity_label")
        if activity is not None and not isinstance(activity, str):
            raise DatasetError(f"{where}: `activity_label` (={activity!r}) must be a string")
        extra = {k: v for k, v in value.items() if k not in _MC_KEYS}
        items.append(MultipleChoiceItem(ind, ctx, tuple(endings), label, activity, extra))
    return items


def write_multiple_choice(items: Iterable[MultipleChoiceItem], path: str | Path, *,
                          overwrite: bool = False) -> None:
    """Write items as JSON lines that :func:`read_multiple_choice` reads back unchanged."""
    _write_lines((item.to_json() for item in items), path, overwrite)


# -- WinoGrande ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class WinograndeItem:
    """A WinoGrande problem: a sentence with one blank ``_`` and the option (1 or 2) filling it."""

    qid: str | None
    sentence: str
    option1: str
    option2: str
    answer: int
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def options(self) -> tuple[str, str]:
        return self.option1, self.option2

    def filled(self, option: int) -> str:
        """The sentence with option ``option`` (1 or 2) in the blank."""
        if option not in (1, 2):
            raise DatasetError(f"`option` (={option!r}) must be 1 or 2")
        return self.sentence.replace("_", self.options[option - 1], 1)

    def to_json(self) -> dict[str, Any]:
        row: dict[str, Any] = {} if self.qid is None else {"qID": self.qid}
        row.update(sentence=self.sentence, option1=self.option1, option2=self.option2,
                   answer=str(self.answer))
        row.update({k: v for k, v in self.extra.items() if k not in row})
        return row


_WG_KEYS = frozenset({"qID", "sentence", "option1", "option2", "answer"})


def read_winogrande(path: str | Path) -> list[WinograndeItem]:
    """Read WinoGrande JSON lines; every problem needs its ``answer`` (1 or 2) and a sentence
    with exactly one blank ``_``."""
    items = []
    for number, value in _json_lines(path, "WinoGrande"):
        where = f"{path}:{number}"
        sentence = _text(value, "sentence", where)
        if sentence.count("_") != 1:
            raise DatasetError(f"{where}: `sentence` must hold exactly one blank `_` "
                               f"({sentence!r:.80})")
        option1, option2 = _text(value, "option1", where), _text(value, "option2", where)
        if "answer" not in value or value["answer"] in ("", None):
            raise DatasetError(f"{where}: `answer` is missing (unlabelled WinoGrande files "
                               "cannot be used here)")
        answer = _index(value["answer"], "answer", where, (1, 2))
        qid = value.get("qID")
        extra = {k: v for k, v in value.items() if k not in _WG_KEYS}
        items.append(WinograndeItem(None if qid is None else str(qid), sentence, option1,
                                    option2, answer, extra))
    return items


def write_winogrande(items: Iterable[WinograndeItem], path: str | Path, *,
                     overwrite: bool = False) -> None:
    """Write problems as JSON lines that :func:`read_winogrande` reads back unchanged."""
    _write_lines((item.to_json() for item in items), path, overwrite)


# -- Implied NLI --------------------------------------------------------------------------------

@dataclass(frozen=True)
class InliRow:
    """One INLI premise with its four hypotheses (:data:`INLI_LABELS`). With
    ``read_inli(..., partial=True)`` a hypothesis may be ``""`` (absent)."""

    index: str
    dataset: str
    premise: str
    implied_entailment: str
    explicit_entailment: str
    neutral: str
    contradiction: str

    def hypothesis(self, label: str) -> str:
        """The hypothesis of ``label`` (one of :data:`INLI_LABELS`)."""
        if label not in INLI_LABELS:
            raise DatasetError(f"unknown INLI label {label!r}; the labels are "
                               f"{', '.join(INLI_LABELS)}")
        return str(getattr(self, label))

    def hypotheses(self) -> dict[str, str]:
        """``{label: hypothesis}`` for the four labels, in order."""
        return {label: self.hypothesis(label) for label in INLI_LABELS}


@dataclass(frozen=True)
class InliData:
    """The rows of an INLI CSV, and the CSV lines skipped for an empty premise or hypothesis."""

    rows: list[InliRow]
    skipped: list[int] = field(default_factory=list)
    index_column: str | None = ""

    def __len__(self) -> int:
        return len(self.rows)


def read_inli(path: str | Path, *, partial: bool = False) -> InliData:
    """Read an INLI CSV. A missing column is an error naming it; a row whose premise (or, unless
    ``partial``, any hypothesis) is empty is skipped and its line number kept in ``skipped``."""
    file = Path(path)
    if not file.is_file():
        raise DatasetError(f"INLI file {str(path)!r} does not exist")
    with open(file, encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        header = reader.fieldnames or []
        missing = [c for c in INLI_COLUMNS if c not in header]
        if missing:
            raise DatasetError(f"{file}: not an INLI CSV: missing column(s) "
                               f"{', '.join(missing)} (it has: {', '.join(header) or 'nothing'})")
        extra = [c for c in header if c not in INLI_COLUMNS]
        index_column = extra[0] if extra else None
        rows, skipped = [], []
        for number, record in enumerate(reader, start=2):
            if None in record:  # more fields than the header
                raise DatasetError(f"{file}:{reader.line_num}: more fields than the header's "
                                   f"{len(header)}")
            values = {c: (record.get(c) or "").strip() for c in INLI_COLUMNS}
            needed = ("premise",) if partial else ("premise", *INLI_LABELS)
            if any(not values[c] for c in needed):
                skipped.append(reader.line_num)
                continue
            index = (record.get(index_column) or "") if index_column is not None else ""
            rows.append(InliRow(index or str(number - 2), **values))
    return InliData(rows, skipped, index_column)


def write_inli(rows: Iterable[InliRow], path: str | Path, *, overwrite: bool = False,
               index_column: str | None = "") -> None:
    """Write rows as an INLI CSV (with the release's unnamed index column first unless
    ``index_column`` is None), which :func:`read_inli` reads back unchanged."""
    target = check_output_file(path, "--out", overwrite=overwrite)
    header = ([index_column] if index_column is not None else []) + list(INLI_COLUMNS)
    with atomic_open(target) as out:
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(header)
        for row in rows:
            values = [getattr(row, c) for c in INLI_COLUMNS]
            writer.writerow(([row.index] if index_column is not None else []) + values)
