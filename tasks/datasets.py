"""The task datasets read into typed items and written back in their own format.

Four formats, each read strictly (a malformed line is a :class:`~tasks.errors.DatasetError`
naming the file and the line) and written back so that reading the written file gives the same
items (keys a reader does not know are kept in ``extra`` and written again):

=====================  ==========================================  ================================
format                 file                                        item
=====================  ==========================================  ================================
multiple choice        HellaSwag / SWAG JSON lines: ``ind``,       :class:`MultipleChoiceItem`
                       ``ctx`` (or HellaSwag's ``ctx_a`` +
                       ``ctx_b``), ``endings`` (list), ``label``
SWAG CSV               the official ``train.csv``/``val.csv``:     :class:`MultipleChoiceItem`
                       ``,video-id,fold-ind,startphrase,sent1,
                       sent2,gold-source,ending0..3,label``
WinoGrande             JSON lines: ``qID``, ``sentence`` (one      :class:`WinograndeItem`
                       ``_``), ``option1``, ``option2``,
                       ``answer`` ("1" or "2")
Implied NLI (INLI)     CSV: ``dataset, premise,                    :class:`InliRow` in
                       implied_entailment, explicit_entailment,    :class:`InliData`
                       neutral, contradiction`` (+ an index
                       column)
=====================  ==========================================  ================================

Every item needs its label: an unlabelled file (HellaSwag's or SWAG's test split, WinoGrande's
unlabelled test) is refused with an error naming the file, never read with a placeholder label
such as -1, which :attr:`MultipleChoiceItem.gold` would silently take for the last ending.

A context is split in two by SWAG (``sent1``, the first sentence, and ``sent2``, the start of
the sentence the endings continue) and by HellaSwag (``ctx_a``, ``ctx_b``); the whole context
``ctx`` is the two joined by one space (the first alone when the second is empty). A context
that has no halves (a HellaSwag line with ``ctx`` only, written as SWAG CSV) is cut by
:func:`split_context`.

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
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dpc_files import atomic_open, check_output_file
from dpc_inputs import open_input_text, parse_json, read_numbered_lines
from tasks.errors import DatasetError

__all__ = ["INLI_COLUMNS", "INLI_LABELS", "SWAG_COLUMNS", "InliData", "InliRow",
           "MultipleChoiceItem", "WinograndeItem", "read_inli", "read_multiple_choice",
           "read_swag_csv", "read_winogrande", "split_context", "write_inli",
           "write_multiple_choice", "write_swag_csv", "write_winogrande"]

#: The four hypotheses of an INLI premise, in the release's column order (the 4-way labels).
INLI_LABELS: tuple[str, ...] = ("implied_entailment", "explicit_entailment", "neutral",
                                "contradiction")
#: The columns an INLI CSV must have (an unnamed index column before them is kept if present).
INLI_COLUMNS: tuple[str, ...] = ("dataset", "premise", *INLI_LABELS)
#: The columns of the official SWAG CSV (rowanz/swagaf ``train.csv``/``val.csv``), in order; the
#: first, unnamed, is the row index.
SWAG_COLUMNS: tuple[str, ...] = ("", "video-id", "fold-ind", "startphrase", "sent1", "sent2",
                                 "gold-source", "ending0", "ending1", "ending2", "ending3",
                                 "label")


def _json_lines(path: str | Path, kind: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) of every non-blank line of a JSON-lines file of ``kind``, read by
    :func:`dpc_inputs.read_input_lines` (UTF-8, BOM dropped, an empty file refused) and parsed by
    :func:`dpc_inputs.parse_json` (a line nested too deeply is refused by its number)."""
    file = Path(path)
    for number, line in read_numbered_lines(file, f"{kind} file"):
        value = parse_json(line, f"{file}:{number}")
        if not isinstance(value, dict):
            raise DatasetError(f"{file}:{number}: a {kind} line must be a JSON object, "
                               f"not {type(value).__name__}")
        yield number, value


