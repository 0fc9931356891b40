"""``medlink kb build``: read one or more sources into a single KB file, atomically.

A source is written ``FORMAT[=PREFIX]:PATH``. ``PREFIX`` overrides the format's id namespace
(``umls=:META`` keeps raw CUIs; ``biosyn=MESH:medic.txt`` namespaces a dictionary). Several
sources make a composite KB; facts about the same id from several sources are merged.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from tqdm import tqdm

from medlink.errors import MedlinkError
from medlink.kb.errors_policy import InvalidLinePolicy
from medlink.kb.readers import READERS, read_source
from medlink.kb.writer import FinishReport, KBWriter
from medlink.text.normalize import Normalizer, normalize


@dataclass(frozen=True)
class SourceSpec:
    """One ``FORMAT[=PREFIX][:PATH]`` argument, parsed and checked against the known formats."""

    format: str
    path: Path | None
    prefix: str

    @classmethod
    def parse(cls, text: str) -> "SourceSpec":
        """Parse ``FORMAT[=PREFIX][:PATH]``; unknown formats and missing paths are reported with the fix."""
        head, sep, path = text.partition(":")
        format_name, has_prefix, prefix = head.partition("=")
        if format_name not in READERS:
            known = ", ".join(sorted(READERS))
            raise MedlinkError(f"unknown KB format {format_name!r} in {text!r}; known formats: {known}, default")
        spec = READERS[format_name]
        if not path and spec.path_kind != "optional-file":
            raise MedlinkError(f"{text!r}: format {format_name!r} needs a path ({spec.description}); write {format_name}:PATH")
        return cls(format_name, Path(path) if path else None, prefix if has_prefix else spec.default_prefix)

    def __str__(self) -> str:
        head = self.format if self.prefix == READERS[self.format].default_prefix else f"{self.format}={self.prefix}"
        return f"{head}:{self.path}" if self.path else head


@dataclass
class BuildReport:
    """What a build read, skipped and changed; printed by the CLI, stored in the KB's meta."""

    path: Path
    checksum: str
    seconds: float
    records: dict[str, int] = field(default_factory=dict)
    skipped: dict[str, int] = field(default_factory=dict)
    skip_reasons: dict[str, str] = field(default_factory=dict)
    finish: FinishReport = field(default_factory=FinishReport)

    @property
    def total_skipped(self) -> int:
        return sum(self.skipped.values())


def expand_sources(sources: Iterable[str | SourceSpec]) -> list[SourceSpec]:
    """Parse source arguments; ``default`` stands for the embedded default KB's sources (ICD-10-CM + HPO)."""
    specs: list[SourceSpec] = []
    for source in sources:
        if source == "default":
            from medlink.kb.default import default_sources  # late: default.py builds with this module

            specs.extend(default_sources())
        else:
            specs.append(source if isinstance(source, SourceSpec) else SourceSpec.parse(source))
    return specs


def build_kb(
    out: Path | str,
    sources: Iterable[str | SourceSpec],
    *,
    skip_invalid: bool = False,
    normalizer: Normalizer = normalize,
    progress: bool = True,
    extra_meta: dict[str, str] | None = None,
) -> BuildReport:
    """Build a KB file at ``out`` from the given sources; on any failure nothing is left at ``out``."""
    out = Path(out)
    specs = expand_sources(sources)
    if not specs:
        raise MedlinkError("no KB source given; write FORMAT:PATH, e.g. obo:hp.obo")
    out.parent.mkdir(parents=True, exist_ok=True)
    temporary = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    temporary.unlink(missing_ok=True)
    started = time.perf_counter()
    writer = KBWriter(temporary, normalizer)
    report = BuildReport(out, "", 0.0)
    try:
        with tqdm(desc=f"building {out.name}", unit=" records", unit_scale=True, disable=not progress, mininterval=0.5) as bar:
            for position, spec in enumerate(specs):
                policy = InvalidLinePolicy(skip_invalid=skip_invalid)
                writer.add_source(position, spec.format, str(spec.path) if spec.path else None, spec.prefix)
                bar.set_postfix_str(spec.format + (f":{spec.path.name}" if spec.path else ""))
                count = writer.write(read_source(spec.format, spec.path, prefix=spec.prefix, policy=policy), on_batch=bar.update)
                writer.set_source_counts(position, count, policy.total_skipped)
                report.records[str(spec)] = count
                if policy.total_skipped:
                    report.skipped[str(spec)] = policy.total_skipped
                    report.skip_reasons.update(policy.first_reasons)
            bar.set_postfix_str("indexing")
            meta = {"sources": " ".join(str(s) for s in specs), "built_at": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
            report.checksum, report.finish = writer.finish({**meta, **(extra_meta or {})})
        os.replace(temporary, out)
    except BaseException:
        writer.abort()
        temporary.unlink(missing_ok=True)
        raise
    report.seconds = time.perf_counter() - started
    return report
