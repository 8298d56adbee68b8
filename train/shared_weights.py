"""Encoder-decoder weight sharing for warm-started bert2bert generators (Rothe et al. 2020).

Rothe, Narayan and Severyn (2020, "Leveraging Pre-trained Checkpoints for Sequence Generation
Tasks") warm-start both halves of a Transformer from one BERT checkpoint and find that sharing
the encoder's and decoder's weights ("BERTShare") costs little quality for half the parameters.
dpc uses it to fit a MiniLM-based generator into the 50 MB bundle: every decoder parameter that
has a counterpart in the encoder (embeddings, self-attention, feed-forward, layer norms) *is* the
encoder's parameter; only the cross-attention and the output head's transform are the
decoder's own. The output projection stays tied to the (now shared) word embeddings. Sharing is
by parameter, not by module: the decoder's self-attention keeps its causal mask.

transformers 5 dropped ``tie_encoder_decoder``, and ``save_pretrained`` refuses tensors shared
in a way it does not know. So a shared model is saved with each shared tensor once (under its
encoder name) and ``"dpc_shared_encoder_decoder": true`` in ``config.json``;
:func:`load_shared` (used by :func:`train.models.load_model`, hence by every dpc command) loads
it, checks that exactly the shared tensors were absent from the file, and ties them again.
A plain ``EncoderDecoderModel.from_pretrained`` would leave those decoder weights random.

Examples
--------
>>> import tempfile, torch
>>> from transformers import BertConfig, EncoderDecoderConfig, EncoderDecoderModel
>>> bert = BertConfig(vocab_size=50, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
...                   intermediate_size=32)
>>> dec = BertConfig(**{**bert.to_dict(), "is_decoder": True, "add_cross_attention": True})
>>> model = EncoderDecoderModel(EncoderDecoderConfig.from_encoder_decoder_configs(bert, dec))
>>> before = sum(p.numel() for p in model.parameters())
>>> shared = share_encoder_decoder(model)
>>> len(shared) > 0, sum(p.numel() for p in model.parameters()) < before
(True, True)
>>> folder = tempfile.mkdtemp()
>>> save_shared(model, folder)
>>> again = load_shared(folder)
>>> again.decoder.bert.embeddings.word_embeddings.weight is again.encoder.embeddings.word_embeddings.weight
True
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from train.errors import ModelFolderError
from train.model_config import check_model_config

__all__ = ["SHARED_FLAG", "is_shared", "load_shared", "load_weights", "save_shared",
           "save_weights", "share_encoder_decoder", "shared_names"]

#: ``config.json`` key marking a model saved by :func:`save_shared`.
SHARED_FLAG = "dpc_shared_encoder_decoder"


def is_shared(config: Any) -> bool:
    """Whether a model config says its encoder and decoder share weights (:func:`save_shared`)."""
    return bool(getattr(config, SHARED_FLAG, False))


def _pairs(model: Any) -> list[tuple[str, str]]:
    """(decoder name, encoder name) of every decoder parameter with an encoder counterpart."""
    prefix = f"decoder.{model.decoder.base_model_prefix}."
    encoder = dict(model.encoder.named_parameters(remove_duplicate=False))
    pairs = []
    for name, param in model.decoder.named_parameters(remove_duplicate=False):
        full = f"decoder.{name}"
        if not full.startswith(prefix):
            continue
        twin = full[len(prefix):]
        if twin in encoder and encoder[twin].shape == param.shape:
            pairs.append((full, f"encoder.{twin}"))
    return pairs


def shared_names(model: Any) -> list[str]:
    """Names of the decoder parameters :func:`share_encoder_decoder` ties to the encoder."""
    return [d for d, _ in _pairs(model)]


def _embedding_shape(model: Any) -> Any:
    return model.encoder.get_input_embeddings().weight.shape


def _stored_once(model: Any) -> set[str]:
    """Decoder parameter names :func:`save_shared` leaves out: the shared ones and the output
    projection's name(s), which alias the word embeddings."""
    names = set(shared_names(model))
    output = model.decoder.get_output_embeddings()
    if output is not None and output.weight.shape == _embedding_shape(model):  # tied by sharing
        names |= {n for n, p in model.named_parameters(remove_duplicate=False)
                  if n.startswith("decoder.") and p is output.weight}
    return names


