"""Streaming corpus readers: plain text, JSON lines and Common Crawl WARC/WET, compressed or not.

Inputs are files, folders (walked recursively, sorted) and globs. Compression is detected from
the first bytes (gzip, bzip2, xz, zstandard), not the file name. Everything streams: a line is
read at most ``max_line_chars`` characters at a time, so neither a whole file nor a 50 MB line is
ever held in memory.

Bad input never stops a run; it is counted in :class:`ReadStats` and named in its warnings:
binary files (NUL bytes), invalid UTF-8 (replaced by U+FFFD and counted), truncated compressed
streams (what was read before the break is kept), empty files, over-long lines (skipped) and
malformed JSON lines.

Examples
--------
>>> import tempfile, pathlib, gzip
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> with gzip.open(folder / "a.txt.gz", "wt") as f:
...     _ = f.write("First paragraph\\nwraps here.\\n\\nSecond one.\\n")
>>> stats = ReadStats()
>>> [(d.source.split("/")[-1], d.text) for d in read_documents(folder / "a.txt.gz", stats)]
[('a.txt.gz:1', 'First paragraph\\nwraps here.\\n'), ('a.txt.gz:4', 'Second one.\\n')]
>>> stats.text_bytes
41
"""

from __future__ import annotations

import bz2
import codecs
import glob
import gzip
import io
import lzma
import os
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import IO, Any

from causal_mining.errors import MiningInputError
from dpc_inputs import InputError, parse_json

__all__ = [
    "Document",
    "ReadStats",
    "ReaderOptions",
    "expand_inputs",
    "input_format",
    "open_decompressed",
    "read_documents",
]

_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"\x1f\x8b", "gzip"),
    (b"BZh", "bzip2"),
    (b"\xfd7zXZ\x00", "xz"),
    (b"\x28\xb5\x2f\xfd", "zstd"),
)
_JSONL_SUFFIXES = (".jsonl", ".json", ".ndjson")
_WARC_SUFFIXES = (".warc", ".wet", ".arc")
_COMPRESSION_SUFFIXES = (".gz", ".bz2", ".xz", ".zst", ".zstd", ".lzma")
_MAX_WARNINGS = 100


@dataclass(frozen=True, slots=True)
class Document:
    """A paragraph (or a piece of a record) and where it came from (``path:line``, ``path#uri``)."""

    source: str
    text: str


@dataclass(frozen=True)
class ReaderOptions:
    """Limits of the readers.

    Parameters
    ----------
    max_line_chars
        Longer lines are skipped (counted as ``long_line``).
    max_paragraph_chars
        A paragraph is cut into pieces of at most this size (text without blank lines).
    text_field
        Field of a JSON line that holds the text.
    """

    max_line_chars: int = 1 << 20
    max_paragraph_chars: int = 1 << 16
    text_field: str = "text"


@dataclass
class ReadStats:
    """What the readers saw, including everything they skipped and why."""

    files: int = 0
    input_bytes: int = 0
    text_bytes: int = 0
    documents: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    warnings: list[str] = field(default_factory=list)

    def warn(self, reason: str, message: str) -> None:
        """Count a skip ``reason`` and keep the first warnings verbatim."""
        self.skipped[reason] += 1
        if len(self.warnings) < _MAX_WARNINGS:
            self.warnings.append(message)

    def to_dict(self) -> dict[str, Any]:
        return {
            "files": self.files,
            "input_bytes": self.input_bytes,
            "text_bytes": self.text_bytes,
            "documents": self.documents,
            "skipped": dict(self.skipped),
            "warnings": list(self.warnings),
        }


def _inside(path: Path, root: Path) -> bool:
    """Whether ``path`` (resolved) lies in the folder ``root`` (resolved)."""
    return path == root or root in path.parents


def _glob_base(pattern: str) -> Path:
    """The leading folders of a glob pattern, up to its first wildcard."""
    parts: list[str] = []
    for part in Path(pattern).parts[:-1]:
        if glob.has_magic(part):
            break
        parts.append(part)
    return Path(*parts) if parts else Path(".")


