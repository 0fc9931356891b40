"""An evaluation's results in the three forms people use: JSON for tools, Markdown for docs, a PNG chart.

Rates are stored as fractions (0.911); Markdown shows percentages. ``timing`` and ``meta`` are
filled by the caller (index build time, mentions per second, KB checksum, linker settings).
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from medlink.directories import json_has_keys, require_replaceable, staged_directory, write_atomic
from medlink.errors import MedlinkError
from medlink.eval.intervals import REPLICATES, percent_range, signed_points

DEFAULT_COLUMNS = ("n", "acc@1", "acc@5", "mrr", "recall@64", "nrecall@1")


@dataclass
class EvalReport:
    """Overall metrics, one metrics dict per subpopulation, per-mention records, timing and metadata."""

    metrics: dict[str, Any]
    subpopulations: dict[str, dict[str, Any]] = field(default_factory=dict)
    records: list[dict[str, Any]] = field(default_factory=list)
    timing: dict[str, float] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)
    calibration: dict[str, Any] | None = None  # ECE and reliability bins of the first candidates' probabilities (calibrated indexes)
    nil: dict[str, Any] | None = (
        None  # what the index's NIL threshold left unlinked, and the links' precision / recall (harness.nil_decisions)
    )
    nil_all: dict[str, Any] | None = (
        None  # with mentions annotated CUI-less (id -1) too: NIL P / R / F1, Schumacher et al. (2020)'s Accuracy / MRR (nil.annotated_nil)
    )
    first_candidates: list[tuple[float, bool]] = field(default_factory=list, repr=False)  # (probability, right): the diagram's points
    intervals: dict[str, Any] = field(default_factory=dict)  # 95% bootstrap intervals per metric, and what was resampled (eval.intervals)
    against_baseline: dict[str, Any] | None = None  # Acc@k / MRR minus an earlier report's, paired intervals (eval.compare)

    def __getitem__(self, key: str) -> Any:
        return self.metrics[key]

    def to_dict(self, *, include_records: bool = False) -> dict[str, Any]:
        """One object: the overall metrics at top level, then subpopulations, timing, meta (and records)."""
        out: dict[str, Any] = dict(self.metrics)
        out["subpopulations"] = self.subpopulations
        out["timing"] = self.timing
        out["meta"] = self.meta
        if self.calibration is not None:
            out["calibration"] = self.calibration
        if self.nil is not None:
            out["nil"] = self.nil
        if self.nil_all is not None:
            out["nil_all"] = self.nil_all
        if self.intervals:
            out["intervals"] = self.intervals
        if self.against_baseline is not None:
            out["against_baseline"] = self.against_baseline
        if include_records:
            out["records"] = self.records
        return out

    def to_json(self, *, include_records: bool = False, indent: int | None = 2) -> str:
        return json.dumps(
            self.to_dict(include_records=include_records), indent=indent, ensure_ascii=False, allow_nan=False, default=_json_default
        )

    def to_markdown(self, columns: tuple[str, ...] = DEFAULT_COLUMNS) -> str:
        """A table: one row for all mentions, then one per subpopulation; rates as percentages."""
        columns = tuple(c for c in columns if c in self.metrics)
        header = "| subset | " + " | ".join(columns) + " |"
        rule = "| --- | " + " | ".join("---:" for _ in columns) + " |"
        rows = [("all", self.metrics)] + list(self.subpopulations.items())
        lines = [header, rule]
        for name, values in rows:
            lines.append(f"| {name} | " + " | ".join(_cell(c, values.get(c)) for c in columns) + " |")
        shown = [(c, self.intervals[c]) for c in (*columns, "ece") if self.intervals.get(c)]
        if shown:
            unit = "whole documents" if self.intervals.get("resampled") == "documents" else "mentions"
            lines += [
                "",
                f"95% intervals ({unit} resampled, {REPLICATES:,} times): "
                + "; ".join(f"{c} {_interval_cell(c, bounds)}" for c, bounds in shown)
                + ".",
            ]
        if self.against_baseline is not None:
            versus = self.against_baseline
            shown = [(c, versus[c]) for c in (*columns, "mrr") if isinstance(versus.get(c), dict)]
            lines += [
                "",
                f"Against the baseline, in points (paired 95% interval; one that holds 0 is no difference these mentions can tell; "
                f"{versus['better']:,} mentions right at 1 only here, {versus['worse']:,} only there): "
                + "; ".join(f"{c} {100 * v['difference']:+.1f}{signed_points(v['interval'])}" for c, v in dict(shown).items())
                + ".",
            ]
        if self.calibration is not None:
            lines += [
                "",
                f"Calibration of the first candidates' probabilities: ECE {self.calibration['ece']:.4f} over {self.calibration['n']:,} mention parts.",
            ]
        if self.nil is not None:
            nil = self.nil
            lines += [
                "",
                f"NIL threshold: {nil['nil']:,} of {nil['n']:,} mentions left unlinked ({nil['nil_first_right']:,} of them with a "
                f"right first candidate); the links a user gets: precision {100 * nil['linked_precision']:.1f}, recall "
                f"{100 * nil['linked_recall']:.1f}, F1 {100 * nil['linked_f1']:.1f} (Acc@1 above scores the ranking alone).",
            ]
        if self.nil_all is not None:
            every = self.nil_all
            lines += [
                "",
                f"With the {every['gold_nil']:,} mentions annotated without a concept (CUI-less), {every['mentions']:,} in all: NIL "
                f"precision {100 * every['nil_precision']:.1f}, recall {100 * every['nil_recall']:.1f}, F1 {100 * every['nil_f1']:.1f}; "
                f"Accuracy {100 * every['accuracy_all']:.1f} and MRR {100 * every['mrr_all']:.1f} over all of them (NIL ranked "
                "as a candidate where the threshold falls).",
            ]
        return "\n".join(lines) + "\n"

    def write_records(self, path: Path | str) -> Path:
        """Per-mention records as JSON Lines, for error analysis (written atomically)."""
        text = "".join(json.dumps(r, ensure_ascii=False, allow_nan=False, default=_json_default) + "\n" for r in self.records)
        return write_atomic(Path(path), text.encode("utf-8"))

    def plot(self, path: Path | str, metric: str = "acc@1") -> Path:
        """A PNG bar chart of ``metric`` for all mentions and each subpopulation (n in each label); written atomically."""
        from matplotlib.backends.backend_agg import FigureCanvasAgg  # lazy: keeps `import medlink.eval` fast
        from matplotlib.figure import Figure

        rows = [("all", self.metrics)] + [(k, v) for k, v in self.subpopulations.items() if v.get("n")]
        labels = [f"{name} (n={values['n']})" for name, values in rows]
        values = [100 * (v.get(metric) or 0.0) for _, v in rows]
        figure = Figure(figsize=(7.5, 1.2 + 0.35 * len(rows)), dpi=100)
        FigureCanvasAgg(figure)
        axes = figure.add_subplot()
        positions = range(len(rows))[::-1]  # "all" on top
        bars = axes.barh(list(positions), values, color=["#444444"] + ["#4c78a8"] * (len(rows) - 1))
        axes.bar_label(bars, labels=[f"{v:.1f}" for v in values], padding=2, fontsize=8)
        axes.set_yticks(list(positions), labels, fontsize=8)
        axes.set_xlim(0, 110)
        axes.set_xlabel(f"{metric} (%)")
        if self.meta.get("title"):
            axes.set_title(str(self.meta["title"]))
        figure.tight_layout()
        buffer = io.BytesIO()
        figure.savefig(buffer, format="png")
        return write_atomic(Path(path), buffer.getvalue())


def _interval_cell(column: str, bounds: list[float]) -> str:
    return f"{bounds[0]:.4f}-{bounds[1]:.4f}" if column == "ece" else percent_range(bounds)


def _cell(column: str, value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, int) or column in ("n", "found") or column.startswith("hits@"):
        return str(value)
    return f"{100 * value:.1f}"


def _json_default(value: Any) -> Any:
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def mean_over_folds(reports: list[EvalReport], keys: tuple[str, ...] = ("acc@1", "acc@5", "mrr")) -> dict[str, Any]:
    """Mean and population std of each rate over cross-validation folds (the AskAPatient protocol reports the mean)."""
    out: dict[str, Any] = {"folds": len(reports), "n": sum(r.metrics["n"] for r in reports)}
    for key in keys:
        values = [r.metrics[key] for r in reports if r.metrics.get(key) is not None]
        mean = sum(values) / len(values) if values else None
        out[key] = mean
        out[f"{key} std"] = (sum((v - mean) ** 2 for v in values) / len(values)) ** 0.5 if values else None
    return out


REPORT = "report.json"


def is_report_json(path: Path) -> bool:
    """Did medlink eval write this report.json? (What --out checks before replacing a folder.)"""
    return json_has_keys(path, ("subpopulations", "timing", "meta"))


def require_report_folder(out: Path, inputs: dict[str, Path | None] | None = None) -> None:
    """--out must be new, empty or an earlier report folder, and none of the run's ``inputs`` (option -> folder read,
    such as --baseline); checked before the evaluation runs."""
    for option, path in (inputs or {}).items():
        if path is not None and Path(path).exists() and Path(out).exists() and Path(path).resolve() == Path(out).resolve():
            raise MedlinkError(f"--out {out} is the {option} this run reads; write the report to another folder (nothing was written)")
    require_replaceable(out, REPORT, "an eval report folder", is_report_json)


def save_report(report: EvalReport, out: Path) -> Path:
    """report.json, report.md, subpopulations.png and records.jsonl, built aside and swapped in whole."""
    require_report_folder(out)
    with staged_directory(out) as staging:
        (staging / REPORT).write_text(report.to_json(), encoding="utf-8")
        (staging / "report.md").write_text(report.to_markdown() + "\n", encoding="utf-8")
        report.plot(staging / "subpopulations.png")
        if report.first_candidates:
            from medlink.eval.calibration import reliability_diagram

            points = report.first_candidates
            reliability_diagram(
                {"index": ([p for p, _ in points], [r for _, r in points])},
                staging / "reliability.png",
                "first candidates: share right against probability",
            )
        report.write_records(staging / "records.jsonl")
    return out
