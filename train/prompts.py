"""How a generator is asked for a cause or an effect: its input format.

A seq2seq generator trained by dpc reads ``"cause: {text}"`` / ``"effect: {text}"``
(:func:`train.data.format_input`) and writes the answer. A pretrained causal LM is asked in
plain English and continues the sentence: ``"{text} because"`` writes a cause, ``"{text}, so"``
an effect; the continuation ends at the first sentence or clause end (``.``, ``!``, ``?``,
``;`` or a line break), whose tokens act as end-of-sequence tokens.

>>> SEQ2SEQ.prompt("It rained.", "effect")
'effect: It rained.'
>>> CAUSAL.prompt("The car broke down.", "cause")
'The car broke down because'
>>> CAUSAL.prompt("she missed the bus", "effect")
'she missed the bus, so'
>>> CAUSAL.prompt("", "cause")
'because'
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

from causal_mining.pair import check_direction
from dpc_errors import DpcError

__all__ = ["CAUSAL", "SEQ2SEQ", "InputFormat", "input_format_for"]


@dataclass(frozen=True)
class InputFormat:
    """One way of asking a generator for the cause or the effect of a text.

    Attributes
    ----------
    kind
        ``"seq2seq"``: the prompt is the encoder input; ``"causal"``: the output continues it.
    cause, effect
        Templates with ``{text}`` (the input, without its final full stop).
    stops
        Characters that end an output (causal only): every token whose text holds one is an
        end-of-sequence token. Empty: the model's own EOS.
    """

    kind: Literal["seq2seq", "causal"]
    cause: str
    effect: str
    stops: str = ""

    def prompt(self, text: str, direction: str) -> str:
        """The model input asking for the ``direction`` of ``text`` (spaces normalised)."""
        check_direction(direction, DpcError)
        text = " ".join(text.split())
        if self.kind == "causal":
            text = text.rstrip(".").rstrip()
            template = self.cause if direction == "cause" else self.effect
            return template.format(text=text).strip() if text else template.format(
                text="").lstrip(" ,").strip()
        return (self.cause if direction == "cause" else self.effect).format(text=text)

    def eos_ids(self, tokenizer: Any) -> list[int] | str:
        """The ids that end an output: every token holding a stop character, and the
        tokenizer's EOS; ``"model"`` (the model's own) when there are no stops."""
        if not self.stops:
            return "model"
        return list(_stop_ids(tokenizer, self.stops))

    def end_id(self, tokenizer: Any) -> int | None:
        """The token that closes a scored output: the first stop character's token (``.``), or
        ``None`` (the tokenizer's EOS) when there are no stops."""
        if not self.stops:
            return None
        ids = tokenizer(self.stops[0], add_special_tokens=False)["input_ids"]
        return ids[-1] if ids else None


@lru_cache(maxsize=8)
def _stop_ids(tokenizer: Any, stops: str) -> tuple[int, ...]:
    ids = sorted(i for t, i in tokenizer.get_vocab().items()
                 if any(c in tokenizer.convert_tokens_to_string([t]) for c in stops))
    eos = tokenizer.eos_token_id
    return tuple(ids + ([eos] if eos is not None and eos not in ids else []))


#: dpc's own seq2seq generators (:func:`train.data.format_input`).
SEQ2SEQ = InputFormat("seq2seq", "cause: {text}", "effect: {text}")
#: A pretrained causal LM asked in plain English.
CAUSAL = InputFormat("causal", "{text} because", "{text}, so", stops=".!?;\n")


def input_format_for(model: Any) -> InputFormat:
    """The format a model reads: :data:`SEQ2SEQ` for encoder-decoders, :data:`CAUSAL` otherwise."""
    return SEQ2SEQ if getattr(model.config, "is_encoder_decoder", False) else CAUSAL
