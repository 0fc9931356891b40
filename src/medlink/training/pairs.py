"""``medlink train pairs``: mine training pairs from a KB with Kong et al. (2021)'s learning tasks.

Tasks: ``syn`` (names of one concept), ``graph`` (preferred names of connected concepts),
``icd`` (ICD-10-CM title concatenation / inclusion terms <-> code description), and ``comb``
(the selected tasks down-sampled to the size of the smallest, merged and shuffled). Concepts are
split 80:20 into train and dev *before* mining, so dev pairs test concepts never seen in
training. Output (in ``out``): ``pairs.train.tsv``, ``pairs.dev.tsv``, ``negatives.tsv`` (hard
negatives from excludes relations) and ``pairs.json``; every file is written to a temporary name
and renamed, ``pairs.json`` last, so an interrupted run leaves the previous output intact.
Rows are grouped by task and concept unless ``comb`` shuffles them: a trainer should shuffle.
"""

from __future__ import annotations

import json
import math
import shutil
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO

import numpy as np

from medlink.directories import atomic_file, json_has_keys, output_lock, require_replaceable, staged_directory
from medlink.errors import MedlinkError
from medlink.inventory import claim
from medlink.kb.store import KB
from medlink.training.pairs_graph import CROSS, ConceptTable, graph_pairs, negative_rows
from medlink.training.pairs_io import NEGATIVE_COLUMNS, PAIR_COLUMNS, Row, tsv_line
from medlink.training.pairs_split import DEV, SPLITS, TRAIN, NodeSplit
from medlink.training.pairs_tasks import TaskStats, icd_pairs, syn_pairs

TASKS = ("syn", "graph", "icd")
DEFAULT_TASKS = ("syn", "graph")
DEFAULT_MAX_PAIRS_PER_CONCEPT = 10
_BUCKET_ROWS = 1_000_000  # comb shuffles in buckets of about this many rows to bound memory


@dataclass
class PairsReport:
    """What ``mine_pairs`` wrote; also stored as ``pairs.json`` beside the pairs."""

    out: str
    tasks: list[str]
    comb: bool
    counts: dict[str, dict[str, int]]  # task -> split -> mined pairs (before comb down-sampling)
    written: dict[str, int]  # split -> rows in pairs.{split}.tsv
    dropped_cross_split: dict[str, int]  # task -> pairs whose two concepts are on different sides
    capped: dict[str, int]  # task -> pairs left out by the per-concept cap
    detail: dict[str, dict[str, int]]  # task -> e.g. pairs per relation or per name-kind pair
    negatives: dict[str, int]  # train | dev | cross | dangling -> rows of negatives.tsv
    concepts: dict[str, int]  # split -> concepts
    comb_per_task: dict[str, int] | None  # split -> pairs taken from each task
    parameters: dict
    kb: dict[str, str | None]
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def to_json(self) -> dict:
        return asdict(self)

    def summary(self) -> str:
        """A few human-readable lines for the CLI."""
        lines = [f"pairs written to {self.out} in {self.seconds:.1f}s (train {self.written[TRAIN]:,}, dev {self.written[DEV]:,})"]
        for task, counts in self.counts.items():
            lines.append(
                f"  {task}: train {counts[TRAIN]:,}, dev {counts[DEV]:,}"
                f" (dropped across the split {self.dropped_cross_split[task]:,}, over the cap {self.capped[task]:,})"
            )
        if self.comb_per_task is not None:
            lines.append(f"  comb: {self.comb_per_task[TRAIN]:,} (train) / {self.comb_per_task[DEV]:,} (dev) pairs per task")
        lines.append("  negatives: " + ", ".join(f"{k} {v:,}" for k, v in self.negatives.items()))
        lines.extend(f"  note: {note}" for note in self.notes)
        return "\n".join(lines)


def is_pairs_json(path: Path) -> bool:
    """Did 'medlink train pairs' write this pairs.json? (What --out checks before writing into a folder.)"""
    return json_has_keys(path, ("tasks", "written", "parameters", "kb"))


