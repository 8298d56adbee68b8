"""The run manifest: what a mining output folder was made from, so a resumed run can check it.

``manifest.json`` records the options that decide the output (:meth:`MineOptions.identity`) and
the input files with their sizes and modification times. Resuming into a folder whose manifest
differs raises :class:`~causal_mining.errors.ResumeError` instead of mixing two runs.

Examples
--------
>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> _ = (folder / "a.txt").write_text("x")
>>> opts = MineOptions(inputs=(str(folder / "a.txt"),), out=str(folder / "out"))
>>> check_or_write_manifest(opts, [folder / "a.txt"])
False
>>> check_or_write_manifest(opts, [folder / "a.txt"])   # same run: resume
True
>>> other = MineOptions(opts.inputs, opts.out, batch_chars=5000)
>>> check_or_write_manifest(other, [folder / "a.txt"])
Traceback (most recent call last):
...
causal_mining.errors.ResumeError: .../out holds a run with other options:
batch_chars 4000000 != 5000; use another --out or delete it
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

from causal_mining.errors import ResumeError
from causal_mining.options import MineOptions
from dpc_files import claim_output_folder, read_json, write_json

__all__ = ["MANIFEST", "code_fingerprint", "manifest_for", "check_or_write_manifest"]

MANIFEST = "manifest.json"
VERSION = 1


# Modules whose code decides which pairs come out: a resumed run must run the same code.
_OUTPUT_MODULES = ("patterns", "sentences", "filters", "extract", "syntax", "readers", "worker",
                   "tagging", "pair", "shards", "context", "word_sense", "boilerplate", "dedup")


def code_fingerprint() -> str:
    """BLAKE2 digest of the sources of the modules that decide the output.

    >>> len(code_fingerprint())
    16
    """
    digest = hashlib.blake2b(digest_size=8)
    package = Path(__file__).resolve().parent
    for name in _OUTPUT_MODULES:
        digest.update((package / f"{name}.py").read_bytes())
    return digest.hexdigest()


def manifest_for(options: MineOptions, files: list[Path]) -> dict[str, Any]:
    """The manifest of a run over ``files`` with ``options``."""
    return {
        "version": VERSION,
        "identity": options.identity() | {"code": code_fingerprint()},
        "inputs": [
            {"path": os.fspath(p), "size": p.stat().st_size, "mtime_ns": p.stat().st_mtime_ns}
            for p in files
        ],
    }


def _differences(old: Any, new: Any, prefix: str = "") -> list[str]:
    if isinstance(old, dict) and isinstance(new, dict):
        out: list[str] = []
        for key in sorted(set(old) | set(new)):
            out += _differences(old.get(key), new.get(key), f"{prefix}{key}.")
        return out
    return [] if old == new else [f"{prefix.rstrip('.')} {old!r} != {new!r}"]


def check_or_write_manifest(options: MineOptions, files: list[Path]) -> bool:
    """Write the manifest of a new run, or check that an existing one matches.

    Returns
    -------
    bool
        ``True`` if the folder already held this run (it will be resumed).

    Raises
    ------
    ResumeError
        If the folder holds a run with other options or other inputs.
    """
    out = Path(options.out)
    path = out / MANIFEST
    manifest = manifest_for(options, files)
    if not path.exists():
        claim_output_folder(out, "dpc mine")
        write_json(path, manifest)
        return False
    try:
        old = read_json(path)
    except (OSError, ValueError) as err:  # UnicodeDecodeError and JSONDecodeError are both
        old = err
    if not isinstance(old, dict) or old.get("version") != VERSION or "identity" not in old:
        raise ResumeError(f"{os.fspath(out)} holds a {MANIFEST} that dpc mine did not write; "
                          "use another --out")
    problems = _differences(old.get("identity"), manifest["identity"])
    if old.get("inputs") != manifest["inputs"]:
        problems.append(
            f"inputs differ ({len(old.get('inputs', []))} files then, {len(files)} now, "
            "or sizes/modification times changed)"
        )
    if problems:
        raise ResumeError(
            f"{os.fspath(out)} holds a run with other options: {'; '.join(problems)}; "
            "use another --out or delete it"
        )
    return True