def _walk(root: Path, follow_symlinks: bool, skipped: list[str]) -> list[Path]:
    """The files under ``root``, hidden ones (``.name``) left out.

    A symbolic link is read only if it points inside ``root``, a link to a folder is not
    walked into (what it holds inside ``root`` is walked through its real path), unless
    ``follow_symlinks``; links left out of ``root`` are added to ``skipped``. Followed links to
    folders are walked once each (a link to an ancestor does not loop).
    """
    real_root = root.resolve()
    found: list[Path] = []
    seen = {real_root}
    for folder, dirs, names in os.walk(root, followlinks=follow_symlinks):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        kept = []
        for d in dirs:
            sub = Path(folder, d)
            target = sub.resolve()
            if sub.is_symlink() and not follow_symlinks:
                if not _inside(target, real_root):
                    skipped.append(os.fspath(sub))
                continue
            if target not in seen:
                seen.add(target)
                kept.append(d)
        dirs[:] = kept
        for name in sorted(names):
            path = Path(folder, name)
            if name.startswith(".") or not path.is_file():
                continue
            if (not follow_symlinks and path.is_symlink()
                    and not _inside(path.resolve(), real_root)):
                skipped.append(os.fspath(path))
                continue
            found.append(path)
    return sorted(found)


def expand_inputs(
    inputs: Sequence[str | os.PathLike[str]],
    follow_symlinks: bool = False,
    skipped: list[str] | None = None,
) -> list[Path]:
    """Resolve files, folders and globs into a sorted, de-duplicated list of files.

    Hidden files (name starting with ``.``) inside folders are ignored. A file named as an input
    is read even if it is a symbolic link (it was asked for by name); a link met inside a folder
    or matched by a glob is read only if it points inside that folder (the glob's folder before
    its first wildcard), unless ``follow_symlinks``. The links left out are appended to
    ``skipped`` when a list is given.

    Raises
    ------
    MiningInputError
        If an input names nothing, or all inputs together name no file.

    Examples
    --------
    >>> expand_inputs(["/nonexistent/*.txt"])
    Traceback (most recent call last):
    ...
    causal_mining.errors.MiningInputError: input '/nonexistent/*.txt' matches no file
    """
    skipped = [] if skipped is None else skipped
    files: list[Path] = []
    for item in inputs:
        text = os.fspath(item)
        path = Path(text)
        if path.is_file():
            found = [path]
        elif path.is_dir():
            found = _walk(path, follow_symlinks, skipped)
        else:
            base = _glob_base(text).resolve()
            found = []
            for match in sorted(Path(p) for p in glob.glob(text, recursive=True)):
                if not match.is_file():
                    continue
                if not follow_symlinks and not _inside(match.resolve(), base):
                    skipped.append(os.fspath(match))
                    continue
                found.append(match)
        if not found:
            raise MiningInputError(f"input {text!r} matches no file"
                                   + (f" it may read ({len(skipped)} symbolic links point out "
                                      "of it: --follow-symlinks reads them)" if skipped else ""))
        files.extend(found)
    unique = sorted({p.resolve(): None for p in files})
    if not unique:
        raise MiningInputError(f"inputs {[os.fspath(i) for i in inputs]!r} name no file")
    return unique


def input_format(path: Path) -> str:
    """``"warc"``, ``"jsonl"`` or ``"text"``, from the name with compression suffixes removed.

    >>> input_format(Path("CC-MAIN-x.warc.wet.gz")), input_format(Path("a.jsonl.zst"))
    ('warc', 'jsonl')
    >>> input_format(Path("book.txt.xz"))
    'text'
    """
    name = path.name.lower()
    while name.endswith(_COMPRESSION_SUFFIXES):
        name = name.rsplit(".", 1)[0]
    if name.endswith(_WARC_SUFFIXES) or ".warc." in name:
        return "warc"
    if name.endswith(_JSONL_SUFFIXES):
        return "jsonl"
    return "text"


class _Counting(io.RawIOBase):
    """Raw stream that counts the bytes read through it.

    With ``keep_truncated`` it reads one decompressed chunk at a time (``read1``), and a
    compressed stream that breaks off (a truncated ``.gz``/``.xz``/...) ends like a normal end
    of file, the error kept in :attr:`error`: everything decompressed before the break reaches
    the reader. Without it, the break raises.
    """

    def __init__(self, inner: IO[bytes], keep_truncated: bool = False) -> None:
        self.inner = inner
        self.count = 0
        self.keep_truncated = keep_truncated
        self.error: BaseException | None = None

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self.error is not None:
            return 0
        if not self.keep_truncated:
            data = self.inner.read(len(buffer))
        else:
            try:
                data = getattr(self.inner, "read1", self.inner.read)(len(buffer))
            except _truncation_errors() as error:
                self.error = error
                return 0
        n = len(data)
        buffer[:n] = data
        self.count += n
        return n


