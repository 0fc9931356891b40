"""The alignment benchmarks' KBs, gold and split (cached under a work directory).

The Disease Ontology's xrefs are the gold and must stay hidden from the aligner: the DO KB it reads is built from a
copy of the OBO file with every ``xref:`` line removed (checked: the KB has no xrefs), and a second, full DO KB
is read only here, for the gold. Targets: ICD-10-CM 2026 (the tabular XML simple-icd-10-cm ships), MEDIC (the CTD
file, ids as written: MeSH "D003924" with OMIM numbers as alternative ids), and for speed ICD-10-CM + HPO.
"""

from __future__ import annotations

import random
from pathlib import Path

from benchmarks._common.data import cached_kb_path
from benchmarks._common.harness import SHARED_DATA

from medlink.kb.readers.icd10cm import packaged_tabular_xml
from medlink.kb.sources import packaged_hpo_obo
from medlink.kb.store import KB

DO_OBO = SHARED_DATA / "disease-ontology" / "doid_2016-09-01.obo"
MEDIC = SHARED_DATA / "medic" / "medic_06Jul2012.txt"
SPLIT = {"train": 0.6, "dev": 0.2, "test": 0.2}


def do_without_xrefs(workdir: Path) -> Path:
    """The DO KB the aligner sees: the OBO without its xref lines (asserted: no xref reached the KB)."""
    stripped = workdir / "doid-noxref.obo"
    if not stripped.exists():
        lines = DO_OBO.read_text(encoding="utf-8").splitlines(keepends=True)
        stripped.write_text("".join(line for line in lines if not line.startswith("xref:")), encoding="utf-8")
    path = cached_kb_path(workdir, "do-noxref", [f"obo:{stripped}"])
    with KB.open(path) as kb:
        assert kb.stats()["xrefs"] == 0, f"{path} holds xrefs: the gold would leak"
    return path


def do_and_medic(workdir: Path, concepts: int, seed: int = 13) -> Path:
    """A source of ``concepts`` concepts for the speed benchmark: DO without xrefs and as many MEDIC concepts (seeded
    sample, every name of each) as make up the rest (a composite KB: ids namespaced by source)."""
    do = do_without_xrefs(workdir)
    with KB.open(do) as kb:
        missing = concepts - len(kb)
    if missing <= 0:
        return do
    lines = MEDIC.read_text(encoding="utf-8").splitlines()
    ids = sorted({line.split("||", 1)[0] for line in lines if "||" in line})
    chosen = set(random.Random(seed).sample(ids, missing))
    subset = workdir / f"medic-sample-{missing}.txt"
    subset.write_text("".join(line + "\n" for line in lines if line.split("||", 1)[0] in chosen), encoding="utf-8")
    return cached_kb_path(workdir, f"do+medic-{concepts}", [f"obo:{workdir / 'doid-noxref.obo'}", f"biosyn:{subset}"])


def do_full(workdir: Path) -> Path:
    return cached_kb_path(workdir, "do-full", [f"obo:{DO_OBO}"])


def icd10cm(workdir: Path) -> Path:
    return cached_kb_path(workdir, "icd10cm-2026", [f"icd10cm:{packaged_tabular_xml()}"])


def medic(workdir: Path) -> Path:
    return cached_kb_path(workdir, "medic", [f"biosyn:{MEDIC}"])


def icd10cm_hpo(workdir: Path) -> Path:
    return cached_kb_path(workdir, "icd10cm-hpo", [f"icd10cm:{packaged_tabular_xml()}", f"obo:{packaged_hpo_obo()}"])


def gold(workdir: Path, target_name: str, target: Path) -> dict[str, set[str]]:
    """DO id -> the target ids its xrefs name that exist in the target (ICD10CM:... as is; MESH:/OMIM: unprefixed)."""
    prefixes = {"icd10cm": ("ICD10CM",), "medic": ("MESH", "OMIM")}[target_name]
    out: dict[str, set[str]] = {}
    with KB.open(do_full(workdir)) as do, KB.open(target) as kb:
        for concept_id, xref in do.iter_xrefs():
            prefix, _, local = xref.partition(":")
            if prefix not in prefixes:
                continue
            resolved = kb.resolve(xref if prefix == "ICD10CM" else local)
            if resolved:
                out.setdefault(concept_id, set()).add(resolved)
    return out


def split(gold_sources, seed: int = 13) -> dict[str, list[str]]:
    """A seeded train / dev / test split of the gold source concepts (60 / 20 / 20)."""
    ids = sorted(gold_sources)
    random.Random(seed).shuffle(ids)
    n_train, n_dev = int(SPLIT["train"] * len(ids)), int(SPLIT["dev"] * len(ids))
    return {"train": sorted(ids[:n_train]), "dev": sorted(ids[n_train : n_train + n_dev]), "test": sorted(ids[n_train + n_dev :])}
