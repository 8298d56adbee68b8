#!/bin/sh
# Train the INLI classifier and the hypothesis-only baseline on 2 CPU cores, each under the
# shared CPU lock, and evaluate both on val.csv. Output: runs/inli/{full,hyp}/ and *.eval.txt.
# Usage: sh benchmarks/inli/train_classifiers.sh [full|hyp]   (default: both)
set -e
PY=".venv/bin/python -m cli"
LOCK="flock /tmp/dpc-cpu.lock env OMP_NUM_THREADS=2"
VAL=../shared/data/inli/val.csv
if [ "${1:-full}" = full ] || [ -z "$1" ]; then
$LOCK sh -c "/usr/bin/time -f 'wall %e s' $PY inli train --out runs/inli/full --epochs 0.6 \
  --lr 6e-5 --batch-size 32 --max-minutes 21 --eval-every 300 --dev-fraction 0.05 \
  && $PY inli eval $VAL --model runs/inli/full > runs/inli/full.eval.txt"
fi
if [ "${1:-hyp}" = hyp ] || [ -z "$1" ]; then
$LOCK sh -c "/usr/bin/time -f 'wall %e s' $PY inli train --out runs/inli/hyp --hypothesis-only \
  --epochs 0.3 --lr 6e-5 --batch-size 32 --max-minutes 5 --eval-every 1000 --dev-fraction 0.05 \
  && $PY inli eval $VAL --model runs/inli/hyp > runs/inli/hyp.eval.txt"
fi
