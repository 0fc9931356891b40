"""One alignment from start to end: candidates, scoring (lexical or a trained aligner), mappings, SSSOM file.

Library callers (benchmarks) use ``align`` and ``mappings``; ``medlink align`` adds only argument handling.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace
from itertools import takewhile
from pathlib import Path

from medlink.align import sssom
from medlink.align.candidates import DEFAULT_K, CandidateSet, SourceQueries, TargetIndex, generate
from medlink.align.dense import QUALIFIERS, dense_similarity, remember_source_aliases, with_dense_candidates
from medlink.align.evidence import cross_logits
from medlink.align.predicates import predicate
from medlink.align.scoring import Calibration, Ranking, rank
from medlink.directories import require_replaceable_file
from medlink.errors import MedlinkError
from medlink.kb.store import KB
from medlink.linking.kb_inputs import alt_ids_of
from medlink.linking.output import first_in_namespaces, in_namespace
from medlink.progress import phase

LEXICAL_THRESHOLD = 0.8  # TF-IDF cosine of the best alias; choose your own on dev mappings (align --threshold)

log = logging.getLogger("medlink")


@dataclass
class AlignOptions:
    k: int = DEFAULT_K  # candidates per source concept
    aligner: Path | None = None  # a 'medlink train aligner' folder
    depth: int | None = None  # candidates the aligner reads (None: what it was trained with)
    ancestors: int = 8  # top candidates whose is_a ancestors join the candidates
    bi_encoder: str | None = None  # without an aligner: "packaged" or a model folder whose nearest target names join the candidates


def load_aligner(folder: Path):
    """The trained cross-encoder (None for an aligner without one) and the calibration."""
    calibration = Calibration.load(folder)
    if "cross" not in calibration.inputs():
        return None, calibration
    from medlink.encoders.cross import CrossEncoder

    return CrossEncoder(folder, trained=True), calibration


def target_index_for(target: KB, calibration: Calibration | None = None, bi_encoder: str | None = None) -> TargetIndex:
    """The target's generators as ``calibration`` was fitted with them (its bi-encoder's dense candidates or not), or with
    ``bi_encoder``'s (aligning without an aligner: target names read without their qualifier, ``align.dense``)."""
    with phase(f"indexing the target's names ({Path(target.path).name})"):
        index = TargetIndex.build(target)
    if calibration is not None:
        return with_dense_candidates(index, calibration.bi_encoder if calibration.dense_candidates else None, calibration.dense_strip)
    return with_dense_candidates(index, bi_encoder, QUALIFIERS)


def score_candidates(
    candidates: CandidateSet, model, calibration: Calibration | None, depth: int | None = None, progress: bool = False
) -> Ranking:
    """Rank ``candidates`` with an aligner (``load_aligner``'s pair; none: the lexical ranking): the cross-encoder's
    logits for the first ``depth`` (default: as trained) and the bi-encoder's similarities where it weighs them."""
    dense = None
    if calibration is not None and calibration.bi_encoder:
        with phase(f"bi-encoder similarities ({calibration.bi_encoder})"):
            dense = dense_similarity(candidates, calibration.bi_encoder, progress, calibration.dense_strip)
    cross = cross_logits(model, candidates, depth or calibration.depth, progress) if model is not None else None
    return rank(candidates, calibration, cross, dense)


def align(
    source: KB, target: KB, options: AlignOptions | None = None, progress: bool = True, target_index: TargetIndex | None = None
) -> Ranking:
    """Rank target concepts for every source concept (module docstring)."""
    options = options if options is not None else AlignOptions()
    model = calibration = None
    if options.aligner is not None:
        if options.bi_encoder is not None:
            raise MedlinkError(
                "--bi-encoder is for aligning without an aligner: a trained aligner brings its own (medlink train aligner --bi-encoder)"
            )
        model, calibration = load_aligner(Path(options.aligner))
    if target_index is None:
        target_index = target_index_for(target, calibration, options.bi_encoder)
    queries = SourceQueries.from_kb(source, target.normalize)
    if calibration is not None:
        queries = calibration.queries(queries, target.normalize)
    remember_source_aliases(target_index, queries)
    candidates = generate(target_index, queries, options.k, ancestors=options.ancestors, progress=progress)
    ranking = score_candidates(candidates, model, calibration, options.depth, progress)
    # the bi-encoder's names join the candidates and their fused rank; the confidence stays the string similarity
    return (
        replace(ranking, method="lexical + bi-encoder candidates")
        if "dense" in target_index.generators and calibration is None
        else ranking
    )


