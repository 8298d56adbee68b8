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
    these tests check; the defaults add a plain row, sampled-answer keywords, the verifier's
    choice of keywords, its rerank and rejection, keywords in their own parts of speech, and
    limit templates."""
    return GuidedOptions(**{"rank": "weight", "rerank": "nll", "plain_row": False,
                            "template_limit": None, "verify": False, "verify_keywords": False,
                            "sampled": 0, "parts_of_speech": False, **values})


@pytest.fixture(scope="session")
def generator() -> GuidedGenerator:
    m = placeholder_model()
    return GuidedGenerator(m.model, m.tokenizer, toy_graph(), lemmatizer=toy_lemmatizer,
                           verifier=None)


def bert2bert(positions: int = 64, seed: int = 0) -> tuple[object, object]:
    """``(model, tokenizer)``: a tiny untrained bert2bert on the placeholder's WordPiece
    vocabulary, the bundled generator's architecture, whose learned position tables hold
    ``positions`` tokens (the bundled one's 512): what an over-long input crashes on."""
    import torch
    from transformers import BertConfig, BertLMHeadModel, BertModel, EncoderDecoderModel

    tokenizer = placeholder_model().tokenizer

    def config(**values: object) -> BertConfig:
        return BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=1,
                          num_attention_heads=2, intermediate_size=64,
                          max_position_embeddings=positions, pad_token_id=tokenizer.pad_token_id,
                          **values)

    torch.manual_seed(seed)
    model = EncoderDecoderModel(
        encoder=BertModel(config(), add_pooling_layer=False),
        decoder=BertLMHeadModel(config(is_decoder=True, add_cross_attention=True))).eval()
    for settings in (model.config, model.generation_config):
        settings.decoder_start_token_id = tokenizer.cls_token_id
        settings.eos_token_id = tokenizer.sep_token_id
        settings.pad_token_id = tokenizer.pad_token_id
    return model, tokenizer


@pytest.fixture(scope="session")
def bert2bert_generator() -> GuidedGenerator:
    """The pipeline over :func:`bert2bert` (64 positions) and the toy graph."""
    model, tokenizer = bert2bert()
    return GuidedGenerator(model, tokenizer, toy_graph(), lemmatizer=toy_lemmatizer, verifier=None)
