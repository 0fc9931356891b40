"""``medlink kb build``: read one or more sources into a single KB file, atomically.

A source is written ``FORMAT[=PREFIX]:PATH``. ``PREFIX`` overrides the format's id namespace
(``umls=:META`` keeps raw CUIs; ``biosyn=MESH:medic.txt`` namespaces a dictionary). Several
sources make a composite KB; facts about the same id from several sources are merged.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from medlink.directories import require_replaceable_file, staged_file
from medlink.errors import MedlinkError
from medlink.kb.errors_policy import InvalidLinePolicy
from medlink.kb.readers import read_source
from medlink.kb.schema import is_kb_file
from medlink.kb.sources import SourceSpec, expand_sources
from medlink.kb.writer import FinishReport, KBWriter
from medlink.progress import bar as progress_bar
from medlink.text.normalize import Normalizer, normalize


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
    require_replaceable_file(out, "a medlink KB", is_kb_file, [spec.path for spec in specs if spec.path])
    started = time.perf_counter()
    report = BuildReport(out, "", 0.0)
    with staged_file(out) as temporary:
        writer = KBWriter(temporary, normalizer)
        try:
            with progress_bar(progress, desc=f"building {out.name}", unit=" records", unit_scale=True, mininterval=0.5) as bar:
                for position, spec in enumerate(specs):
                    policy = InvalidLinePolicy(skip_invalid=skip_invalid)
                    writer.add_source(position, spec.format, str(spec.path) if spec.path else None, spec.prefix)
                    bar.set_postfix_str(spec.format + (f":{spec.path.name}" if spec.path else ""))
                    count = writer.write(read_source(spec.format, spec.path, prefix=spec.prefix, policy=policy), on_batch=bar.update)
                    if count == 0:  # MeSH XML or an RRF file read as OBO used to give an empty KB and exit 0
                        skipped = f" ({policy.total_skipped:,} lines skipped as invalid)" if policy.total_skipped else ""
                        raise MedlinkError(
                            f"{spec.path or spec.format}: no records read as {spec.format}{skipped}; is it in the {spec.format} format?"
                        )
                    writer.set_source_counts(position, count, policy.total_skipped)
                    report.records[str(spec)] = count
                    if policy.total_skipped:
                        report.skipped[str(spec)] = policy.total_skipped
                        report.skip_reasons.update(policy.first_reasons)
                bar.set_postfix_str("indexing")
                meta = {"sources": " ".join(str(s) for s in specs), "built_at": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
                report.checksum, report.finish = writer.finish({**meta, **(extra_meta or {})})
        except BaseException:
            writer.abort()
            raise
    report.seconds = time.perf_counter() - started
    return report
