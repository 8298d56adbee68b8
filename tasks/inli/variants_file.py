"""Variants for a whole INLI file (``dpc inli variants --file F --out O``), here or on Spark.

The premises are cut into chunks of :data:`CHUNK` (each chunk one call of
:meth:`~tasks.inli.hypotheses.VariantGenerator.generate`, so a chunk's variants are the same
wherever it is decoded) and the chunks into contiguous partitions (:mod:`dpc_spark`). Each
partition's records are committed to ``O.parts/`` when it is done, whole or not at all; an
interrupted run, local or Spark, resumes there and skips the committed partitions. When all are
done ``O`` is written whole (an INLI CSV or JSON lines) and ``O.parts`` removed.

The local path commits every chunk (one partition each); ``--spark`` defaults to four partitions
per core, at most 25 chunks each, and a resumed run keeps the count it recorded
(``O.parts/run.json``, with the run's settings: another run there is refused, naming the
difference). Each Spark executor loads the generator once (on the task's GPU where Spark gives
one, :func:`dpc_spark.task_device`).

>>> chunks([("1", "p", "h")] * 40)[-1][0]
32
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path
from typing import Any

from dpc_decode.options import SearchOptions
from dpc_files import file_digest, text_digest
from dpc_spark import claim_parts, default_partitions, read_parts, run_partitions
from tasks.inli.hypotheses import ChoiceRule

__all__ = ["CHUNK", "VariantRun", "chunks", "variants_for_file"]

#: Premises per call of the generator: 16 premises x 3 labels are 3 of its batches of 16 rows.
CHUNK = 16


def chunks(items: Sequence[tuple[str, str, str]]) -> list[tuple[int, list[tuple[str, str, str]]]]:
    """``(first item's position, items)`` of each chunk of :data:`CHUNK` items, in order."""
    return [(at, list(items[at:at + CHUNK])) for at in range(0, len(items), CHUNK)]


@dataclass(frozen=True)
class VariantRun:
    """How every chunk is decoded (the ``dpc inli variants`` flags); picklable, for Spark."""

    generator: str
    device: str
    dtype: str | None
    labels: tuple[str, ...]
    constrained: bool = True
    ban_negation: bool = True
    ban_copy: bool = True
    num_beams: int = 4
    max_new_tokens: int = 40
    rerank: str = "classifier"
    #: ``rerank="classifier"``: the INLI classifier folder (``None``: the bundled one) and the
    #: rule it chooses by (``None``: :class:`~tasks.inli.hypotheses.ChoiceRule`'s defaults)
    classifier: str | None = None
    choice: ChoiceRule | None = None
    #: the engine's selection under constraints (``--search`` and its flags)
    search: SearchOptions = SearchOptions()

    def __post_init__(self) -> None:
        if self.rerank == "classifier":
            from tasks.inli.classifier import MODEL_DIR

            object.__setattr__(self, "classifier",
                               str(Path(self.classifier or MODEL_DIR).resolve()))
            object.__setattr__(self, "choice", self.choice or ChoiceRule())

    def signature(self, items: Sequence[tuple[str, str, str]]) -> dict[str, Any]:
        """What the parts of this run depend on, for :func:`dpc_spark.claim_parts`."""
        verifier = ({"classifier": {"name": self.classifier,
                                    "files": file_digest(self.classifier)},
                     "choice": asdict(self.choice or ChoiceRule())}
                    if self.rerank == "classifier" else {})
        return {"generator": {"name": self.generator, "files": file_digest(self.generator)},
                "labels": list(self.labels), "constrained": self.constrained,
                "ban_negation": self.ban_negation, "ban_copy": self.ban_copy,
                "num_beams": self.num_beams, "max_new_tokens": self.max_new_tokens,
                "rerank": self.rerank, "dtype": self.dtype, **verifier,
                # recorded where it is not the default, so runs made before it resume
                **({"search": self.search.as_kwargs()} if self.search != SearchOptions() else {}),
                "the premises": {"count": len(items), "digest": text_digest(
                    [list(item) for item in items])}}

    def load(self, spark: bool = False) -> Any:
        """The generator (:meth:`~tasks.inli.hypotheses.VariantGenerator.load`) and, with
        ``rerank="classifier"``, the classifier (else ``None``); ``spark``: on the GPU Spark
        gave the task, if any."""
        from dpc_device import resolve_device
        from dpc_spark import task_device
        from tasks.inli.hypotheses import VariantGenerator

        device = resolve_device(task_device(self.device) if spark else self.device)
        generator = VariantGenerator.load(self.generator, device=device, dtype=self.dtype)
        if self.rerank != "classifier":
            return generator, None
        from tasks.inli.classifier import InliClassifier

        return generator, InliClassifier.load(self.classifier, device=device)

    def decode(self, models: Any, index: int,
               chunk: tuple[int, list[tuple[str, str, str]]]) -> list[dict[str, Any]]:
        """The records of one chunk: per premise its variants, which sets they met, and the
        chunk position of the premise (``position``)."""
        at, items = chunk
        generator, classifier = models
        flat = [(i, lab) for i in range(len(items)) for lab in self.labels]
        variants = generator.generate(
            [items[i][1] for i, _ in flat], [items[i][2] for i, _ in flat],
            [lab for _, lab in flat], constrained=self.constrained,
            ban_negation=self.ban_negation, ban_copy=self.ban_copy, num_beams=self.num_beams,
            max_new_tokens=self.max_new_tokens, rerank=self.rerank, classifier=classifier,
            choice=self.choice, search=self.search)
        records = []
        for i, (key, premise, implied) in enumerate(items):
            vs = variants[i * len(self.labels):(i + 1) * len(self.labels)]
            records.append({"position": at + i, "index": key, "premise": premise,
                            "implied_entailment": implied, **{v.label: v.text for v in vs},
                            "satisfied": {v.label: v.satisfied for v in vs},
                            "constrained": self.constrained,
                            **({"label_probability": {v.label: v.label_probability
                                                      for v in vs}}
                               if self.rerank == "classifier" else {})})
        return records


def _spark_load(run: VariantRun) -> Any:
    return run.load(spark=True)


def variants_for_file(items: Sequence[tuple[str, str, str]], out: str | Path, run: VariantRun, *,
                      spark: str | None = None, partitions: int | None = None,
                      overwrite: bool = False, progress: bool = True
                      ) -> tuple[list[dict[str, Any]], dict]:
    """The records of every ``(index, premise, implied)`` of ``items``, in order, decoded in
    committed chunks under ``OUT.parts`` (``spark``: on that Spark master, else here), and the
    run's ``{"partitions", "computed", "skipped"}``. The caller writes ``out`` and then removes
    the parts (:func:`remove_parts`). ``overwrite``: parts of an earlier run are dropped, not
    resumed."""
    parts = parts_folder(out)
    units = chunks(items)
    if not units:
        return [], {"partitions": 0, "computed": 0, "skipped": 0}
    if spark is None:
        count = claim_parts(parts, run.signature(items), partitions, lambda: len(units),
                            command="dpc inli variants", overwrite=overwrite)
        summary = run_partitions(units, parts, count, load=run.load, apply=run.decode,
                                 master=None, progress=progress, desc="partitions")
    else:
        from dpc_spark import spark_session

        session, created = spark_session(spark, "dpc-inli-variants")
        try:
            count = claim_parts(parts, run.signature(items), partitions, lambda: default_partitions(
                len(units), session.sparkContext.defaultParallelism),
                command="dpc inli variants", overwrite=overwrite)
            summary = run_partitions(units, parts, count, load=partial(_spark_load, run),
                                     key=run, apply=run.decode, master=spark,
                                     app_name="dpc-inli-variants", progress=progress,
                                     desc="partitions (spark)")
        finally:
            if created:
                session.stop()
    records = list(read_parts(parts, range(count)))
    for record in records:
        record.pop("position")
    return records, summary


def parts_folder(out: str | Path) -> Path:
    """The parts folder of ``--out``: ``OUT.parts`` beside it."""
    out = Path(out)
    return out.with_name(out.name + ".parts")


def remove_parts(out: str | Path) -> None:
    """Remove ``OUT.parts`` once ``OUT`` is written."""
    shutil.rmtree(parts_folder(out), ignore_errors=True)
