"""Dense concept text: the name alone vs paper 002's "name [SEP] types [SEP] definition" (issue 4).

    python benchmarks/dense/concept_text.py --model base=default --model zs-medic=/path/zs-medic

MEDIC (BioSyn's train_dictionary) has neither types nor definitions, so, as paper 002 augments a
KB's metadata through another KB, MEDIC concepts borrow them from the Disease Ontology through
DO's MESH / OMIM cross-references: the definition of the DO term, and the names of its DO
parents as types. The enriched KB is written in medlink's documented JSONL format. Each model is
scored KB-only on NCBI dev and test, embedding names with and without the entity text.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for benchmarks.* imports
from benchmarks._common.data import cached_kb, ncbi_kb, ncbi_split, require  # noqa: E402
from benchmarks._common.harness import SHARED_DATA, command_line, model_spec, publish  # noqa: E402

from medlink.eval import evaluate_rankings, load_dataset  # noqa: E402
from medlink.eval.metrics import equivalent_ids_from_kb  # noqa: E402
from medlink.kb.build import build_kb  # noqa: E402
from medlink.kb.store import KB  # noqa: E402
from medlink.linking.config import LinkerConfig  # noqa: E402
from medlink.linking.linker import Linker  # noqa: E402

VARIANTS = {"name": {"text": "name", "max_length": 32}, "name [SEP] types [SEP] definition": {"text": "name_types_definition", "max_length": 64}}


def medic_with_do_descriptions(workdir: Path) -> tuple[KB, dict]:
    """MEDIC concepts + DO definitions and parent names (via DO's MESH / OMIM xrefs), as a JSONL KB."""
    medic = ncbi_kb(workdir, "train")
    do = cached_kb(workdir, "disease", [f"obo:{require(SHARED_DATA / 'disease-ontology' / 'doid_2016-09-01.obo')}"])
    do_terms_of: dict[str, list[str]] = {}
    for term, xref in do.iter_xrefs():
        prefix, _, local = xref.partition(":")
        if prefix in ("MESH", "OMIM"):
            do_terms_of.setdefault(local, []).append(term)
    alt_ids: dict[str, list[str]] = {}
    for alias, concept_id, _ in medic.iter_id_aliases():
        alt_ids.setdefault(concept_id, []).append(alias)
    names: dict[str, list[str]] = {}
    for concept_id, text, _ in medic.iter_names():
        names.setdefault(concept_id, []).append(text)
    path = workdir / "medic-do-descriptions.jsonl"
    counts = {"concepts": 0, "with_definition": 0, "with_types": 0}
    with path.open("w", encoding="utf-8") as out:
        for concept_id, name in medic.iter_concepts():
            terms = [t for i in [concept_id, *alt_ids.get(concept_id, [])] for t in do_terms_of.get(i, [])]
            definition = next((d.definition for d in map(do.concept, terms) if d and d.definition), None)
            types = list(dict.fromkeys(do.name_of(p) for t in terms for p in do.parents(t)))
            record = {"id": concept_id, "name": name, "synonyms": [n for n in names[concept_id] if n != name],
                      "alt_ids": alt_ids.get(concept_id, []), "types": [t for t in types if t], "definition": definition}
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
            counts["concepts"] += 1
            counts["with_definition"] += definition is not None
            counts["with_types"] += bool(record["types"])
    kb_path = workdir / "medic-do-descriptions.sqlite"
    build_kb(kb_path, [f"jsonl:{path}"], progress=False)
    return KB.open(kb_path), counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", action="append", required=True, help="NAME=PATH (PATH 'default' = packaged MiniLM)")
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "medlink-bench")
    args = parser.parse_args()
    kb, coverage = medic_with_do_descriptions(args.workdir)
    print("coverage", coverage, flush=True)
    equivalent = equivalent_ids_from_kb(kb)
    splits = {split: load_dataset(ncbi_split(split)) for split in ("dev", "test")}
    rows = []
    for spec in args.model:
        label, model = model_spec(spec)
        for variant, params in VARIANTS.items():
            started = time.perf_counter()
            linker = Linker.build(kb, LinkerConfig.from_dict({"generators": [{"name": "dense", "type": "dense", "names": "kb",
                                                                              "params": {"model": model, **params}}]}))
            build_seconds = time.perf_counter() - started
            for split, mentions in splits.items():
                report = evaluate_rankings(linker.link([p for m in mentions for p in m.parts], k=64), mentions, equivalent_ids=equivalent,
                                           recall_ks=(1, 25), records=False, subpopulations=False)
                rows.append({"model": label, "variant": variant, "split": split, "acc@1": report["acc@1"], "acc@5": report["acc@5"],
                             "recall@25": report["recall@25"], "index_build_seconds": round(build_seconds, 1)})
                print(rows[-1], flush=True)
    publish("concept_text", {"command": command_line(__file__, sys.argv[1:]), "coverage": coverage, "rows": rows})


if __name__ == "__main__":
    main()
