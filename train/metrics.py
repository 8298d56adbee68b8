"""Teacher-forced metrics of a seq2seq generator: perplexity, word accuracy, sequence log-probs.

*Perplexity* is ``exp`` of the mean negative log-likelihood per target token (EOS included), and
*word accuracy* the share of target tokens that are the model's argmax given the gold prefix —
the two dev metrics of the paper's Table 2 (Sockeye's ``perplexity`` and ``accuracy``, which, as
here, count subword tokens).

Examples
--------
>>> import torch
>>> batch = collate([([5, 6, 1], [7, 1]), ([5, 1], [8, 9, 1])], pad_id=0)
>>> batch["input_ids"].tolist(), batch["labels"].tolist()
([[5, 6, 1], [5, 1, 0]], [[7, 1, -100], [8, 9, 1]])
>>> DevMetrics(nll_sum=6.0, tokens=3, correct=1).perplexity
7.38905609893065
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from train.tokenizer import prompt_start_ids, target_ids

__all__ = ["DevMetrics", "causal_log_probs", "collate", "continuation_log_probs", "evaluate",
           "length_buckets", "sequence_log_probs"]


def collate(pairs: Sequence[tuple[Sequence[int], Sequence[int]]], pad_id: int) -> dict[str, torch.Tensor]:
    """Pad (source ids, target ids) pairs to the longest of the batch (dynamic padding).

    Labels are padded with -100 (ignored by the loss); the model shifts them right itself.
    """
    src_len = max(len(s) for s, _ in pairs)
    tgt_len = max(len(t) for _, t in pairs)
    input_ids = torch.full((len(pairs), src_len), pad_id, dtype=torch.long)  # (batch, src)
    labels = torch.full((len(pairs), tgt_len), -100, dtype=torch.long)  # (batch, tgt)
    for row, (src, tgt) in enumerate(pairs):
        input_ids[row, : len(src)] = torch.tensor(src, dtype=torch.long)
        labels[row, : len(tgt)] = torch.tensor(tgt, dtype=torch.long)
    return {"input_ids": input_ids, "attention_mask": (input_ids != pad_id).long(), "labels": labels}


@dataclass(frozen=True)
class DevMetrics:
    """Sums over target tokens; the derived metrics are properties."""

    nll_sum: float
    tokens: int
    correct: int
    words: int = 0  # target words (+1 per end token), when known: for word_perplexity

    @property
    def loss(self) -> float:
        return self.nll_sum / max(self.tokens, 1)

    @property
    def perplexity(self) -> float:
        return math.exp(min(self.loss, 50.0))

    @property
    def word_accuracy(self) -> float:
        return self.correct / max(self.tokens, 1)

    @property
    def word_perplexity(self) -> float:
        """``exp`` of the NLL per target *word* (end token counted as one): comparable across
        tokenizers, unlike :attr:`perplexity`. ``nan`` when ``words`` is unknown.

        >>> round(DevMetrics(nll_sum=6.0, tokens=3, correct=1, words=2).word_perplexity, 3)
        20.086
        """
        if not self.words:
            return math.nan
        return math.exp(min(self.nll_sum / self.words, 50.0))


def _token_stats(model: Any, batch: dict[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-token log-prob of the gold label and whether it is the argmax; both (batch, tgt), on
    ``model.device`` (the batch is moved there: a no-op on the CPU)."""
    batch = {name: tensor.to(model.device) for name, tensor in batch.items()}
    labels = batch["labels"]
    # decoder inputs built as the model would from labels, without computing an unused loss
    # (EncoderDecoderModel also warns on every call that gets labels)
    decoder_input_ids = model.prepare_decoder_input_ids_from_labels(labels=labels)
    logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"],
                   decoder_input_ids=decoder_input_ids).logits  # (batch, tgt, vocab)
    safe = labels.clamp(min=0)
    logits = logits.float()
    # log_softmax at the gold label only: one read of the logits, no (batch, tgt, vocab) output
    gold = logits.gather(-1, safe.unsqueeze(-1)).squeeze(-1) - torch.logsumexp(logits, dim=-1)
    hit = logits.argmax(-1) == labels  # (batch, tgt)
    mask = labels != -100
    return gold * mask, hit & mask


@torch.no_grad()
def evaluate(model: Any, batches: Iterable[dict[str, torch.Tensor]]) -> DevMetrics:
    """Perplexity and word accuracy of ``model`` over collated batches (eval mode, no dropout)."""
    was_training = model.training
    model.eval()
    nll = 0.0
    tokens = correct = 0
    try:
        for batch in batches:
            gold, hit = _token_stats(model, batch)
            nll -= float(gold.sum())
            tokens += int((batch["labels"] != -100).sum())
            correct += int(hit.sum())
    finally:
        model.train(was_training)
    return DevMetrics(nll, tokens, correct)


