"""Readers: formats, compression, inputs, and bad input that must be skipped and counted."""

from __future__ import annotations

import bz2
import gzip
import io
import json
import lzma
from pathlib import Path

import pytest
import zstandard
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from causal_mining.errors import MiningInputError
from causal_mining.readers import ReaderOptions, ReadStats, expand_inputs, read_documents

TEXT = "It rained all day,\nso we stayed in.\n\nThe drought led to a famine.\n"
PARAGRAPHS = ["It rained all day,\nso we stayed in.\n", "The drought led to a famine.\n"]


def texts(path: Path, options: ReaderOptions | None = None) -> tuple[list[str], ReadStats]:
    stats = ReadStats()
    return [d.text for d in read_documents(path, stats, options)], stats


@pytest.mark.parametrize(
    ("name", "compress"),
    [
        ("plain.txt", lambda b: b),
        ("a.txt.gz", gzip.compress),
        ("a.txt.bz2", bz2.compress),
        ("a.txt.xz", lzma.compress),
        ("a.txt.zst", lambda b: zstandard.ZstdCompressor().compress(b)),
        ("no_suffix_but_gzip", gzip.compress),
    ],
)
def test_text_formats(tmp_path: Path, name: str, compress: object) -> None:
    path = tmp_path / name
    path.write_bytes(compress(TEXT.encode()))  # type: ignore[operator]
    found, stats = texts(path)
    assert found == PARAGRAPHS
    assert stats.text_bytes == len(TEXT.encode())
    assert stats.skipped == {}


def test_jsonl(tmp_path: Path) -> None:
    path = tmp_path / "docs.jsonl.gz"
    lines = [json.dumps({"text": TEXT.replace("\n\n", "\n\n"), "id": 1}), "not json",
             json.dumps({"body": "no text field"})]
    path.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    found, stats = texts(path)
    assert found == ["It rained all day,\nso we stayed in.", "The drought led to a famine.\n"]
    assert stats.skipped["bad_json"] == 2


def test_jsonl_bom_and_deep_lines(tmp_path: Path) -> None:
    """A byte-order mark does not cost the first record, and a line nested 100,000 deep is a
    counted bad line, not a RecursionError."""
    path = tmp_path / "docs.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps({"text": "It rained."}).encode() + b"\n"
                     + b"[" * 100_000 + b"]" * 100_000 + b"\n")
    found, stats = texts(path)
    assert found == ["It rained."]
    assert stats.skipped == {"bad_json": 1}


def test_text_bom_is_not_text(tmp_path: Path) -> None:
    path = tmp_path / "marked.txt"
    path.write_bytes(b"\xef\xbb\xbf" + TEXT.encode())
    assert texts(path)[0] == PARAGRAPHS


def test_jsonl_custom_field(tmp_path: Path) -> None:
    path = tmp_path / "docs.jsonl"
    path.write_text(json.dumps({"body": "We left because it rained."}) + "\n")
    found, _ = texts(path, ReaderOptions(text_field="body"))
    assert found == ["We left because it rained."]


def _warc(path: Path, records: list[tuple[str, str, bytes, str]]) -> None:
    with open(path, "wb") as handle:
        writer = WARCWriter(handle, gzip=True)
        for rec_type, uri, payload, content_type in records:
            http = None
            if rec_type == "response":
                http = StatusAndHeaders("200 OK", [("Content-Type", content_type)],
                                        protocol="HTTP/1.0")
            record = writer.create_warc_record(
                uri, rec_type, payload=io.BytesIO(payload), http_headers=http,
                warc_content_type=content_type if rec_type != "response" else None,
            )
            writer.write_record(record)


def test_wet_and_warc(tmp_path: Path) -> None:
    path = tmp_path / "CC-MAIN-test.warc.wet.gz"
    _warc(path, [
        ("conversion", "http://a.example/", b"The flood was caused by heavy rain.\nMenu\n",
         "text/plain"),
        ("response", "http://b.example/",
         b"<html><script>var x;</script><p>We left because it rained.</p></html>", "text/html"),
        ("response", "http://c.example/img.png", b"\x89PNG....", "image/png"),
    ])
    found, stats = texts(path)
    assert found == ["The flood was caused by heavy rain.", "Menu", "We left because it rained."]
    assert stats.documents == 2
    assert stats.skipped["non_text_record"] == 1


def test_expand_inputs(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    for name in ("a.txt", "sub/b.txt.gz", "sub/.hidden", "c.jsonl"):
        (tmp_path / name).write_text("x")
    assert [p.name for p in expand_inputs([tmp_path])] == ["a.txt", "c.jsonl", "b.txt.gz"]
    assert [p.name for p in expand_inputs([str(tmp_path / "*.txt"), tmp_path / "a.txt"])] == [
        "a.txt"]
    with pytest.raises(MiningInputError, match="nothing-here"):
        expand_inputs([tmp_path / "nothing-here"])


# ---- bad input -------------------------------------------------------------------------------


def test_binary_file_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "image.txt"
    path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 10)
    found, stats = texts(path)
    assert found == [] and stats.skipped == {"binary_file": 1}
    assert "binary" in stats.warnings[0]


def test_invalid_utf8_is_replaced_and_counted(tmp_path: Path) -> None:
    path = tmp_path / "latin1.txt"
    path.write_bytes("Caf\xe9 closed because of the r\xe9gime.\n".encode("latin-1"))
    found, stats = texts(path)
    assert found == ["Caf\ufffd closed because of the r\ufffdgime.\n"]
    assert stats.skipped["invalid_utf8_sequences"] == 2


@pytest.mark.parametrize(("suffix", "compress"), [(".xz", lzma.compress), (".gz", gzip.compress),
                                                   (".bz2", bz2.compress)])
def test_truncated_compressed_file_keeps_what_was_read(
    tmp_path: Path, suffix: str, compress: object
) -> None:
    body = "".join(f"Paragraph {i} was written because of reason {i}.\n\n" for i in range(60000))
    data = compress(body.encode())  # type: ignore[operator]
    path = tmp_path / f"cut.txt{suffix}"
    path.write_bytes(data[: len(data) // 2])
    found, stats = texts(path)
    assert stats.skipped["truncated"] == 1
    assert 0 < len(found) < 60000
    assert found[0] == "Paragraph 0 was written because of reason 0.\n"


def test_empty_files(tmp_path: Path) -> None:
    (tmp_path / "empty.txt").write_bytes(b"")
    (tmp_path / "empty.txt.gz").write_bytes(gzip.compress(b""))
    for name in ("empty.txt", "empty.txt.gz"):
        found, stats = texts(tmp_path / name)
        assert found == [] and stats.skipped == {"empty_file": 1}


def test_fifty_megabyte_line_is_skipped_in_bounded_memory(tmp_path: Path) -> None:
    path = tmp_path / "long.txt"
    with open(path, "w") as handle:
        handle.write("Before it we left because it rained.\n")
        chunk = "because " * 131072  # 1 MiB
        for _ in range(50):
            handle.write(chunk)
        handle.write("\n\nAfter it the war led to a famine.\n")
    found, stats = texts(path)
    assert found == ["Before it we left because it rained.\n",
                     "After it the war led to a famine.\n"]
    assert stats.skipped["long_line"] == 1
    assert "52428801 characters" in stats.warnings[0]
