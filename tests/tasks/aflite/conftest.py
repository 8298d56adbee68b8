"""A tiny BERT encoder built from code (MiniLM's tokenizer), and small dataset files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

WINOGRANDE_L = Path(__file__).resolve().parents[3] / ".." / "shared" / "data" / "winogrande" / \
    "train_l.jsonl"


def build_tiny_bert(folder: Path, hidden: int = 32, layers: int = 2) -> Path:
    """A BERT of ``layers`` layers ``hidden`` wide with random weights (seed 0) and MiniLM's
    tokenizer, saved as a Hugging Face folder in ``folder``."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertModel

    from train.models import minilm_tokenizer_path

    tokenizer = AutoTokenizer.from_pretrained(str(minilm_tokenizer_path()), local_files_only=True)
    torch.manual_seed(0)
    config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=hidden,
                        num_hidden_layers=layers, num_attention_heads=2,
                        intermediate_size=2 * hidden, max_position_embeddings=128)
    BertModel(config).save_pretrained(str(folder), safe_serialization=True)
    tokenizer.save_pretrained(str(folder))
    return folder


@pytest.fixture(scope="session")
def tiny_encoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 2-layer, 32-wide BERT with random weights, saved as a Hugging Face folder."""
    return build_tiny_bert(tmp_path_factory.mktemp("tiny-encoder"))


def winogrande_lines(count: int) -> list[dict]:
    """``count`` WinoGrande problems made up in twins (opposite answers)."""
    names = [("Ian", "Dennis"), ("Sarah", "Maria"), ("the cup", "the jug"), ("Tom", "Ann")]
    lines = []
    for i in range(count):
        a, b = names[i % len(names)]
        word = ("tall", "short")[i % 2]
        lines.append({"qID": f"Q{i // 2}-{i % 2 + 1}",
                      "sentence": f"{a} looked up at {b} because _ was {word} number {i // 2}.",
                      "option1": a, "option2": b, "answer": str(2 - i % 2)})
    return lines


@pytest.fixture
def winogrande_file(tmp_path: Path) -> Path:
    path = tmp_path / "wg.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in winogrande_lines(40)))
    return path
