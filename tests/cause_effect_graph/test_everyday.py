"""Everyday pairs (e-CARE, ConceptNet): readers, weights, the build path and the add-pairs path."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from cause_effect_graph import everyday
from cause_effect_graph.build import (
    BuildOptions,
    build_graph,
    counts_to_graph,
)
from cause_effect_graph.cli import add_graph_parser
from cause_effect_graph.counts import count_lemma_pairs, merge_counts
from cause_effect_graph.errors import GraphError
from cause_effect_graph.everyday import (
    EverydaySource,
    add_counts,
    add_everyday,
    parse_sources,
    read_conceptnet,
    read_ecare,
)
from cause_effect_graph.store import load_graph, save_graph

from .conftest import ROOT

DATA = ROOT.parent / "shared" / "data"


class Split:
    """Lemmas without spaCy: the lower-cased words."""

    calls = 0

    def lemmas(self, texts):
        Split.calls += 1
        return [t.lower().replace(".", "").split() for t in texts]


def write(path: Path, text: str) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return str(path)


ECARE_EXPLAIN = ('{"index": "train-0", "cause": "Rain fell.", "effect": "Roads flooded.", '
                 '"conceptual_explanation": "x"}\n')
ECARE_REASON = ('{"index": "train-0", "premise": "Roads flooded.", "ask-for": "cause", '
                '"hypothesis1": "Rain fell.", "hypothesis2": "Sun shone.", "label": 0}\n'
                '{"index": "train-1", "premise": "Ice formed.", "ask-for": "effect", '
                '"hypothesis1": "Cars melted.", "hypothesis2": "Cars skidded.", "label": 1}\n')


# ---------------------------------------------------------------- readers


def test_ecare_both_formats_give_the_same_pairs_and_repeats_count_once(tmp_path):
    write(tmp_path / "ecare" / "explanation_generation_train.jsonl", ECARE_EXPLAIN)
    write(tmp_path / "ecare" / "causal_reasoning_train.jsonl", ECARE_REASON)
    write(tmp_path / "ecare" / "LICENSE", "MIT")
    source = EverydaySource("ecare", str(tmp_path / "ecare"), 5)
    assert [p.name for p in source.files()] == ["causal_reasoning_train.jsonl",
                                                "explanation_generation_train.jsonl"]
    # the reasoning file's correct hypothesis + premise, ordered by ask-for; the explanation
    # file's pair repeats the first one and counts once
    assert source.pairs() == [("Rain fell.", "Roads flooded."), ("Ice formed.", "Cars skidded.")]


@pytest.mark.parametrize("line, message", [
    ("{not json", r"e\.jsonl:2 is not JSON"),
    ('["a", "b"]', r"e\.jsonl:2: an e-CARE row has to be a JSON object, not list"),
    ('{"cause": "x"}', r"e\.jsonl:2: not an e-CARE row .* it has cause\)"),
    ('{"premise": "p", "ask-for": "why", "hypothesis1": "a", "hypothesis2": "b", "label": 0}',
     r"e\.jsonl:2: `ask-for` \(='why'\)"),
    ('{"premise": "p", "ask-for": "cause", "hypothesis1": "a", "hypothesis2": "b", "label": 2}',
     r"e\.jsonl:2: `label` \(=2\) has to be 0 or 1"),
    ('{"cause": 3, "effect": "b"}', r"e\.jsonl:2: the cause and effect have to be strings"),
])
def test_bad_ecare_rows_name_the_file_and_line(tmp_path, line, message):
    f = write(tmp_path / "e.jsonl", ECARE_EXPLAIN + line + "\n")
    with pytest.raises(GraphError, match=message):
        list(read_ecare(f))


def test_conceptnet_lines(tmp_path):
    f = write(tmp_path / "c.txt", 'eat_too_much,["stomach_ache", "gain weight"]\n\n'
                                  'jog,[]\nrain,["wet"]\n')
    assert list(read_conceptnet(f)) == [("eat too much", "stomach ache"),
                                        ("eat too much", "gain weight"), ("rain", "wet")]
    for bad in ('rain wet', 'rain,["wet"', ',["wet"]', 'rain,[1, 2]'):
        write(tmp_path / "bad.txt", 'rain,["wet"]\n' + bad + "\n")
        with pytest.raises(GraphError, match=r"bad\.txt:2: not a ConceptNet cause line"):
            list(read_conceptnet(tmp_path / "bad.txt"))


def test_missing_unreadable_and_empty_sources(tmp_path):
    with pytest.raises(GraphError, match=r"everyday source ecare='.*nope' does not exist"):
        EverydaySource("ecare", str(tmp_path / "nope"), 5).files()
    (tmp_path / "empty").mkdir()
    write(tmp_path / "empty" / "LICENSE.txt", "CC BY-SA")
    with pytest.raises(GraphError, match=r"holds no \*\.txt file"):
        EverydaySource("conceptnet", str(tmp_path / "empty"), 5).files()
    (tmp_path / "latin1.txt").write_bytes('caf\xe9,["x"]\n'.encode("latin-1"))
    with pytest.raises(GraphError, match="latin1.txt' is not UTF-8 text"):
        EverydaySource("conceptnet", str(tmp_path / "latin1.txt"), 5).pairs()


def test_parse_sources_and_weights():
    sources = parse_sources(["ecare=a", "conceptnet=b"], ["conceptnet=2"])
    assert [(s.name, s.weight) for s in sources] == [("ecare", everyday.DEFAULT_WEIGHTS["ecare"]),
                                                     ("conceptnet", 2)]
    assert [s.weight for s in parse_sources(["ecare=a", "conceptnet=b"], ["3"])] == [3, 3]
    for spec, weights, message in [
        (["copa=dev.xml"], [], "'copa' is not one of ecare, conceptnet .*evaluation set"),
        (["ecare="], [], r"`--everyday` \(='ecare='\) has to be NAME=PATH"),
        (["ecare=a"], ["0"], r"`--everyday-weight` \(='0'\)"),
        (["ecare=a"], ["wiki=2"], r"`--everyday-weight` \(='wiki=2'\)"),
        (["ecare=a"], ["x"], r"`--everyday-weight` \(='x'\)"),
        (["ecare=a"], ["conceptnet=2"], r"`--everyday-weight` \(=conceptnet=...\) names a source"),
    ]:
        with pytest.raises(GraphError, match=message):
            parse_sources(spec, weights)
    with pytest.raises(GraphError, match=r"weight of everyday source 'ecare' \(=True\)"):
        EverydaySource("ecare", "a", True)  # type: ignore[arg-type]


# ---------------------------------------------------------------- counting


def test_merge_counts_weights_edges_nodes_and_total():
    mined = count_lemma_pairs([(["rain"], ["wet"]), (["sun"], ["dry", "wet"])])
    daily = count_lemma_pairs([(["rain"], ["wet", "flood"])])
    merged = merge_counts([(mined, 1), (daily, 4)])
    G = counts_to_graph(merged, min_count=1)
    assert {(u, v): w for u, v, w in G.edges(data="weight")} == {
        ("rain", "wet"): 1 + 4, ("rain", "flood"): 4, ("sun", "dry"): 1, ("sun", "wet"): 1}
    assert merged.total == mined.total + 4 * daily.total == 11
    assert merged.pairs == 3  # pairs read, not weighted
    assert G.nodes["rain"]["cause_freq"] == 1 + 4 and G.nodes["rain"]["cause_weight"] == 1 + 8
    # weight 2 is the same as the part given twice
    twice = merge_counts([(daily, 1), (daily, 1)])
    double = merge_counts([(daily, 2)])
    assert (twice.weight.tolist(), twice.cause_freq.tolist()) == \
        (double.weight.tolist(), double.cause_freq.tolist())
    with pytest.raises(GraphError, match=r"a count weight \(=0\)"):
        merge_counts([(daily, 0)])


MINED = [(["rain", "cloud"], ["wet"]), (["rain"], ["wet", "cold"]), (["sun"], ["dry"]),
         (["sun"], ["dry", "warm"]), (["wind"], ["cold"])]
DAILY = [(["rain"], ["flood"]), (["rain"], ["wet"]), (["ice"], ["slip"])]


@pytest.mark.parametrize("base_min, min_count", [(1, 1), (1, 3), (2, 2), (2, 4)])
def test_add_counts_matches_a_rebuild_except_on_edges_the_base_pruned(base_min, min_count):
    mined, daily = count_lemma_pairs(MINED), merge_counts([(count_lemma_pairs(DAILY), 3)])
    base = counts_to_graph(mined, min_count=base_min)
    added = add_counts(base, daily, min_count)
    rebuilt = counts_to_graph(merge_counts([(mined, 1), (daily, 1)]), min_count=min_count)
    pruned_by_base = {(u, v) for u, v, w in counts_to_graph(mined, 1).edges(data="weight")
                      if w < base_min}
    got = {(u, v): w for u, v, w in added.edges(data="weight")}
    want = {(u, v): w for u, v, w in rebuilt.edges(data="weight")}
    assert {e: w for e, w in got.items() if e not in pruned_by_base} == \
        {e: w for e, w in want.items() if e not in pruned_by_base}
    for e in pruned_by_base:  # the rebuild also counts the mined pair the base had dropped
        assert got.get(e, 0) <= want.get(e, 0)
    assert added.graph["total"] == rebuilt.graph["total"]
    for lemma in added:
        for attr in ("cause_freq", "effect_freq", "cause_weight", "effect_weight"):
            assert added.nodes[lemma][attr] == rebuilt.nodes[lemma][attr], (lemma, attr)
    assert added.graph["min_count"] == max(base_min, min_count)
    assert all(added.degree(n) for n in added)  # no lemma left without an edge


def test_add_everyday_leaves_the_base_unchanged_and_records_the_sources(tmp_path):
    f = write(tmp_path / "c.txt", 'rain,["wet_road", "flood"]\nice,["slip"]\n')
    G = counts_to_graph(count_lemma_pairs(MINED), min_count=1)
    edges = sorted(G.edges(data="weight"))
    H = add_everyday(G, [EverydaySource("conceptnet", f, 5)], lemmatizer=Split())
    assert sorted(G.edges(data="weight")) == edges
    assert H["rain"]["wet"]["weight"] == 2 + 5 and H["ice"]["slip"]["weight"] == 5
    assert H.graph["everyday"] == "conceptnet:3x5" and H.graph["everyday_pairs"] == 3
    assert H.graph["pairs"] == len(MINED) + 3


def test_lemma_cache_is_read_back_and_keyed_by_content(tmp_path, monkeypatch):
    f = write(tmp_path / "c.txt", 'rain,["wet"]\n')
    monkeypatch.setattr(everyday, "Lemmatizer", lambda model, batch: Split())
    source = EverydaySource("conceptnet", f, 5)
    calls = Split.calls
    assert everyday.lemma_pairs(source, cache=tmp_path / "cache") == [(["rain"], ["wet"])]
    assert everyday.lemma_pairs(source, cache=tmp_path / "cache") == [(["rain"], ["wet"])]
    assert Split.calls == calls + 1
    write(tmp_path / "c.txt", 'rain,["mud"]\n')  # other content: another cache file
    assert everyday.lemma_pairs(source, cache=tmp_path / "cache") == [(["rain"], ["mud"])]
    assert len(list((tmp_path / "cache").glob("conceptnet-*.tsv"))) == 2


# ---------------------------------------------------------------- with spaCy, end to end


def test_build_counts_everyday_pairs_beside_the_bank(bank, tmp_path):
    f = write(tmp_path / "c.txt", 'hungry_baby,["crying"]\nheavy_rain,["flood"]\n')
    source = EverydaySource("conceptnet", f, 4)
    plain, _ = build_graph(BuildOptions((str(bank),), str(tmp_path / "w1"), min_count=1,
                                        progress=False))
    G, _ = build_graph(BuildOptions((str(bank),), str(tmp_path / "w2"), min_count=1,
                                    progress=False, everyday=(source,)))
    # the bank's hungry -> cry (2 pairs) plus one ConceptNet pair counted 4 times
    assert plain["hungry"]["cry"]["weight"] == 2 and G["hungry"]["cry"]["weight"] == 2 + 4
    assert G["rain"]["flood"]["weight"] == plain["rain"]["flood"]["weight"] + 4
    assert G.graph["everyday"] == "conceptnet:2x4"
    # (hungry, baby) x (cry) and (heavy, rain) x (flood): 4 combinations, each counted 4 times
    assert G.graph["total"] == plain.graph["total"] + 4 * 4
    assert list((tmp_path / "w2" / "everyday").glob("conceptnet-*.tsv"))


def run(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="dpc")
    add_graph_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return int(args.func(args))


def test_cli_add_pairs(small_graph, tmp_path, capsys):
    save_graph(small_graph, tmp_path / "g.ceg")
    f = write(tmp_path / "ecare.jsonl",
              json.dumps({"cause": "The baby was hungry.", "effect": "The baby cried."}) + "\n")
    out = tmp_path / "h.ceg"
    assert run(["graph", "add-pairs", "--graph", str(tmp_path / "g.ceg"), "--everyday",
                f"ecare={f}", "--everyday-weight", "3", "--out", str(out)]) == 0
    assert "ecare:1x3" in capsys.readouterr().out
    H = load_graph(out)
    assert H["hungry"]["cry"]["weight"] == 9 + 3 and H["baby"]["cry"]["weight"] == 1 + 3
    assert H.graph["everyday"] == "ecare:1x3"
    assert run(["graph", "add-pairs", "--graph", str(tmp_path / "g.ceg"), "--everyday",
                "copa=x.xml", "--out", str(tmp_path / "x.ceg")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("dpc graph: error: everyday source 'copa'") and "\n" not in err
    assert run(["graph", "build", "bank", "--out", str(tmp_path / "y.ceg"),
                "--everyday-weight", "3"]) == 2
    assert "needs at least one `--everyday NAME=PATH`" in capsys.readouterr().err


@pytest.mark.skipif(not (DATA / "ecare").is_dir() or not (DATA / "conceptnet").is_dir(),
                    reason="../shared/data/ecare or conceptnet is not present")
def test_shared_data_slices_read(tmp_path):
    # the first 200 rows of both e-CARE files: the reasoning file's gold pairs are the
    # explanation file's pairs (same index, same texts)
    for name in ("causal_reasoning_train.jsonl", "explanation_generation_train.jsonl"):
        lines = (DATA / "ecare" / name).read_text(encoding="utf-8").splitlines()[:200]
        write(tmp_path / name, "\n".join(lines) + "\n")
    reasoning = list(read_ecare(tmp_path / "causal_reasoning_train.jsonl"))
    explained = list(read_ecare(tmp_path / "explanation_generation_train.jsonl"))
    assert reasoning == explained and len(reasoning) == 200
    with open(DATA / "conceptnet" / "conceptnet_cause_sets.txt", encoding="utf-8") as handle:
        head = [next(handle) for _ in range(50)]
    pairs = list(read_conceptnet(write(tmp_path / "cn.txt", "".join(head))))
    assert len(pairs) > 50 and all(c and e and "_" not in c + e for c, e in pairs)
    assert pairs[0] == ("acting in play", "applause")
