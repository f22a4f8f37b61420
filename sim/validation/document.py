"""The ``pfssim reproduce --report`` document: Markdown (figures as PNG files beside it) or HTML
(figures embedded as base64).

The document is built as a list of blocks (heading, paragraph, table, figure) from the same rows
the terminal and the JSON show (:mod:`sim.validation.report`), then rendered; the files are
written all or none.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from sim import __version__
from sim.errors import PfssimError
from sim.report.files import check_output_file, write_all
from sim.report.run import bottleneck_text
from sim.validation.figures import benchmark_png, unscored_png
from sim.validation.report import (
    INTERVALS_NOTE,
    NOT_CONVERGED_NOTE,
    POINT_COLUMNS,
    SUMMARY_COLUMNS,
    UNSCORED_COLUMNS,
    parameter_rows,
    point_row,
    shape_row,
    summary_rows,
    targets_text,
    unscored_rows,
)
from sim.validation.run import SEED
from sim.validation.score import BenchmarkScore, Reproduction

REPORT_FORMATS = (".md", ".html")


@dataclass(frozen=True)
class Heading:
    """A section title."""

    level: int
    text: str


@dataclass(frozen=True)
class Paragraph:
    """Plain text."""

    text: str


@dataclass(frozen=True)
class TableBlock:
    """A table of formatted cells."""

    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]


@dataclass(frozen=True)
class Figure:
    """A PNG figure with a name (used for the Markdown file) and a caption."""

    name: str
    png: bytes
    caption: str


Block = Heading | Paragraph | TableBlock | Figure


def _table(rows: Sequence[dict[str, str]], columns: Sequence[str]) -> TableBlock:
    return TableBlock(tuple(columns), tuple(tuple(row[c] for c in columns) for row in rows))


def _section(title: str, text: str) -> list[Block]:
    """A second-level heading and its introduction."""
    return [Heading(2, title), Paragraph(text)]


def build_report(repro: Reproduction) -> list[Block]:
    """The report's blocks, in order: summary, per benchmark, misses, shapes, pending, unscored, parameters."""
    blocks: list[Block] = [
        Heading(1, "pfssim reproduction of the published results"),
        Paragraph(
            f"pfssim {__version__}, seed {SEED}; systems: {', '.join(repro.systems)}; "
            f"{repro.simulated_points} points simulated in {repro.wall_s:.0f} s. Error = predicted / published - 1."
        ),
        Heading(2, "Summary"),
        Paragraph(targets_text(repro)),
        _table(summary_rows(repro), SUMMARY_COLUMNS),
        Paragraph(INTERVALS_NOTE),
    ]
    if repro.documents:
        blocks += _section(
            "Published sources",
            "Each system's measurements are transcribed, with their quotes, from one published document "
            "(validation/<system>.yaml; docs/sources.md names the files).",
        )
        rows = [{"system": system, "document": document} for system, document in repro.documents.items()]
        blocks.append(_table(rows, ["system", "document"]))
    blocks.append(Heading(2, "Points by system and benchmark"))
    for bench in repro.benchmarks:
        blocks += _benchmark_blocks(bench)
    blocks += _miss_blocks(repro)
    blocks.append(Heading(2, "Shapes"))
    rows = [{"system": s.system, "benchmark": s.benchmark, **shape_row(s)} for s in repro.shapes]
    blocks.append(_table(rows, ["system", "benchmark", "id", "statement", "verdict", "detail"]))
    if repro.pending:
        blocks.append(Heading(2, "Transcribed, not scored (pending)"))
        blocks.append(Paragraph("These published points cannot be scored yet; they are kept, so nothing is lost."))
        rows = [
            {
                "system": p.system,
                "benchmark": p.benchmark,
                "id": p.point.id,
                "op": p.point.op,
                "threads": str(p.point.threads or "-"),
                "published": p.point.value,
                "source": p.point.source,
                "reason": p.reason,
            }
            for p in repro.pending
        ]
        blocks.append(_table(rows, ["system", "benchmark", "id", "op", "threads", "published", "source", "reason"]))
    if repro.unscored:
        blocks += _section(
            "Unscored predictions (prediction, not scored)",
            "Systems and benchmarks whose results are not in the calibration data, run at a reduced set of "
            "thread counts. These are predictions only: nothing here is compared with a measurement.",
        )
        for run in repro.unscored:
            blocks.append(Heading(3, f"{run.system}: {run.workload} - prediction, not scored"))
            blocks.append(Paragraph(run.why))
            blocks.append(Figure(f"{run.system}-{run.workload}", unscored_png(run), f"{run.workload}, predicted"))
            blocks.append(_table(unscored_rows(run), UNSCORED_COLUMNS))
            if any(not p.converged for curve in run.curves.values() for p in curve):
                blocks.append(Paragraph(NOT_CONVERGED_NOTE))
    blocks.append(Heading(2, "Model parameters"))
    blocks.append(Paragraph("Every number the model uses that is not in a topology or a part (sim/params.py)."))
    blocks.append(_table(parameter_rows(), ["name", "value", "unit", "meaning", "source", "fitted on"]))
    return blocks