def parse_tasks(tasks: str | Iterable[str], comb: bool = False) -> tuple[list[str], bool]:
    """Task names from ``"syn,graph"`` or a list; ``comb`` alone means every task, combined."""
    names = [t.strip() for t in (tasks.split(",") if isinstance(tasks, str) else tasks) if t.strip()]
    unknown = sorted(set(names) - {*TASKS, "comb"})
    if unknown:
        raise MedlinkError(f"unknown pair task(s) {', '.join(unknown)}; known tasks: {', '.join(TASKS)}, comb")
    comb = comb or "comb" in names
    selected = list(dict.fromkeys(t for t in names if t != "comb"))
    if not selected:
        if not comb:
            raise MedlinkError(f"no pair task given; known tasks: {', '.join(TASKS)}, comb")
        selected = list(TASKS)
    return selected, comb


def _comb(task_files: dict[str, Path], sizes: dict[str, int], target: IO[str], rng: np.random.Generator, work: Path) -> tuple[int, int]:
    """Down-sample every non-empty task to the smallest one's size, merge, shuffle; (per task, written)."""
    present = [task for task in task_files if sizes[task]]
    if not present:
        return 0, 0
    per_task = min(sizes[task] for task in present)
    bucket_paths = [work / f"comb.bucket{i}" for i in range(max(1, math.ceil(per_task * len(present) / _BUCKET_ROWS)))]
    buckets = [open(path, "w", encoding="utf-8", newline="\n") for path in bucket_paths]
    try:
        for task in present:
            chosen = np.zeros(sizes[task], dtype=bool)
            chosen[rng.choice(sizes[task], size=per_task, replace=False)] = True
            where = rng.integers(0, len(buckets), size=per_task)
            taken = 0
            with open(task_files[task], encoding="utf-8", newline="\n") as rows:
                for index, row in enumerate(rows):
                    if chosen[index]:
                        buckets[where[taken]].write(row)
                        taken += 1
    finally:
        for bucket in buckets:
            bucket.close()
    for path in bucket_paths:
        with open(path, encoding="utf-8", newline="\n") as bucket:
            rows = bucket.readlines()
        rng.shuffle(rows)
        target.writelines(rows)
        path.unlink()
    return per_task, per_task * len(present)


def _generators(
    kb: KB, split: NodeSplit, cap: int | None, seed: int, progress: bool
) -> dict[str, Callable[[TaskStats], Iterator[tuple[str, Row]]]]:
    table: list[ConceptTable] = []  # loaded once, only if the graph task runs

    def graph(stats: TaskStats) -> Iterator[tuple[str, Row]]:
        table.append(ConceptTable.load(kb, split))
        return graph_pairs(kb, table[0], cap, seed, stats, progress)

    return {
        "syn": lambda stats: syn_pairs(kb, split, cap, seed, stats, progress),
        "graph": graph,
        "icd": lambda stats: icd_pairs(kb, split, cap, seed, stats, progress),
    }


