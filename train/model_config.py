"""A model folder's ``config.json``, checked by type before transformers reads it.

transformers 5 declares the type of every field of a model's config (its config classes are
dataclasses) and refuses a value of another type with a validation error of sixty lines from
deep in its own code: a ``"n_layer": "4"`` in a hand-edited ``config.json`` was a traceback.
:func:`check_model_config` reads the file first and checks every field whose declared type is
made of numbers, booleans, strings, ``None`` and lists of integers (token ids) against the JSON
value, in the nested configs too (an encoder-decoder's ``encoder`` and ``decoder``, a
``text_config``), and says what is wrong in one line naming the file and the field. A field of
another declared type (a dict, a ``Literal``) is left to transformers, and so is a folder whose
``model_type`` it does not know (its own message is one line).

>>> import json, tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> _ = (folder / "config.json").write_text(json.dumps(
...     {"model_type": "gpt2", "n_layer": 2, "n_embd": "16", "eos_token_id": 0}))
>>> check_model_config(folder)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
train.errors.ModelFolderError: '.../config.json': `n_embd` (='16') must be an integer
>>> _ = (folder / "config.json").write_text(json.dumps(
...     {"model_type": "gpt2", "n_layer": 2, "n_embd": 16, "eos_token_id": [0, 1]}))
>>> check_model_config(folder)["n_embd"]
16
"""

from __future__ import annotations

import dataclasses
import json
import os
import types
import typing
from pathlib import Path
from typing import Any

from dpc_errors import DpcError
from train.errors import ModelFolderError

__all__ = ["check_model_config"]

#: How a message words each kind of JSON value a field may hold.
_WORDS = {"int": "an integer", "float": "a number", "bool": "true or false", "str": "a string",
          "list[int]": "a list of integers", "None": "null"}


def check_model_config(folder: str | os.PathLike[str], *,
                       error: type[DpcError] = ModelFolderError) -> dict[str, Any]:
    """``folder``'s ``config.json`` as a dict, once every field of a type dpc can check
    (module notes) holds a value of that type; else ``error`` naming the file, the field (its
    path in the nested configs: ``encoder.hidden_size``) and the value.

    Raises ``error`` too for a ``config.json`` that cannot be read, is not UTF-8 JSON, or is
    not a JSON object.
    """
    path = Path(folder) / "config.json"
    name = repr(os.fspath(path))
    try:
        text = path.read_bytes().decode("utf-8")
    except OSError as err:
        raise error(f"cannot read {name}: {err.strerror or type(err).__name__}") from None
    except UnicodeDecodeError as err:
        raise error(f"{name} is not UTF-8 text (byte {err.start + 1})") from None
    try:
        config = json.loads(text)
    except ValueError as err:
        raise error(f"{name} is not JSON: {err}") from None
    if not isinstance(config, dict):
        raise error(f"{name} is not a JSON object (a model's config)")
    _check_fields(config, name, "", error)
    return config


def _check_fields(config: dict[str, Any], name: str, prefix: str,
                  error: type[DpcError]) -> None:
    """Check ``config``'s fields against its ``model_type``'s declared types, then each nested
    config (a dict value with a ``model_type`` of its own)."""
    declared = _declared_kinds(config.get("model_type"))
    for field, kinds in declared.items():
        if field in config and not any(_is(config[field], kind) for kind in kinds):
            wanted = " or ".join(_WORDS[kind] for kind in sorted(kinds, key=list(_WORDS).index))
            raise error(f"{name}: `{prefix}{field}` (={config[field]!r}) must be {wanted}")
    for key, value in config.items():
        if isinstance(value, dict) and isinstance(value.get("model_type"), str):
            _check_fields(value, name, f"{prefix}{key}.", error)


def _declared_kinds(model_type: object) -> dict[str, frozenset[str]]:
    """Field name -> the JSON kinds its declared type allows, for the fields of ``model_type``'s
    config class whose type is made of :data:`_WORDS`' kinds only (``{}``: a type transformers
    does not know, or none given)."""
    if not isinstance(model_type, str):
        return {}
    from transformers import CONFIG_MAPPING

    try:
        cls = CONFIG_MAPPING[model_type]
    except KeyError:
        return {}
    if not dataclasses.is_dataclass(cls):
        return {}
    found = {}
    for field in dataclasses.fields(cls):
        kinds = _kinds(field.type)
        if kinds:
            found[field.name] = kinds
    return found


def _kinds(hint: object) -> frozenset[str] | None:
    """The kinds of JSON value a declared type allows (``"int | None"`` -> ``{"int", "None"}``),
    or ``None`` when any part of it is not one of :data:`_WORDS`' (then it is not checked).

    >>> sorted(_kinds("int | list[int] | None"))
    ['None', 'int', 'list[int]']
    >>> _kinds("str | torch.dtype | None") is None
    True
    >>> sorted(_kinds(float | None))
    ['None', 'float']
    """
    if isinstance(hint, str):
        parts = [part.strip() for part in hint.split("|")]
        return frozenset(parts) if all(part in _WORDS for part in parts) else None
    if hint is type(None):
        return frozenset({"None"})
    if hint in (int, float, bool, str):
        return frozenset({hint.__name__})  # type: ignore[union-attr]
    if typing.get_origin(hint) is list and typing.get_args(hint) == (int,):
        return frozenset({"list[int]"})
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        kinds: set[str] = set()
        for part in typing.get_args(hint):
            part_kinds = _kinds(part)
            if part_kinds is None:
                return None
            kinds |= part_kinds
        return frozenset(kinds)
    return None


def _is(value: object, kind: str) -> bool:
    """Whether a JSON value is of ``kind`` (a bool is not a number; an integer is a float)."""
    if kind == "None":
        return value is None
    if kind == "bool":
        return isinstance(value, bool)
    if isinstance(value, bool):
        return False
    if kind == "int":
        return isinstance(value, int)
    if kind == "float":
        return isinstance(value, (int, float))
    if kind == "str":
        return isinstance(value, str)
    return isinstance(value, list) and all(_is(v, "int") for v in value)  # list[int]
