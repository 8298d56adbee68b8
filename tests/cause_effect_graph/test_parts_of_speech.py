"""Part-of-speech profiles: counting, the file, the thresholds, the builder, the bundled one."""

from __future__ import annotations

import gzip
from collections import Counter

import pytest

from cause_effect_graph.errors import GraphError, GraphFormatError, GraphVersionError
from cause_effect_graph.parts_of_speech import (
    FORMAT,
    PartsOfSpeech,
    build_parts_of_speech,
    count_parts_of_speech,
    default_parts_of_speech,
    gutenberg_sample,
)
from tests.cause_effect_graph.conftest import END, START, fake_data, write_xz


def test_counting_tags_each_content_token():
    profile = count_parts_of_speech(["She pursed her lips.", "Her purse was empty.",
                                     "The baby cried all night.", "A loud cry woke the baby."])
    assert profile.counts["purse"] == {"VERB": 1, "NOUN": 1}
    assert profile.counts["cry"] == {"VERB": 1, "NOUN": 1}
    assert profile.counts["baby"] == {"NOUN": 2}            # every token counts, not every text
    assert profile.counts["loud"] == {"ADJ": 1}
    assert not {"she", "her", "the", "be", "all"} & set(profile.counts)  # the graph's rule
    assert count_parts_of_speech([]).counts == {}


@pytest.mark.parametrize("min_share, expected", [
    (0.0, ("VERB", "NOUN", "ADJ")),     # every tag seen
    (0.1, ("VERB", "NOUN")),            # ADJ is 5 of 100: left out
    (0.05, ("VERB", "NOUN", "ADJ")),    # a share exactly at the threshold is kept
    (0.5, ("VERB",)),
    (1.0, ()),                          # no tag holds every count
])
def test_of_thresholds(min_share, expected):
    profile = PartsOfSpeech({"cry": {"NOUN": 25, "VERB": 70, "ADJ": 5}})
    assert profile.of("cry", min_share) == expected


def test_of_unknown_lemma_ties_and_case():
    profile = PartsOfSpeech({"fast": {"ADV": 2, "ADJ": 2}})
    assert profile.of("nothing") == ()
    assert profile.of("fast") == ("ADJ", "ADV")             # a tie: tag order
    assert profile.of("FAST") == ("ADJ", "ADV")
    assert "fast" in profile and "slow" not in profile and len(profile) == 1


@pytest.mark.parametrize("share", [-0.1, 1.01, "0.5", None, True])
def test_bad_min_share_is_an_error(share):
    with pytest.raises(GraphError, match=r"`min_share` \(="):
        PartsOfSpeech({"a": {"NOUN": 1}}).of("a", share)


@pytest.mark.parametrize("counts, message", [
    ({"rain": {"PROPN": 3}}, "part of speech 'PROPN' of 'rain'"),
    ({"rain": {"NOUN": 0}}, "count NOUN:0 of 'rain'"),
    ({"rain": {"NOUN": 1.5}}, "count NOUN:1.5 of 'rain'"),
    ({"rain": {}}, "counts of 'rain'"),
    ({" rain": {"NOUN": 1}}, "lemma ' rain'"),
])
def test_bad_counts_are_refused(counts, message):
    with pytest.raises(GraphError, match=message):
        PartsOfSpeech(counts)


def test_save_load_round_trip(tmp_path):
    profile = PartsOfSpeech({"rain": {"VERB": 2, "NOUN": 5}, "hungry": {"ADJ": 7},
                             "quickly": {"ADV": 1}})
    path = tmp_path / "pos.tsv.gz"
    profile.save(path)
    assert PartsOfSpeech.load(path) == profile
    assert gzip.decompress(path.read_bytes()).decode().splitlines() == [
        FORMAT, "hungry\tADJ:7", "quickly\tADV:1", "rain\tNOUN:5,VERB:2"]
    first = path.read_bytes()
    profile.save(path)
    assert path.read_bytes() == first                       # the same bytes every time
    PartsOfSpeech().save(path)
    assert len(PartsOfSpeech.load(path)) == 0


