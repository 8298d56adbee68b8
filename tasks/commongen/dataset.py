"""CommonGen's files read into concept sets and (concepts, sentence) pairs.

CommonGen v1.0 (Lin et al. 2020) ships each split in parallel line files: ``src_alpha.txt`` (the
concepts of a line, space-separated, alphabetical), ``tgt.txt`` (a human sentence that uses
them) and ``cs_str.txt`` (the same concepts with their part-of-speech tags, as the official
coverage script reads them: ``field_N#look_V#stand_V``); dev also comes as ``.jsonl`` with one
line per distinct set (``concept_set`` tagged, ``scene`` its sentences). A set appears once a
reference, so a file of N lines holds fewer distinct sets.

A :class:`Concept` is a lemma and its tag when the file gives one (``N`` noun, ``V`` verb, ``A``
adjective, ``R`` adverb... as the release writes them); :class:`ConceptSet` is their tuple.

>>> parse_concept_set("field_N#look_V#stand_V")
(Concept(lemma='field', pos='N'), Concept(lemma='look', pos='V'), Concept(lemma='stand', pos='V'))
>>> parse_concept_set("ski mountain")
(Concept(lemma='ski', pos=None), Concept(lemma='mountain', pos=None))
>>> lemmas(parse_concept_set("field_N#look_V"))
('field', 'look')
>>> distinct([("a",), ("b",), ("a",)])
[('a',), ('b',)]
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import NamedTuple, TypeVar

from dpc_inputs import parse_json, read_input_lines
from tasks.errors import DatasetError

__all__ = ["MAX_CONCEPTS", "MAX_CONCEPT_CHARS", "Concept", "ConceptSet", "distinct", "lemmas",
           "parse_concept_set", "read_concept_sets", "read_pairs", "read_references",
           "reference_key"]

#: The longest concept a set may hold, in characters. CommonGen's concepts are single words
#: (the longest of train and dev has 16 characters); a longer "concept" is a wrong file or
#: column, and would be decoded as a constraint of thousands of tokens (the run seemed hung).
MAX_CONCEPT_CHARS = 100
#: The most concepts a set may hold (CommonGen's sets have 3 to 5).
MAX_CONCEPTS = 20


class Concept(NamedTuple):
    """One concept: its lemma and, where the file tags it, its part of speech (``N``, ``V``...)."""

    lemma: str
    pos: str | None = None


ConceptSet = tuple[Concept, ...]
T = TypeVar("T")


def parse_concept_set(text: str, where: str = "concept set") -> ConceptSet:
    """A concept set from one line: ``field_N#look_V#stand_V`` (tagged, ``#``-separated) or
    ``field look stand`` (untagged, space-separated). A blank set, a blank concept, an empty
    tag, a concept of more than :data:`MAX_CONCEPT_CHARS` characters or a set of more than
    :data:`MAX_CONCEPTS` concepts is a :class:`~tasks.errors.DatasetError` naming ``where``.

    >>> parse_concept_set("dog " + "x" * 500, "src.txt:3")
    Traceback (most recent call last):
    ...
    tasks.errors.DatasetError: src.txt:3: the concept 'xxxxxxxxxxxxxxxxxxxx'... has 500 characters: at most 100
    """
    text = text.strip()
    if not text:
        raise DatasetError(f"{where}: an empty concept set")
    tagged = "#" in text or "_" in text
    parts = text.split("#") if tagged else text.split()
    if len(parts) > MAX_CONCEPTS:
        raise DatasetError(f"{where}: {len(parts)} concepts in one set: at most {MAX_CONCEPTS}")
    concepts: list[Concept] = []
    for part in parts:
        lemma, sep, pos = part.strip().rpartition("_") if tagged else ("", "", part)
        if not sep:
            lemma, pos = pos, ""
        lemma = lemma.strip()
        if len(lemma) > MAX_CONCEPT_CHARS:
            raise DatasetError(f"{where}: the concept {lemma[:20]!r}... has {len(lemma)} "
                               f"characters: at most {MAX_CONCEPT_CHARS}")
        if not lemma or " " in lemma or (sep and not pos):
            raise DatasetError(f"{where}: cannot read the concept {part!r} of {text!r} "
                               "(want lemma_TAG#lemma_TAG or space-separated lemmas)")
        concepts.append(Concept(lemma.lower(), pos.upper() or None if sep else None))
    return tuple(concepts)


def lemmas(concepts: ConceptSet) -> tuple[str, ...]:
    """The lemmas of a set, tags dropped."""
    return tuple(c.lemma for c in concepts)


def reference_key(concepts: ConceptSet | Sequence[str]) -> tuple[str, ...]:
    """A set's lemmas, sorted: how references are found for a set (or for the bare lemmas an
    output file records), whatever order either file lists them in.

    >>> reference_key(parse_concept_set("dog_N#frisbee_N#catch_V"))
    ('catch', 'dog', 'frisbee')
    """
    return tuple(sorted(c if isinstance(c, str) else c.lemma for c in concepts))


def distinct(items: Iterable[T]) -> list[T]:
    """``items`` without repeats, in first-appearance order."""
    return list(dict.fromkeys(items))


def _lines(path: str | os.PathLike[str]) -> list[str]:
    """Every line of a CommonGen file, blank ones kept (:func:`dpc_inputs.read_input_lines`:
    UTF-8 with the line named, the BOM dropped, a directory or an empty file refused)."""
    return read_input_lines(path, "CommonGen file", skip_blank=False)


def read_concept_sets(path: str | os.PathLike[str]) -> list[ConceptSet]:
    """Every line's concept set of a ``src_alpha.txt`` / ``cs_str.txt`` file, or every line's
    ``concept_set`` of a ``.jsonl`` file, in file order (repeats kept: :func:`distinct` drops
    them). Blank lines of a text file are skipped; a malformed line names the file and line."""
    name = os.fspath(path)
    sets: list[ConceptSet] = []
    jsonl = Path(path).suffix == ".jsonl"
    for number, line in enumerate(_lines(path), 1):
        if not line.strip():
            continue
        where = f"{name}:{number}"
        if jsonl:
            value = parse_json(line, where)
            if not isinstance(value, dict) or not isinstance(value.get("concept_set"), str):
                raise DatasetError(f"{where}: want an object with a `concept_set` string")
            line = value["concept_set"]
        sets.append(parse_concept_set(line, where))
    if not sets:
        raise DatasetError(f"{name!r} holds no concept set")
    return sets


def read_pairs(src: str | os.PathLike[str], tgt: str | os.PathLike[str]
               ) -> list[tuple[ConceptSet, str]]:
    """(concept set, sentence) pairs from parallel ``src`` and ``tgt`` line files (the training
    data); the two must have the same number of lines, and no sentence may be blank."""
    sets, sentences = _lines(src), _lines(tgt)
    while sets and not sets[-1].strip() and sentences and not sentences[-1].strip():
        sets.pop()
        sentences.pop()
    if len(sets) != len(sentences):
        raise DatasetError(f"{os.fspath(src)!r} has {len(sets)} lines but {os.fspath(tgt)!r} "
                           f"has {len(sentences)}: they must be parallel")
    pairs = []
    for number, (line, sentence) in enumerate(zip(sets, sentences, strict=True), 1):
        if not sentence.strip():
            raise DatasetError(f"{os.fspath(tgt)}:{number}: a blank sentence")
        pairs.append((parse_concept_set(line, f"{os.fspath(src)}:{number}"), sentence.strip()))
    return pairs


def read_references(sets_file: str | os.PathLike[str], refs_file: str | os.PathLike[str]
                    ) -> dict[tuple[str, ...], list[str]]:
    """Every distinct set's reference sentences (by :func:`reference_key`), from parallel line
    files, in first-appearance order: the references of ``dpc commongen eval``."""
    references: dict[tuple[str, ...], list[str]] = {}
    for concepts, sentence in read_pairs(sets_file, refs_file):
        references.setdefault(reference_key(concepts), []).append(sentence)
    return references


def tags_by_lemmas(sets: Sequence[ConceptSet]) -> dict[tuple[str, ...], ConceptSet]:
    """The tagged set of each distinct lemma tuple (the first seen), to give an untagged file's
    sets their tags from a ``cs_str.txt``."""
    found: dict[tuple[str, ...], ConceptSet] = {}
    for concepts in sets:
        found.setdefault(lemmas(concepts), concepts)
    return found
