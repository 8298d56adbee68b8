"""A tiny CommonGen split and a generator trained on it from the tiny causal LM
(tests/conftest.py's), so the commands run end to end without data or downloads."""

from __future__ import annotations

from pathlib import Path

import pytest

from tasks.commongen.dataset import parse_concept_set
from tasks.commongen.generator import CommonGenTrainOptions, train_commongen_lm

#: (cs_str line, sentence): sets repeat once a reference, as in CommonGen's files.
LINES = [
    ("dog_N#frisbee_N#catch_V", "A dog catches a frisbee."),
    ("dog_N#frisbee_N#catch_V", "The dog caught the frisbee in the park."),
    ("field_N#look_V#stand_V", "A man stands in the field and looks at the sky."),
    ("ski_V#mountain_N", "She skis down the mountain."),
    ("field_N#look_V#stand_V", "The farmer stood looking at his field."),
]


def write_split(folder: Path, name: str = "dev") -> dict[str, Path]:
    """``commongen.<name>.{src_alpha,cs_str,tgt}.txt`` of :data:`LINES` in ``folder``."""
    files = {kind: folder / f"commongen.{name}.{kind}.txt"
             for kind in ("src_alpha", "cs_str", "tgt")}
    files["src_alpha"].write_text("".join(
        " ".join(c.lemma for c in parse_concept_set(s)) + "\n" for s, _ in LINES))
    files["cs_str"].write_text("".join(s + "\n" for s, _ in LINES))
    files["tgt"].write_text("".join(t + "\n" for _, t in LINES))
    return files


@pytest.fixture
def split(tmp_path: Path) -> dict[str, Path]:
    return write_split(tmp_path)


@pytest.fixture(scope="session")
def commongen_model(tiny_lm: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A generator folder: a small adapter over the tiny LM, trained a few steps."""
    folder = tmp_path_factory.mktemp("commongen")
    pairs = [(parse_concept_set(s), t) for s, t in LINES]
    options = CommonGenTrainOptions(base=str(tiny_lm), r=2, alpha=4, epochs=1.0, batch_size=2,
                                    dev_pairs=2, progress=False)
    train_commongen_lm(pairs, folder / "model", options, pairs)
    return folder / "model"
