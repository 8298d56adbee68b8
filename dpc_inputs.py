"""What dpc reads: the one reader of every input file a user gives a command or the HTTP API.

Text lines and JSON lines are read one way everywhere, and every problem is one
:class:`InputError` (a :class:`~dpc_errors.DpcError`) naming the option, the file and, where
there is one, the line:

- the path does not exist, **is a directory**, or cannot be read;
- the file **is empty** (only blank lines) where the command needs input;
- the bytes are **not UTF-8 text** (the line of the first bad byte is named);
- a line is longer than :data:`MAX_LINE_CHARS` characters, or a JSON line nests deeper than
  :data:`MAX_DEPTH` (``[[[[...]]]]`` 100,000 deep would otherwise end in a ``RecursionError``);
- a JSON line is not JSON.

A UTF-8 byte-order mark at the start of a file is dropped, whatever the reader, and line ends
may be ``\\n`` or ``\\r\\n``. The module imports only the standard library and
:mod:`dpc_errors`, so every package may use it.

>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> path = folder / "in.jsonl"
>>> _ = path.write_bytes(b'\\xef\\xbb\\xbf{"input": "babies cry"}\\n\\n["a", 1]\\n')
>>> read_json_lines(path, "--input-file")
[{'input': 'babies cry'}, ['a', 1]]
>>> _ = path.write_bytes(b'{"input": "caf\\xe9"}\\n')
>>> read_json_lines(path, "--input-file")
Traceback (most recent call last):
...
dpc_inputs.InputError: --input-file '.../in.jsonl' is not UTF-8 text (line 1, byte 0xe9); save it as UTF-8
>>> read_input_lines(folder, "--input-file")
Traceback (most recent call last):
...
dpc_inputs.InputError: --input-file '...' is a directory; give a file
"""

from __future__ import annotations

import codecs
import csv
import io
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from dpc_errors import DpcError

__all__ = ["MAX_DEPTH", "MAX_LINE_CHARS", "InputError", "check_input_file", "iter_input_lines",
           "open_input_text", "parse_json", "read_input_lines", "read_input_text",
           "read_json_lines", "read_numbered_lines"]

#: The deepest nesting of arrays and objects a JSON line may have.
MAX_DEPTH = 100
#: The longest line (in characters) an input file may have.
MAX_LINE_CHARS = 10_000_000


class InputError(DpcError):
    """An input file (or a request body) that cannot be read as the command needs it."""


def _shown(path: Path) -> str:
    return repr(str(path))


def check_input_file(path: str | os.PathLike[str], option: str) -> Path:
    """``path`` as a :class:`~pathlib.Path` once it is known to be a readable file.

    >>> check_input_file("/no/such/file.txt", "--input-file")
    Traceback (most recent call last):
    ...
    dpc_inputs.InputError: --input-file '/no/such/file.txt' does not exist
    """
    path = Path(path)
    if path.is_dir():
        raise InputError(f"{option} {_shown(path)} is a directory; give a file")
    if not path.exists():
        if path.is_symlink():
            raise InputError(f"{option} {_shown(path)} is a link to a file that does not exist")
        raise InputError(f"{option} {_shown(path)} does not exist")
    if not os.access(path, os.R_OK):
        raise InputError(f"{option} {_shown(path)} cannot be read (permission denied)")
    return path


def _not_utf8(path: Path, option: str, line: int, byte: int) -> InputError:
    return InputError(f"{option} {_shown(path)} is not UTF-8 text (line {line}, byte "
                      f"0x{byte:02x}); save it as UTF-8")


def _too_long(where: str, length: int) -> InputError:
    return InputError(f"{where} is {length:,} characters long; at most {MAX_LINE_CHARS:,} are "
                      "read on one line")


def read_input_text(path: str | os.PathLike[str], option: str, *, allow_empty: bool = False
                    ) -> str:
    """The whole file as text (a leading byte-order mark dropped), checked as the module says.

    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "empty.txt"
    >>> _ = path.write_text("\\n  \\n")
    >>> read_input_text(path, "SRC")
    Traceback (most recent call last):
    ...
    dpc_inputs.InputError: SRC '.../empty.txt' is empty
    """
    path = check_input_file(path, option)
    try:
        data = path.read_bytes()
    except OSError as error:
        raise InputError(f"{option} {_shown(path)} cannot be read ({error.strerror})") from None
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8):]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise _not_utf8(path, option, data.count(b"\n", 0, error.start) + 1,
                        data[error.start]) from None
    if not allow_empty and not text.strip():
        raise InputError(f"{option} {_shown(path)} is empty")
    return text