def open_decompressed(
    path: Path, keep_truncated: bool = False
) -> tuple[io.BufferedReader, _Counting, IO[bytes]]:
    """Open ``path`` and undo its compression (detected from the magic bytes).

    Returns the buffered decompressed stream, the byte counter under it, and the raw file
    (whose position tells how far into the file we are). With ``keep_truncated``, a stream that
    breaks off ends there, and the counter's ``error`` says why; without, the break raises.
    """
    raw = open(path, "rb")  # noqa: SIM115 - closed by the caller
    head = raw.read(8)
    raw.seek(0)
    kind = next((name for magic, name in _MAGIC if head.startswith(magic)), None)
    stream: Any
    if kind == "gzip":
        stream = gzip.GzipFile(fileobj=raw)
    elif kind == "bzip2":
        stream = bz2.BZ2File(raw)
    elif kind == "xz":
        stream = lzma.LZMAFile(raw)
    elif kind == "zstd":
        import zstandard

        stream = zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True)
    else:
        stream = raw
    counter = _Counting(stream, keep_truncated)
    return io.BufferedReader(counter, buffer_size=1 << 16), counter, raw


def _truncation_errors() -> tuple[type[BaseException], ...]:
    errors: list[type[BaseException]] = [EOFError, OSError, lzma.LZMAError, zlib_error()]
    try:
        import zstandard

        errors.append(zstandard.ZstdError)
    except ImportError:  # pragma: no cover - zstandard is a dependency
        pass
    return tuple(errors)


def zlib_error() -> type[BaseException]:
    import zlib

    return zlib.error


class _ReplacementCounter:
    """Counts invalid UTF-8 sequences (codecs error handler ``dpc-count-replace``)."""

    count = 0

    @classmethod
    def handler(cls, error: UnicodeError) -> tuple[str, int]:
        assert isinstance(error, UnicodeDecodeError)
        cls.count += 1
        return "\ufffd", error.end


codecs.register_error("dpc-count-replace", _ReplacementCounter.handler)


def _lines(
    text: io.TextIOWrapper, stats: ReadStats, name: str, limit: int,
    broken: Callable[[], bool] = lambda: False,
) -> Iterator[tuple[int, str]]:
    """Numbered lines, each at most ``limit`` characters; longer lines are skipped and counted.

    The last line of a stream that broke off (``broken()``) is dropped unless it is whole (ends
    with a newline): it would be half a sentence.
    """
    number = 0
    while True:
        line = text.readline(limit)
        if not line:
            return
        number += 1
        if not line.endswith("\n") and len(line) < limit and broken():
            return
        if len(line) >= limit and not line.endswith("\n"):
            skipped = len(line)
            while True:
                rest = text.readline(limit)
                skipped += len(rest)
                if not rest or rest.endswith("\n"):
                    break
            stats.warn("long_line", f"{name}:{number}: skipped a line of {skipped} characters")
            continue
        yield number, line.removeprefix("\ufeff") if number == 1 else line  # a BOM is no text


def _paragraphs(
    lines: Iterator[tuple[int, str]], name: str, max_chars: int
) -> Iterator[Document]:
    start = 0
    parts: list[str] = []
    size = 0
    for number, line in lines:
        if line.strip():
            if not parts:
                start = number
            parts.append(line)
            size += len(line)
            if size < max_chars:
                continue
        if parts:
            yield Document(f"{name}:{start}", "".join(parts))
            parts, size = [], 0
    if parts:
        yield Document(f"{name}:{start}", "".join(parts))


