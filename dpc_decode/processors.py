"""transformers' logits processors inside dpc's decoding step.

Some settings of a transformers ``GenerationConfig`` reshape the model's scores rather than steer
the search: a forced first or last token, banned token sequences (``bad_words_ids``), a
repetition penalty, suppressed tokens, a per-sequence bias. dpc applies them with transformers'
own processor classes, where transformers' beam search applies them: on the step's
log-probabilities, before dpc's own masks, with the token history transformers would pass (the
left-padded prompt and the generated tokens for decoder-only models; the decoder start token and
the generated tokens for encoder-decoder models). So an unconstrained search with these settings
makes transformers' choices, and a constrained one ranks by the same scores.

:class:`ScoreSettings` holds the settings (read from a ``GenerationConfig``, plus any custom
``logits_processor`` objects); :meth:`ScoreSettings.build` makes the :class:`StepProcessors` of
one batch; :func:`apply_processors` is the call the search and the sampler make once per step.

>>> import torch
>>> settings = ScoreSettings(suppress_tokens=(2,), forced_bos_token_id=None)
>>> step = settings.build(torch.tensor([[5, 6]]), torch.ones(1, 2, dtype=torch.long), 1,
...                       max_new_tokens=4, eos_ids=[1], sampling=False)
>>> apply_processors(torch.zeros(1, 4), torch.zeros(1, 0, dtype=torch.long), step).tolist()
[[0.0, 0.0, -inf, 0.0]]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any

import torch
from transformers import LogitsProcessor, LogitsProcessorList
from transformers.generation.logits_process import (
    ExponentialDecayLengthPenalty,
    ForcedBOSTokenLogitsProcessor,
    ForcedEOSTokenLogitsProcessor,
    InfNanRemoveLogitsProcessor,
    LogitNormalization,
    NoBadWordsLogitsProcessor,
    RepetitionPenaltyLogitsProcessor,
    SequenceBiasLogitsProcessor,
    SuppressTokensAtBeginLogitsProcessor,
    SuppressTokensLogitsProcessor,
)

from dpc_decode.errors import DpcError
from dpc_errors import check_float, check_int

__all__ = ["SCORE_SETTINGS", "ScoreSettings", "StepProcessors", "apply_processors"]


@dataclass(frozen=True)
class StepProcessors:
    """The processors of one decoding batch and the history prefix they expect.

    Attributes
    ----------
    processors : LogitsProcessorList
        Called as ``processors(input_ids, scores)``, in transformers' order.
    prefix : torch.Tensor
        (H, P): what transformers' ``input_ids`` hold before the generated tokens, one row per
        hypothesis (rows of one input adjacent, as the search lays them out).
    """

    processors: LogitsProcessorList
    prefix: torch.Tensor


def apply_processors(
    log_probs: torch.Tensor,  # (H, V)
    history: torch.Tensor,  # (H, t) generated tokens so far
    processors: StepProcessors | None,
) -> torch.Tensor:
    """The step's scores after the processors (``log_probs`` itself when there are none)."""
    if processors is None:
        return log_probs
    input_ids = torch.cat([processors.prefix, history], dim=1)  # (H, P + t)
    return processors.processors(input_ids, log_probs)


#: The ``GenerationConfig`` fields :class:`ScoreSettings` applies, in transformers' order.
SCORE_SETTINGS = (
    "sequence_bias",
    "repetition_penalty",
    "bad_words_ids",
    "forced_bos_token_id",
    "forced_eos_token_id",
    "remove_invalid_values",
    "exponential_decay_length_penalty",
    "suppress_tokens",
    "begin_suppress_tokens",
    "renormalize_logits",
)

#: Processors that are not shift-invariant: transformers' sampler applies them to raw logits,
#: dpc's to log-probabilities, which would give another distribution.
_LOGIT_SCALE_SETTINGS = ("repetition_penalty", "exponential_decay_length_penalty")


