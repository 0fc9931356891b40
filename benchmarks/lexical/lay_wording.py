"""People's own words on the default index: AskAPatient's mentions whose SNOMED CT concept HPO cross-references.

    python benchmarks/lexical/lay_wording.py [--split test|validation]

AskAPatient's mentions are forum posts' words for adverse drug reactions ("can't sleep", "my legs ache"), each with a
SNOMED CT concept. HPO gives many of its terms a SNOMED CT xref, so such a mention's right answers in the default KB
are the HPO terms that xref its concept, those that have the concept's SNOMED CT name as a name ("Stiff neck": the xref
is on *Limited neck range of motion*, and HPO has a *Stiff neck* too), and the ICD-10-CM codes those terms map to as
exact matches (medlink's own HPO -> ICD-10-CM mappings, ``kb/data/hpo_icd10cm.sssom.tsv``). Mentions of the other
concepts (drugs, and conditions no HPO term xrefs) are left out. The ten folds' ``--split`` sets together, each distinct (mention, concept) once.

What a user sees is measured, through the default index as ``medlink link`` gives it (probabilities, NIL threshold):
Acc@1 and Acc@5; right first answers refused (NIL though the first candidate is right), wrong ones kept (not NIL and
wrong), wrong first answers at p >= 0.95; the ECE of the first candidates' probabilities (15 bins). Tune on
``--split validation``; ``test`` is reported.
"""

from __future__ import annotations

import argparse
import csv
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for benchmarks.* imports
from benchmarks._common.data import AAP, require  # noqa: E402
from benchmarks._common.harness import command_line, publish  # noqa: E402
from benchmarks._common.pseudo import accuracy_at  # noqa: E402

import medlink  # noqa: E402
from medlink.eval.calibration import expected_calibration_error  # noqa: E402
from medlink.kb.default import default_kb_path  # noqa: E402
from medlink.kb.sources import packaged_hpo_obo  # noqa: E402
from medlink.kb.store import KB  # noqa: E402

MAPPINGS = Path(medlink.__file__).parent / "kb" / "data" / "hpo_icd10cm.sssom.tsv"
FOLDS = range(10)
CONFIDENT = 0.95


def hpo_terms_by_snomed(obo: Path) -> dict[str, set[str]]:
    """SNOMED CT id -> the HPO terms that xref it."""
    terms: dict[str, set[str]] = {}
    term = None
    for line in obo.read_text(encoding="utf-8").splitlines():
        if line.startswith("id: "):
            term = line[4:].strip()
        elif term and (found := re.match(r"xref: SNOMEDCT_US:(\d+)", line)):
            terms.setdefault(found.group(1), set()).add(term)
    return terms


def exact_codes(path: Path = MAPPINGS) -> dict[str, set[str]]:
    """HPO term -> the ICD-10-CM codes it maps to as an exact match."""
    codes: dict[str, set[str]] = {}
    with open(path, encoding="utf-8") as handle:
        rows = csv.DictReader((line for line in handle if not line.startswith("#")), delimiter="\t")
        for row in rows:
            if row["predicate_id"] == "skos:exactMatch":
                codes.setdefault(row["subject_id"], set()).add(row["object_id"])
    return codes


def hpo_terms_by_name(kb) -> dict[str, set[str]]:
    """Normalised name -> the HPO terms of ``kb`` that have it."""
    terms: dict[str, set[str]] = {}
    for concept_id, text, _kind in kb.iter_names():
        if concept_id.startswith("HP:"):
            terms.setdefault(kb.normalize(text), set()).add(concept_id)
    return terms


def lay_mentions(split: str, kb) -> tuple[list[str], list[frozenset[str]], int]:
    """The mentions of ``split`` over every fold whose concept HPO xrefs, their right ids, and how many were left out."""
    terms, codes, named = hpo_terms_by_snomed(packaged_hpo_obo()), exact_codes(), hpo_terms_by_name(kb)
    seen, texts, golds, left_out = set(), [], [], 0
    for fold in FOLDS:
        with open(require(AAP / f"AskAPatient.fold-{fold}.{split}.txt"), encoding="latin-1") as handle:
            for line in handle:
                concept, name, text = line.rstrip("\n").split("\t")
                if (text, concept) in seen:
                    continue
                seen.add((text, concept))
                if concept not in terms:
                    left_out += 1
                    continue
                right = terms[concept] | named.get(kb.normalize(name), set())
                right.update(code for term in terms[concept] for code in codes.get(term, ()))
                texts.append(text)
                golds.append(frozenset(right))
    return texts, golds, left_out


def decisions(results, golds) -> dict:
    """What the user is told: refusals of right answers, wrong answers kept, confident wrong ones, ECE."""
    first_right = [bool(r.candidates) and r.candidates[0].concept_id in gold for r, gold in zip(results, golds)]
    probabilities = [r.candidates[0].probability if r.candidates else 0.0 for r in results]
    right_refused = sum(r.nil and right for r, right in zip(results, first_right))
    wrong_kept = sum(not r.nil and not right for r, right in zip(results, first_right))
    confident_wrong = sum(not right and p >= CONFIDENT for right, p in zip(first_right, probabilities))
    return {"first_right": sum(first_right), "right_refused": right_refused, "right_refused_share": round(right_refused / max(1, sum(first_right)), 4),
            "wrong_kept": wrong_kept, "confident_wrong": confident_wrong, "nil": sum(r.nil for r in results),
            "ece": round(expected_calibration_error(probabilities, first_right), 4)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--split", choices=("test", "validation"), default="test")
    parser.add_argument("--index", default="default", help="an index folder, or 'default'")
    args = parser.parse_args()
    linker = medlink.load_index(args.index)
    texts, golds, left_out = lay_mentions(args.split, KB.open(default_kb_path()))
    results = linker.link(texts, k=5)
    row = {"split": args.split, "index": args.index, "mentions": len(texts), "left_out": left_out, **accuracy_at(results, golds), **decisions(results, golds)}
    print(row, flush=True)
    examples = [{"mention": t, "first": r.candidates[0].concept_id if r.candidates else None, "name": r.candidates[0].name if r.candidates else None,
                 "p": r.candidates[0].probability if r.candidates else None, "nil": r.nil, "right": sorted(g)}
                for t, g, r in zip(texts, golds, results)]
    publish(f"lay_wording_{args.split}", {"command": command_line(__file__, sys.argv[1:]), "lay_rows": [row], "mentions_linked": examples})


if __name__ == "__main__":
    main()
