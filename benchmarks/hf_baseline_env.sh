#!/usr/bin/env bash
# Create (idempotently) the side virtualenv used by benchmark (c) to run the
# *reference* constrained beam search of transformers 4.56.2
# (`DisjunctiveConstraint` + `generate(constraints=...)`), which transformers 5
# removed.  The venv is kept apart from the project venv on purpose: the
# project needs transformers 5.x, the baseline needs 4.56.2.
#
# Usage:  bash benchmarks/hf_baseline_env.sh           # create / verify
#         FORCE=1 bash benchmarks/hf_baseline_env.sh   # wipe and rebuild
# Prints the venv's python path on the last line of stdout.
#
# Pins:
#   torch==2.13.0        -> resolves to the local CPU wheel (pip find-links);
#                           an unpinned torch would pull the multi-GB CUDA build
#                           from PyPI.
#   transformers==4.56.2 -> last 4.x line that still ships DisjunctiveConstraint
#                           and constrained beam search.
#   tokenizers/hf-hub    -> whatever 4.56.2 declares (pip resolves them).
#   sentencepiece        -> optional T5 tokenizer dep; harmless, small.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
VENV="${HF456_VENV:-$HERE/.venv-hf456}"
PY_BASE="${PYTHON:-python3}"
PINS=(
  "torch==2.13.0"
  "transformers==4.56.2"
  "safetensors>=0.4.3"
  "sentencepiece"
)

verify() {
  "$VENV/bin/python" - <<'EOF'
import torch, transformers
from transformers import DisjunctiveConstraint  # noqa: F401  (the point of this venv)
assert transformers.__version__ == "4.56.2", transformers.__version__
assert torch.__version__.startswith("2.13.0"), torch.__version__
assert not torch.version.cuda, "a CUDA torch build slipped in"
print(f"hf456 venv ok: transformers {transformers.__version__}, torch {torch.__version__}")
EOF
}

if [[ "${FORCE:-0}" == "1" ]]; then
  rm -rf "$VENV"
fi

if [[ -x "$VENV/bin/python" ]] && msg="$(verify 2>/dev/null)"; then
  echo "$msg" >&2
  echo "$VENV/bin/python"
  exit 0
fi

echo "creating $VENV" >&2
"$PY_BASE" -m venv "$VENV"
pip_install() {
  # The machine's pip config lists local indexes that pip warns about per
  # package ("Location ... is ignored"); drop that noise, keep real errors.
  "$VENV/bin/python" -m pip install --quiet "$@" 2>&1 | { grep -v "^WARNING: Location " || true; } >&2
  return "${PIPESTATUS[0]}"
}
# torch first and alone, so nothing later can trade it for a CUDA build.
pip_install "torch==2.13.0"
pip_install "${PINS[@]}"
verify >&2
echo "$VENV/bin/python"
