from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from dpc_inputs import InputError
from tasks.commongen.dataset import (
    Concept,
    distinct,
    parse_concept_set,
    read_concept_sets,
    read_pairs,
    read_references,
)
from tasks.errors import DatasetError
from tests.tasks.commongen.conftest import LINES, write_split


def test_tagged_and_untagged_sets(tmp_path: Path) -> None:
    files = write_split(tmp_path)
    tagged = read_concept_sets(files["cs_str"])
    plain = read_concept_sets(files["src_alpha"])
    assert len(tagged) == len(plain) == len(LINES)
    assert tagged[0] == (Concept("dog", "N"), Concept("frisbee", "N"), Concept("catch", "V"))
    assert plain[0] == (Concept("dog"), Concept("frisbee"), Concept("catch"))
    assert len(distinct(tagged)) == 3
    jsonl = tmp_path / "dev.jsonl"
    jsonl.write_text(json.dumps({"concept_set": "ski_V#mountain_N", "scene": ["x"]}) + "\n")
    assert read_concept_sets(jsonl) == [(Concept("ski", "V"), Concept("mountain", "N"))]


def test_pairs_and_references(tmp_path: Path) -> None:
    files = write_split(tmp_path)
    pairs = read_pairs(files["cs_str"], files["tgt"])
    assert pairs[1] == (parse_concept_set("dog_N#frisbee_N#catch_V"),
                        "The dog caught the frisbee in the park.")
    refs = read_references(files["cs_str"], files["tgt"])
    assert list(refs) == [("catch", "dog", "frisbee"), ("field", "look", "stand"),
                          ("mountain", "ski")]
    assert len(refs[("field", "look", "stand")]) == 2


@pytest.mark.parametrize("line, word", [
    ("", "empty"), ("dog_#cat_N", "dog_"), ("_N#cat_N", "_N"),
    # over-long (issue 60): refused up front with the line, not decoded for minutes
    ("dog " + "x" * 101, "f.txt:3: the concept 'xxxxxxxxxxxxxxxxxxxx'... has 101 characters: "
                         "at most 100"),
    ("dog_N#" + "x" * 200 + "_N", "has 200 characters: at most 100"),
    (" ".join(["dog"] * 21), "f.txt:3: 21 concepts in one set: at most 20"),
    ("x" * 20_000, "the concept 'xxxxxxxxxxxxxxxxxxxx'... has 20000 characters"),
    ("a " * 100_000, "100000 concepts in one set: at most 20"),
])
def test_bad_concept_sets_name_the_value(line: str, word: str) -> None:
    with pytest.raises(DatasetError, match=re.escape(word)):
        parse_concept_set(line, "f.txt:3")


def test_the_longest_concept_and_set_allowed_are_read() -> None:
    assert len(parse_concept_set(" ".join(["x" * 100] * 20))) == 20  # the limits themselves


def test_bad_files_name_the_file_and_line(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="CommonGen file '.*missing.txt' does not exist"):
        read_concept_sets(tmp_path / "missing.txt")
    marked = tmp_path / "marked.txt"
    marked.write_bytes(b"\xef\xbb\xbfdog_N#cat_N\n")  # the BOM is not part of the first lemma
    assert [c.lemma for c in read_concept_sets(marked)[0]] == ["dog", "cat"]
    deep = tmp_path / "deep.jsonl"
    deep.write_text("[" * 50_000 + "]" * 50_000 + "\n")
    with pytest.raises(InputError, match="deep.jsonl:1 nests arrays"):
        read_concept_sets(deep)
    src, tgt = tmp_path / "src.txt", tmp_path / "tgt.txt"
    src.write_text("dog cat\nsun sky\n")
    tgt.write_text("A dog and a cat.\n")
    with pytest.raises(DatasetError, match="has 2 lines but"):
        read_pairs(src, tgt)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"concept_set": "dog_N"}\n{"scene": []}\n')
    with pytest.raises(DatasetError, match=r"bad.jsonl:2: want an object"):
        read_concept_sets(bad)
