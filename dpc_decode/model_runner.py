"""Drive a Hugging Face model one token at a time through its public forward and cache API.

One class covers ``AutoModelForSeq2SeqLM`` models (T5, BART, Marian: the encoder runs once, the
decoder starts from ``decoder_start_token_id``) and ``AutoModelForCausalLM`` models (GPT-2,
Llama-style: the left-padded prompt is the prefix, with explicit position ids so padding does not
shift positions). The first step runs on one row per input; :meth:`ModelRunner.expand` then
copies the cache to every beam or sample, which saves ``num_beams - 1`` prompt passes per input.

Reordering the cache after a beam step is the only cache operation that depends on the search.
For encoder–decoder caches only the decoder self-attention part is reordered: beams never move
across inputs, and every beam of an input holds the same cross-attention keys and values, so
reordering those would copy identical tensors onto themselves.
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Sequence
from typing import Any

import torch
from transformers import PreTrainedModel
from transformers.cache_utils import (
    Cache,
    DynamicLayer,
    DynamicSlidingWindowLayer,
    EncoderDecoderCache,
)
from transformers.modeling_outputs import BaseModelOutput

from dpc_decode.errors import DpcError
from dpc_decode.processors import ScoreSettings, StepProcessors

__all__ = [
    "ModelRunner", "decoder_start_id", "model_vocab_size", "resolve_special_ids", "scored_runner",
]


def model_vocab_size(model: PreTrainedModel) -> int:
    """Number of logits the model emits per step (the size token ids are checked against)."""
    head = model.get_output_embeddings() if hasattr(model, "get_output_embeddings") else None
    if head is not None and getattr(head, "weight", None) is not None:
        return int(head.weight.shape[0])
    return int(model.config.get_text_config().vocab_size)


def resolve_special_ids(
    model: PreTrainedModel,
    eos_token_id: int | list[int] | None | str = "model",
    pad_token_id: int | None = None,
) -> tuple[list[int], int]:
    """EOS ids (``"model"`` means the model's generation config) and the pad id used in outputs."""
    gen = getattr(model, "generation_config", None)
    cfg = model.config.get_text_config() if hasattr(model.config, "get_text_config") else model.config
    if isinstance(eos_token_id, str):
        if eos_token_id != "model":
            raise DpcError(f"`eos_token_id` (={eos_token_id!r}) must be an int, a list of ints, None or 'model'")
        eos_token_id = getattr(gen, "eos_token_id", None)
        if eos_token_id is None:
            eos_token_id = getattr(cfg, "eos_token_id", None)
    eos = [] if eos_token_id is None else (
        [eos_token_id] if isinstance(eos_token_id, int) else list(eos_token_id)
    )
    for e in eos:
        if isinstance(e, bool) or not isinstance(e, int):
            raise DpcError(f"`eos_token_id` holds {e!r}, which is not a token id")
    if pad_token_id is None:
        pad_token_id = getattr(gen, "pad_token_id", None)
        if pad_token_id is None:
            pad_token_id = getattr(cfg, "pad_token_id", None)
        if pad_token_id is None:
            pad_token_id = eos[0] if eos else 0
    return eos, int(pad_token_id)


def decoder_start_id(model: PreTrainedModel) -> int:
    """The first decoder token of an encoder-decoder model (generation config, else config)."""
    gen = getattr(model, "generation_config", None)
    start = getattr(gen, "decoder_start_token_id", None)
    if start is None:
        start = getattr(model.config, "decoder_start_token_id", None)
    if start is None:
        raise DpcError(
            f"{type(model).__name__} has no `decoder_start_token_id` in its config or "
            "generation config; set one to decode with it"
        )
    return int(start)


def scored_runner(
    model: PreTrainedModel,
    scores: ScoreSettings | None,
    input_ids: torch.Tensor,  # (B, L)
    attention_mask: torch.Tensor,  # (B, L)
    rows_per_input: int,
    *,
    max_new_tokens: int,
    eos_ids: Sequence[int],
    sampling: bool,
) -> ModelRunner:
    """A runner of ``model`` over one batch, with the processors of ``scores`` (none: ``None``)."""
    runner = ModelRunner(model)
    if scores is not None:
        runner.processors = scores.build(
            input_ids, attention_mask, rows_per_input, max_new_tokens=max_new_tokens,
            eos_ids=eos_ids, sampling=sampling,
            decoder_start_id=decoder_start_id(model) if runner.is_encoder_decoder else None,
        )
    return runner


class ModelRunner:
    """Stateful driver of one model over one batch of prompts.

    Parameters
    ----------
    model : PreTrainedModel
        A seq2seq or causal language model, in eval mode.
    processors : StepProcessors, optional
        transformers logits processors the search applies to each step's log-probabilities
        (:func:`dpc_decode.processors.apply_processors`); ``None``: none.
    """

    def __init__(self, model: PreTrainedModel, processors: StepProcessors | None = None) -> None:
        self.model = model
        self.processors = processors
        self.is_encoder_decoder = bool(getattr(model.config, "is_encoder_decoder", False))
        self.cache: Cache | None = None
        self._encoder_hidden: torch.Tensor | None = None
        self._encoder_mask: torch.Tensor | None = None
        self._attention_mask: torch.Tensor | None = None
        self._next_position: torch.Tensor | None = None
        params = inspect.signature(model.forward).parameters
        self._takes_position_ids = "position_ids" in params
        # transformers >= 5.2x names the cache argument `cache` (`past_key_values` warns there);
        # earlier 5.x releases only know `past_key_values`.
        self._cache_arg = "cache" if "cache" in params else "past_key_values"

    @property
    def device(self) -> torch.device:
        return self.model.device

    def decoder_start_ids(self, batch: int) -> torch.Tensor:
        return torch.full((batch, 1), decoder_start_id(self.model), dtype=torch.long,
                          device=self.device)

    @torch.inference_mode()
    def start(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        """Run the prompt and return the logits of the first generated token.

        input_ids, attention_mask: (batch, prompt_len) -> logits (batch, vocab) float32.
        Decoder-only prompts must be left-padded.
        """
        if self.is_encoder_decoder:
            encoder = self.model.get_encoder()
            enc = encoder(input_ids=input_ids, attention_mask=attention_mask, return_dict=True)
            self._encoder_hidden = enc.last_hidden_state
            self._encoder_mask = attention_mask
            out = self.model(
                encoder_outputs=BaseModelOutput(last_hidden_state=self._encoder_hidden),
                attention_mask=attention_mask,
                decoder_input_ids=self.decoder_start_ids(input_ids.shape[0]),
                use_cache=True,
                return_dict=True,
            )
        else:
            position_ids = (attention_mask.long().cumsum(-1) - 1).clamp(min=0)
            self._attention_mask = attention_mask
            self._next_position = position_ids[:, -1:] + 1
            kwargs: dict[str, Any] = {}
            if self._takes_position_ids:
                kwargs["position_ids"] = position_ids
            out = self.model(
                input_ids=input_ids,
                attention_mask=attention_mask,
                use_cache=True,
                return_dict=True,
                **kwargs,
            )
        self.cache = self._returned_cache(out)
        return out.logits[:, -1, :].float()

    def _returned_cache(self, out: Any) -> Cache | None:
        """The cache a forward pass returned, under either name."""
        cache = getattr(out, "cache", None)
        return cache if cache is not None else getattr(out, "past_key_values", None)

    def expand(self, repeats: int) -> None:
        """Repeat every row ``repeats`` times (rows of one input stay adjacent)."""
        if repeats == 1:
            return
        if self.cache is not None:
            self.cache.batch_repeat_interleave(repeats)
        if self.is_encoder_decoder:
            assert self._encoder_hidden is not None and self._encoder_mask is not None
            self._encoder_hidden = self._encoder_hidden.repeat_interleave(repeats, dim=0)
            self._encoder_mask = self._encoder_mask.repeat_interleave(repeats, dim=0)
        else:
            assert self._attention_mask is not None and self._next_position is not None
            self._attention_mask = self._attention_mask.repeat_interleave(repeats, dim=0)
            self._next_position = self._next_position.repeat_interleave(repeats, dim=0)

    @torch.inference_mode()
    def step(self, tokens: torch.Tensor) -> torch.Tensor:
        """Feed one token per row; tokens (rows,) -> logits (rows, vocab) float32."""
        tokens = tokens.unsqueeze(-1)  # (rows, 1)
        if self.is_encoder_decoder:
            out = self.model(
                encoder_outputs=BaseModelOutput(last_hidden_state=self._encoder_hidden),
                attention_mask=self._encoder_mask,
                decoder_input_ids=tokens,
                use_cache=True,
                return_dict=True,
                **{self._cache_arg: self.cache},
            )
        else:
            assert self._attention_mask is not None and self._next_position is not None
            self._attention_mask = torch.cat(
                [self._attention_mask, self._attention_mask.new_ones((tokens.shape[0], 1))], dim=-1
            )
            kwargs: dict[str, Any] = {}
            if self._takes_position_ids:
                kwargs["position_ids"] = self._next_position
            out = self.model(
                input_ids=tokens,
                attention_mask=self._attention_mask,
                use_cache=True,
                return_dict=True,
                **{self._cache_arg: self.cache},
                **kwargs,
            )
            self._next_position = self._next_position + 1
        self.cache = self._returned_cache(out)
        return out.logits[:, -1, :].float()

    def fork(self, rows: torch.Tensor) -> ModelRunner:
        """A runner of its own over copies of rows ``rows`` (any of them, repeats allowed):
        stepping it leaves this one as it was (the lookahead's rollouts). The cache's tensors
        are not copied whole: each layer of the fork holds an ``index_select`` of this one's,
        and a step appends to the fork's tensors only."""
        other = copy.copy(self)
        other.cache = _forked_cache(self.cache, rows)
        if self.is_encoder_decoder:
            assert self._encoder_hidden is not None and self._encoder_mask is not None
            other._encoder_hidden = self._encoder_hidden[rows]
            other._encoder_mask = self._encoder_mask[rows]
        else:
            assert self._attention_mask is not None and self._next_position is not None
            other._attention_mask = self._attention_mask[rows]
            other._next_position = self._next_position[rows]
        return other

    def adopt(self, other: ModelRunner) -> None:
        """Hold ``other``'s rows and state in place of its own (``other`` is a :meth:`fork` or
        :meth:`joined` of this runner's forks, left unused after): the lookahead's first step
        becomes the search's next."""
        self.cache = other.cache
        for name in _ROW_STATE:
            setattr(self, name, getattr(other, name))

    @property
    def joinable(self) -> bool:
        """Whether :meth:`joined` and :meth:`snapshot` can hold this runner's rows: its cache's
        layers are transformers' dynamic ones, whose steps replace their key and value tensors
        (``torch.cat``) instead of writing into them."""
        return _joinable(self.cache)

    def snapshot(self) -> ModelRunner:
        """A runner over the same rows in their present state, which later steps of this one
        leave as they are, without copying the cache's tensors (it holds references to them).
        Only for a :attr:`joinable` runner."""
        if not self.joinable:
            raise DpcError(f"cannot keep a {type(self.cache).__name__} without copying it")
        other = copy.copy(self)
        other.cache = _layers_copied(self.cache)
        return other

    @staticmethod
    def joined(parts: Sequence[tuple[ModelRunner, torch.Tensor, torch.Tensor]], size: int
               ) -> ModelRunner:
        """A runner of ``size`` rows of its own: for each ``(runner, rows, at)`` of ``parts``
        (forks of one runner, all stepped as far, each :attr:`joinable`), copies of its rows
        ``rows`` as rows ``at``. Every row must be given once."""
        base = parts[0][0]
        if not all(runner.joinable for runner, _, _ in parts):
            raise DpcError("cannot join the rows of caches that steps write into")
        other = copy.copy(base)
        other.cache = _joined_cache([(runner.cache, rows, at) for runner, rows, at in parts], size)

        for name in _ROW_STATE:
            tensors = [getattr(runner, name) for runner, _, _ in parts]
            setattr(other, name, None if tensors[0] is None else _joined_rows(
                [(t, rows, at) for t, (_, rows, at) in zip(tensors, parts)], size))
        return other

    def select(self, index: torch.Tensor) -> bool:
        """Keep only rows ``index`` (in that order): the cache and every per-row state shrink to
        ``len(index)`` rows, so finished rows stop costing forward passes. Returns ``False`` (and
        changes nothing) for a cache that cannot shrink (a static one)."""
        cache = self.cache
        if cache is not None:
            try:
                cache.batch_select_indices(index)
            except (NotImplementedError, AttributeError, ValueError):
                return False
        if self.is_encoder_decoder:
            assert self._encoder_hidden is not None and self._encoder_mask is not None
            self._encoder_hidden = self._encoder_hidden[index]
            self._encoder_mask = self._encoder_mask[index]
        else:
            assert self._attention_mask is not None and self._next_position is not None
            self._attention_mask = self._attention_mask[index]
            self._next_position = self._next_position[index]
        return True

    def reorder(self, index: torch.Tensor) -> None:
        """Make row ``i`` of the cache a copy of row ``index[i]``; index never crosses inputs."""
        cache = self.cache
        if cache is None:
            return
        if isinstance(cache, EncoderDecoderCache):
            cache.self_attention_cache.reorder_cache(index)
        elif hasattr(cache, "reorder_cache"):
            cache.reorder_cache(index)
        else:  # pragma: no cover - legacy tuple caches are gone from transformers 5
            raise DpcError(f"cannot reorder a cache of type {type(cache).__name__} for beam search")


def _forked_cache(cache: Cache | None, rows: torch.Tensor) -> Cache | None:
    """A cache of rows ``rows`` of ``cache`` that shares no layer object with it: the container
    and its layers are shallow copies, each layer's tensors replaced by an ``index_select``
    (``reorder_cache``), so neither cache's later updates reach the other."""
    if cache is None:
        return None
    forked = _layers_copied(cache)
    assert forked is not None
    forked.reorder_cache(rows)  # (an encoder-decoder cache reorders both of its caches)
    return forked


#: A runner's per-row state besides its cache (None where its kind of model has none).
_ROW_STATE = ("_encoder_hidden", "_encoder_mask", "_attention_mask", "_next_position")

#: Cache layers whose update replaces ``keys``/``values`` (``torch.cat``), never writes into them,
#: and which hold no other per-row state: their rows can be referenced and joined.
_JOINABLE_LAYERS = (DynamicLayer, DynamicSlidingWindowLayer)


def _joinable(cache: Cache | None) -> bool:
    if cache is None:
        return True
    if isinstance(cache, EncoderDecoderCache):
        return _joinable(cache.self_attention_cache) and _joinable(cache.cross_attention_cache)
    layers = getattr(cache, "layers", None)
    return layers is not None and all(
        type(layer) in _JOINABLE_LAYERS and getattr(layer, "keys", None) is not None
        for layer in layers)


def _layers_copied(cache: Cache | None) -> Cache | None:
    """``cache`` with its container and layers shallow-copied: the tensors are shared, the
    attributes a later step replaces are not."""
    if cache is None:
        return None
    forked = copy.copy(cache)
    if isinstance(cache, EncoderDecoderCache):
        forked.self_attention_cache = _layers_copied(cache.self_attention_cache)
        forked.cross_attention_cache = _layers_copied(cache.cross_attention_cache)
        forked.is_updated = dict(cache.is_updated)
        return forked
    if not hasattr(cache, "layers"):  # pragma: no cover - every transformers 5 cache has layers
        raise DpcError(f"cannot copy rows of a cache of type {type(cache).__name__}")
    forked.layers = [copy.copy(layer) for layer in cache.layers]
    return forked


def _joined_rows(parts: Sequence[tuple[torch.Tensor, torch.Tensor, torch.Tensor]], size: int
                 ) -> torch.Tensor:
    """A tensor of ``size`` rows: rows ``rows`` of each ``(tensor, rows, at)`` as rows ``at``."""
    first = parts[0][0]
    out = first.new_empty((size, *first.shape[1:]))
    for tensor, rows, at in parts:
        if rows.numel():
            out.index_copy_(0, at.to(out.device), tensor.index_select(0, rows.to(tensor.device)))
    return out


def _joined_cache(parts: Sequence[tuple[Cache | None, torch.Tensor, torch.Tensor]], size: int
                  ) -> Cache | None:
    """:func:`_joined_rows` for every layer's keys and values (:func:`_joinable` caches)."""
    first = parts[0][0]
    if first is None:
        return None
    if isinstance(first, EncoderDecoderCache):
        joined = _layers_copied(first)
        assert isinstance(joined, EncoderDecoderCache)
        joined.self_attention_cache = _joined_cache(
            [(c.self_attention_cache, rows, at) for c, rows, at in parts], size)  # type: ignore[union-attr]
        joined.cross_attention_cache = _joined_cache(
            [(c.cross_attention_cache, rows, at) for c, rows, at in parts], size)  # type: ignore[union-attr]
        return joined
    joined = _layers_copied(first)
    assert joined is not None
    for number, layer in enumerate(joined.layers):
        layers = [c.layers[number] for c, _, _ in parts]  # type: ignore[union-attr]
        layer.keys = _joined_rows([(lay.keys, rows, at) for lay, (_, rows, at) in zip(layers, parts)], size)
        layer.values = _joined_rows([(lay.values, rows, at) for lay, (_, rows, at) in zip(layers, parts)], size)
    return joined
