"""`dpc swag oversample --spark` in local[2]: the local path's pool, line for line, and a killed
job resumed from its committed partitions."""

from __future__ import annotations

import json
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from cli import main
from dpc_spark import part_path
from tasks.swag.oversample import PARTS, OversampleOptions, oversample, oversample_spark, read_pool

SAMPLING = ["--per-context", "3", "--max-new-tokens", "4", "--max-rounds", "1",
            "--contexts-per-batch", "2", "--device", "cpu"]


@pytest.fixture(scope="module")
def tiny_lm(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny random GPT-J (its output layer has a bias) with MiniLM's tokenizer, biased towards
    its end token so that most endings end within a few tokens."""
    import torch
    from transformers import AutoTokenizer, GPTJConfig, GPTJForCausalLM

    from train.models import minilm_tokenizer_path

    folder = tmp_path_factory.mktemp("tiny_gptj")
    tokenizer = AutoTokenizer.from_pretrained(str(minilm_tokenizer_path()), local_files_only=True)
    tokenizer.eos_token = tokenizer.sep_token
    torch.manual_seed(0)
    model = GPTJForCausalLM(GPTJConfig(
        vocab_size=tokenizer.vocab_size, n_embd=16, n_layer=1, n_head=2, rotary_dim=4,
        n_positions=256, bos_token_id=tokenizer.cls_token_id,
        eos_token_id=tokenizer.sep_token_id, pad_token_id=tokenizer.pad_token_id))
    with torch.no_grad():
        model.lm_head.bias[tokenizer.sep_token_id] = 9.0
    model.save_pretrained(str(folder))
    tokenizer.save_pretrained(str(folder))
    return folder


@pytest.fixture(scope="module")
def contexts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Nine contexts (five batches of two), one of them too short to sample."""
    path = tmp_path_factory.mktemp("ctx") / "ctx.jsonl"
    rows = [{"ind": i, "ctx": f"the man walks to the car number {i} and he" if i != 4 else "he",
             "endings": ["throws a ball far .", "opens the door ."], "label": 1}
            for i in range(9)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_spark_samples_the_local_pool(spark: Any, contexts: Path, tiny_lm: Path, tmp_path: Path,
                                      capsys) -> None:
    argv = ["swag", "oversample", str(contexts), "--model", str(tiny_lm), *SAMPLING]
    assert main([*argv, "--out", str(tmp_path / "local")]) == 0
    local = json.loads(capsys.readouterr().out)
    assert main([*argv, "--out", str(tmp_path / "spark"), "--spark", "local[2]",
                 "--partitions", "3"]) == 0
    summary = json.loads(capsys.readouterr().out)
    pool = read_pool(tmp_path / "spark")
    assert pool == read_pool(tmp_path / "local")  # every line, in the input's order
    assert len(pool) == 8 and sum(len(e.endings) for e in pool) > 8
    assert {k: v for k, v in summary.items() if k != "this_run"} == \
        {k: v for k, v in local.items() if k != "this_run"}
    assert summary["this_run"]["kept"] == local["this_run"]["kept"]
    assert not (tmp_path / "spark" / PARTS).exists()  # folded into the pool, then removed


def _load(model: str) -> tuple[Any, Any]:
    from tasks.swag.ending_model import load_ending_model

    return load_ending_model(model)


def test_a_killed_job_resumes_from_its_parts(spark: Any, contexts: Path, tiny_lm: Path,
                                             tmp_path: Path, monkeypatch) -> None:
    from tasks.datasets import read_multiple_choice
    from tasks.swag import oversample as module

    items = read_multiple_choice(contexts)
    options = OversampleOptions(per_context=3, max_new_tokens=4, max_rounds=1,
                                contexts_per_batch=2)
    run = partial(oversample_spark, items, tmp_path / "pool", partial(_load, str(tiny_lm)),
                  options, model_name="tiny", partitions=3, progress=False)
    fold = module._fold_finished_parts
    monkeypatch.setattr(module, "_fold_finished_parts", lambda folder: None)
    run()  # killed before its parts were folded into the pool
    monkeypatch.setattr(module, "_fold_finished_parts", fold)
    parts = tmp_path / "pool" / PARTS
    part_path(parts, 1).unlink()  # ... and before partition 1 was committed
    # mark partition 0's lines, to see that it is not sampled again
    marked = [{**json.loads(line), "drawn": 99}
              for line in part_path(parts, 0).read_text().splitlines()]
    part_path(parts, 0).write_text("".join(json.dumps(r) + "\n" for r in marked))
    # the local path does not sample beside an unfinished Spark run
    with pytest.raises(module.TaskError, match="unfinished Spark run: resume it with --spark"):
        oversample(items, tmp_path / "pool", *_load(str(tiny_lm)), options, model_name="tiny",
                   progress=False)
    summary = run()
    assert summary["sampled_this_run"] == 8 and not parts.exists()
    resumed = read_pool(tmp_path / "pool")
    assert [e.drawn for e in resumed[:len(marked)]] == [99] * len(marked)  # kept, not redone
    local = tmp_path / "local"
    oversample(items, local, *_load(str(tiny_lm)), options, model_name="tiny", progress=False)
    assert [replace(e, drawn=0) for e in resumed] == \
        [replace(e, drawn=0) for e in read_pool(local)]
