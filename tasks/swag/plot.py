"""The AF curve: held-out accuracy per AF iteration, one line per committee member and the
ensemble, with the 4-way chance line (SWAG's Figure 2)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["plot_af_curve"]


def plot_af_curve(report: dict[str, Any], path: str | Path, title: str = "") -> Path:
    """Draw ``report`` (``DIR/report.json`` of :func:`tasks.swag.adversarial_filter`) to a PNG.

    A member that did not take part in an iteration (the cheap-only first ones) has no point
    there. The chance line is ``1 / (k + 1)``.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = report["iterations"]
    k = report["settings"]["k"]
    names = ["mlp", "bow", "cnn", "lstm", "ensemble"]
    labels = {"mlp": "MLP (LM features)", "bow": "bag of words", "cnn": "CNN",
              "lstm": "BiLSTM (words + POS)", "ensemble": "ensemble"}
    fig, ax = plt.subplots(figsize=(7, 4.2), dpi=110)
    for name in names:
        points = [(r["iteration"], r["accuracy"][name]) for r in rows if name in r["accuracy"]]
        if points:
            xs, ys = zip(*points)
            ax.plot(xs, [100 * y for y in ys], marker="." if name != "ensemble" else "o",
                    linewidth=2.5 if name == "ensemble" else 1.2, label=labels[name],
                    color="black" if name == "ensemble" else None)
    ax.axhline(100 / (k + 1), color="grey", linestyle="--", label=f"chance ({100 / (k + 1):.0f}%)")
    ax.set_xlabel("AF iteration")
    ax.set_ylabel(f"held-out {k + 1}-way accuracy (%)")
    ax.set_ylim(0, 100)
    ax.set_title(title or f"Adversarial Filtering, {report['contexts_4way']} contexts")
    ax.legend(fontsize=8, loc="upper right")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    out = Path(path)
    fig.savefig(out)
    plt.close(fig)
    return out
