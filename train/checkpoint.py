"""Training state on disk without pickle: one safetensors file, its tree as JSON in the header.

A resumable run's state -- optimizer, scheduler, random generators, counters, history, and for
CausalBERT the weights -- is a tree of dicts, lists, tuples, numbers, strings and tensors.
:func:`save_state` writes it as one safetensors file: the tensors as the file's tensors, the tree
as JSON in its header metadata, each tensor replaced by ``{"$tensor": NAME}``. :func:`load_state`
reads it back. Nothing in such a file can run code: safetensors parses a JSON header and raw
bytes, and the tree is plain JSON. A file that does not read this way (a ``torch.save`` pickle of
an older dpc, a planted file, a torn one) is a :class:`CheckpointError` that names it; it is
never unpickled.

The tree's encoding (:func:`encode`, :func:`decode`; plain Python apart from the tensors):

- a dict whose keys are strings not starting with ``$``: a JSON object;
- any other dict (the optimizer's ``{param_index: ...}``): ``{"$items": [[key, value], ...]}``;
- a tuple (``random.getstate()``, Adam's betas): ``{"$tuple": [...]}``;
- a list, string, int, float (``inf`` and ``nan`` too), bool or ``None``: itself;
- a tensor: ``{"$tensor": NAME}``, ``NAME`` a key of the file's tensors.

Floats go through ``repr``, so they come back bit for bit, and a resumed run reaches the same
weights as an uninterrupted one.

>>> tensors = {}
>>> tree = encode({"step": 3, "state": {0: (0.9, 0.999)}, "rng": torch.zeros(2)}, tensors)
>>> tree
{'step': 3, 'state': {'$items': [[0, {'$tuple': [0.9, 0.999]}]]}, 'rng': {'$tensor': '0'}}
>>> decode(json.loads(json.dumps(tree)), tensors)["state"]
{0: (0.9, 0.999)}
"""

from __future__ import annotations

import json
import os
import random
import sys
from pathlib import Path
from typing import Any

import torch

from dpc_files import atomic_write_bytes
from train.errors import TrainError

__all__ = ["CheckpointError", "capture_rng", "check_safetensors", "decode", "encode",
           "pickle_checkpoint_error", "load_state", "restore_rng", "save_state"]

#: safetensors header metadata: ``FORMAT_KEY: FORMAT`` marks a dpc training state, ``TREE_KEY``
#: holds its JSON tree.
FORMAT_KEY = "dpc_format"
FORMAT = "dpc-training-state-1"
TREE_KEY = "dpc_state"

_TAGS = ("$tensor", "$tuple", "$items")
_PICKLE_STARTS = (b"PK\x03\x04", b"\x80")  # torch.save's zip archive; a raw pickle (protocol 2+)


class CheckpointError(TrainError):
    """A training checkpoint that dpc cannot (or will not) load; the message names the file."""


# ----------------------------------------------------------------------------- the tree


def encode(value: Any, tensors: dict[str, torch.Tensor]) -> Any:
    """``value`` as a JSON-able tree; its tensors are added to ``tensors`` (CPU copies, so that no
    two share memory, which safetensors refuses) under the names the tree gives them."""
    if isinstance(value, torch.Tensor):
        name = str(len(tensors))
        tensors[name] = value.detach().to("cpu").clone().contiguous()
        return {"$tensor": name}
    if isinstance(value, tuple):
        return {"$tuple": [encode(v, tensors) for v in value]}
    if isinstance(value, list):
        return [encode(v, tensors) for v in value]
    if isinstance(value, dict):
        if all(isinstance(k, str) and not k.startswith("$") for k in value):
            return {k: encode(v, tensors) for k, v in value.items()}
        return {"$items": [[encode(k, tensors), encode(v, tensors)] for k, v in value.items()]}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise TypeError(f"a training state cannot hold a {type(value).__name__} ({value!r})")


def decode(tree: Any, tensors: dict[str, torch.Tensor]) -> Any:
    """The value :func:`encode` made ``tree`` from; ``ValueError`` or ``TypeError`` for a tree it
    cannot have made (an unknown tag, a tensor name not in ``tensors``, a tag holding the wrong
    type)."""
    if isinstance(tree, list):
        return [decode(v, tensors) for v in tree]
    if not isinstance(tree, dict):
        return tree
    tags = [k for k in tree if k.startswith("$")]
    if not tags:
        return {k: decode(v, tensors) for k, v in tree.items()}
    if len(tree) != 1 or tags[0] not in _TAGS:
        raise ValueError(f"unknown entry {sorted(tree)!r}")
    tag, body = tags[0], tree[tags[0]]
    if tag == "$tensor":
        if not isinstance(body, str) or body not in tensors:
            raise ValueError(f"tensor {body!r} is not in the file")
        return tensors[body]
    if not isinstance(body, list):
        raise TypeError(f"{tag} holds a {type(body).__name__}, not a list")
    if tag == "$tuple":
        return tuple(decode(v, tensors) for v in body)
    if not all(isinstance(kv, list) and len(kv) == 2 for kv in body):
        raise ValueError("$items holds something other than [key, value] pairs")
    return {_hashable(decode(k, tensors)): decode(v, tensors) for k, v in body}


