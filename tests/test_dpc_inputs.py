"""The one input reader: every class of bad file gets one line naming the option, the file and
the line, and good files read the same whatever their BOM or line ends."""

from __future__ import annotations

import json
import os

import pytest

from dpc_inputs import (
    MAX_DEPTH,
    InputError,
    iter_input_lines,
    parse_json,
    read_input_lines,
    read_input_text,
    read_json_lines,
)

READERS = [
    lambda p: read_input_text(p, "--in"),
    lambda p: read_input_lines(p, "--in"),
    lambda p: list(iter_input_lines(p, "--in")),
    lambda p: read_json_lines(p, "--in"),
]


@pytest.mark.parametrize("read", READERS)
def test_a_directory_is_said_to_be_one(tmp_path, read):
    with pytest.raises(InputError, match=r"^--in '.*' is a directory; give a file$"):
        read(tmp_path)


@pytest.mark.parametrize("read", READERS)
def test_a_missing_file_and_a_dangling_link(tmp_path, read):
    with pytest.raises(InputError, match="does not exist$"):
        read(tmp_path / "missing.txt")
    link = tmp_path / "link.txt"
    link.symlink_to(tmp_path / "gone.txt")
    with pytest.raises(InputError, match="is a link to a file that does not exist$"):
        read(link)


@pytest.mark.parametrize("read", READERS)
def test_not_utf8_names_the_line_and_byte(tmp_path, read):
    path = tmp_path / "latin1.txt"
    path.write_bytes(b'"first"\n"second"\n"caf\xe9"\n')
    with pytest.raises(InputError) as caught:
        read(path)
    assert str(caught.value) == (f"--in {str(path)!r} is not UTF-8 text (line 3, byte 0xe9); "
                                 "save it as UTF-8")


def test_binary_file_is_not_utf8(tmp_path):
    path = tmp_path / "model.bin"
    path.write_bytes(bytes(range(256)) * 4)
    with pytest.raises(InputError, match="is not UTF-8 text"):
        read_json_lines(path, "--in")


@pytest.mark.parametrize("read", READERS[:2] + READERS[3:])
def test_an_empty_file_is_said_to_be_empty(tmp_path, read):
    path = tmp_path / "empty.jsonl"
    path.write_text("\n \n\r\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"^--in '.*empty.jsonl' is empty$"):
        read(path)


def test_empty_is_allowed_where_asked(tmp_path):
    path = tmp_path / "empty.txt"
    path.write_bytes(b"")
    assert read_input_lines(path, "--in", allow_empty=True) == []
    assert read_json_lines(path, "--in", allow_empty=True) == []
    assert list(iter_input_lines(path, "--in")) == []


def test_bom_and_crlf_read_the_same_everywhere(tmp_path):
    plain, marked = tmp_path / "plain.jsonl", tmp_path / "marked.jsonl"
    plain.write_bytes(b'{"a": 1}\n{"b": "x"}\n')
    marked.write_bytes(b'\xef\xbb\xbf{"a": 1}\r\n{"b": "x"}\r\n')
    for path in (plain, marked):
        assert read_json_lines(path, "--in") == [{"a": 1}, {"b": "x"}]
        assert read_input_lines(path, "--in") == ['{"a": 1}', '{"b": "x"}']
        assert list(iter_input_lines(path, "--in")) == ['{"a": 1}', '{"b": "x"}']
        assert read_input_text(path, "--in").startswith('{"a"')


def test_line_separators_inside_json_strings_stay_in_their_line(tmp_path):
    path = tmp_path / "sep.jsonl"
    value = {"text": "one\u2028two\x0cthree"}
    path.write_text(json.dumps(value, ensure_ascii=False) + "\n", encoding="utf-8")
    assert read_json_lines(path, "--in") == [value]


def test_a_deeply_nested_line_is_refused_by_its_number(tmp_path):
    path = tmp_path / "deep.jsonl"
    path.write_text('{"ok": 1}\n' + "[" * 100_000 + "]" * 100_000 + "\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read_json_lines(path, "--input-file")
    assert str(caught.value) == (f"--input-file {str(path)!r} line 2 nests arrays and objects "
                                 f"deeper than {MAX_DEPTH} levels")


def test_depth_is_counted_outside_strings_only():
    brackets = "[" * (MAX_DEPTH + 5)
    assert parse_json(json.dumps({"text": brackets}), "body") == {"text": brackets}
    within = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    assert parse_json(within, "body") == json.loads(within)
    with pytest.raises(InputError, match="deeper than"):
        parse_json("[" + within + "]", "body")
    escaped = json.dumps({"a": '\\"[[' * 60})
    assert parse_json(escaped, "body") == json.loads(escaped)


def test_bad_json_names_the_line_and_column(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"a": 1}\n\n{"a": }\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"bad.jsonl' line 3 is not JSON \(Expecting value at "
                                         r"column 7\)$"):
        read_json_lines(path, "--in")


def test_an_unreadable_file(tmp_path):
    if os.geteuid() == 0:
        pytest.skip("root reads every file")
    path = tmp_path / "secret.txt"
    path.write_text("x", encoding="utf-8")
    path.chmod(0)
    with pytest.raises(InputError, match="cannot be read"):
        read_input_lines(path, "--in")


def test_a_huge_line_is_refused(tmp_path, monkeypatch):
    import dpc_inputs

    monkeypatch.setattr(dpc_inputs, "MAX_LINE_CHARS", 10)
    path = tmp_path / "long.txt"
    path.write_text("short\n" + "x" * 11 + "\n", encoding="utf-8")
    for read in (READERS[1], READERS[2]):
        with pytest.raises(InputError, match=r"line 2 is 11 characters long; at most 10"):
            read(path)


def test_an_integer_too_long_to_convert_is_not_a_traceback():
    with pytest.raises(InputError, match="^body is not JSON dpc can read"):
        parse_json('{"n": ' + "9" * 5000 + "}", "body")