def mine_pairs(
    kb: KB | Path | str,
    out: Path | str,
    tasks: str | Iterable[str] = DEFAULT_TASKS,
    *,
    max_pairs_per_concept: int | None = DEFAULT_MAX_PAIRS_PER_CONCEPT,
    seed: int = 13,
    dev_fraction: float = 0.2,
    comb: bool = False,
    progress: bool = True,
) -> PairsReport:
    """Mine the pairs of ``tasks`` from ``kb`` into ``out`` (see the module docstring for the files).

    ``max_pairs_per_concept`` caps synonym and ICD pairs per concept, and graph pairs per concept
    as head and as tail (``None``: no cap). ``seed`` fixes the split and every random choice.
    """
    if not isinstance(kb, KB):
        with KB.open(kb) as opened:
            return mine_pairs(
                opened,
                out,
                tasks,
                max_pairs_per_concept=max_pairs_per_concept,
                seed=seed,
                dev_fraction=dev_fraction,
                comb=comb,
                progress=progress,
            )
    started = time.perf_counter()
    selected, comb = parse_tasks(tasks, comb)
    if not 0.0 <= dev_fraction < 1.0:
        raise MedlinkError(f"the dev fraction (--dev-fraction) must be in [0, 1): 1 would leave no training pairs; got {dev_fraction}")
    if max_pairs_per_concept is not None and max_pairs_per_concept < 1:
        raise MedlinkError(f"the cap of pairs per concept (--per-concept) must be at least 1, got {max_pairs_per_concept}")
    out = Path(out)
    require_replaceable(out, "pairs.json", "a pairs folder ('medlink train pairs' output)", is_pairs_json)
    out.mkdir(parents=True, exist_ok=True)
    split = NodeSplit(seed, dev_fraction)
    generators = _generators(kb, split, max_pairs_per_concept, seed, progress)
    stats = {task: TaskStats() for task in selected}
    concepts = {TRAIN: 0, DEV: 0}
    for concept_id, _name in kb.iter_concepts():
        concepts[split.side(concept_id)] += 1
    with output_lock(out / "pairs.json"), staged_directory(out, merge=("negatives.tsv", "pairs.train.tsv", "pairs.dev.tsv")) as work:
        task_files = {(task, side): work / f"{task}.{side}.tsv" for task in selected for side in SPLITS}
        for task in selected:
            handles = {side: open(task_files[task, side], "w", encoding="utf-8", newline="\n") for side in SPLITS}
            try:
                for side, row in generators[task](stats[task]):
                    handles[side].write(tsv_line(row))
                    stats[task].counts[side] += 1
            finally:
                for handle in handles.values():
                    handle.close()
        negatives: dict[str, int] = {TRAIN: 0, DEV: 0, CROSS: 0}
        with open(work / "negatives.tsv", "w", encoding="utf-8", newline="\n") as handle:
            handle.write(tsv_line(NEGATIVE_COLUMNS))
            handle.writelines(tsv_line(row) for row in negative_rows(kb, split, negatives))
        written, comb_per_task = {}, {} if comb else None
        for index, side in enumerate(SPLITS):
            with open(work / f"pairs.{side}.tsv", "w", encoding="utf-8", newline="\n") as target:
                target.write(tsv_line(PAIR_COLUMNS))
                if comb:
                    files = {task: task_files[task, side] for task in selected}
                    sizes = {task: stats[task].counts[side] for task in selected}
                    comb_per_task[side], written[side] = _comb(files, sizes, target, np.random.default_rng([seed, index]), work)
                else:
                    for task in selected:
                        with open(task_files[task, side], encoding="utf-8", newline="\n") as rows:
                            shutil.copyfileobj(rows, target)
                    written[side] = sum(stats[task].counts[side] for task in selected)
    report = PairsReport(
        out=str(out),
        tasks=selected,
        comb=comb,
        counts={task: dict(s.counts) for task, s in stats.items()},
        written=written,
        dropped_cross_split={task: s.dropped_cross_split for task, s in stats.items()},
        capped={task: s.capped for task, s in stats.items()},
        detail={task: dict(sorted(s.detail.items())) for task, s in stats.items()},
        negatives=negatives,
        concepts=concepts,
        comb_per_task=comb_per_task,
        parameters={
            "tasks": selected,
            "comb": comb,
            "max_pairs_per_concept": max_pairs_per_concept,
            "seed": seed,
            "dev_fraction": dev_fraction,
        },
        kb={"path": str(kb.path), "checksum": kb.checksum, "name": kb.meta.get("name")},
        notes=[note for s in stats.values() for note in s.notes],
    )
    report.seconds = round(time.perf_counter() - started, 3)
    claim(out / "pairs.json", create=True)
    with atomic_file(out / "pairs.json") as handle:
        json.dump(report.to_json(), handle, indent=2)
        handle.write("\n")
    return report
