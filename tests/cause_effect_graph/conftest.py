"""Shared fixtures: a tiny CausalBank, a small hand-made graph, paths to the shared data, a tiny
fake data folder for the part-of-speech profile."""

from __future__ import annotations

import json
import lzma
from pathlib import Path

import networkx as nx
import pytest

from causal_mining.pair import CausalPair
from causal_mining.shards import write_pairs

ROOT = Path(__file__).resolve().parents[2]
COPA_DEV = ROOT.parent / "shared" / "data" / "copa" / "copa-dev.xml"

PAIRS = [
    ("the babies were hungry", "the babies cried"),
    ("the baby was tired", "the baby cried loudly"),
    ("the baby was hungry", "the baby cried"),
    ("heavy rain fell", "the streets were wet"),
    ("it rained all night", "the river flooded"),
    ("the storm came", "heavy rain fell on the town"),
]


def pair(cause: str, effect: str, i: int) -> CausalPair:
    return CausalPair(cause, effect, "because", "EPC", "EXPLANATION", f"t:{i}",
                      f"{effect} because {cause}")


@pytest.fixture
def bank(tmp_path: Path) -> Path:
    folder = tmp_path / "bank" / "causalbank"
    write_pairs(folder / "causalbank-00000.tsv", [pair(c, e, i) for i, (c, e) in
                                                  enumerate(PAIRS[:4])])
    write_pairs(folder / "causalbank-00001.tsv", [pair(c, e, i) for i, (c, e) in
                                                  enumerate(PAIRS[4:])])
    return tmp_path / "bank"


@pytest.fixture
def small_graph() -> nx.DiGraph:
    """hungry→cry 9, tired→cry 6, hungry→baby 2, love→baby 4, cry→tear 5, baby→cry 1."""
    G = nx.DiGraph()
    G.add_weighted_edges_from([("hungry", "cry", 9), ("tired", "cry", 6), ("hungry", "baby", 2),
                               ("love", "baby", 4), ("cry", "tear", 5), ("baby", "cry", 1)])
    for n in G:
        G.nodes[n]["cause_weight"] = sum(d["weight"] for d in G.succ[n].values())
        G.nodes[n]["effect_weight"] = sum(d["weight"] for d in G.pred[n].values())
        G.nodes[n]["cause_freq"] = G.nodes[n]["effect_freq"] = 1
    G.graph["total"] = 27
    G.graph["pairs"] = 27
    return G


def bundled_or_skip() -> nx.DiGraph:
    from cause_effect_graph.store import DEFAULT_GRAPH, default_graph

    if not DEFAULT_GRAPH.is_file():
        pytest.skip(f"the bundled graph {DEFAULT_GRAPH} is not built in this checkout")
    return default_graph()


# ---------------------------------------------------------------- part-of-speech sources

START = "*** START OF THIS PROJECT GUTENBERG EBOOK A BOOK ***"
END = "*** END OF THIS PROJECT GUTENBERG EBOOK A BOOK ***"


def write_xz(path: Path, lines: list[str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(lzma.compress(("\n".join(lines) + "\n").encode("utf-8")))
    return path


def fake_data(root: Path) -> Path:
    write_xz(root / "gutenberg" / "one.txt.xz", [START, "Her purse was empty.", END,
                                                  "Project Gutenberg licence terms apply."])
    write_xz(root / "gutenberg" / "two.txt.xz", ["The hungry baby cried."])
    (root / "ecare").mkdir()
    rows = [{"cause": "It rained all night.", "effect": "The streets were wet."},
            {"cause": "It rained all night.", "effect": "The river flooded."}]
    (root / "ecare" / "explanation_generation_train.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    (root / "conceptnet").mkdir()
    (root / "conceptnet" / "conceptnet_cause_sets.txt").write_text(
        'heavy_rain,["flood", "wet_ground"]\n', encoding="utf-8")
    return root