class _HTMLText(HTMLParser):
    """Visible text of an HTML page, one block element per line (no scripts or styles)."""

    _BLOCK = frozenset({"p", "div", "br", "li", "h1", "h2", "h3", "h4", "h5", "h6", "tr", "td",
                        "section", "article", "blockquote", "pre", "title"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._hidden = 0

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        if tag in ("script", "style", "noscript"):
            self._hidden += 1
        elif tag in self._BLOCK:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style", "noscript") and self._hidden:
            self._hidden -= 1
        elif tag in self._BLOCK:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self._hidden:
            self.parts.append(data)


def _warc_documents(
    stream: IO[bytes], stats: ReadStats, name: str, options: ReaderOptions
) -> Iterator[Document]:
    from warcio.archiveiterator import ArchiveIterator

    for record in ArchiveIterator(stream, arc2warc=True):
        if record.rec_type not in ("conversion", "response", "resource"):
            continue
        uri = record.rec_headers.get_header("WARC-Target-URI") or record.rec_headers.get_header(
            "WARC-Record-ID"
        )
        content_type = (
            record.http_headers.get_header("Content-Type", "")
            if record.http_headers is not None
            else record.rec_headers.get_header("Content-Type", "")
        ) or ""
        limit = options.max_line_chars * 8
        payload = record.content_stream().read(limit + 1)
        if len(payload) > limit:
            stats.warn("long_record", f"{name}#{uri}: skipped a record over {limit} bytes")
            continue
        text = payload.decode("utf-8", "dpc-count-replace")
        if "html" in content_type.lower() or (
            record.rec_type == "response" and text.lstrip()[:1] == "<"
        ):
            parser = _HTMLText()
            parser.feed(text)
            text = "".join(parser.parts)
        elif record.rec_type == "response" and "text" not in content_type.lower():
            stats.skipped["non_text_record"] += 1
            continue
        stats.documents += 1
        for i, line in enumerate(text.split("\n")):
            if line.strip():
                yield Document(f"{name}#{uri}:{i + 1}", line)


def _jsonl_documents(
    text: io.TextIOWrapper, stats: ReadStats, name: str, options: ReaderOptions,
    broken: Callable[[], bool] = lambda: False,
) -> Iterator[Document]:
    for number, line in _lines(text, stats, name, options.max_line_chars, broken):
        if not line.strip():
            continue
        try:
            record = parse_json(line, f"{name}:{number}")
        except InputError as error:  # not JSON, or nested too deeply
            stats.warn("bad_json", str(error))
            continue
        value = record.get(options.text_field) if isinstance(record, dict) else None
        if not isinstance(value, str):
            stats.warn("bad_json", f"{name}:{number}: no string field {options.text_field!r}")
            continue
        stats.documents += 1
        for i, paragraph in enumerate(value.split("\n\n")):
            if paragraph.strip():
                yield Document(f"{name}:{number}.{i + 1}", paragraph)


def read_documents(
    path: Path,
    stats: ReadStats,
    options: ReaderOptions | None = None,
    position: Callable[[int], None] | None = None,
) -> Iterator[Document]:
    """Stream the paragraphs of one input file, counting what is read and skipped.

    Parameters
    ----------
    path
        File to read; its format comes from :func:`input_format`.
    stats
        Updated in place (bytes, documents, skips, warnings).
    options
        :class:`ReaderOptions`.
    position
        Called with the raw file position after each document (progress bars).

    Yields
    ------
    Document
        Paragraphs (text files), paragraphs of the text field (JSON lines) or lines of a
        record's text (WARC/WET).
    """
    options = options or ReaderOptions()
    name = os.fspath(path)
    stats.files += 1
    size = path.stat().st_size
    stats.input_bytes += size
    if size == 0:
        stats.warn("empty_file", f"{name}: empty file")
        return
    fmt = input_format(path)
    buffered, counter, raw = open_decompressed(path, keep_truncated=True)
    before = _ReplacementCounter.count
    try:
        try:
            head = buffered.peek(8192)[:8192]
        except _truncation_errors() as error:
            stats.warn("truncated", f"{name}: unreadable compressed stream ({error})")
            return
        if not head and counter.error is not None:
            stats.warn("truncated", f"{name}: unreadable compressed stream ({counter.error})")
            return
        if not head:
            stats.warn("empty_file", f"{name}: empty after decompression")
            return
        if fmt != "warc" and b"\x00" in head:
            stats.warn("binary_file", f"{name}: binary file (NUL bytes), skipped")
            return
        documents: Iterator[Document]
        text: io.TextIOWrapper | None = None
        if fmt == "warc":
            documents = _warc_documents(buffered, stats, name, options)
        else:
            text = io.TextIOWrapper(buffered, encoding="utf-8", errors="dpc-count-replace")

            def broken() -> bool:
                return counter.error is not None

            if fmt == "jsonl":
                documents = _jsonl_documents(text, stats, name, options, broken)
            else:
                documents = _paragraphs(
                    _lines(text, stats, name, options.max_line_chars, broken), name,
                    options.max_paragraph_chars,
                )
        try:
            for document in documents:
                if fmt == "text":
                    stats.documents += 1
                yield document
                if position is not None:
                    position(raw.tell())
        except _truncation_errors() as error:
            counter.error = counter.error or error
        except UnicodeDecodeError as error:  # pragma: no cover - handler replaces instead
            stats.warn("bad_encoding", f"{name}: {error}")
        if counter.error is not None:
            stats.warn("truncated", f"{name}: compressed stream broken after {counter.count} "
                       f"bytes ({counter.error}); what was read before is kept")
    finally:
        stats.text_bytes += counter.count
        invalid = _ReplacementCounter.count - before
        if invalid:
            stats.warn("invalid_utf8_file", f"{name}: {invalid} invalid UTF-8 sequences replaced")
            stats.skipped["invalid_utf8_sequences"] += invalid
        raw.close()