@pytest.mark.parametrize("content, error, message", [
    (b"not gzip at all", GraphFormatError, "is not a parts-of-speech file"),
    (gzip.compress(b"lemma\tcounts\n"), GraphFormatError, "its first line is 'lemma\\tcounts'"),
    (gzip.compress(b"# dpc-parts-of-speech-2\n"), GraphVersionError, "of format '2'"),
    (gzip.compress(FORMAT.encode() + b"\nrain NOUN:5\n"), GraphFormatError, "line 2"),
    (gzip.compress(FORMAT.encode() + b"\nrain\tNOUN:5,NOUN:1\n"), GraphFormatError, "line 2"),
    (gzip.compress(FORMAT.encode() + b"\nrain\tNOUN:x\n"), GraphFormatError, "line 2"),
    (gzip.compress(FORMAT.encode() + b"\nrain\tNOUN:1\nrain\tVERB:1\n"), GraphFormatError,
     "line 3: lemma 'rain' is given twice"),
    (gzip.compress(FORMAT.encode() + b"\nrain\tPROPN:1\n"), GraphFormatError,
     "line 2: part of speech 'PROPN'"),
    (gzip.compress(FORMAT.encode() + b"\nrain\tNOUN:1\n")[:-6], GraphFormatError,
     "is not a parts-of-speech file"),                  # truncated
])
def test_bad_files_are_refused_naming_the_path(tmp_path, content, error, message):
    path = tmp_path / "bad.tsv.gz"
    path.write_bytes(content)
    with pytest.raises(error) as caught:
        PartsOfSpeech.load(path)
    assert str(path) in str(caught.value) and message in str(caught.value)


def test_missing_file_is_refused_naming_the_path(tmp_path):
    with pytest.raises(GraphFormatError, match="no.tsv.gz' does not exist"):
        PartsOfSpeech.load(tmp_path / "no.tsv.gz")


def test_gutenberg_sample_skips_licences_and_spreads_over_files(tmp_path):
    a = write_xz(tmp_path / "a.txt.xz", ["header", START, "a1", "", "a2", END, "licence",
                                         "more licence", START, "a3"])
    b = write_xz(tmp_path / "b.txt.xz", ["b1", "b2", "  ", "b3"])
    every = ["header", "a1", "a2", "a3", "b1", "b2", "b3"]
    assert gutenberg_sample([a, b], 100) == every           # fewer lines than asked: all
    assert gutenberg_sample([a, b], 0) == []
    three = gutenberg_sample([a, b], 3, seed=4)
    assert len(three) == 3 and set(three) <= set(every)
    assert three == sorted(three, key=every.index)          # in file order
    assert gutenberg_sample([a, b], 3, seed=4) == three     # same seed, same lines
    picks = Counter(line for seed in range(350) for line in gutenberg_sample([a, b], 2, seed))
    assert set(picks) == set(every)
    assert all(60 <= n <= 140 for n in picks.values()), picks   # uniform: 100 each expected


def test_gutenberg_sample_bad_input(tmp_path):
    with pytest.raises(GraphError, match=r"Gutenberg lines \(=-1\)"):
        gutenberg_sample([], -1)
    bad = tmp_path / "bad.txt.xz"
    bad.write_bytes(b"not xz")
    with pytest.raises(GraphError, match="bad.txt.xz"):
        gutenberg_sample([bad], 5)


def test_build_reads_the_three_sources(tmp_path):
    data = fake_data(tmp_path / "data")
    out = tmp_path / "pos.tsv.gz"
    profile = build_parts_of_speech(data, out, gutenberg_lines=10, progress=False, min_count=1)
    assert PartsOfSpeech.load(out) == profile
    assert {"purse", "baby", "cry", "hungry"} <= set(profile.counts)    # Gutenberg
    assert "licence" not in profile and "term" not in profile           # its licence skipped
    assert profile.counts["rain"] == {"VERB": 1, "NOUN": 1}  # e-CARE's cause once, ConceptNet
    assert {"street", "wet", "river", "flood", "ground"} <= set(profile.counts)
    pruned = build_parts_of_speech(data, out, 1, progress=False, min_count=2)
    assert PartsOfSpeech.load(out) == pruned                  # the file is replaced
    assert "rain" in pruned and "purse" not in pruned and "baby" not in pruned
    assert all(sum(tags.values()) >= 2 for tags in pruned.counts.values())


def test_build_names_a_missing_source(tmp_path):
    data = fake_data(tmp_path / "data")
    (data / "conceptnet" / "conceptnet_cause_sets.txt").unlink()
    with pytest.raises(GraphError, match="conceptnet_cause_sets.txt' does not exist"):
        build_parts_of_speech(data, tmp_path / "pos.tsv.gz", progress=False)
    with pytest.raises(GraphError, match="no Gutenberg text"):
        build_parts_of_speech(tmp_path, tmp_path / "pos.tsv.gz", progress=False)
    assert not (tmp_path / "pos.tsv.gz").exists()


def test_the_bundled_profile_knows_purse_as_a_noun():
    profile = default_parts_of_speech()
    assert profile.of("purse")[0] == "NOUN" and "VERB" not in profile.of("purse")
    assert profile.of("hungry") == ("ADJ",)
    assert profile.of("disturb") == ("VERB",)
    assert len(profile) > 10_000
