"""Cells, tables and provenance lines shared by every part of BENCHMARKS.md's generator (``report*.py``).

A figure is shown as its results file holds it; a 95% interval beside it in brackets where the run recorded one. A
section names its runs once, in provenance lines (results file, CPU, commit, command), never per row.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
FLAGS = {"avx2": "AVX2", "avx512f": "AVX-512", "avx512_bf16": "AVX512-BF16", "amx_bf16": "AMX"}
NUMERIC = re.compile(r"^[\d,.+-]+([-/→ ][\d,.]+)*( ?\[[\d.-]+\])?(%| |$)")  # a right-aligned cell: 0.9177, 1,751, 3.6 min
PROSE_WIDTH = 300  # a prose line longer than this is cut at a space (Markdown joins the lines again)


def interval_cell(bounds, digits: int = 3) -> str:
    """`` [low-high]`` for a results file's ``[low, high]`` pair; nothing for a run that recorded none (older files)."""
    if not bounds or any(b is None for b in bounds):
        return ""
    return f" [{bounds[0]:.{digits}f}-{bounds[1]:.{digits}f}]"


def acc(value: float | None, std: float | None = None, digits: int = 4) -> str:
    return "-" if value is None else f"{value:.{digits}f}" + (f" (sd {std:.3f})" if std is not None else "")


def secs(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.2f} s" if value < 10 else f"{value:.1f} s" if value < 100 else f"{value / 60:.1f} min"


def mb(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f} MB"


def num(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}"


def arrow(before: float | None, after: float | None, digits: int = 4) -> str:
    """'0.8210 → 0.8302': a setting off, then on."""
    return f"{acc(before, digits=digits)} → {acc(after, digits=digits)}"


def cpu(data: dict) -> str:
    """The CPU a result was measured on, as its JSON recorded it: model name and the SIMD flags that decide speed."""
    machine = data.get("machine") or {}
    if not machine.get("cpu_model"):
        return "CPU not recorded"
    flags = [label for flag, label in FLAGS.items() if (machine.get("cpu_flags") or {}).get(flag)]
    return f"{machine['cpu_model']} ({' '.join(flags) or 'no AVX2'})"


def short_cpu(data: dict) -> str:
    """The headline's CPU cell: 'AMD EPYC, AVX-512 with bf16', 'Intel Xeon, AVX-512', 'AMD EPYC, AVX2 only', 'not recorded'
    (native bf16 named: there bf16 encodes faster than float32, on an AVX2-only CPU several times slower)."""
    machine = data.get("machine") or {}
    if not machine.get("cpu_model"):
        return "not recorded"
    model = re.sub(r"\(R\)|\(TM\)|\bProcessor\b|\bCPU\b|@.*$", "", machine["cpu_model"]).strip()
    model = " ".join(model.split())
    flags = machine.get("cpu_flags") or {}
    vector = "AVX-512" if flags.get("avx512f") else "AVX2 only" if flags.get("avx2") else "no AVX2"
    return f"{model}, {vector}" + (" with bf16" if flags.get("avx512_bf16") else "")


def current_command(command: str) -> str:
    """A recorded command with each benchmark script at its current path (the JSON keeps the command as it ran)."""
    def moved(match: re.Match) -> str:
        path = match.group(0)
        if (ROOT / path).exists():
            return path
        found = sorted(HERE.glob(f"*/{Path(path).name}"))
        return str(found[0].relative_to(ROOT)) if len(found) == 1 else path
    return re.sub(r"benchmarks/[\w/]+\.py", moved, command)


def command_of(data: dict) -> str:
    """The command a results file records (a before / after file: its last run's)."""
    if data.get("command"):
        return current_command(data["command"])
    runs = [run for run in (data.get("by_label") or {}).values() if isinstance(run, dict) and run.get("command")]
    return current_command(runs[-1]["command"]) if runs else "-"


def run_line(name: str, data: dict) -> str:
    """One provenance line: Run results file (CPU[, load average at its start]; commit): command."""
    at_start = data.get("load_average_at_start")  # runs on the shared machine that took it: how busy it was
    load = f", load average {at_start[0]:.1f} at start" if at_start else ""
    return f"- Run `{name}` ({cpu(data)}{load}; {data.get('commit', '-')}): `{command_of(data)}`"


def table(columns: list[str], rows: list[list[str]]) -> list[str]:
    """A Markdown table; a column whose cells are all figures (or '-') is right-aligned."""
    def numeric(i: int) -> bool:
        cells = [row[i] for row in rows if row[i] != "-"]
        return bool(cells) and all(NUMERIC.match(c) for c in cells)
    escape = lambda cell: str(cell).replace("|", "\\|")  # noqa: E731
    lines = ["| " + " | ".join(columns) + " |", "| " + " | ".join("---:" if numeric(i) else "---" for i in range(len(columns))) + " |"]
    return lines + ["| " + " | ".join(escape(c) for c in row) + " |" for row in rows]


def wrap(text: str, width: int = PROSE_WIDTH) -> list[str]:
    """A prose line cut at spaces into lines of at most ``width`` characters (a bullet's lines indented under it)."""
    if len(text) <= width:
        return [text]
    indent = "  " if text.startswith("- ") else ""
    return textwrap.wrap(text, width, subsequent_indent=indent, break_long_words=False, break_on_hyphens=False)


def slug(heading: str) -> str:
    """The anchor GitHub gives a Markdown heading: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lstrip("#").strip().lower())
    return text.replace(" ", "-")


@dataclass
class Section:
    """One part of BENCHMARKS.md: a heading, a line saying what is measured, compact tables and bullets, its runs.

    A later benchmark adds a Section (and, if users ask for its figure first, a headline row): the file's line budget
    is kept by keeping each section short, not by the generator.
    """
    title: str
    intro: str = ""
    body: list[str] = field(default_factory=list)
    runs: list[tuple[str, dict]] = field(default_factory=list)
    paired_runs: bool = False  # two runs' provenance on one line where together within PROSE_WIDTH (a section short of lines)

    @property
    def anchor(self) -> str:
        return slug(self.title)

    def add_runs(self, runs) -> None:
        for name, data in runs:
            if all(name != shown for shown, _ in self.runs):
                self.runs.append((name, data))

    def lines(self, notes: list[str] = ()) -> list[str]:
        """Heading, intro, body; then the notes and the runs as one list (after the body's bullets, if it ends with some)."""
        body = list(self.body)
        while body and not body[-1]:
            body.pop()
        out = [f"## {self.title}"]  # no blank line under the heading: Markdown needs none, and the file has a line budget
        if self.intro:
            out += [*wrap(self.intro), ""]
        out += [wrapped for line in body for wrapped in (wrap(line) if line and line[0] != "|" else [line])]
        tail = [wrapped for note in notes for wrapped in wrap(note)] + self.run_lines()
        if body and tail and not body[-1].startswith(("- ", "  ")):
            out.append("")
        return out + tail + [""]

    def run_lines(self) -> list[str]:
        """One provenance line a run; with ``paired_runs``, two runs on one line ('- Run `a` ...; run `b` ...') where that fits,
        a run joining the first line before it that is alone and has room."""
        lines = [run_line(name, data) for name, data in self.runs]
        if not self.paired_runs:
            return lines
        out: list[str] = []
        for line in lines:
            alone = next((i for i, held in enumerate(out) if "; run `" not in held and len(held) + len(line) <= PROSE_WIDTH), None)
            if alone is None:
                out.append(line)
            else:
                out[alone] += "; r" + line[3:]
        return out
