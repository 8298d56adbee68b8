"""What a generator is made of, as a run's signature records it: :func:`generator_identity`.

A resumable output (``dpc generate --out``, ``dpc eval generation --out``) may only be resumed
by the same run, and the model is part of the run. The identity names the model as
:func:`train.models.resolve_generator` resolves it and digests the files it is read from (the
bundled folders, an adapter and its base model's GGUF file, a model folder), without loading
anything: a changed adapter, a retrained folder or another GGUF release gives another identity.
Reading the files costs about 0.06 s per 100 MB (SHA-256).

>>> identity = generator_identity("bundled")
>>> identity["name"], len(identity["files"])
('bundled', 16)
>>> generator_identity("bundled") == identity
True
>>> generator_identity("/no/such/model")
Traceback (most recent call last):
...
dpc_errors.DpcError: model path '/no/such/model' is not a folder
"""

from __future__ import annotations

from pathlib import Path

from dpc_errors import DpcError
from dpc_files import file_digest
from train.cause_effect_lm import BUNDLED_LM, BUNDLED_LM_DIR, generator_base, is_cause_effect_lm
from train.models import BUNDLED, DEFAULT_GENERATOR, DEFAULT_MODEL_DIR
from train.pretrained import PRETRAINED, gguf_path

__all__ = ["generator_identity", "generator_sources"]


def generator_sources(model: str | Path | None = None) -> list[Path]:
    """The files and folders :func:`train.models.resolve_generator` reads for ``model`` (the
    same resolution, in the same order: a name, then a fine-tuned LM's folder and its base, then
    a model folder)."""
    name = DEFAULT_GENERATOR if model is None else str(model)
    if name == BUNDLED and not Path(name).exists():
        # a stripped install falls back to the placeholder, which reads no file
        return [DEFAULT_MODEL_DIR] if DEFAULT_MODEL_DIR.is_dir() else []
    if name == BUNDLED_LM and not Path(name).exists():
        return [BUNDLED_LM_DIR, *generator_sources(generator_base(BUNDLED_LM_DIR))]
    if name in PRETRAINED and not Path(name).exists():
        return [gguf_path(name)]
    if is_cause_effect_lm(name):
        return [Path(name), *generator_sources(generator_base(name))]
    if not Path(name).is_dir():
        raise DpcError(f"model path {name!r} is not a folder")
    return [Path(name)]


def generator_identity(model: str | Path | None = None) -> dict[str, str]:
    """``{"name": ..., "files": ...}``: the model as named (``None``: the default generator's
    name) and a digest of every file it is read from (:func:`dpc_files.file_digest`)."""
    name = DEFAULT_GENERATOR if model is None else str(model)
    return {"name": name, "files": file_digest(*generator_sources(model))}
