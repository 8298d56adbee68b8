"""Curated everyday cause–effect pairs: the e-CARE and ConceptNet readers.

e-CARE (Du et al., ACL 2022, MIT) holds COPA-style questions in modern everyday English. Both of
its tasks' files give ``(cause, effect)`` sentence pairs:

- ``explanation_generation_*.jsonl``: rows ``{"cause", "effect", "conceptual_explanation", ...}``;
- ``causal_reasoning_*.jsonl``: rows ``{"premise", "ask-for", "hypothesis1", "hypothesis2",
  "label"}``, whose correct hypothesis (``label`` 0 or 1) and premise form the pair by
  ``ask-for``.

The graph adds these pairs as edges (:mod:`cause_effect_graph.everyday`) and the trainer
fine-tunes a causal LM on them (:mod:`train.cause_effect_lm`): both read them here, below both
packages.

>>> import tempfile, pathlib
>>> f = pathlib.Path(tempfile.mkdtemp()) / "e.jsonl"
>>> _ = f.write_text('{"premise": "I slipped.", "ask-for": "cause", "hypothesis1": "The '
...                  'floor was wet.", "hypothesis2": "I ate.", "label": 0}\\n')
>>> list(read_ecare(f))
[('The floor was wet.', 'I slipped.')]
>>> _ = f.write_text('{"cause": "rain"}\\n')
>>> list(read_ecare(f))
Traceback (most recent call last):
...
causal_mining.errors.BankFormatError: ...e.jsonl:1: not an e-CARE row (... it has cause)
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from causal_mining.errors import BankFormatError
from dpc_inputs import InputError, iter_input_lines, parse_json

__all__ = ["ecare_pair", "read_conceptnet", "read_ecare"]


def _where(path: Path, line: int) -> str:
    return f"{os.fspath(path)}:{line}"


def _lines(path: Path, kind: str) -> Iterator[tuple[int, str]]:
    """``(line number, text)`` of every non-blank line of ``path``, line break removed
    (:func:`dpc_inputs.iter_input_lines`); a :class:`~causal_mining.errors.BankFormatError` when
    the file cannot be read or is not UTF-8, naming the line."""
    try:
        for number, text in enumerate(iter_input_lines(path, kind), 1):
            if text.strip():
                yield number, text
    except InputError as err:
        raise BankFormatError(str(err)) from None


def _json(text: str, path: Path, number: int) -> object:
    """One line's JSON value (:func:`dpc_inputs.parse_json`: a line nested too deeply is refused,
    not a ``RecursionError``), its errors as :class:`~causal_mining.errors.BankFormatError`."""
    try:
        return parse_json(text, _where(path, number))
    except InputError as err:
        raise BankFormatError(str(err)) from None


def ecare_pair(row: object, path: Path, line: int) -> tuple[str, str]:
    """``(cause, effect)`` of one parsed e-CARE row (either task's format), stripped; a
    :class:`~causal_mining.errors.BankFormatError` naming ``path:line`` otherwise."""
    if not isinstance(row, dict):
        raise BankFormatError(f"{_where(path, line)}: an e-CARE row has to be a JSON object, "
                              f"not {type(row).__name__}")
    if "cause" in row and "effect" in row:
        cause, effect = row["cause"], row["effect"]
    elif {"premise", "ask-for", "hypothesis1", "hypothesis2", "label"} <= row.keys():
        label, ask = row["label"], row["ask-for"]
        if label not in (0, 1) or isinstance(label, bool):
            raise BankFormatError(f"{_where(path, line)}: `label` (={label!r}) has to be 0 or 1")
        if ask not in ("cause", "effect"):
            raise BankFormatError(f"{_where(path, line)}: `ask-for` (={ask!r}) has to be "
                                  "'cause' or 'effect'")
        answer = row["hypothesis1"] if label == 0 else row["hypothesis2"]
        cause, effect = (answer, row["premise"]) if ask == "cause" else (row["premise"], answer)
    else:
        raise BankFormatError(
            f"{_where(path, line)}: not an e-CARE row (it needs 'cause' and 'effect', or "
            "'premise', 'ask-for', 'hypothesis1', 'hypothesis2' and 'label'; it has "
            f"{', '.join(sorted(row)) or 'no keys'})")
    if not isinstance(cause, str) or not isinstance(effect, str):
        raise BankFormatError(f"{_where(path, line)}: the cause and effect have to be strings")
    return cause.strip(), effect.strip()


def read_ecare(path: str | Path) -> Iterator[tuple[str, str]]:
    """``(cause, effect)`` of every row of an e-CARE JSON-lines file (either task's format).

    Raises
    ------
    BankFormatError
        Naming the file (unreadable, not UTF-8) or the file and line of a row that is not JSON
        or not an e-CARE row.
    """
    path = Path(path)
    for number, text in _lines(path, "e-CARE file"):
        yield ecare_pair(_json(text, path, number), path, number)


def read_conceptnet(path: str | Path) -> Iterator[tuple[str, str]]:
    """``(cause, effect)`` of every ``cause,["effect", ...]`` line of a ConceptNet ``Causes``
    file, ``_`` read as a space (the graph's edges, :mod:`cause_effect_graph.everyday`, and the
    verifier's training items, :mod:`train.verifier`).

    Raises
    ------
    BankFormatError
        Naming the file (unreadable, not UTF-8) or the file and line of a line of another shape.

    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "c.txt"
    >>> _ = f.write_text('eat_too_much,["stomach_ache", "gain_weight"]\\n')
    >>> list(read_conceptnet(f))
    [('eat too much', 'stomach ache'), ('eat too much', 'gain weight')]
    """
    path = Path(path)
    for number, text in _lines(path, "ConceptNet file"):
        cause, sep, rest = text.partition(",[")
        effects: object = None
        if sep and cause.strip():
            try:
                effects = parse_json("[" + rest, _where(path, number))
            except InputError:
                effects = None
        if not isinstance(effects, list) or not all(isinstance(e, str) for e in effects):
            raise BankFormatError(f"{_where(path, number)}: not a ConceptNet cause line "
                                  f"('cause,[\"effect\", ...]'): {text[:60]!r}")
        for effect in effects:
            yield _phrase(cause), _phrase(effect)


def _phrase(text: str) -> str:
    return " ".join(text.replace("_", " ").split())