@dataclass(frozen=True)
class ScoreSettings:
    """The score-shaping settings of a ``GenerationConfig`` (``None``: not set) and custom
    processors, applied as transformers applies them (custom ones after the built ones, a custom
    processor replacing a built one of the same class)."""

    sequence_bias: Any = None
    repetition_penalty: float | None = None
    bad_words_ids: Sequence[Sequence[int]] | None = None
    forced_bos_token_id: int | None = None
    forced_eos_token_id: int | Sequence[int] | None = None
    remove_invalid_values: bool | None = None
    exponential_decay_length_penalty: tuple[int, float] | None = None
    suppress_tokens: Sequence[int] | None = None
    begin_suppress_tokens: Sequence[int] | None = None
    renormalize_logits: bool | None = None
    custom: tuple[LogitsProcessor, ...] = ()

    def __post_init__(self) -> None:
        # the numbers transformers would take on trust: nan or inf would silently empty a search
        if self.repetition_penalty is not None:
            check_float("repetition_penalty", self.repetition_penalty, 0, open_min=True)
        decay = self.exponential_decay_length_penalty
        if decay is not None:
            if isinstance(decay, (str, bytes)) or not isinstance(decay, Sequence) or len(decay) != 2:
                raise DpcError(f"`exponential_decay_length_penalty` (={decay!r}) has to be a "
                               "pair (start_index, decay_factor)")
            check_int("exponential_decay_length_penalty[0]", decay[0], 0)
            check_float("exponential_decay_length_penalty[1]", decay[1])

    @classmethod
    def from_config(cls, config: Any, custom: Sequence[LogitsProcessor] | None = None) -> ScoreSettings:
        """The settings of a ``GenerationConfig`` (or any object with those attributes)."""
        values = {name: getattr(config, name, None) for name in SCORE_SETTINGS} if config else {}
        return cls(**values, custom=tuple(custom or ()))

    @property
    def active(self) -> tuple[str, ...]:
        """Names of the settings that change scores (set, and not their no-op value)."""
        names = []
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "custom" or value is None or value is False:
                continue
            if f.name == "repetition_penalty" and value == 1.0:
                continue
            names.append(f.name)
        return tuple(names)

    def check_sampling(self) -> None:
        """Raise for settings whose effect in dpc's sampler would differ from transformers'."""
        for name in _LOGIT_SCALE_SETTINGS:
            if name in self.active:
                raise DpcError(
                    f"`{name}` (={getattr(self, name)!r}) is not applied when sampling: transformers "
                    "applies it to raw logits, and dpc's sampler sees only log-probabilities, which "
                    "would give another distribution; drop it (from the model's generation_config: "
                    "pass generation_config=None), or use beam search"
                )

    def build(
        self,
        input_ids: torch.Tensor,  # (B, L) the batch as the model sees it
        attention_mask: torch.Tensor,  # (B, L)
        rows_per_input: int,
        *,
        max_new_tokens: int,
        eos_ids: Sequence[int],
        sampling: bool,
        decoder_start_id: int | None = None,
    ) -> StepProcessors | None:
        """The processors of one batch, or ``None`` when nothing applies.

        ``decoder_start_id`` is given for encoder-decoder models, whose processors see the decoder
        start token, not the source; otherwise the left-padded prompt is the prefix.
        """
        if not self.active and not self.custom:
            return None
        if sampling:
            self.check_sampling()
        device = input_ids.device
        batch = input_ids.shape[0]
        if decoder_start_id is not None:
            prefix = torch.full((batch * rows_per_input, 1), decoder_start_id, dtype=torch.long,
                                device=device)  # (H, 1)
            padding = None
        else:
            prefix = input_ids.repeat_interleave(rows_per_input, dim=0)  # (H, L)
            mask = attention_mask.repeat_interleave(rows_per_input, dim=0)  # (H, L)
            padding = (mask != 0).int().argmax(dim=1)  # (H,) left-padding length
        width = prefix.shape[1]
        eos = list(eos_ids)
        built: list[LogitsProcessor] = []
        if self.sequence_bias is not None:
            built.append(SequenceBiasLogitsProcessor(sequence_bias=self.sequence_bias))
        if self.repetition_penalty is not None and self.repetition_penalty != 1.0:
            built.append(RepetitionPenaltyLogitsProcessor(float(self.repetition_penalty),
                                                          prompt_ignore_length=padding))
        if self.bad_words_ids is not None:
            built.append(NoBadWordsLogitsProcessor([list(w) for w in self.bad_words_ids],
                                                   eos or None))
        if self.forced_bos_token_id is not None:
            built.append(ForcedBOSTokenLogitsProcessor(self.forced_bos_token_id))
        if self.forced_eos_token_id is not None:
            built.append(ForcedEOSTokenLogitsProcessor(width + max_new_tokens,
                                                       self.forced_eos_token_id, device=device))
        if self.remove_invalid_values:
            built.append(InfNanRemoveLogitsProcessor())
        if self.exponential_decay_length_penalty is not None:
            if not eos:
                raise DpcError("`exponential_decay_length_penalty` needs an EOS token id")
            built.append(ExponentialDecayLengthPenalty(self.exponential_decay_length_penalty, eos,
                                                       width))
        if self.suppress_tokens is not None:
            built.append(SuppressTokensLogitsProcessor(self.suppress_tokens, device=device))
        if self.begin_suppress_tokens is not None:
            begin = width if width > 1 or self.forced_bos_token_id is None else width + 1
            built.append(SuppressTokensAtBeginLogitsProcessor(self.begin_suppress_tokens, begin,
                                                              device=device))
        processors = LogitsProcessorList(_merge(built, list(self.custom)))
        if self.renormalize_logits:
            processors.append(LogitNormalization())
        return StepProcessors(processors, prefix)


def _merge(built: list[LogitsProcessor], custom: list[LogitsProcessor]) -> list[LogitsProcessor]:
    """transformers' rule: a custom processor replaces a built one of the same class; the other
    custom ones come after the built ones."""
    merged = []
    for processor in built:
        same = [c for c in custom if type(c) is type(processor)]
        merged.append(same[0] if same else processor)
    merged.extend(c for c in custom if not any(c is m for m in merged))
    return merged
