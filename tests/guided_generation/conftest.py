"""A tiny untrained generator and a hand-made graph: the pipeline's mechanics, no corpus needed."""

from __future__ import annotations

import networkx as nx
import pytest

from guided_generation.options import GuidedOptions
from guided_generation.pipeline import GuidedGenerator
from train.models import placeholder_model

LEMMAS = {"babies": "baby", "baby": "baby", "cry": "cry", "cried": "cry", "rained": "rain",
          "rain": "rain", "streets": "street", "wet": "wet"}


def toy_lemmatizer(text: str) -> list[str]:
    """Content lemmas by table lookup (the real one is spaCy's; here only the plumbing counts)."""
    words = [w.strip(".,!?").lower() for w in text.split()]
    return list(dict.fromkeys(LEMMAS[w] for w in words if w in LEMMAS))


def toy_graph() -> nx.DiGraph:
    G = nx.DiGraph()
    G.add_weighted_edges_from([
        ("hungry", "cry", 9), ("tired", "cry", 6), ("hungry", "baby", 2), ("love", "baby", 4),
        ("pain", "cry", 3), ("cry", "tear", 5), ("cry", "wake", 2), ("rain", "wet", 8),
        ("rain", "flood", 3), ("storm", "rain", 4),
    ])
    G.graph["total"] = 46
    for node in G:
        G.nodes[node]["cause_weight"] = G.out_degree(node, weight="weight")
        G.nodes[node]["effect_weight"] = G.in_degree(node, weight="weight")
    return G


def paper_options(**values: object) -> GuidedOptions:
    """The paper's pipeline (graph edge counts, NLL rerank, keyword rows only), whose mechanics
    these tests check; the defaults add a plain row, rerank by MMR and limit templates."""
    return GuidedOptions(**{"rank": "weight", "rerank": "nll", "plain_row": False,
                            "template_limit": None, **values})


@pytest.fixture(scope="session")
def generator() -> GuidedGenerator:
    m = placeholder_model()
    return GuidedGenerator(m.model, m.tokenizer, toy_graph(), lemmatizer=toy_lemmatizer)