@torch.no_grad()
def sequence_log_probs(
    model: Any, tokenizer: Any, sources: Sequence[str], targets: Sequence[str], batch_size: int = 64,
    end_id: int | None = None,
) -> list[float]:
    """Total log-probability of each target (EOS included) given its source.

    A causal LM (no encoder) scores the target as the continuation of its source: see
    :func:`causal_log_probs`, which ``end_id`` is passed to.

    >>> from train.generator import build_generator
    >>> from train.options import GeneratorConfig
    >>> from train.tokenizer import train_tokenizer
    >>> import tempfile
    >>> tok = train_tokenizer(["a b c d e f"] * 20, tempfile.mkdtemp(), vocab_size=12)
    >>> model = build_generator(GeneratorConfig(tok.vocab_size, 16, 32, 1, num_heads=2)).eval()
    >>> lp = sequence_log_probs(model, tok, ["a b", "a b"], ["c", "c d"])
    >>> lp[0] < 0 and lp[1] < lp[0]
    True
    """
    model.eval()
    if not getattr(model.config, "is_encoder_decoder", False):
        return causal_log_probs(model, tokenizer, sources, targets, end_id, batch_size)
    out: list[float] = []
    for start in range(0, len(sources), batch_size):
        src = tokenizer(list(sources[start : start + batch_size]))["input_ids"]
        tgt = target_ids(tokenizer, targets[start : start + batch_size])
        batch = collate(list(zip(src, tgt)), tokenizer.pad_token_id)
        gold, _ = _token_stats(model, batch)
        out.extend(gold.sum(-1).tolist())
    return out


@torch.no_grad()
def causal_log_probs(
    model: Any, tokenizer: Any, prompts: Sequence[str], targets: Sequence[str],
    end_id: int | None = None, batch_size: int = 64,
) -> list[float]:
    """Total log-probability of each target as the continuation of its prompt, under a causal LM.

    The target is tokenised after a space (``prompt + " " + target``, as the model writes it)
    and followed by ``end_id`` (default: the tokenizer's EOS); only target tokens count. The
    prompt starts with the tokenizer's BOS where it adds one (:func:`train.tokenizer.
    prompt_start_ids`: Gemma), as in a decode.
    Rows are right-padded, so positions stay those of an unpadded prompt.

    >>> import torch
    >>> from transformers import GPT2Config, GPT2LMHeadModel
    >>> _ = torch.manual_seed(0)
    >>> model = GPT2LMHeadModel(GPT2Config(vocab_size=30, n_embd=8, n_layer=1, n_head=2)).eval()
    >>> class Tok:
    ...     eos_token_id = 0
    ...     def __call__(self, texts, add_special_tokens=False):
    ...         return {"input_ids": [[3 + len(w) for w in t.split()] for t in texts]}
    >>> a, b = causal_log_probs(model, Tok(), ["a bb", "a bb"], ["c", "c dd"])
    >>> a < 0 and b < a
    True
    """
    model.eval()
    end = tokenizer.eos_token_id if end_id is None else end_id
    pad = 0 if end is None else end
    bos = prompt_start_ids(tokenizer)
    out: list[float] = []
    for start in range(0, len(prompts), batch_size):
        chunk = slice(start, start + batch_size)
        tgt = tokenizer([" " + t.strip() for t in targets[chunk]], add_special_tokens=False)["input_ids"]
        tails = [list(t) + ([end] if end is not None else []) for t in tgt]
        if len(set(prompts[chunk])) == 1 and len(tails) > 1 and all(tails):
            # One prompt for the whole chunk (a reranker's, a COPA item's): read it once.
            shared = bos + tokenizer([prompts[start]], add_special_tokens=False)["input_ids"][0]
            if shared:
                out.extend(_shared_prompt_log_probs(model, list(shared), tails, pad))
                continue
        src = tokenizer(list(prompts[chunk]), add_special_tokens=False)["input_ids"]
        rows = [(bos + list(s), t) for s, t in zip(src, tails)]
        width = max(len(s) + len(t) for s, t in rows)
        ids = torch.full((len(rows), width), pad, dtype=torch.long, device=model.device)
        mask = torch.zeros_like(ids)
        gold = torch.zeros_like(ids, dtype=torch.bool)
        for r, (s, t) in enumerate(rows):
            ids[r, : len(s) + len(t)] = torch.tensor(s + t, dtype=torch.long)
            mask[r, : len(s) + len(t)] = 1
            gold[r, len(s): len(s) + len(t)] = True
        logits = model(input_ids=ids, attention_mask=mask).logits.float()  # (B, L, V)
        logp = logits[:, :-1].log_softmax(-1).gather(-1, ids[:, 1:, None])[..., 0]  # (B, L-1)
        out.extend((logp * gold[:, 1:]).sum(-1).tolist())
    return out


