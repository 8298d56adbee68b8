"""How a generator is asked for a cause or an effect: its input format.

A seq2seq generator trained by dpc reads ``"cause: {text}"`` / ``"effect: {text}"``
(:func:`train.data.format_input`) and writes the answer. A pretrained causal LM is asked in
plain English and continues the sentence: ``"{text} because"`` writes a cause, ``"{text}, so"``
an effect, after a few worked examples (:data:`CAUSAL`); the continuation ends at the first sentence or clause end (``.``, ``!``, ``?``,
``;`` or a line break), whose tokens act as end-of-sequence tokens.

>>> SEQ2SEQ.prompt("It rained.", "effect")
'effect: It rained.'
>>> CAUSAL_ZERO_SHOT.prompt("The car broke down.", "cause")
'The car broke down because'
>>> CAUSAL_ZERO_SHOT.prompt("she missed the bus", "effect")
'she missed the bus, so'
>>> CAUSAL_ZERO_SHOT.prompt("", "cause")
'because'
>>> print(CAUSAL.prompt("The car broke down.", "cause"))
The ice cream melted because it was left in the sun.
The team celebrated because they won the game.
The plant died because nobody watered it.
The car broke down because
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

from causal_mining.pair import check_direction
from dpc_errors import DpcError

__all__ = ["CAUSAL", "CAUSAL_ZERO_SHOT", "NAMED_FORMATS", "SEQ2SEQ", "InputFormat", "input_format_for"]


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
    cause_examples, effect_examples
        Worked examples put before the question (causal only), one per line: they show the
        model the answer wanted, a short plain clause (few-shot prompting).
    """

    kind: Literal["seq2seq", "causal"]
    cause: str
    effect: str
    stops: str = ""
    cause_examples: str = ""
    effect_examples: str = ""

    def prompt(self, text: str, direction: str) -> str:
        """The model input asking for the ``direction`` of ``text`` (spaces normalised), after
        the direction's worked examples, if any."""
        check_direction(direction, DpcError)
        text = " ".join(text.split())
        if self.kind == "causal":
            text = text.rstrip(".").rstrip()
            template = self.cause if direction == "cause" else self.effect
            examples = self.cause_examples if direction == "cause" else self.effect_examples
            asked = template.format(text=text).strip() if text else template.format(
                text="").lstrip(" ,").strip()
            return examples + asked
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
        ids = tokenizer([self.stops[0]], add_special_tokens=False)["input_ids"][0]
        return ids[-1] if ids else None


@lru_cache(maxsize=8)
def _stop_ids(tokenizer: Any, stops: str) -> tuple[int, ...]:
    ids = sorted(i for t, i in tokenizer.get_vocab().items()
                 if any(c in tokenizer.convert_tokens_to_string([t]) for c in stops))
    eos = tokenizer.eos_token_id
    return tuple(ids + ([eos] if eos is not None and eos not in ids else []))


#: dpc's own seq2seq generators (:func:`train.data.format_input`).
SEQ2SEQ = InputFormat("seq2seq", "cause: {text}", "effect: {text}")
#: A pretrained causal LM asked in plain English, with no examples (zero-shot).
CAUSAL_ZERO_SHOT = InputFormat("causal", "{text} because", "{text}, so", stops=".!?;\n")
#: A pretrained causal LM asked in plain English after three worked examples per direction,
#: written for dpc (everyday events, none from COPA or e-CARE, and on topics away from the
#: README's inputs, so that no answer is copied from them). They make the model answer with a
#: short plain clause ("he wanted to save money") instead of an essay ("of the fact that
#: ..."); see benchmarks/guided/RESULTS.md for COPA by generation with and without them.
CAUSAL = InputFormat(
    "causal", "{text} because", "{text}, so", stops=".!?;\n",
    cause_examples=("The ice cream melted because it was left in the sun.\n"
                    "The team celebrated because they won the game.\n"
                    "The plant died because nobody watered it.\n"),
    effect_examples=("The ice cream was left in the sun, so it melted.\n"
                     "The team won the game, so they celebrated.\n"
                     "Nobody watered the plant, so it died.\n"))


#: Formats a model's config may name as ``dpc_input_format`` (set by the loader of a model
#: fine-tuned on one, :func:`train.models.load_cause_effect_lm`).
NAMED_FORMATS: dict[str, InputFormat] = {"seq2seq": SEQ2SEQ, "causal": CAUSAL,
                                         "causal-zero-shot": CAUSAL_ZERO_SHOT}


def input_format_for(model: Any) -> InputFormat:
    """The format a model reads: the one its config names as ``dpc_input_format`` (a model
    fine-tuned on it), else :data:`SEQ2SEQ` for encoder-decoders and :data:`CAUSAL` (worked
    examples first) for a pretrained causal LM.

    >>> from types import SimpleNamespace
    >>> input_format_for(SimpleNamespace(config=SimpleNamespace(is_encoder_decoder=False))) is CAUSAL
    True
    >>> tuned = SimpleNamespace(config=SimpleNamespace(is_encoder_decoder=False,
    ...                                                dpc_input_format="causal-zero-shot"))
    >>> input_format_for(tuned).prompt("babies cry", "cause")
    'babies cry because'
    """
    named = getattr(model.config, "dpc_input_format", None)
    if named is not None:
        if named not in NAMED_FORMATS:
            raise DpcError(f"the model's config names an unknown input format {named!r}; "
                           f"known: {', '.join(sorted(NAMED_FORMATS))}")
        return NAMED_FORMATS[named]
    return SEQ2SEQ if getattr(model.config, "is_encoder_decoder", False) else CAUSAL
