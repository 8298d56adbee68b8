#!/bin/sh
# In one hold of the shared CPU lock: continue training the INLI classifier (runs/inli/full,
# 0.6 epoch) for 0.5 epoch more with another batch order and the same dev split; evaluate it on
# val.csv (with the per-premise assignment too); generate the "keep-only" variants (keep-sets,
# negation allowed); score all variants with the continued classifier.
# Usage: sh benchmarks/inli/continue_classifier.sh
set -e
PY=".venv/bin/python -m cli"
flock /tmp/dpc-cpu.lock env OMP_NUM_THREADS=2 sh -c "/usr/bin/time -f 'wall %e s' $PY inli train \
  --out runs/inli/full2 --init-from runs/inli/full --epochs 0.5 --lr 3e-5 --seed 1 \
  --split-seed 0 --batch-size 32 --max-minutes 9 --eval-every 300 --dev-fraction 0.05 \
  && $PY inli eval ../shared/data/inli/val.csv --model runs/inli/full2 --assign \
     > runs/inli/full2.eval.txt \
  && .venv/bin/python benchmarks/inli/measure_variants.py --modes keep-only --max-minutes 4 \
  && .venv/bin/python benchmarks/inli/measure_variants.py --score --classifier runs/inli/full2 \
     --out benchmarks/inli/variants_results_full2.json"