def continuation_log_probs(model: Any, tokenizer: Any, prompt: str,
                           continuations: Sequence[Sequence[int]], batch_size: int = 64
                           ) -> list[float]:
    """Total log-probability of each token sequence as the continuation of ``prompt``, under a
    causal LM: the tokens exactly as given (a decode's own, end token included), the prompt run
    once and its cache shared by every continuation of a batch (after the tokenizer's BOS
    where it adds one, as :func:`causal_log_probs`).

    >>> import torch
    >>> from transformers import GPT2Config, GPT2LMHeadModel
    >>> _ = torch.manual_seed(0)
    >>> model = GPT2LMHeadModel(GPT2Config(vocab_size=30, n_embd=8, n_layer=1, n_head=2)).eval()
    >>> class Tok:
    ...     eos_token_id = 0
    ...     def __call__(self, texts, add_special_tokens=False):
    ...         return {"input_ids": [[3 + len(w) for w in t.split()] for t in texts]}
    >>> a, b = continuation_log_probs(model, Tok(), "a bb", [[5, 0], [5, 6, 0]])
    >>> a < 0 and b < a
    True
    >>> text = causal_log_probs(model, Tok(), ["a bb"], ["cc"])[0]  # "cc" is token 5, then EOS
    >>> abs(a - text) < 1e-5
    True
    """
    if getattr(model.config, "is_encoder_decoder", False):
        raise ValueError("continuation_log_probs needs a causal LM (no encoder)")
    model.eval()
    head = prompt_start_ids(tokenizer) + tokenizer([prompt], add_special_tokens=False)["input_ids"][0]
    if not head:
        raise ValueError("continuation_log_probs needs a non-empty prompt")
    pad = tokenizer.eos_token_id or 0
    if not all(continuations):
        raise ValueError("an empty continuation has no log-probability to score")
    out: list[float] = [0.0] * len(continuations)
    for batch in length_buckets([len(t) for t in continuations], batch_size):
        values = _shared_prompt_log_probs(model, list(head), [list(continuations[i]) for i in batch],
                                          pad)
        for i, v in zip(batch, values):
            out[i] = v
    return out


def length_buckets(lengths: Sequence[int], batch_size: int, waste: float = 0.2) -> list[list[int]]:
    """Indices of ``lengths`` in batches of similar length: sorted by length, a batch closes
    at ``batch_size`` items or when padding it to its longest would waste more than ``waste``
    of its positions. Padding is computed for nothing; outputs of a beam search vary from a
    few tokens to ``max_new_tokens``.

    >>> length_buckets([3, 12, 4, 11, 3], batch_size=8)
    [[0, 4, 2], [3, 1]]
    """
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    batches: list[list[int]] = []
    current: list[int] = []
    total = 0
    for i in order:
        n = lengths[i]
        if current and (len(current) == batch_size
                        or (len(current) + 1) * n - (total + n) > waste * (len(current) + 1) * n):
            batches.append(current)
            current, total = [], 0
        current.append(i)
        total += n
    if current:
        batches.append(current)
    return batches


def _shared_prompt_log_probs(model: Any, prompt: list[int], tails: list[list[int]],
                             pad: int) -> list[float]:
    """:func:`causal_log_probs` of several targets after one prompt: the prompt is run once, its
    key/value cache repeated for every target, and only the targets' tokens are run after it
    (``P + B*T`` token positions instead of ``B*(P + T)``; the same numbers up to rounding)."""
    with torch.inference_mode():
        head = model(input_ids=torch.tensor([prompt], device=model.device), use_cache=True)
        first = head.logits[0, -1].float().log_softmax(-1)  # (V,): each target's first token
        cache = getattr(head, "cache", None)
        cache = cache if cache is not None else head.past_key_values
        cache.batch_repeat_interleave(len(tails))
        width = max(len(t) for t in tails)
        ids = torch.full((len(tails), width), pad, dtype=torch.long, device=model.device)
        mask = torch.zeros_like(ids)
        for r, t in enumerate(tails):
            ids[r, : len(t)] = torch.tensor(t, dtype=torch.long)
            mask[r, : len(t)] = 1
        attention = torch.cat([torch.ones(len(tails), len(prompt), dtype=mask.dtype,
                                          device=mask.device), mask], dim=1)  # (B, P + T)
        # transformers >= 5.2x names the cache argument `cache`; earlier 5.x `past_key_values`
        name = "cache" if "cache" in inspect.signature(model.forward).parameters else \
            "past_key_values"
        if width == 1:  # every target is one token: the prompt's last logits score them all
            return first[ids[:, 0]].tolist()
        # the last token is only a target: no position reads it, so it is not run
        logits = model(input_ids=ids[:, :-1], attention_mask=attention[:, :-1], use_cache=False,
                       **{name: cache}).logits.float()  # (B, T-1, V)
        rest = logits.log_softmax(-1).gather(-1, ids[:, 1:, None])[..., 0]  # (B, T-1)
        total = first[ids[:, 0]] + (rest * mask[:, 1:]).sum(-1)
    return total.tolist()
