"""A tiny untrained generator and a hand-made graph behind the service: fast, no download."""

from __future__ import annotations

import networkx as nx
import pytest

from guided_generation.pipeline import GuidedGenerator
from serve.service import Service
from train.models import LoadedModel, placeholder_model

#: Where the tests' HTTP client says it is: a Host the loopback server answers.
LOCAL = "http://127.0.0.1:7860"

LEMMAS = {"babies": "baby", "baby": "baby", "cry": "cry", "rain": "rain", "rained": "rain"}


def toy_lemmatizer(text: str) -> list[str]:
    """Content lemmas by table lookup (the real one is spaCy's; here only the plumbing counts)."""
    words = [w.strip(".,!?").lower() for w in text.split()]
    return list(dict.fromkeys(LEMMAS[w] for w in words if w in LEMMAS))


def toy_graph() -> nx.DiGraph:
    G = nx.DiGraph()
    G.add_weighted_edges_from([("hungry", "cry", 9), ("tired", "cry", 6), ("love", "baby", 4),
                               ("cry", "tear", 5), ("rain", "wet", 8), ("storm", "rain", 4)])
    G.graph["total"] = 36
    for node in G:
        G.nodes[node]["cause_weight"] = G.out_degree(node, weight="weight")
        G.nodes[node]["effect_weight"] = G.in_degree(node, weight="weight")
    return G


def tiny_loader(name: str) -> LoadedModel:
    """The constraints tab's other models: the tiny one under any name."""
    return placeholder_model(seed=1)


@pytest.fixture(scope="session")
def generator() -> GuidedGenerator:
    m = placeholder_model()
    return GuidedGenerator(m.model, m.tokenizer, toy_graph(), lemmatizer=toy_lemmatizer,
                                verifier=None)


@pytest.fixture()
def service(generator: GuidedGenerator) -> Service:
    return Service(generator, max_queue=4, loader=tiny_loader, models=["tiny"])
