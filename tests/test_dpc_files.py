"""dpc_files.ResultsFile: a results file is recognised by its header, resumed only by the same
run, and replaced whole or not at all."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dpc_files import (
    RESULTS_FORMAT,
    OutputError,
    ResultsFile,
    file_digest,
    read_results,
    run_difference,
)

RUN = {"direction": "cause", "n": 20, "model": {"name": "bundled", "files": "ab12"},
       "the inputs": {"count": 2, "sha256": "cd34"}}


def write_run(path: Path, rows: list[dict], run: dict = RUN) -> None:
    with ResultsFile(path, "dpc demo", run).writer() as write:
        for row in rows:
            write(row)


def test_a_new_file_starts_with_its_header_and_is_resumed_by_the_same_run(tmp_path: Path):
    path = tmp_path / "out.jsonl"
    write_run(path, [{"index": 0}])
    first = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
    assert first == {"format": RESULTS_FORMAT, "command": "dpc demo", "run": RUN}
    again = ResultsFile(path, "dpc demo", RUN)
    assert again.check() == [{"index": 0}]
    with again.writer() as write:
        write({"index": 1})
    assert read_results(path) == ({"format": RESULTS_FORMAT, "command": "dpc demo", "run": RUN},
                                  [{"index": 0}, {"index": 1}])


@pytest.mark.parametrize("content", [
    b'{"index": 0, "input": "babies cry"}\n',  # shaped like an old results file
    b'{"index": 0, "input": "babies cry"}',  # ... without its newline
    b"",  # empty
    b"\x89PNG\r\n\x1a\n",  # binary
    ('{"format": "%s", "command": "dpc demo", "run": {}}' % RESULTS_FORMAT).encode(),  # no \n
    b'{"format": "dpc-results-0", "command": "dpc demo", "run": {}}\n',  # another format
])
def test_a_file_without_our_header_is_never_written(tmp_path: Path, content: bytes):
    path = tmp_path / "out.jsonl"
    path.write_bytes(content)
    results = ResultsFile(path, "dpc demo", RUN)
    with pytest.raises(OutputError, match="is not a results file of dpc demo"):
        results.check()
    with pytest.raises(OutputError), results.writer():
        pass
    assert path.read_bytes() == content


def test_another_command_or_run_is_refused_naming_what_differs(tmp_path: Path):
    path = tmp_path / "out.jsonl"
    write_run(path, [{"index": 0}])
    before = path.read_bytes()
    with pytest.raises(OutputError, match="holds results of 'dpc demo', not of dpc other"):
        ResultsFile(path, "dpc other", RUN).check()
    cases = [({**RUN, "n": 5}, "--n is 5 here and 20 in the file"),
             ({**RUN, "model": {"name": "bundled", "files": "ff"}},
              "--model 'bundled' is not the same files as when the file was written"),
             ({**RUN, "the inputs": {"count": 3, "sha256": "00"}},
              r"the inputs differ \(3 here, 2 in the file\)"),
             ({**RUN, "seed": 1}, "--seed is not recorded in the file"),
             ({k: v for k, v in RUN.items() if k != "n"}, "--n is recorded in the file but not")]
    for run, message in cases:
        with pytest.raises(OutputError, match=message):
            ResultsFile(path, "dpc demo", run).check()
    assert path.read_bytes() == before


def test_a_torn_last_line_is_dropped_and_an_edited_line_refused(tmp_path: Path):
    path = tmp_path / "out.jsonl"
    write_run(path, [{"index": 0}, {"index": 1}])
    whole = path.read_text(encoding="utf-8")
    path.write_text(whole[:-5], encoding="utf-8")  # the second result cut by an interrupt
    results = ResultsFile(path, "dpc demo", RUN)
    assert results.check() == [{"index": 0}]
    with results.writer() as write:
        write({"index": 1})
    assert path.read_text(encoding="utf-8") == whole
    path.write_text(whole.replace('{"index": 1}', "[1]"), encoding="utf-8")
    with pytest.raises(OutputError, match="line 3 is not a result of dpc demo"):
        ResultsFile(path, "dpc demo", RUN).check()


def test_overwrite_replaces_the_file_only_when_the_run_ends(tmp_path: Path):
    path = tmp_path / "out.jsonl"
    path.write_text("a user's file\n", encoding="utf-8")
    results = ResultsFile(path, "dpc demo", RUN, overwrite=True)
    assert results.check() == [] and results.replacing
    with pytest.raises(KeyboardInterrupt), results.writer() as write:
        write({"index": 0})
        assert path.read_text(encoding="utf-8") == "a user's file\n"  # still the old file
        raise KeyboardInterrupt
    assert path.read_text(encoding="utf-8") == "a user's file\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.jsonl"]  # nothing left beside
    with ResultsFile(path, "dpc demo", RUN, overwrite=True).writer() as write:
        write({"index": 0})
    assert read_results(path)[1] == [{"index": 0}]


def test_a_new_file_is_never_written_over_one_that_appeared_meanwhile(tmp_path: Path):
    path = tmp_path / "out.jsonl"
    results = ResultsFile(path, "dpc demo", RUN)
    assert results.check() == []
    path.write_text("written by someone else meanwhile\n", encoding="utf-8")
    with pytest.raises(OutputError, match="appeared while dpc was working"), results.writer():
        pass
    assert path.read_text(encoding="utf-8") == "written by someone else meanwhile\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.jsonl"]


def test_file_digest_follows_the_bytes_not_the_path(tmp_path: Path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "w.bin").write_bytes(b"weights")
    (tmp_path / "a" / ".hidden").write_bytes(b"ignored")
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "w.bin").write_bytes(b"weights")
    assert file_digest(tmp_path / "a") == file_digest(tmp_path / "b")
    (tmp_path / "b" / "w.bin").write_bytes(b"weightz")
    assert file_digest(tmp_path / "a") != file_digest(tmp_path / "b")
    assert run_difference({"graph": {"name": "x", "files": "1"}},
                          {"graph": {"name": "y", "files": "1"}}) is None


def test_a_new_file_is_removed_when_the_run_fails_before_its_first_result(tmp_path: Path):
    # a value the work refuses only once it starts (a size that does not fit in memory): the
    # refused run leaves no header-only file behind (issue 60, item 4)
    path = tmp_path / "out.jsonl"
    with pytest.raises(OutputError, match="refused"):
        with ResultsFile(path, "dpc demo", RUN).writer():
            raise OutputError("refused before the first result")
    assert list(tmp_path.iterdir()) == []
    # a result written: kept, and the same run resumes it
    with pytest.raises(OutputError):
        with ResultsFile(path, "dpc demo", RUN).writer() as write:
            write({"index": 0})
            raise OutputError("refused after one result")
    assert ResultsFile(path, "dpc demo", RUN).check() == [{"index": 0}]
    # a file being resumed is never removed, even when the run fails at once
    with pytest.raises(OutputError):
        with ResultsFile(path, "dpc demo", RUN).writer():
            raise OutputError("refused at once")
    assert ResultsFile(path, "dpc demo", RUN).check() == [{"index": 0}]


def test_an_interrupted_new_file_keeps_its_header(tmp_path: Path):
    # an interrupt is not a refusal: what was written stays, as it always did
    path = tmp_path / "out.jsonl"
    with pytest.raises(KeyboardInterrupt):
        with ResultsFile(path, "dpc demo", RUN).writer():
            raise KeyboardInterrupt
    assert ResultsFile(path, "dpc demo", RUN).check() == []
    assert path.is_file()
