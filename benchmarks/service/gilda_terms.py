"""Gilda's terms file (its TSV, gzipped) from a BioSyn dictionary (``ids||name``): run with Gilda's own Python, so that
each term's ``norm_text`` is Gilda's normalisation.

    GILDA_PYTHON benchmarks/service/gilda_terms.py DICTIONARY OUT.tsv.gz

The first id of a line is the concept's: ``MESH`` for a MeSH id (C or D and digits), ``OMIM`` for a bare number. The
first name seen for a concept is its entry name (status ``name``); the others are synonyms. Source: ``medic``.
"""

import csv
import gzip
import re
import sys

from gilda.process import normalize

HEADER = ["norm_text", "text", "db", "id", "entry_name", "status", "source", "organism", "source_db", "source_id"]


def main(dictionary: str, out: str) -> None:
    entry_names: dict[str, str] = {}
    rows = []
    with open(dictionary, encoding="utf-8") as lines:
        for line in lines:
            ids, _, name = line.rstrip("\n").partition("||")
            if not name.strip():
                continue
            first = ids.split("|")[0]
            db = "MESH" if re.fullmatch(r"[CD]\d+", first) else "OMIM"
            entry = entry_names.setdefault(first, name)
            rows.append([normalize(name), name, db, first, entry, "name" if name == entry else "synonym", "medic", "", "", ""])
    with gzip.open(out, "wt", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, delimiter="\t")
        writer.writerow(HEADER)
        writer.writerows(rows)
    print(f"{len(rows)} terms, {len(entry_names)} concepts")


if __name__ == "__main__":
    main(*sys.argv[1:])
