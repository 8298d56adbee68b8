"""Where dpc writes: the checks every command makes before it writes anything.

The rules (one definition, used by every package's commands and Python API):

- **A file or folder dpc did not write is never changed.** An existing output *file* is replaced
  only when the caller asks for it (``--overwrite``), and then atomically (written beside it,
  then renamed), so a failed or interrupted run leaves the old file whole. An existing output
  *folder* is written into only when it is empty or holds one of the files that mark it as the
  output of the same command (a ``manifest.json``, a ``train_config.json``, ...): a folder of
  other files is refused, never emptied or merged into.
- **Resuming touches only what dpc recognises as its own,** and that is decided before anything
  is written (the command's own check, e.g. ``dpc generate --out`` reads every line first).
- **Every problem with an output path is found before the work starts**, and is an
  :class:`OutputError` (a :class:`~dpc_errors.DpcError`) naming the path: a file path that is a
  folder, in a folder that does not exist, or in one that cannot be written; a folder path that
  is a file, or under a file.

Whether a folder can be written is probed by creating and removing a hidden temporary file
there (``os.access`` says yes to root on a read-only file system).

Examples
--------
>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> check_output_file(folder / "out.jsonl").name
'out.jsonl'
>>> check_output_file(folder)
Traceback (most recent call last):
...
dpc_files.OutputError: --out '...' is a folder; give a file name
>>> check_output_file(folder / "missing" / "out.jsonl")
Traceback (most recent call last):
...
dpc_files.OutputError: --out '.../missing/out.jsonl': the folder '.../missing' does not exist
>>> _ = (folder / "notes.txt").write_text("mine")
>>> check_output_file(folder / "notes.txt")
Traceback (most recent call last):
...
dpc_files.OutputError: --out '.../notes.txt' already exists; pass --overwrite to replace it, or give a new file
>>> check_output_folder(folder, markers=("manifest.json",), command="dpc mine")
Traceback (most recent call last):
...
dpc_files.OutputError: --out '...' holds files dpc mine did not write (notes.txt); give a new or empty folder
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from pathlib import Path

from dpc_errors import DpcError

__all__ = ["OutputError", "check_output_file", "check_output_folder", "check_writable_folder"]


class OutputError(DpcError):
    """An output path that cannot be written, or must not be (it holds what dpc did not write)."""


def _name(path: Path) -> str:
    return repr(os.fspath(path))


def check_writable_folder(folder: Path, option: str, target: Path) -> None:
    """Raise :class:`OutputError` unless a file can be created in ``folder`` (an existing one).

    ``option`` and ``target`` only word the message (``--out 'x/y.jsonl'``).
    """
    try:
        fd, probe = tempfile.mkstemp(prefix=".dpc-write-check-", dir=folder)
    except OSError as err:
        reason = err.strerror or type(err).__name__
        raise OutputError(f"{option} {_name(target)}: cannot write in the folder "
                          f"{_name(folder)} ({reason})") from None
    os.close(fd)
    os.unlink(probe)


def check_output_file(path: str | os.PathLike[str], option: str = "--out", *,
                      overwrite: bool = False, exists_ok: bool = False) -> Path:
    """``path`` as a :class:`~pathlib.Path` if a file may be written there; else
    :class:`OutputError`.

    Parameters
    ----------
    path
        The file to write.
    option
        How the user gave it (``--out``, ``--predictions``): the messages name it.
    overwrite
        An existing file may be replaced (``--overwrite``).
    exists_ok
        An existing file is the caller's to check (a resumable output recognises its own file).
    """
    target = Path(path)
    if target.is_dir():
        raise OutputError(f"{option} {_name(target)} is a folder; give a file name")
    folder = target.parent
    if not folder.exists():
        raise OutputError(f"{option} {_name(target)}: the folder {_name(folder)} does not exist")
    if not folder.is_dir():
        raise OutputError(f"{option} {_name(target)}: {_name(folder)} is a file, not a folder")
    if target.exists() and not target.is_file():
        raise OutputError(f"{option} {_name(target)} is not a regular file")
    if target.exists() and not (overwrite or exists_ok):
        raise OutputError(f"{option} {_name(target)} already exists; pass --overwrite to replace "
                          "it, or give a new file")
    check_writable_folder(folder, option, target)
    return target


def check_output_folder(path: str | os.PathLike[str], option: str = "--out", *,
                        markers: Sequence[str], command: str = "dpc") -> Path:
    """``path`` as a :class:`~pathlib.Path` if a folder of ``command``'s output may be written
    there: it does not exist yet (it will be created, with its parents), it is empty, or it holds
    one of ``markers`` (the files that ``command`` writes first, which make it its own; the
    command then checks that it is the same run). Anything else is an :class:`OutputError`.
    """
    target = Path(path)
    if target.exists() and not target.is_dir():
        raise OutputError(f"{option} {_name(target)} is a file; give a folder")
    if target.is_dir():
        entries = sorted(p.name for p in target.iterdir())
        if entries and not any((target / m).exists() for m in markers):
            shown = ", ".join(entries[:5]) + (f", ... ({len(entries)} in all)"
                                              if len(entries) > 5 else "")
            raise OutputError(f"{option} {_name(target)} holds files {command} did not write "
                              f"({shown}); give a new or empty folder")
        check_writable_folder(target, option, target)
        return target
    ancestor = target.parent
    while not ancestor.exists():
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise OutputError(f"{option} {_name(target)}: {_name(ancestor)} is a file, not a folder")
    check_writable_folder(ancestor, option, target)
    return target
