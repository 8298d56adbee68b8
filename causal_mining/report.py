"""The statistics report of a mining run: JSON for machines, Markdown for people.

Examples
--------
>>> r = {"pairs": 2, "pairs_per_pattern": {"because": 2}, "pairs_per_class": {"EPC": 2},
...      "pairs_per_category": {"EXPLANATION": 2}, "drops": {"negated": 1},
...      "skipped_input": {}, "warnings": [], "text_bytes": 2_000_000, "input_bytes": 500_000,
...      "wall_seconds": 1.0, "workers": 2, "sentences": 10, "files": 1}
>>> print(render_markdown(r).splitlines()[0])
# CausalBank mining report
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from causal_mining.merge import MergeResult
from causal_mining.worker import part_folder
from dpc_files import atomic_open, read_json, write_json

__all__ = ["build_report", "render_markdown", "write_report"]

_BATCH_COUNTS = (
    "chars", "paragraphs", "boilerplate_paragraphs", "sentences", "prescan_sentences",
    "candidate_sentences", "tagged_sentences", "pairs",
)


def build_report(
    out: Path,
    summaries: Sequence[dict[str, Any]],
    merged: MergeResult,
    *,
    engine: str,
    workers: int,
    wall_seconds: float,
) -> dict[str, Any]:
    """Aggregate the batch statistics, reader statistics and merge counts into one report."""
    totals: Counter[str] = Counter()
    drops: Counter[str] = Counter()
    skipped: Counter[str] = Counter()
    warnings: list[str] = []
    cpu = 0.0
    read_totals: Counter[str] = Counter()
    for summary in sorted(summaries, key=lambda s: s["index"]):
        read = summary["read"]
        for key in ("files", "input_bytes", "text_bytes", "documents"):
            read_totals[key] += read[key]
        skipped.update(read["skipped"])
        warnings.extend(read["warnings"])
        folder = part_folder(out, summary["index"])
        for batch in range(summary["batches"]):
            stats = read_json(folder / f"{batch:06d}.json")
            for key in _BATCH_COUNTS:
                totals[key] += stats.get(key, 0)
            drops.update(stats["drops"])
            cpu += stats["cpu_seconds"]
    drops.update(merged.drops)
    text_mb = read_totals["text_bytes"] / 1e6
    return {
        "engine": engine,
        "workers": workers,
        "files": read_totals["files"],
        "input_bytes": read_totals["input_bytes"],
        "text_bytes": read_totals["text_bytes"],
        "documents": read_totals["documents"],
        **{key: totals[key] for key in _BATCH_COUNTS if key != "pairs"},
        "pairs_before_global_dedup": totals["pairs"],
        "pairs": merged.pairs,
        "pairs_per_pattern": dict(merged.per_pattern.most_common()),
        "pairs_per_class": dict(sorted(merged.per_class.items())),
        "pairs_per_category": dict(merged.per_category.most_common()),
        "drops": dict(drops.most_common()),
        "skipped_input": dict(sorted(skipped.items())),
        "warnings": warnings[:200],
        "shards": merged.shards,
        "wall_seconds": round(wall_seconds, 2),
        "extract_cpu_seconds": round(cpu, 2),
        "mb_per_s": round(text_mb / wall_seconds, 3) if wall_seconds else None,
        "mb_per_s_per_core": round(text_mb / wall_seconds / workers, 3) if wall_seconds else None,
        "mined_batches": sum(s.get("mined_batches", 0) for s in summaries),
        # a file found complete (DONE.json) counts all its batches as resumed
        "resumed_batches": sum(s.get("resumed_batches", s["batches"]) for s in summaries),
    }


def _table(title: str, counts: dict[str, int], total: int | None = None) -> list[str]:
    lines = [f"## {title}", "", "| | count |" + (" share |" if total else ""),
             "|---|---:|" + ("---:|" if total else "")]
    for key, value in counts.items():
        share = f" {100 * value / total:.1f}% |" if total else ""
        lines.append(f"| {key} | {value:,} |{share}")
    return lines + [""]


def render_markdown(report: dict[str, Any]) -> str:
    """The report as Markdown tables."""
    pairs = report["pairs"]
    lines = [
        "# CausalBank mining report",
        "",
        f"- pairs: **{pairs:,}** from {report.get('sentences', 0):,} sentences in "
        f"{report['files']} files ({report['text_bytes'] / 1e6:.1f} MB of text, "
        f"{report['input_bytes'] / 1e6:.1f} MB on disk)",
        f"- wall time: {report['wall_seconds']} s with {report['workers']} workers "
        f"({report.get('engine', 'local')} engine): {report.get('mb_per_s')} MB/s, "
        f"{report.get('mb_per_s_per_core')} MB/s per core",
        "",
    ]
    lines += _table("Pairs per pattern", report["pairs_per_pattern"], pairs)
    lines += _table("Pairs per class", report["pairs_per_class"], pairs)
    lines += _table("Pairs per category", report["pairs_per_category"], pairs)
    lines += _table("Drops per filter", report["drops"])
    if report["skipped_input"]:
        # "truncated": compressed files that break off (what was read before the break is
        # mined); "symlink_out_of_input": links not followed (--follow-symlinks)
        lines += _table("Skipped input", report["skipped_input"])
    if report["warnings"]:
        lines += ["## Warnings (first ones)", ""] + [f"- {w}" for w in report["warnings"][:50]]
    return "\n".join(lines) + "\n"


def write_report(out: Path, report: dict[str, Any]) -> None:
    """Write ``report.json`` and ``report.md`` into ``out``."""
    write_json(Path(out) / "report.json", report)
    with atomic_open(Path(out) / "report.md") as handle:
        handle.write(render_markdown(report))
