#!/bin/sh
# LoRA fine-tuning of SmolLM2-135M as the INLI variant generator, then the variant measures
# (needs the classifier runs/inli/full), in one hold of the shared CPU lock.
# Output: runs/inli/generator/ (adapter.safetensors + variant_generator.json),
# runs/inli/measure/, benchmarks/inli/variants_results.json.
# Usage: sh benchmarks/inli/train_generator.sh
set -e
flock /tmp/dpc-cpu.lock env OMP_NUM_THREADS=2 sh -c "/usr/bin/time -f 'wall %e s' \
  .venv/bin/python -m cli inli variants --train ../shared/data/inli/train.csv \
  --out runs/inli/generator --max-premises 300 --batch-size 8 --max-minutes 8 \
  && /usr/bin/time -f 'wall %e s' .venv/bin/python benchmarks/inli/measure_variants.py \
  --modes constrained,unconstrained --score"