def open_input_text(path: str | os.PathLike[str], option: str, *, allow_empty: bool = True
                    ) -> io.StringIO:
    """The file's text (checked as :func:`read_input_text` checks it) as a stream, for readers
    that parse it themselves (``csv``: open it with ``newline=""`` semantics, which a
    :class:`io.StringIO` has; its field limit is raised to :data:`MAX_LINE_CHARS`, from 131,072,
    so a long cell is read, not a ``csv.Error``)."""
    text = read_input_text(path, option, allow_empty=allow_empty)
    if csv.field_size_limit() < MAX_LINE_CHARS:
        csv.field_size_limit(MAX_LINE_CHARS)
    return io.StringIO(text, newline="")


def read_input_lines(path: str | os.PathLike[str], option: str, *, skip_blank: bool = True,
                     allow_empty: bool = False) -> list[str]:
    """The file's lines without their line ends (blank lines left out unless ``skip_blank`` is
    off), each at most :data:`MAX_LINE_CHARS` long."""
    return [line for _, line in read_numbered_lines(path, option, skip_blank=skip_blank,
                                                     allow_empty=allow_empty)]


def read_numbered_lines(path: str | os.PathLike[str], option: str, *, skip_blank: bool = True,
                        allow_empty: bool = False) -> list[tuple[int, str]]:
    """``(line number, line)`` of the file's lines (1-based; blank ones left out unless
    ``skip_blank`` is off), read as :func:`read_input_lines` reads them: for readers whose
    errors name the line."""
    text = read_input_text(path, option, allow_empty=allow_empty)
    lines = []
    # split on "\n" alone: str.splitlines would also split on U+2028 and the like, which a JSON
    # string may hold as they are
    for number, line in enumerate(text.split("\n"), 1):
        line = line.removesuffix("\r")
        if len(line) > MAX_LINE_CHARS:
            raise _too_long(f"{option} {_shown(Path(path))} line {number}", len(line))
        if line.strip() or not skip_blank:
            lines.append((number, line))
    return lines


def iter_input_lines(path: str | os.PathLike[str], option: str) -> Iterator[str]:
    """The file's lines one at a time (line ends dropped, blank lines kept), for inputs too large
    to hold: the same checks, a decoding error named by its line as it is reached. An empty file
    yields nothing."""
    path = check_input_file(path, option)
    try:
        with open(path, "rb") as handle:
            for number, raw in enumerate(handle, 1):
                if number == 1 and raw.startswith(codecs.BOM_UTF8):
                    raw = raw[len(codecs.BOM_UTF8):]
                try:
                    line = raw.decode("utf-8").rstrip("\r\n")
                except UnicodeDecodeError as error:
                    raise _not_utf8(path, option, number, raw[error.start]) from None
                if len(line) > MAX_LINE_CHARS:
                    raise _too_long(f"{option} {_shown(path)} line {number}", len(line))
                yield line
    except OSError as error:
        raise InputError(f"{option} {_shown(path)} cannot be read ({error.strerror})") from None


def _too_deep(text: str, max_depth: int) -> bool:
    """Whether arrays and objects nest deeper than ``max_depth`` in ``text`` (brackets inside
    strings do not count). A line with fewer brackets than that is not scanned."""
    if text.count("[") + text.count("{") <= max_depth:
        return False
    depth, in_string, escaped = 0, False, False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > max_depth:
                return True
        elif char in "]}":
            depth -= 1
    return False


def parse_json(text: str, where: str, *, max_depth: int = MAX_DEPTH) -> Any:
    """One JSON value, its problems said as ``where`` (a file's line, a request's body) followed
    by what is wrong: not JSON (and where), nested deeper than ``max_depth``, or too long.

    >>> parse_json('{"a": [1, 2]}', "the request body")
    {'a': [1, 2]}
    >>> parse_json("[" * 200 + "]" * 200, "the request body")
    Traceback (most recent call last):
    ...
    dpc_inputs.InputError: the request body nests arrays and objects deeper than 100 levels
    >>> parse_json('{"a": }', "in.jsonl line 3")
    Traceback (most recent call last):
    ...
    dpc_inputs.InputError: in.jsonl line 3 is not JSON (Expecting value at column 7)
    """
    if len(text) > MAX_LINE_CHARS:
        raise _too_long(where, len(text))
    if _too_deep(text, max_depth):
        raise InputError(f"{where} nests arrays and objects deeper than {max_depth} levels")
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise InputError(f"{where} is not JSON ({error.msg} at column {error.colno})") from None
    except ValueError as error:  # an integer of more digits than Python converts
        raise InputError(f"{where} is not JSON dpc can read ({error})") from None
    except RecursionError:  # a depth the scan allowed but the parser's stack does not
        raise InputError(f"{where} nests arrays and objects too deeply") from None


def read_json_lines(path: str | os.PathLike[str], option: str, *, allow_empty: bool = False,
                    max_depth: int = MAX_DEPTH) -> list[Any]:
    """Every non-blank line of a JSON-lines file as its value, a bad line named by its number."""
    shown = f"{option} {_shown(Path(path))}"
    return [parse_json(line, f"{shown} line {number}", max_depth=max_depth)
            for number, line in read_numbered_lines(path, option, allow_empty=allow_empty)]
