"""Model weights are read from safetensors files only, never from a pickle.

``pytorch_model.bin`` (like ``*.pt``, ``*.pth`` and ``*.ckpt``) is a pickle: loading one runs
whatever code the file holds. Every ``from_pretrained`` of model weights in dpc passes
``use_safetensors=True``, and :func:`require_safetensors` first refuses a folder without
safetensors weights with one line naming the folder and the pickle files it holds (rather than
transformers' several-line ``OSError``). GGUF files are not pickles either: the pretrained LMs
are read from theirs (``gguf_file=``, :mod:`train.pretrained`) and converted to safetensors once.

>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> _ = (folder / "pytorch_model.bin").write_bytes(b"\\x80\\x02")
>>> require_safetensors(folder)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
train.errors.ModelFolderError: model folder '...' has no safetensors weights (model.safetensors): it holds pytorch_model.bin, a pickle, which dpc does not load; convert it to safetensors ...
>>> _ = (folder / "model.safetensors").write_bytes(b"")
>>> require_safetensors(folder) == folder
True
"""

from __future__ import annotations

import os
from pathlib import Path

from train.errors import ModelFolderError, TrainError

__all__ = ["PICKLE_SUFFIXES", "SAFETENSORS_FILES", "require_safetensors"]

#: The files that hold a Hugging Face model's weights as safetensors (whole, or sharded).
SAFETENSORS_FILES = ("model.safetensors", "model.safetensors.index.json")
#: Weight files that are pickles (named in the refusal, never opened).
PICKLE_SUFFIXES = (".bin", ".pt", ".pth", ".ckpt", ".pkl")


def require_safetensors(folder: str | os.PathLike[str], what: str = "model folder",
                        error: type[TrainError] = ModelFolderError) -> Path:
    """``folder`` if it holds safetensors weights (:data:`SAFETENSORS_FILES`); else ``error``
    (one line) naming it, and the pickle weights it holds instead, if any."""
    path = Path(folder)
    if any((path / name).is_file() for name in SAFETENSORS_FILES):
        return path
    name = os.fspath(path)
    if not path.is_dir():
        raise error(f"{what} {name!r} is not a folder")
    pickles = sorted(p.name for p in path.iterdir() if p.suffix in PICKLE_SUFFIXES)
    if pickles:
        shown = ", ".join(pickles[:3]) + (", ..." if len(pickles) > 3 else "")
        raise error(
            f"{what} {name!r} has no safetensors weights ({SAFETENSORS_FILES[0]}): it holds "
            f"{shown}, a pickle, which dpc does not load; convert it to safetensors (load it "
            "with transformers where you trust it, then save_pretrained)")
    raise error(f"{what} {name!r} has no safetensors weights ({SAFETENSORS_FILES[0]})")
