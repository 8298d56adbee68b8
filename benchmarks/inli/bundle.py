"""Copy a trained INLI classifier (float16) and variant generator (LoRA adapter) into the package.

    .venv/bin/python benchmarks/inli/bundle.py runs/inli/full [runs/inli/generator]

writes tasks/inli/model/ (about 45 MB) and, when a generator folder is given,
tasks/inli/generator/ (about 10 MB): the defaults of ``dpc inli eval|predict`` and
``dpc inli variants``.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tasks.inli.classifier import CLASSIFIER_FILE, MODEL_DIR
from tasks.inli.hypotheses import ADAPTER_FILE, CONFIG_FILE, DEFAULT_GENERATOR, RUN_FILE
from train.cross_encoder import CrossEncoder


def main(classifier: str, generator: str | None = None) -> None:
    model = CrossEncoder.load(classifier)
    model.save(MODEL_DIR, half=True)
    shutil.copyfile(Path(classifier) / CLASSIFIER_FILE, MODEL_DIR / CLASSIFIER_FILE)
    if generator is not None:
        DEFAULT_GENERATOR.mkdir(parents=True, exist_ok=True)
        # the run record says which train premises the generator saw (close_loop.py's split)
        for name in (ADAPTER_FILE, CONFIG_FILE, RUN_FILE):
            shutil.copyfile(Path(generator) / name, DEFAULT_GENERATOR / name)
    for folder in (MODEL_DIR, DEFAULT_GENERATOR):
        size = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
        print(f"{folder.relative_to(ROOT)}: {size / 1e6:.1f} MB")


if __name__ == "__main__":
    main(*sys.argv[1:3])