def share_encoder_decoder(model: Any) -> list[str]:
    """Tie every decoder parameter with an encoder counterpart to it; returns their names.

    Marks ``model.config`` (:data:`SHARED_FLAG`) so that :func:`save_shared` and
    :func:`load_shared` know. Raises :class:`ModelFolderError` for a model with nothing to share
    (not a bert2bert-style encoder-decoder).
    """
    if not hasattr(model, "encoder") or not hasattr(model, "decoder"):
        raise ModelFolderError(f"a {type(model).__name__} has no encoder and decoder to share")
    pairs = _pairs(model)
    if not pairs:
        raise ModelFolderError(
            f"the decoder of this {type(model).__name__} has no parameter shaped like the "
            "encoder's: weight sharing needs a bert2bert-style model (dpc train generator "
            "--warm-start)"
        )
    for decoder_name, encoder_name in pairs:
        owner, _, leaf = decoder_name.rpartition(".")
        setattr(model.get_submodule(owner), leaf, model.get_parameter(encoder_name))
    output = model.decoder.get_output_embeddings()
    if output is not None and output.weight.shape == _embedding_shape(model):
        output.weight = model.encoder.get_input_embeddings().weight
    setattr(model.config, SHARED_FLAG, True)
    return [d for d, _ in pairs]


def save_shared(model: Any, folder: str | Path) -> None:
    """``save_pretrained`` with every shared tensor written once (under its encoder name)."""
    skip = _stored_once(model)
    state = {k: v for k, v in model.state_dict().items() if k not in skip}
    model.save_pretrained(str(folder), state_dict=state)


def load_shared(folder: str | Path, **kwargs: Any) -> Any:
    """Load a model saved by :func:`save_shared` and tie its shared weights again.

    Raises :class:`ModelFolderError` if the file lacks any other weight (a damaged folder).
    """
    from transformers import EncoderDecoderModel
    from transformers.utils import logging as hf_logging

    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()  # the shared weights are "missing" by design
    try:
        model, info = EncoderDecoderModel.from_pretrained(
            str(folder), output_loading_info=True, local_files_only=True,
            **{**kwargs, "use_safetensors": True})  # never a pickle (train.weight_files)
    finally:
        hf_logging.set_verbosity(verbosity)
    unexpected_missing = sorted(set(info.get("missing_keys", ())) - _stored_once(model))
    if unexpected_missing:
        shown = ", ".join(unexpected_missing[:5])
        raise ModelFolderError(
            f"model folder {str(folder)!r} lacks {len(unexpected_missing)} weight(s) that are not "
            f"shared with the encoder ({shown}{', ...' if len(unexpected_missing) > 5 else ''})"
        )
    share_encoder_decoder(model)
    return model


def save_weights(model: Any, folder: str | Path) -> None:
    """Save any generator's weights: :func:`save_shared` if it shares them, else ``save_pretrained``."""
    if is_shared(model.config):
        save_shared(model, folder)
    else:
        model.save_pretrained(str(folder))


def load_weights(folder: str | Path, config: Any = None, **kwargs: Any) -> Any:
    """Load any seq2seq generator folder: :func:`load_shared` if its config (read from
    ``folder`` unless given) says so."""
    from transformers import AutoConfig, AutoModelForSeq2SeqLM

    if config is None:
        check_model_config(folder)  # each field's type: one line naming it
        config = AutoConfig.from_pretrained(str(folder), local_files_only=True)
    if is_shared(config):
        return load_shared(folder, **kwargs)
    return AutoModelForSeq2SeqLM.from_pretrained(str(folder), local_files_only=True,
                                                 **{**kwargs, "use_safetensors": True})