def _benchmark_blocks(bench: BenchmarkScore) -> list[Block]:
    blocks: list[Block] = [Heading(3, f"{bench.system}: {bench.benchmark} (workload {bench.workload})")]
    blocks.append(Figure(f"{bench.system}-{bench.benchmark}", benchmark_png(bench), f"{bench.benchmark}"))
    columns = [*POINT_COLUMNS, "predicted peak", "source", "quote", "how", "note"]
    blocks.append(_table([point_row(p) for p in bench.points], columns))
    if any(not p.comparison.converged for p in bench.points):
        blocks.append(Paragraph(NOT_CONVERGED_NOTE))
    return blocks


def _miss_blocks(repro: Reproduction) -> list[Block]:
    blocks: list[Block] = [Heading(2, "Misses and why")]
    misses = [p for p in repro.points if not p.within]
    failed = repro.failed_shapes
    if not repro.points and not repro.shapes:
        blocks.append(Paragraph("Nothing was scored: these systems have no published results here."))
        return blocks
    if not misses and not failed:
        blocks.append(Paragraph("Every scored point is within tolerance and every shape check holds."))
        return blocks
    blocks.append(
        Paragraph(
            "Each miss is a finding for the model, not for the tolerance; the reasons are kept in "
            "validation/known-misses.yaml."
        )
    )
    rows = []
    for p in misses:
        row = point_row(p)
        rows.append(
            {
                "system": p.system,
                "benchmark": p.benchmark,
                "what": f"point {row['id']}",
                "error": row["error"],
                "bottleneck": bottleneck_text(p.comparison.bottleneck, p.comparison.bottleneck_utilization),
                "why": row["why"] or "not in known-misses.yaml: a new miss",
            }
        )
    for s in failed:
        rows.append(
            {
                "system": s.system,
                "benchmark": s.benchmark,
                "what": f"shape {s.shape.id}",
                "error": s.outcome.detail,
                "bottleneck": "",
                "why": shape_row(s)["why"] or "not in known-misses.yaml: a new miss",
            }
        )
    blocks.append(_table(rows, ["system", "benchmark", "what", "error", "bottleneck", "why"]))
    return blocks


def _md_cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def render_markdown(blocks: Sequence[Block], figure_name: str = "{name}.png") -> tuple[str, dict[str, bytes]]:
    """Markdown text and the PNG files it links (file name -> bytes)."""
    lines: list[str] = []
    files: dict[str, bytes] = {}
    for block in blocks:
        if isinstance(block, Heading):
            lines += ["#" * block.level + " " + block.text, ""]
        elif isinstance(block, Paragraph):
            lines += [block.text, ""]
        elif isinstance(block, TableBlock):
            lines.append("| " + " | ".join(_md_cell(c) for c in block.columns) + " |")
            lines.append("|" + "|".join("---" for _ in block.columns) + "|")
            lines += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in block.rows]
            lines.append("")
        else:
            name = figure_name.format(name=block.name)
            files[name] = block.png
            lines += [f"![{block.caption}]({name})", ""]
    return "\n".join(lines), files


_CSS = (
    "body{font-family:sans-serif;max-width:1200px;margin:2em auto;padding:0 1em}"
    "table{border-collapse:collapse;margin:1em 0;font-size:90%}"
    "th,td{border:1px solid #bbb;padding:3px 6px;vertical-align:top;text-align:left}"
    "th{background:#eee}tr.miss td{background:#fde2e2}img{max-width:100%}"
)


def render_html(blocks: Sequence[Block]) -> str:
    """One HTML page with every figure embedded (base64 PNG)."""
    parts = [
        "<!DOCTYPE html>",
        '<html><head><meta charset="utf-8"><title>pfssim reproduction</title>',
        f"<style>{_CSS}</style></head><body>",
    ]
    for block in blocks:
        if isinstance(block, Heading):
            parts.append(f"<h{block.level}>{html.escape(block.text)}</h{block.level}>")
        elif isinstance(block, Paragraph):
            parts.append(f"<p>{html.escape(block.text)}</p>")
        elif isinstance(block, TableBlock):
            parts.append("<table><tr>" + "".join(f"<th>{html.escape(c)}</th>" for c in block.columns) + "</tr>")
            for row in block.rows:
                css = ' class="miss"' if ("MISS" in row or "FAIL" in row) else ""
                parts.append(f"<tr{css}>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>")
            parts.append("</table>")
        else:
            data = base64.b64encode(block.png).decode("ascii")
            parts.append(
                f'<figure><img alt="{html.escape(block.caption)}" src="data:image/png;base64,{data}">'
                f"<figcaption>{html.escape(block.caption)}</figcaption></figure>"
            )
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def check_report_path(path: Path) -> None:
    """Refuse a report file that is neither .md nor .html (before anything is simulated)."""
    if path.suffix.lower() not in REPORT_FORMATS:
        raise PfssimError(f"{path}: --report: the report file must end in .md or .html")
    check_output_file(path, "--report")


def write_report(repro: Reproduction, path: Path) -> list[Path]:
    """Write the report (and, for Markdown, its figures beside it); returns every file written."""
    check_report_path(path)
    blocks = build_report(repro)
    if path.suffix.lower() == ".html":
        write_all({path: render_html(blocks).encode("utf-8")})
        return [path]
    text, figures = render_markdown(blocks, f"{path.stem}-{{name}}.png")
    files = {path: text.encode("utf-8")} | {path.parent / name: data for name, data in figures.items()}
    write_all(files)  # the report and its figures, all or none
    return list(files)