def _hashable(key: Any) -> Any:
    if isinstance(key, (dict, list, torch.Tensor)):
        raise TypeError(f"a {type(key).__name__} cannot be a key")
    return key


# ----------------------------------------------------------------------------- files


def save_state(path: Path, state: dict[str, Any]) -> None:
    """Write ``state`` to ``path`` whole or not at all (:func:`dpc_files.atomic_write_bytes`)."""
    from safetensors.torch import save

    tensors: dict[str, torch.Tensor] = {}
    tree = json.dumps(encode(state, tensors), separators=(",", ":"))
    atomic_write_bytes(path, save(tensors, metadata={FORMAT_KEY: FORMAT, TREE_KEY: tree}))


def load_state(path: Path) -> dict[str, Any]:
    """The state :func:`save_state` wrote to ``path``; :class:`CheckpointError` (naming ``path``)
    for anything else, a pickle included, which is never unpickled."""
    from safetensors import SafetensorError, safe_open

    try:
        with safe_open(os.fspath(path), framework="pt") as f:
            metadata = f.metadata() or {}
            if metadata.get(FORMAT_KEY) == FORMAT and TREE_KEY in metadata:
                tensors = {name: f.get_tensor(name) for name in f.keys()}  # noqa: SIM118
    except (SafetensorError, OSError) as err:
        raise CheckpointError(_unreadable(path, err)) from None
    if metadata.get(FORMAT_KEY) != FORMAT or TREE_KEY not in metadata:
        raise CheckpointError(
            f"{os.fspath(path)!r} is a safetensors file but not a dpc training state (no "
            f"{FORMAT_KEY}={FORMAT!r} in its header); delete it or use another --out")
    try:
        state = decode(json.loads(metadata[TREE_KEY]), tensors)
    except (ValueError, TypeError, RecursionError) as err:  # JSONDecodeError is a ValueError
        raise CheckpointError(f"training state {os.fspath(path)!r} is damaged ({err}); delete it "
                              "or use another --out") from None
    if not isinstance(state, dict):
        raise CheckpointError(f"training state {os.fspath(path)!r} is damaged (its tree is a "
                              f"{type(state).__name__}, not a dict); delete it or use another --out")
    return state


def check_safetensors(path: Path) -> None:
    """Raise :class:`CheckpointError` naming ``path`` unless it is a readable safetensors file
    (its header only is parsed)."""
    from safetensors import SafetensorError, safe_open

    try:
        with safe_open(os.fspath(path), framework="pt") as f:
            f.keys()
    except (SafetensorError, OSError) as err:
        raise CheckpointError(_unreadable(path, err)) from None


def _unreadable(path: Path, err: Exception) -> str:
    """Why ``path`` cannot be read as safetensors, one line: a pickle is named as such."""
    name = os.fspath(path)
    if not os.path.lexists(path):
        return f"checkpoint file {name!r} is missing; delete its folder or use another --out"
    try:
        with open(path, "rb") as fh:
            start = fh.read(4)
    except OSError:
        start = b""
    if start.startswith(_PICKLE_STARTS):
        return (f"{name!r} is in pickle format (torch.save, e.g. by an older dpc); dpc does not "
                "unpickle checkpoints: delete it or use another --out")
    reason = str(err).splitlines()[0] if str(err) else type(err).__name__
    return f"checkpoint file {name!r} is not a safetensors file ({reason}); delete it or use " \
           "another --out"


def pickle_checkpoint_error(path: Path, remedy: str) -> CheckpointError:
    """The error for a pickled checkpoint found at ``path`` (never loaded)."""
    return CheckpointError(f"{os.fspath(path)!r} was written by an older dpc (pickle format), "
                           f"which dpc no longer loads; {remedy}")


# ----------------------------------------------------------------------------- random state


def capture_rng() -> dict[str, Any]:
    """The state of every global random generator training may draw from: Python's ``random``,
    torch's CPU generator, the CUDA generators if CUDA is in use, numpy's if numpy is loaded."""
    state: dict[str, Any] = {"python": random.getstate(), "torch": torch.get_rng_state()}
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        state["cuda"] = torch.cuda.get_rng_state_all()
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        kind, keys, pos, has_gauss, cached = numpy.random.get_state()
        state["numpy"] = (kind, keys.tolist(), int(pos), int(has_gauss), float(cached))
    return state


def restore_rng(state: dict[str, Any]) -> None:
    """Put back what :func:`capture_rng` saved (the CUDA generators only where CUDA has as many
    devices). ``TypeError``/``ValueError``/``RuntimeError`` for a malformed state."""
    random.setstate(state["python"])
    torch.set_rng_state(state["torch"])
    cuda = state.get("cuda")
    if cuda and torch.cuda.is_available() and torch.cuda.device_count() == len(cuda):
        torch.cuda.set_rng_state_all(cuda)
    if "numpy" in state:
        import numpy

        kind, keys, pos, has_gauss, cached = state["numpy"]
        numpy.random.set_state((kind, numpy.array(keys, dtype=numpy.uint32), pos, has_gauss,
                                cached))
