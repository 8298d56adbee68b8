"""Fixtures shared by several test packages: a tiny causal LM (no download, no data), and one
local Spark session for every Spark test (starting one takes about 10 s)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import torch


@pytest.fixture(scope="session")
def tiny_lm(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny random Llama-style causal LM with MiniLM's (uncased WordPiece) tokenizer."""
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    from train.models import minilm_tokenizer_path

    folder = tmp_path_factory.mktemp("tiny_lm")
    tokenizer = AutoTokenizer.from_pretrained(str(minilm_tokenizer_path()), local_files_only=True)
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=tokenizer.vocab_size, hidden_size=16, intermediate_size=32,
                         num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=1,
                         max_position_embeddings=256, bos_token_id=tokenizer.cls_token_id,
                         eos_token_id=tokenizer.sep_token_id, pad_token_id=tokenizer.pad_token_id)
    LlamaForCausalLM(config).save_pretrained(str(folder))
    tokenizer.save_pretrained(str(folder))
    return folder


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """One small local Spark session (two cores, no UI), shared by every Spark test."""
    pytest.importorskip("pyspark", reason="pyspark is not installed")
    from pyspark.sql import SparkSession

    from dpc_spark import spark_python_env

    os.environ.update(spark_python_env())
    session = (
        SparkSession.builder.master("local[2,4]")  # 4 tries a task, as a cluster
        .appName("dpc-test")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", "1g")
        .getOrCreate()
    )
    yield session
    session.stop()