def mappings(ranking: Ranking, threshold: float, top_k: int = 1, exact_at: float | None = None) -> list[sssom.Mapping]:
    """Each source's targets with confidence >= ``threshold`` (at most ``top_k``): the first skos:exactMatch when its
    confidence reaches ``exact_at`` (default: ``threshold``; the level at which the method claims an equivalence, when
    a user keeps more with a lower threshold) and its names do not read as broader or narrower than the source's
    (then skos:broadMatch / narrowMatch: ``align.predicates``), else skos:closeMatch, as the others are; a source with
    none gets a sssom:NoTermFound row carrying its best confidence."""
    exact_at = threshold if exact_at is None else exact_at
    candidates = ranking.candidates
    names, ids = candidates.target.names, candidates.target.concept_ids
    # a model that reads meaning (cross-encoder, bi-encoder) decided: semantic similarity; the calibration alone weighs lexical evidence
    justification = sssom.SEMANTIC if ranking.method in ("cross-encoder", "calibrated + bi-encoder") else sssom.LEXICAL
    out: list[sssom.Mapping] = []
    alias_sets = candidates.queries.alias_sets
    target_names = lambda t: [names[t], *candidates.target.synonyms.get(t, [])]  # noqa: E731
    for i, (source_id, source_name) in enumerate(zip(candidates.queries.concept_ids, candidates.queries.names)):
        row = ranking.row(i)
        targets, confidence = ranking.targets[row], ranking.confidence[row]
        # the first target decides: under the threshold, NoTermFound whatever --top-k; above it, the next ones that pass
        kept = list(takewhile(lambda pair: pair[1] >= threshold, zip(targets[:top_k].tolist(), confidence[:top_k].tolist())))
        for rank_, (t, c) in enumerate(kept):
            match = sssom.CLOSE
            if rank_ == 0 and c >= exact_at:
                match = predicate([source_name, *(alias_sets[i] if i < len(alias_sets) else [])], target_names(t))
            out.append(
                sssom.Mapping(source_id, source_name, match, ids[t], names[t], justification, c, f"rank {rank_ + 1} ({ranking.method})")
            )
        if not kept:
            best = f"; best candidate {ids[int(targets[0])]} at {float(confidence[0]):.4f}" if len(targets) else "; no candidate"
            out.append(
                sssom.Mapping(
                    source_id,
                    source_name,
                    sssom.EXACT,
                    sssom.NO_TERM,
                    "",
                    justification,
                    None,
                    f"nothing at confidence >= {threshold:g}{best}",
                )
            )
    return out


def side_prefix(kb: KB) -> str:
    """The CURIE prefix for a KB's unprefixed ids: its file name's stem, letters and digits only, upper case, starting
    with a letter (a prefix "2025" does not validate: "KB2025")."""
    stem = "".join(ch for ch in Path(kb.path).stem.upper() if ch.isalnum())
    return stem if stem[:1].isalpha() else f"KB{stem}"


def side_prefixes(source: KB, target: KB) -> tuple[str, str]:
    """Both sides' prefixes, told apart when the files share a name (two versions of one terminology: codes.tsv in two
    folders)."""
    subject, obj = side_prefix(source), side_prefix(target)
    return (f"{subject}_SOURCE", f"{obj}_TARGET") if subject == obj else (subject, obj)


def check_mappings_output(out: Path, source: KB, target: KB) -> None:
    """Refuse an ``out`` medlink may not replace: only an SSSOM file medlink wrote (or a new name), never a KB given."""
    require_replaceable_file(Path(out), "an SSSOM file medlink wrote", sssom.is_medlink_sssom, [Path(source.path), Path(target.path)])


def preferred_id(concept_id: str, alt_ids: Sequence[str], prefixes: Sequence[str]) -> str:
    """The concept's id in the first of ``prefixes`` it has one in (its own id or an alt id; a bare id by its shape, as
    ``link --prefer-prefix`` reads them), written with that prefix ("MESH:D008228" for MEDIC's 605027); else its own id.
    ``alt_ids``: only those that read back to this concept (``own_alt_ids``)."""
    found = first_in_namespaces((concept_id, *alt_ids), prefixes)
    if found is None:
        return concept_id
    chosen, prefix = found
    return chosen if ":" in chosen else f"{prefix.upper()}:{chosen}"


def own_alt_ids(kb: KB, concept_id: str, alt_ids: dict[str, list[str]]) -> list[str]:
    """The concept's alt ids that read back to it: not one that is another concept's own id (MEDIC lists 260350 both
    as a concept and as an alt id of D010190), or two concepts would be written under one id."""
    return [a for a in alt_ids.get(concept_id, ()) if kb.resolve(a) == concept_id]


def rows_with_preferred_ids(rows: list[sssom.Mapping], source: KB, target: KB, prefixes: Sequence[str]) -> list[sssom.Mapping]:
    """``rows`` with each side's id in the first of ``prefixes`` its concept has one in (``preferred_id``); a prefix that
    no id of either side is in is named in a warning (a typo: MSH for MESH)."""
    if not prefixes:
        return rows
    source_alt, target_alt = alt_ids_of(source), alt_ids_of(target)
    ids = [i for row in rows for i in (row.subject_id, row.object_id) if i != sssom.NO_TERM]
    ids += [a for alt in (source_alt, target_alt) for ids_of in alt.values() for a in ids_of]
    for prefix in prefixes:
        if not any(in_namespace(i, prefix) for i in ids):
            log.warning("--prefer-prefix %s: no id of either KB is in it; ids stay as they are", prefix)

    def preferred(kb: KB, concept_id: str, alt_ids: dict[str, list[str]]) -> str:
        return concept_id if concept_id == sssom.NO_TERM else preferred_id(concept_id, own_alt_ids(kb, concept_id, alt_ids), prefixes)

    return [
        replace(row, subject_id=preferred(source, row.subject_id, source_alt), object_id=preferred(target, row.object_id, target_alt))
        for row in rows
    ]


def write_mappings(
    out: Path,
    rows: list[sssom.Mapping],
    source: KB,
    target: KB,
    metadata: dict[str, str] | None = None,
    prefer_prefix: Sequence[str] = (),
) -> Path:
    """Write the SSSOM TSV atomically (``check_mappings_output`` first); ``prefer_prefix``: each id in the first of these
    namespaces its concept has one in (``preferred_id``), else under its side's prefix."""
    out = Path(out)
    check_mappings_output(out, source, target)
    if not rows:
        raise MedlinkError("no mapping to write")
    rows = rows_with_preferred_ids(rows, source, target, prefer_prefix)
    subject_prefix, object_prefix = side_prefixes(source, target)
    text = sssom.render(
        rows,
        subject_source=str(source.meta.get("name") or Path(source.path).name),
        object_source=str(target.meta.get("name") or Path(target.path).name),
        subject_prefix=subject_prefix,
        object_prefix=object_prefix,
        metadata=metadata,
    )
    return sssom.write(out, text)
