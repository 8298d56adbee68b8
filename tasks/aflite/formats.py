"""The datasets AFLite filters, as instances an encoder reads, and subsets written back.

Every format becomes :class:`Instances`: the texts of each instance in one of two shapes, its
integer label, the texts the PMI baseline counts words of, and how to write a subset (the kept
items, the removed ones) back in the input's own format (:func:`write_items`, to a file named
with the format's :data:`SUFFIXES`).

============================  ======================================================  ==========
format (view)                 one instance, its embedding                              labels
============================  ======================================================  ==========
``winogrande``                a problem: the pairs (sentence with ``_``, option1)      answer 1|2
                              and (sentence, option2); embedding =                     (0, 1)
                              e(pair 1) - e(pair 2) (antisymmetric: swapping the
                              options negates it and flips the label)
``inli`` (``pair``)           a (premise, hypothesis) pair; e(premise, hypothesis)     4 INLI
``inli`` (``hypothesis-       the hypothesis alone; e(hypothesis)                      labels
only``)
``multiple-choice``           a context and its endings: the pairs (ctx, ending j);    index of
                              embedding = the endings' embeddings concatenated         the ending
                              (HellaSwag/SWAG JSON lines)
``swag-csv``                  the same, read from and written as the official SWAG     index of
                              CSV (``sent1``, ``sent2``, ``ending0..3``, ``label``)    the ending
============================  ======================================================  ==========

The fine-tuning of the paper's recipe uses the same shapes: ``choice`` instances fine-tune a
multiple-choice cross-encoder (``train.cross_encoder.train_multiple_choice``), ``pair``
instances a pair classifier (``train_pair_classifier``).

Labels are checked by the readers of :mod:`tasks.datasets` (a missing answer, a label outside
the format's set: :class:`~tasks.errors.DatasetError` naming the file and line; an unlabelled
test split is refused). INLI instances are single hypotheses, so a written INLI file keeps a
premise row with the hypotheses written and empty cells for the others (``read_inli(...,
partial=True)`` reads it back); a row with none written is left out. So the kept and the removed
files of one run together hold every instance of the input once.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from tasks.datasets import (
    INLI_LABELS,
    read_inli,
    read_multiple_choice,
    read_swag_csv,
    read_winogrande,
    write_inli,
    write_multiple_choice,
    write_swag_csv,
    write_winogrande,
)
from tasks.errors import TaskError

__all__ = ["FORMATS", "SUFFIXES", "VIEWS", "Instances", "load_instances", "write_items"]

#: The formats ``dpc aflite --format`` reads.
FORMATS: tuple[str, ...] = ("winogrande", "inli", "multiple-choice", "swag-csv")
#: The views of each format (the first is the default).
VIEWS: dict[str, tuple[str, ...]] = {"winogrande": ("twins",), "inli": ("pair", "hypothesis-only"),
                                     "multiple-choice": ("choices",), "swag-csv": ("choices",)}
#: The file name suffix of each format (``dpc aflite`` writes ``kept`` and ``removed`` + it).
SUFFIXES: dict[str, str] = {"winogrande": ".jsonl", "inli": ".csv", "multiple-choice": ".jsonl",
                            "swag-csv": ".csv"}


@dataclass(frozen=True)
class Instances:
    """What AFLite filters: ``len(labels)`` instances of one format and view.

    ``mode`` is ``"pair"`` (instance ``i`` is the text ``a[i]``, paired with ``b[i]`` unless
    ``b`` is ``None``) or ``"choice"`` (instance ``i`` is ``a[i]`` paired with each of
    ``b[i]``). ``pmi_texts``/``groups`` feed :func:`tasks.aflite.baselines.pmi_filter`
    (``None``: no PMI baseline for this format). ``source`` maps instance ``i`` to its item
    (and, for INLI, to the hypothesis' label); ``items`` are what the reader gave.
    """

    format: str
    view: str
    mode: str
    a: list[str]
    b: list[str] | list[list[str]] | None
    labels: np.ndarray
    label_names: tuple[str, ...]
    pmi_texts: list[str] | None
    groups: list[str | None] | None
    source: list[tuple[int, str | None]]
    items: Any = field(repr=False)

    def __len__(self) -> int:
        return len(self.labels)

    @property
    def num_labels(self) -> int:
        return len(self.label_names)

    def subset(self, indices: Sequence[int] | np.ndarray) -> Instances:
        """The instances at ``indices`` (same items, so :func:`write_items` still works)."""
        ids = [int(i) for i in indices]
        b = None if self.b is None else [self.b[i] for i in ids]
        return replace(self, a=[self.a[i] for i in ids], b=b, labels=self.labels[ids],
                       pmi_texts=None if self.pmi_texts is None else
                       [self.pmi_texts[i] for i in ids],
                       groups=None if self.groups is None else [self.groups[i] for i in ids],
                       source=[self.source[i] for i in ids])


def _twin_group(qid: str | None) -> str | None:
    """The twin pair of a WinoGrande qID (``XYZ-1`` and ``XYZ-2`` share ``XYZ``)."""
    if not qid or "-" not in qid:
        return None
    return qid.rsplit("-", 1)[0]


def load_instances(path: str | os.PathLike[str], format: str, view: str | None = None
                   ) -> Instances:
    """Read ``path`` as ``format`` and make its :class:`Instances` (``view``: one of
    :data:`VIEWS` of the format, default the first)."""
    if format not in FORMATS:
        raise TaskError(f"--format {format!r} is not one of {', '.join(FORMATS)}")
    view = VIEWS[format][0] if view is None else view
    if view not in VIEWS[format]:
        raise TaskError(f"--view {view!r} is not a view of {format} (its views: "
                        f"{', '.join(VIEWS[format])})")
    if format == "winogrande":
        items = read_winogrande(path)
        return Instances(
            format, view, "choice", [it.sentence for it in items],
            [[it.option1, it.option2] for it in items],
            np.array([it.answer - 1 for it in items], dtype=np.int64), ("option1", "option2"),
            [it.sentence for it in items], [_twin_group(it.qid) for it in items],
            [(i, None) for i in range(len(items))], items)
    if format == "inli":
        data = read_inli(path, partial=True)
        a: list[str] = []
        b: list[str] = []
        labels: list[int] = []
        source: list[tuple[int, str | None]] = []
        for r, row in enumerate(data.rows):
            for j, label in enumerate(INLI_LABELS):
                hypothesis = row.hypothesis(label)
                if not hypothesis:
                    continue
                a.append(row.premise if view == "pair" else hypothesis)
                b.append(hypothesis)
                labels.append(j)
                source.append((r, label))
        return Instances(format, view, "pair", a, b if view == "pair" else None,
                         np.array(labels, dtype=np.int64), INLI_LABELS,
                         [h for h in b], None, source, data)
    items_mc = read_swag_csv(path) if format == "swag-csv" else read_multiple_choice(path)
    counts = {len(it.endings) for it in items_mc}
    if len(counts) > 1:
        raise TaskError(f"{os.fspath(path)}: every item needs the same number of endings "
                        f"(found {', '.join(map(str, sorted(counts)))})")
    k = counts.pop() if counts else 4
    return Instances(format, view, "choice", [it.ctx for it in items_mc],
                     [list(it.endings) for it in items_mc],
                     np.array([it.label for it in items_mc], dtype=np.int64),
                     tuple(f"ending{j}" for j in range(k)), None, None,
                     [(i, None) for i in range(len(items_mc))], items_mc)


_ITEM_WRITERS = {"winogrande": write_winogrande, "multiple-choice": write_multiple_choice,
                 "swag-csv": write_swag_csv}


def write_items(instances: Instances, indices: Sequence[int] | np.ndarray,
                path: str | os.PathLike[str], *, overwrite: bool = False) -> Path:
    """Write the items of the instances at ``indices`` to ``path`` in the input's format, in
    the input's order, each once (``dpc aflite`` writes the kept and the removed ones).

    >>> import json, pathlib, tempfile
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> lines = [{"ind": i, "ctx": f"Context {i}. he", "endings": ["sits.", "runs."],
    ...           "label": i % 2} for i in range(3)]
    >>> _ = (folder / "mc.jsonl").write_text("".join(json.dumps(x) + "\\n" for x in lines))
    >>> instances = load_instances(folder / "mc.jsonl", "multiple-choice")
    >>> write_items(instances, [2, 0], folder / "kept.jsonl").name
    'kept.jsonl'
    >>> [json.loads(x)["ind"] for x in (folder / "kept.jsonl").read_text().splitlines()]
    [0, 2]
    """
    chosen = sorted({instances.source[int(i)] for i in indices},
                    key=lambda s: (s[0], -1 if s[1] is None else INLI_LABELS.index(s[1])))
    if instances.format in _ITEM_WRITERS:
        _ITEM_WRITERS[instances.format]([instances.items[i] for i, _ in chosen], path,
                                        overwrite=overwrite)
    else:
        data = instances.items
        keep: dict[int, set[str]] = {}
        for r, label in chosen:
            keep.setdefault(r, set()).add(str(label))
        rows = [replace(data.rows[r], **{lab: (data.rows[r].hypothesis(lab) if lab in labs else "")
                                         for lab in INLI_LABELS})
                for r, labs in sorted(keep.items())]
        write_inli(rows, path, overwrite=overwrite, index_column=data.index_column)
    return Path(path)
