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


# ---------------------------------------------------------------------- the task tabs' models


@pytest.fixture(scope="session")
def tiny_bert(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A 1-layer, 16-wide BERT with random weights and MiniLM's tokenizer, saved as a Hugging
    Face folder (the AFLite tab's encoder, the INLI classifier's)."""
    from tests.tasks.aflite.conftest import build_tiny_bert

    return str(build_tiny_bert(tmp_path_factory.mktemp("tiny-bert"), hidden=16, layers=1))


@pytest.fixture(scope="session")
def tiny_classifier(tiny_bert: str):
    """An untrained 4-way INLI classifier over :func:`tiny_bert`."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    from tasks.inli.classifier import InliClassifier
    from train.cross_encoder import CrossEncoder

    torch.manual_seed(0)
    encoder = AutoModel.from_pretrained(tiny_bert, local_files_only=True)
    tokenizer = AutoTokenizer.from_pretrained(tiny_bert, local_files_only=True)
    return InliClassifier(CrossEncoder(encoder, tokenizer, mode="pair", num_labels=4).eval(),
                          hypothesis_only=False)


@pytest.fixture(scope="session")
def tiny_variant_generator(tiny_lm):
    """An untrained variant generator: the tiny causal LM (tests/conftest.py) as it is."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from tasks.inli.hypotheses import VariantGenerator

    model = AutoModelForCausalLM.from_pretrained(str(tiny_lm), local_files_only=True)
    tokenizer = AutoTokenizer.from_pretrained(str(tiny_lm), local_files_only=True)
    tokenizer.eos_token = tokenizer.sep_token  # the LM's EOS (WordPiece names none)
    return VariantGenerator(model, tokenizer, {})


@pytest.fixture(scope="session")
def tiny_ending_model(tmp_path_factory: pytest.TempPathFactory):
    """(model, tokenizer): tests/tasks/swag's tiny ending model (a 1-layer T5, untrained,
    biased towards EOS so that most samples end within a few tokens)."""
    from tests.tasks.swag.conftest import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("swag-tok"))


def write_pool(folder, contexts: int = 12):
    """A pool folder of ``dpc swag oversample``'s format: ``contexts`` contexts, each a gold
    ending and 4 sampled ones (written by hand: the committee only reads them)."""
    from pathlib import Path

    from tasks.swag.oversample import POOL, PoolEntry

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    golds = ["he opens the door .", "she sits down on the chair .", "he throws the ball far ."]
    others = ["a woman cooks eggs in a pan .", "the car drives away quickly .",
              "she is talking to the man .", "he picks up a ball .", "then it rains all day ."]
    lines = []
    for i in range(contexts):
        endings = [others[(i + j) % len(others)] for j in range(4)]
        lines.append(PoolEntry(i, f"a man walks to the car number {i} . he", "x",
                               golds[i % len(golds)], -6.0 - i % 3, 7, endings,
                               [-9.0 - j - i % 2 for j in range(4)], [8, 9, 7, 8], [], 4
                               ).to_json())
    (folder / POOL).write_text("".join(line + "\n" for line in lines))
    return folder
