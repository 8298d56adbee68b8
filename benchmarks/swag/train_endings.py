"""Fine-tune the SWAG ending model on HellaSwag gold endings (resumable; see RESULTS.md)."""

from __future__ import annotations

import json
import sys
from types import SimpleNamespace

from tasks.swag.ending_model import train_ending_model


def main(data: str, out: str, minutes: float, max_steps: int = 100_000) -> None:
    try:
        from tasks.datasets import read_multiple_choice
        items = read_multiple_choice(data)
    except ImportError:  # the shared reader is not there yet
        with open(data, encoding="utf-8") as f:
            items = [SimpleNamespace(**json.loads(line)) for line in f]
    result = train_ending_model(items, out, max_minutes=minutes, max_steps=max_steps)
    result.pop("history", None)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], float(sys.argv[3]), *(int(a) for a in sys.argv[4:5]))