@contextmanager
def _csv_errors(file: Path) -> Iterator[None]:
    """``csv.Error`` (a stray quote in strict mode, a NUL byte) as a :class:`DatasetError`
    naming the file."""
    try:
        yield
    except csv.Error as err:
        raise DatasetError(f"{file}: not a CSV file ({err})") from None


def _csv_rows(file: Path, kind: str) -> csv.DictReader:
    """A ``csv.DictReader`` over the file's text (:func:`dpc_inputs.open_input_text`: UTF-8, the
    BOM dropped so the first column keeps its name, long cells read)."""
    return csv.DictReader(open_input_text(file, f"{kind} file", allow_empty=False))


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

    A line without ``ctx`` but with HellaSwag's halves ``ctx_a`` and ``ctx_b`` (both strings) has
    the context ``ctx_a + " " + ctx_b`` (``ctx_a`` alone when ``ctx_b`` is empty). The halves,
    like ``split``, ``split_type`` and ``source_id``, stay in ``extra`` and are written back;
    :func:`write_multiple_choice` writes ``ctx`` too, as the release's lines have it.

    >>> import json, pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "hellaswag.jsonl"
    >>> line = {"ind": 24, "ctx_a": "A man is sitting on a roof.", "ctx_b": "he",
    ...         "split": "val", "endings": ["sings.", "falls.", "naps.", "nods."], "label": 1}
    >>> _ = path.write_text(json.dumps(line) + "\\n")
    >>> [item] = read_multiple_choice(path)
    >>> item.ctx, item.extra["ctx_b"], item.extra["split"]
    ('A man is sitting on a roof. he', 'he', 'val')
    """
    items = []
    for number, value in _json_lines(path, "multiple-choice"):
        where = f"{path}:{number}"
        if "ctx" not in value and "ctx_a" in value:
            ctx = _join_context(_text(value, "ctx_a", where), _text(value, "ctx_b", where))
        else:
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


# -- SWAG CSV -----------------------------------------------------------------------------------

#: A sentence end: ``.``, ``!`` or ``?`` and any closing quotes or brackets after it.
_SENTENCE_END = r"""[.!?]['"’”)\]]*"""
_ENDS_A_SENTENCE = re.compile(_SENTENCE_END + r"\s*$")
_SENTENCE_BREAK = re.compile(_SENTENCE_END + r"\s+")
_ENDING_COLUMN = re.compile(r"ending(\d+)")


def _join_context(first: str, second: str) -> str:
    """``first + " " + second``, or the non-empty one alone (SWAG's ``startphrase``,
    HellaSwag's ``ctx``)."""
    return f"{first} {second}" if first and second else first or second


def split_context(ctx: str) -> tuple[str, str]:
    """Cut a context into SWAG's ``(sent1, sent2)``: ``sent2`` is the unfinished sentence the
    endings continue, ``sent1`` what comes before it.

    The cut is after the last sentence end (``.``, ``!`` or ``?``, with any closing quotes or
    brackets) followed by white space. A context that itself ends a sentence is all ``sent1``
    (``sent2`` empty: the endings start a new sentence); one with no sentence end is all
    ``sent2``. Joined by one space the two give the context back when the cut was a single space.
    An abbreviation's full stop (``Mr.``) is taken for a sentence end: a heuristic, used only
    for contexts that carry no halves of their own.

    >>> split_context("A man is sitting on a roof. he")
    ('A man is sitting on a roof.', 'he')
    >>> split_context("A lady walks to a barbell. She bends down. the lady")
    ('A lady walks to a barbell. She bends down.', 'the lady')
    >>> split_context("A man is sitting on a roof.")
    ('A man is sitting on a roof.', '')
    >>> split_context("the man")
    ('', 'the man')
    """
    if not ctx or _ENDS_A_SENTENCE.search(ctx):
        return ctx, ""
    cut = None
    for cut in _SENTENCE_BREAK.finditer(ctx):
        pass
    if cut is None:
        return "", ctx
    return ctx[:cut.end()].rstrip(), ctx[cut.end():]


def _csv_ind(text: str) -> int | str:
    """An ``ind`` read from a CSV cell: an integer when the cell is one written plainly (so
    that writing it gives the same cell), else the text."""
    try:
        number = int(text)
    except ValueError:
        return text
    return number if str(number) == text else text


def read_swag_csv(path: str | Path) -> list[MultipleChoiceItem]:
    """Read the official SWAG CSV (:data:`SWAG_COLUMNS`) as multiple-choice items.

    The file needs ``sent1``, ``sent2``, ``ending0``, ``ending1`` (more endings as
    ``ending2``, ``ending3``, ... without gaps) and ``label``. An item's context is
    ``startphrase`` (or, when that column is missing or the cell empty, ``sent1 + " " + sent2``),
    its ``ind`` the unnamed first column (else ``fold-ind``, else the 0-based row count; an
    integer when the cell is one), its ``activity_label`` an ``activity_label`` column if the
    file has one (an empty cell: none). Every other column, ``sent1`` and ``sent2`` included,
    is kept as text in ``extra`` (but for ``sent1`` and ``sent2``, an empty cell is no value
    and left out, as :func:`write_swag_csv` writes an empty cell for a missing one), so an
    official file is written back byte for byte.

    The official ``test.csv`` has no ``label`` column: it is refused (a :class:`DatasetError`
    naming the file), as is an empty label cell (naming the line), since every item here needs
    its right ending. A row with more or fewer cells than the header is an error naming the file
    and line.

    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "val.csv"
    >>> _ = path.write_text(
    ...     ",video-id,fold-ind,startphrase,sent1,sent2,gold-source,ending0,ending1,ending2,"
    ...     "ending3,label\\n"
    ...     "0,lsmdc3001,3416,Students lower their eyes nervously. She,Students lower their eyes "
    ...     "nervously.,She,gold,pats her shoulder.,smiles.,runs.,sits.,1\\n")
    >>> [item] = read_swag_csv(path)
    >>> item.ind, item.ctx, item.gold
    (0, 'Students lower their eyes nervously. She', 'smiles.')
    >>> item.extra["sent2"], item.extra["fold-ind"]
    ('She', '3416')
    >>> write_swag_csv([item], path.with_name("copy.csv"))
    >>> path.with_name("copy.csv").read_text() == path.read_text()
    True
    """
    file = Path(path)
    with _csv_errors(file):
        reader = _csv_rows(file, "SWAG CSV")
        header = list(reader.fieldnames or [])
        missing = [c for c in ("sent1", "sent2", "ending0", "ending1") if c not in header]
        if missing:
            raise DatasetError(f"{file}: not a SWAG CSV: missing column(s) {', '.join(missing)} "
                               f"(it has: {', '.join(map(repr, header)) or 'nothing'})")
        if "label" not in header:
            raise DatasetError(f"{file}: no `label` column: an unlabelled SWAG CSV (such as the "
                               "official test.csv) cannot be used here, every item needs its "
                               "right ending")
        twice = sorted({c for c in header if header.count(c) > 1})
        if twice:
            raise DatasetError(f"{file}: column(s) {', '.join(map(repr, twice))} appear twice")
        count = 0
        while f"ending{count}" in header:
            count += 1
        stray = [c for c in header if (m := _ENDING_COLUMN.fullmatch(c)) and int(m[1]) >= count]
        if stray:
            raise DatasetError(f"{file}: ending column(s) {', '.join(stray)} without "
                               f"ending{count} before them")
        endings_columns = [f"ending{j}" for j in range(count)]
        index_column = "" if header[0] == "" else None
        own = {"", "startphrase", "label", "activity_label", *endings_columns}
        items = []
        for record in reader:
            where = f"{file}:{reader.line_num}"
            if None in record:
                raise DatasetError(f"{where}: more cells than the header's {len(header)}")
            if any(value is None for value in record.values()):
                raise DatasetError(f"{where}: fewer cells than the header's {len(header)}")
            if not record["label"].strip():
                raise DatasetError(f"{where}: `label` is missing")
            label = _index(record["label"], "label", where, range(count))
            ctx = (record.get("startphrase")
                   or _join_context(record["sent1"], record["sent2"]))
            if index_column is not None and record[index_column]:
                ind = _csv_ind(record[index_column])
            elif record.get("fold-ind"):
                ind = _csv_ind(record["fold-ind"])
            else:
                ind = len(items)
            extra = {c: record[c] for c in header
                     if c not in own and (record[c] or c in ("sent1", "sent2"))}
            items.append(MultipleChoiceItem(ind, ctx, tuple(record[c] for c in endings_columns),
                                            label, record.get("activity_label") or None, extra))
    return items


def _swag_row(item: MultipleChoiceItem) -> dict[str, str]:
    """The cells of an item's SWAG CSV row: the official columns, then its other ``extra``."""
    extra = dict(item.extra)
    sent1, sent2 = extra.get("sent1"), extra.get("sent2")
    if not (isinstance(sent1, str) and isinstance(sent2, str)):
        sent1, sent2 = extra.get("ctx_a"), extra.get("ctx_b")
        if isinstance(sent1, str) and isinstance(sent2, str):
            del extra["ctx_a"], extra["ctx_b"]  # HellaSwag's halves, now sent1 and sent2
        else:
            sent1, sent2 = split_context(item.ctx)
    row = {"": str(item.ind), "startphrase": item.ctx, "sent1": sent1, "sent2": sent2,
           "label": str(item.label),
           **{f"ending{j}": ending for j, ending in enumerate(item.endings)}}
    if item.activity_label is not None:
        row["activity_label"] = item.activity_label
    for key, value in extra.items():
        if key not in row:
            row[key] = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return row


def write_swag_csv(items: Iterable[MultipleChoiceItem], path: str | Path, *,
                   overwrite: bool = False) -> None:
    """Write items as an official SWAG CSV that :func:`read_swag_csv` reads back unchanged.

    The columns are :data:`SWAG_COLUMNS` (with as many ``ending`` columns as the items have
    endings; all items need the same number), then ``activity_label`` if an item has one, then
    the items' other ``extra`` keys in the order first met (a cell is text: a value that is not
    a string is written as JSON; an item without the key has an empty cell). The first column
    is ``ind``, ``startphrase`` the context. ``sent1`` and ``sent2`` are, in this order of
    preference, the item's own (``extra``, as :func:`read_swag_csv` keeps them), HellaSwag's
    ``ctx_a`` and ``ctx_b`` (which then are not written again), or :func:`split_context` of
    the context; ``video-id``, ``fold-ind`` and ``gold-source`` are empty unless ``extra``
    holds them.

    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "swag.csv"
    >>> item = MultipleChoiceItem(7, "A man is on a roof. he", ("sings.", "nods."), 1)
    >>> write_swag_csv([item], path)
    >>> print(path.read_text(), end="")
    ,video-id,fold-ind,startphrase,sent1,sent2,gold-source,ending0,ending1,label
    7,,,A man is on a roof. he,A man is on a roof.,he,,sings.,nods.,1
    """
    items = list(items)
    counts = sorted({len(item.endings) for item in items})
    if len(counts) > 1:
        raise DatasetError(f"a SWAG CSV needs the same number of endings in every item (found "
                           f"{', '.join(map(str, counts))})")
    count = counts[0] if counts else 4
    rows = [_swag_row(item) for item in items]
    header = [c for c in SWAG_COLUMNS if not _ENDING_COLUMN.fullmatch(c) and c != "label"]
    header += [f"ending{j}" for j in range(count)] + ["label"]
    for row in rows:
        header += [c for c in row if c not in header]
    target = check_output_file(path, "--out", overwrite=overwrite)
    with atomic_open(target) as out:
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(header)
        for row in rows:
            writer.writerow([row.get(c, "") for c in header])


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
    with _csv_errors(file):
        reader = _csv_rows(file, "INLI")
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
