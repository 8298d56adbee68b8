"""Where dpc writes: the checks every command makes before it writes anything.

The rules (one definition, used by every package's commands and Python API):

- **A file or folder dpc did not write is never changed.** An existing output *file* is replaced
  only when the caller asks for it (``--overwrite``), and then atomically (written beside it,
  then renamed), so a failed or interrupted run leaves the old file whole. An existing output
  *folder* is written into only when it is empty or is marked as the output of the same
  command: its first file, ``dpc_output.json``, names the command (:func:`claim_output_folder`).
  A folder of other files is refused, never emptied or merged into, even when they bear the
  names the command writes (a ``manifest.json`` of the user's).
- **Resuming touches only what dpc recognises as its own, and only the same run,** decided
  before anything is written. A resumable file (``dpc generate --out``, ``dpc eval generation``'s
  ``outputs.jsonl``) is a :class:`ResultsFile`: its first line names the format, the command
  and the run's signature (the inputs' digest, every option that changes the outputs, the
  model's and graph's digests). A file without that header is not dpc's, whatever its lines
  look like; a file of another run is refused with one line naming the first option that
  differs. A folder's marker file is read and checked the same way by its command.
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
>>> check_output_folder(folder, command="dpc mine")
Traceback (most recent call last):
...
dpc_files.OutputError: --out '...' holds files dpc mine did not write (notes.txt); give a new or empty folder
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from dpc_errors import DpcError

__all__ = ["FOLDER_FORMAT", "FOLDER_MARKER", "RESULTS_FORMAT", "OutputError", "ResultsFile",
           "atomic_open", "atomic_write_bytes", "check_output_file", "check_output_folder",
           "check_writable_folder", "claim_output_folder", "file_digest", "folder_owner",
           "read_json", "read_results", "release_output_folder", "run_difference", "text_digest",
           "write_json"]


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


#: The file that marks a folder as the output of one dpc command: written first, atomically
#: (:func:`claim_output_folder`), read by :func:`check_output_folder`.
FOLDER_MARKER = "dpc_output.json"
#: Its ``format``.
FOLDER_FORMAT = "dpc-output-1"


def folder_owner(path: str | os.PathLike[str]) -> str | None:
    """The command whose output folder ``path`` is (its :data:`FOLDER_MARKER` says), or ``None``
    when it holds no marker of dpc's (a file of that name that is not one counts as none).

    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> folder_owner(folder) is None
    True
    >>> folder_owner(claim_output_folder(folder / "run", "dpc mine"))
    'dpc mine'
    """
    try:
        marker = json.loads((Path(path) / FOLDER_MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(marker, dict) or marker.get("format") != FOLDER_FORMAT or \
            not isinstance(marker.get("command"), str):
        return None
    return marker["command"]


def check_output_folder(path: str | os.PathLike[str], option: str = "--out", *,
                        command: str = "dpc") -> Path:
    """``path`` as a :class:`~pathlib.Path` if a folder of ``command``'s output may be written
    there: it does not exist yet (it will be created, with its parents), it is empty, or it is
    ``command``'s own (its :data:`FOLDER_MARKER` names ``command``; the command then checks
    that it is the same run). Anything else is an :class:`OutputError`, and nothing is written:
    a folder holding files of the names a command writes (a ``manifest.json`` of the user's) is
    not the command's for that.
    """
    target = Path(path)
    if target.exists() and not target.is_dir():
        raise OutputError(f"{option} {_name(target)} is a file; give a folder")
    if target.is_dir():
        entries = sorted(p.name for p in target.iterdir())
        owner = folder_owner(target) if entries else command
        if owner is None:
            shown = ", ".join(entries[:5]) + (f", ... ({len(entries)} in all)"
                                              if len(entries) > 5 else "")
            raise OutputError(f"{option} {_name(target)} holds files {command} did not write "
                              f"({shown}); give a new or empty folder")
        if owner != command:
            raise OutputError(f"{option} {_name(target)} holds the output of {owner}, not of "
                              f"{command}; give a new or empty folder")
        check_writable_folder(target, option, target)
        return target
    ancestor = target.parent
    while not ancestor.exists():
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise OutputError(f"{option} {_name(target)}: {_name(ancestor)} is a file, not a folder")
    check_writable_folder(ancestor, option, target)
    return target


def claim_output_folder(path: str | os.PathLike[str], command: str,
                        option: str = "--out") -> Path:
    """Create the output folder ``path`` (with its parents) and mark it as ``command``'s
    (:data:`FOLDER_MARKER`, written atomically) before anything else is written there; a folder
    already marked as ``command``'s is left as it is. Call it after :func:`check_output_folder`,
    where the command starts writing. A folder built beside its target and renamed onto it is
    claimed before the rename."""
    folder = Path(path)
    owner = folder_owner(folder) if folder.is_dir() else None
    if owner == command:
        return folder
    if folder.is_dir() and any(folder.iterdir()):  # checked before, changed since
        raise OutputError(f"{option} {_name(folder)} holds files {command} did not write; give a "
                          "new or empty folder")
    write_json(folder / FOLDER_MARKER, {"format": FOLDER_FORMAT, "command": command})
    return folder


def release_output_folder(path: str | os.PathLike[str]) -> bool:
    """Remove the output folder ``path`` if it holds nothing but dpc's marker: what a run left
    that claimed it (:func:`claim_output_folder`) and was then refused before it wrote anything
    (a value its work checks only once it starts: a size that does not fit in memory). Call it
    when such a run fails, for a folder it created: a refused run leaves nothing behind. Returns
    whether the folder was removed; a folder holding anything else is left as it is.

    >>> import tempfile, pathlib
    >>> run = claim_output_folder(pathlib.Path(tempfile.mkdtemp()) / "run", "dpc demo")
    >>> release_output_folder(run), run.exists()
    (True, False)
    """
    folder = Path(path)
    try:
        if [p.name for p in folder.iterdir()] != [FOLDER_MARKER]:
            return False
        (folder / FOLDER_MARKER).unlink()
        folder.rmdir()
    except OSError:  # gone, or written to meanwhile: left as it is
        return False
    return True


# ----------------------------------------------------------------------------- atomic writes


@contextmanager
def atomic_open(path: str | os.PathLike[str], mode: str = "w") -> Iterator[IO[Any]]:
    """Open a temporary file beside ``path`` for writing (``mode`` ``"w"``: UTF-8 text with
    ``\\n`` line ends, or ``"wb"``); when the block ends without an error it is flushed to disk
    and renamed onto ``path``, so a reader sees the old file or the new one, whole, never a part
    (else it is removed). The folder is created if needed; the file gets the permissions
    ``open`` gives a new file.

    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "sub" / "notes.txt"
    >>> with atomic_open(path) as handle:
    ...     _ = handle.write("whole or not at all\\n")
    >>> path.read_text()
    'whole or not at all\\n'
    """
    if mode not in ("w", "wb"):
        raise ValueError(f"atomic_open writes a new file: mode (={mode!r}) must be 'w' or 'wb'")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        text = {"encoding": "utf-8", "newline": "\n"} if mode == "w" else {}
        with os.fdopen(fd, mode, **text) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        _publish(tmp, path, replace=True)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (:func:`atomic_open`)."""
    with atomic_open(path, "wb") as handle:
        handle.write(data)


def write_json(path: str | os.PathLike[str], value: Any) -> None:
    """Write ``value`` as JSON atomically (sorted keys, so equal values give equal bytes)."""
    with atomic_open(path) as handle:
        json.dump(value, handle, indent=1, sort_keys=True)
        handle.write("\n")


def read_json(path: str | os.PathLike[str]) -> Any:
    """Read a JSON file (one :func:`write_json` wrote)."""
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


# ----------------------------------------------------------------------------- results files

#: The first line's ``format`` in a results file (:class:`ResultsFile`).
RESULTS_FORMAT = "dpc-results-1"


def _option_name(key: str) -> str:
    return key if key.startswith("-") or " " in key else "--" + key.replace("_", "-")


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= 60 else text[:57] + "..."


def _same(value: Any, other: Any) -> bool:
    if isinstance(value, Mapping) and isinstance(other, Mapping) and "files" in value:
        return value["files"] == other.get("files")  # a model or graph: by its bytes
    return json.loads(json.dumps(value)) == other


def run_difference(mine: Mapping[str, Any], theirs: Mapping[str, Any]) -> str | None:
    """The first option of run ``mine`` whose value differs in run ``theirs``, worded for a
    message (``None`` when they are the same run). Keys are option names (``direction`` reads
    ``--direction``); a key holding ``" "`` is shown as it is (``the inputs``). A value with
    ``"files"`` (a model or graph: ``{"name": ..., "files": digest}``) is the same when its files
    are, whatever path named them.

    >>> run_difference({"direction": "cause", "n": 20}, {"direction": "effect", "n": 20})
    "--direction is 'cause' here and 'effect' in the file"
    >>> run_difference({"model": {"name": "a", "files": "1f"}}, {"model": {"name": "b"}})
    "--model differs ('a' here, 'b' in the file, other files)"
    >>> run_difference({"graph": {"name": "g.ceg", "files": "1f"}},
    ...                {"graph": {"name": "/data/g.ceg", "files": "1f"}}) is None
    True
    """
    for key, value in mine.items():
        if key not in theirs:
            return f"{_option_name(key)} is not recorded in the file (an older dpc wrote it)"
        other = theirs[key]
        if _same(value, other):
            continue
        option = _option_name(key)
        if isinstance(value, Mapping) and "files" in value:
            name = value.get("name")
            theirs_name = other.get("name") if isinstance(other, Mapping) else other
            if name == theirs_name:
                return f"{option} {name!r} is not the same files as when the file was written"
            return f"{option} differs ({name!r} here, {theirs_name!r} in the file, other files)"
        if isinstance(value, Mapping) and isinstance(other, Mapping) and "count" in value:
            count, theirs_count = value["count"], other.get("count")
            return (f"{option} differ ({count} here, {theirs_count} in the file)"
                    if count != theirs_count else
                    f"{option} differ (other texts: {count} here, as many in the file)")
        if isinstance(value, (str, int, float, bool)) or value is None:
            return f"{option} is {value!r} here and {other!r} in the file"
        return f"{option} differs ({_shown(value)} here, {_shown(other)} in the file)"
    extra = [key for key in theirs if key not in mine]
    if extra:
        return f"{_option_name(extra[0])} is recorded in the file but not given here"
    return None


def text_digest(values: Any) -> str:
    """SHA-256 (hex, 16 digits) of ``values`` as canonical JSON: a run's inputs in its signature.

    >>> text_digest(["babies cry", "it rained"]) == text_digest(["babies cry", "it rained"])
    True
    >>> text_digest(["a"]) != text_digest(["b"])
    True
    """
    data = json.dumps(values, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(data.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def file_digest(*paths: str | os.PathLike[str]) -> str:
    """SHA-256 (hex, 16 digits) of the files' names, sizes and bytes; a folder counts as all the
    files under it, in name order (hidden files left out). What a run signature records of a
    model or graph."""
    digest = hashlib.sha256()
    for root in paths:
        root = Path(root)
        files = ([root] if root.is_file() else sorted(
            p for p in root.rglob("*") if p.is_file()
            and not any(part.startswith(".") for part in p.relative_to(root).parts)))
        for path in files:
            digest.update(f"{path.name}\0{path.stat().st_size}\0".encode("utf-8", "surrogatepass"))
            with open(path, "rb") as handle:
                for block in iter(lambda: handle.read(1 << 22), b""):
                    digest.update(block)
    return digest.hexdigest()[:16]


class ResultsFile:
    """A JSON-lines file of one run's results, which the run appends to as it goes and a re-run
    of the *same run* resumes.

    The file is recognised positively: its first line is a header
    ``{"format": "dpc-results-1", "command": ..., "run": {...}}`` naming the command that wrote
    it and the run's signature (its inputs' digest and every option that changes the outputs,
    model and graph digests included). Every other line is one result (a JSON object). So:

    - a file without that header (a user's own, even one of ``{"index": N, ...}`` lines) is
      never written to: :meth:`check` refuses it unless ``overwrite`` is given;
    - a file of another run (another option, model, graph or inputs) is refused with one line
      naming the first option that differs;
    - ``overwrite`` writes a new file beside the target and renames it onto the target when the
      run ends, so an interrupted or failed run leaves the old file whole;
    - a new file is created whole with its header (written beside it and renamed), then the
      results are appended and flushed one by one; a last line cut by an interrupt is dropped
      when the run resumes.

    Parameters
    ----------
    path
        The file.
    command
        The command that writes it (``"dpc generate"``): the header names it.
    run
        The run's signature: option name -> JSON value, in the order mismatches are reported.
    option
        How the user gave the path (messages name it).
    overwrite
        Replace an existing file (atomically, at the end) instead of resuming it.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "out.jsonl"
    >>> results = ResultsFile(path, "dpc demo", {"direction": "cause"})
    >>> results.check()
    []
    >>> with results.writer() as write:
    ...     write({"index": 0, "text": "the baby was hungry"})
    >>> [row["text"] for row in ResultsFile(path, "dpc demo", {"direction": "cause"}).check()]
    ['the baby was hungry']
    >>> ResultsFile(path, "dpc demo", {"direction": "effect"}).check()
    Traceback (most recent call last):
    ...
    dpc_files.OutputError: --out '...out.jsonl' holds another run of dpc demo: --direction is 'effect' here and 'cause' in the file; pass --overwrite to replace it, or give a new file
    >>> _ = path.write_text('{"index": 0, "text": "mine"}\\n')
    >>> ResultsFile(path, "dpc demo", {"direction": "cause"}).check()
    Traceback (most recent call last):
    ...
    dpc_files.OutputError: --out '...out.jsonl' is not a results file of dpc demo (its first line is not dpc's header); give a new file, or pass --overwrite to replace it
    """

    def __init__(self, path: str | os.PathLike[str], command: str, run: Mapping[str, Any], *,
                 option: str = "--out", overwrite: bool = False) -> None:
        self.path = Path(path)
        self.command = command
        self.run = dict(run)
        self.option = option
        self.overwrite = overwrite
        self._keep: int | None = None  # bytes of the file to keep (None: a new file)
        self._checked = False

    @property
    def header(self) -> dict[str, Any]:
        """The first line of the file."""
        return {"format": RESULTS_FORMAT, "command": self.command, "run": self.run}

    @property
    def replacing(self) -> bool:
        """Whether the run replaces an existing file (written beside it, renamed at the end)."""
        return self.overwrite and self.path.exists()

    def _name(self) -> str:
        return f"{self.option} {_name(self.path)}"

    def check(self) -> list[dict[str, Any]]:
        """Check the path (:func:`check_output_file`) and an existing file; return the results it
        already holds for this run (``[]`` for a new file or with ``overwrite``). Nothing is
        written. Raises :class:`OutputError` for a file that is not this run's."""
        check_output_file(self.path, self.option, overwrite=self.overwrite, exists_ok=True)
        self._checked = True
        if not self.path.exists() or self.overwrite:
            self._keep = None
            return []
        rows, self._keep = self._read()
        return rows

    def _read(self) -> tuple[list[dict[str, Any]], int]:
        advice = "; give a new file, or pass --overwrite to replace it"
        header, rows, keep = _parse_results(self.path.read_bytes(), self._name(), self.command,
                                            advice)
        if header.get("command") != self.command:
            raise OutputError(f"{self._name()} holds results of {header.get('command')!r}, not "
                              f"of {self.command}{advice}")
        theirs = header.get("run")
        difference = run_difference(self.run, theirs if isinstance(theirs, dict) else {})
        if difference:
            raise OutputError(f"{self._name()} holds another run of {self.command}: "
                              f"{difference}; pass --overwrite to replace it, or give a new file")
        return rows, keep

    @contextmanager
    def writer(self) -> Iterator[Callable[[Mapping[str, Any]], None]]:
        """Open the file for this run's results; yield ``write(row)``, which appends one line and
        flushes it. :meth:`check` is called first if it was not. A new file appears whole with
        its header; with ``overwrite`` the results go to a file beside the target, renamed onto
        it when the block ends without an error (else removed: the old file stays whole). A new
        file still without a result when the block ends with an error (a value the work
        refused before its first result) is removed: a refused run leaves nothing behind."""
        if not self._checked:
            self.check()
        header = json.dumps(self.header, ensure_ascii=False) + "\n"
        replacing = self.replacing
        created = False  # a new file made here (removed if the block fails before a result)
        if self._keep is not None:  # resuming: drop a torn last line, then append
            handle = open(self.path, "r+", encoding="utf-8", newline="\n")  # noqa: SIM115
            handle.seek(self._keep)
            handle.truncate()
            tmp = None
        else:
            fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp",
                                       dir=self.path.parent)
            handle = os.fdopen(fd, "w", encoding="utf-8", newline="\n")
            handle.write(header)
            handle.flush()
            if not replacing:  # a new file: it appears now, whole with its header
                _publish(tmp, self.path, replace=False)
                tmp = None
                created = True
        rows = 0

        def write(row: Mapping[str, Any]) -> None:
            nonlocal rows
            handle.write(json.dumps(dict(row), ensure_ascii=False) + "\n")
            handle.flush()
            rows += 1

        try:
            yield write
            handle.flush()
            os.fsync(handle.fileno())
            handle.close()
            if tmp is not None:
                _publish(tmp, self.path, replace=True)
                tmp = None
        except Exception:
            if created and not rows:  # refused before its first result: nothing to resume
                handle.close()
                self.path.unlink(missing_ok=True)
            raise
        finally:
            if not handle.closed:
                handle.close()
            if tmp is not None:
                Path(tmp).unlink(missing_ok=True)


def read_results(path: str | os.PathLike[str]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The header and the results of a results file (:class:`ResultsFile`): what a program
    reading ``dpc generate --out`` needs (a last line cut by an interrupt is left out).

    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "out.jsonl"
    >>> with ResultsFile(path, "dpc demo", {"n": 3}).writer() as write:
    ...     write({"index": 0, "text": "the baby was hungry"})
    >>> header, rows = read_results(path)
    >>> header["command"], header["run"], rows
    ('dpc demo', {'n': 3}, [{'index': 0, 'text': 'the baby was hungry'}])
    """
    return _parse_results(Path(path).read_bytes(), _name(Path(path)))[:2]


def _parse_results(data: bytes, name: str, command: str | None = None, advice: str = ""
                   ) -> tuple[dict[str, Any], list[dict[str, Any]], int]:
    """The header, the complete results and how many bytes they take (a torn last line, a
    write cut by an interrupt, is left out) of a results file's ``data``; an
    :class:`OutputError` naming the file (``name``) when its first line is not dpc's header or a
    line is not a JSON object."""
    of = f"of {command}" if command else "of dpc"
    try:
        first, newline, rest = data.decode("utf-8").partition("\n")
        header = json.loads(first) if newline else None
    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
        header = None
    if not isinstance(header, dict) or header.get("format") != RESULTS_FORMAT:
        raise OutputError(f"{name} is not a results file {of} (its first line is not dpc's "
                          f"header){advice}")
    *complete, torn = rest.split("\n")
    rows = []
    for number, line in enumerate(complete, start=2):
        try:
            row = json.loads(line)
        except (ValueError, RecursionError):  # RecursionError: nested too deeply
            row = None
        if not isinstance(row, dict):
            raise OutputError(f"{name} line {number} is not a result {of} (was the file "
                              f"edited?){advice}")
        rows.append(row)
    return header, rows, len(data) - len(torn.encode("utf-8"))


#: The process's umask, read once at import (reading it means setting it: doing that at every
#: write would race with other threads creating files).
_UMASK = os.umask(0o022)
os.umask(_UMASK)


def _publish(tmp: str, path: Path, *, replace: bool) -> None:
    """Give the written file ``tmp`` the name ``path`` (readable as a file ``open`` makes)."""
    os.chmod(tmp, 0o666 & ~_UMASK)
    if replace:
        os.replace(tmp, path)
        return
    try:  # a link never replaces a file that appeared since the check
        os.link(tmp, path)
    except FileExistsError:
        Path(tmp).unlink(missing_ok=True)
        raise OutputError(f"--out {_name(path)} appeared while dpc was working; give a new "
                          "file") from None
    except OSError:  # a file system without hard links
        os.replace(tmp, path)
        return
    os.unlink(tmp)
