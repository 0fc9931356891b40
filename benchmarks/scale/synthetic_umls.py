"""Write a synthetic UMLS META directory (MRCONSO, MRSTY) of N atoms in the official RRF layout.

The point is scale, not realism of meaning: ~3.3 atoms per CUI like the real Metathesaurus,
several sources and term types, 10% non-English atoms and 2% suppressed ones (filtered out by
default). Names are 2-6 words drawn with a Zipf law from a lexicon of 100 medical words plus
60,000 pseudo-words built from syllables, so that word and character n-gram statistics look like
a real terminology's (a few very common words, a long tail of rare ones) rather than a handful of
words repeated millions of times.

    python benchmarks/scale/synthetic_umls.py OUT_DIR --rows 5000000
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
SYLLABLES = "ab ad al an ar as at ba be bi bo ca ce ci co cu da de di do du el em en er es et fa fe fi fo ga ge gi go ha he hi ho id il im in ir is it ka ke ki la le li lo lu ma me mi mo mu na ne ni no nu ob oc ol om on op or os ot pa pe pi po pu ra re ri ro ru sa se si so su ta te ti to tu ul um un ur us va ve vi vo xa xe ya ze zi zo".split()
LEXICON_SIZE = 60_000
SABS = ("MSH", "SNOMEDCT_US", "ICD10CM", "NCI", "MTH", "MEDLINEPLUS", "HPO", "OMIM")
TTYS = ("PT", "SY", "ET", "PN", "FN", "AB", "ACR", "MH", "ETCL")
STYS = (("T047", "Disease or Syndrome"), ("T191", "Neoplastic Process"), ("T184", "Sign or Symptom"), ("T037", "Injury or Poisoning"))


def lexicon(rng: random.Random) -> list[str]:
    """The medical words first (the most frequent ranks), then unique pseudo-words of 2-5 syllables."""
    words, seen = list(WORDS), set(WORDS)
    while len(words) < LEXICON_SIZE:
        word = "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 5)))
        if word not in seen:
            seen.add(word)
            words.append(word)
    return words


def write_meta(out: Path, rows: int, seed: int = 13) -> None:
    rng = random.Random(seed)
    words = lexicon(rng)
    zipf = [1.0 / (rank + 1) for rank in range(len(words))]
    draws = iter(())

    def word() -> str:
        nonlocal draws
        try:
            return next(draws)
        except StopIteration:
            draws = iter(rng.choices(words, weights=zipf, k=100_000))
            return next(draws)

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
            base = " ".join(word() for _ in range(rng.randint(2, 6)))
            for atom in range(atoms):
                lat = "ENG" if rng.random() > 0.1 else rng.choice(("SPA", "FRE", "GER"))
                ts, stt, ispref = ("P", "PF", "Y") if atom == 0 else ("S", "VO", rng.choice("YN"))
                sab = rng.choice(SABS)
                tty = "PT" if atom == 0 else rng.choice(TTYS)
                text = base if atom == 0 else f"{base} {word()}".title() if atom % 2 else f"{word()}, {base}"
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
