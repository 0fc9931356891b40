"""Write a synthetic UMLS META directory (MRCONSO, MRSTY) of N atoms in the official RRF layout.

The point is scale, not realism of meaning: ~3.3 atoms per CUI like the real Metathesaurus,
several sources and term types, 10% non-English atoms and 2% suppressed ones (filtered out by
default), names built from a medical-ish vocabulary so normalisation does real work.

    python benchmarks/synthetic_umls.py OUT_DIR --rows 5000000
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

WORDS = (
    "acute chronic syndrome disease disorder infection carcinoma benign malignant neoplasm of the "
    "left right bilateral upper lower lobe heart liver kidney lung brain spinal cord skin bone joint "
    "type 1 2 diabetes mellitus hypertension failure insufficiency deficiency hereditary congenital "
    "familial juvenile adult onset pain fever cough headache fracture injury lesion ulcer abscess "
    "inflammation stenosis hypertrophy atrophy dysplasia sclerosis fibrosis edema hemorrhage "
    "thrombosis embolism infarction ischemia arrhythmia tachycardia bradycardia anemia leukemia "
    "lymphoma melanoma sarcoma glioma adenoma polyp cyst nodule mass with without due to secondary"
).split()
SABS = ("MSH", "SNOMEDCT_US", "ICD10CM", "NCI", "MTH", "MEDLINEPLUS", "HPO", "OMIM")
TTYS = ("PT", "SY", "ET", "PN", "FN", "AB", "ACR", "MH", "ETCL")
STYS = (("T047", "Disease or Syndrome"), ("T191", "Neoplastic Process"), ("T184", "Sign or Symptom"), ("T037", "Injury or Poisoning"))


def write_meta(out: Path, rows: int, seed: int = 13) -> None:
    rng = random.Random(seed)
    meta = out / "META"
    meta.mkdir(parents=True, exist_ok=True)
    cui_number = 0
    written = 0
    with open(meta / "MRCONSO.RRF", "w", encoding="utf-8") as conso, open(meta / "MRSTY.RRF", "w", encoding="utf-8") as sty:
        while written < rows:
            cui_number += 1
            cui = f"C{cui_number:07d}"
            tui, sty_name = rng.choice(STYS)
            sty.write(f"{cui}|{tui}|B2.2.1.2.1|{sty_name}|AT{cui_number:08d}|256|\n")
            atoms = min(rng.choice((1, 2, 2, 3, 3, 4, 5, 6, 8)), rows - written)
            base = " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 6)))
            for atom in range(atoms):
                lat = "ENG" if rng.random() > 0.1 else rng.choice(("SPA", "FRE", "GER"))
                ts, stt, ispref = ("P", "PF", "Y") if atom == 0 else ("S", "VO", rng.choice("YN"))
                sab = rng.choice(SABS)
                tty = "PT" if atom == 0 else rng.choice(TTYS)
                text = base if atom == 0 else f"{base} {rng.choice(WORDS)}".title() if atom % 2 else f"{rng.choice(WORDS)}, {base}"
                suppress = "O" if rng.random() < 0.02 else "N"
                aui = written + 1
                conso.write(
                    f"{cui}|{lat}|{ts}|L{aui:07d}|{stt}|S{aui:07d}|{ispref}|A{aui:08d}||{rng.randint(1, 999999)}||{sab}|{tty}|"
                    f"{rng.randint(1, 999999)}|{text}|0|{suppress}|256|\n"
                )
                written += 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path)
    parser.add_argument("--rows", type=int, default=5_000_000)
    args = parser.parse_args()
    write_meta(args.out, args.rows)


if __name__ == "__main__":
    main()
