"""Linking in running text across corpora (issue 53): the document pipeline trained on one corpus, tested on another.

    python benchmarks/documents/cross_corpus.py [--workdir DIR] [--taggers] [--peers] [--name documents_cross_corpus] [--out FILE]

What a pipeline learns from a training set: the mention memory (its mentions join the linker's names and the dictionary
finder's), the names excluded because annotators seldom marked them (``medlink train exclusions``), and, with
``--taggers``, a mention tagger (``medlink train tagger``; the folders ``TAGGERS`` names, trained as
docs/training-recipes.md says, rows skipped where one is missing). Training sets: none (MEDIC's names alone), NCBI
Disease train, BC5CDR train (its disease mentions: ``--types Disease``), and the two together. Test sets: NCBI Disease
test, BC5CDR dev (disease mentions only: the gold's Chemical spans are left out, as ``medlink score --types Disease``
does), and NCBI dev, where any choice is made (the taggers' epochs); BC5CDR's test set is not in the shared data.
KB: MEDIC. Pipelines: the documents benchmark's dictionary row (``annotate_ncbi.py``'s "+ composite mentions": memory,
exclusions, abbreviations, consistency, composites) and its tagger row (tagger + dictionary, confirmed, + all).
Measures as the documents table (``medlink.eval.documents``): strict mention spans, linking (span and concept) and
concepts per document, each P / R / F1 with the F1's 95% interval over resampled documents; abstracts/s of the
annotation alone. Writes benchmarks/results/<name>.json, or ``--out``.

``--peers``: the peers table's systems (benchmarks/peers/run_peers.py: Gilda, QuickUMLS, the longest-match dictionary
and medlink's rows) on BC5CDR dev's disease spans, with everything chosen on NCBI: the options peers_documents.json
chose on NCBI dev, the NCBI train mentions as the "+ train mentions" rows' synonyms, medlink's NCBI memory, exclusions
and tagger. The figure of a corpus nobody tuned on, for every system alike.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for benchmarks.* imports
from benchmarks._common.harness import MODELS, RESULTS, SHARED_DATA, command_line, git_commit, machine, write_results  # noqa: E402
from benchmarks.documents.medlink_system import is_built, medic_kb  # noqa: E402
from medlink.corpora.entity_types import of_types, parse_types  # noqa: E402
from medlink.corpora.pubtator import read_pubtator  # noqa: E402
from medlink.eval.documents import evaluate_documents  # noqa: E402
from medlink.eval.metrics import equivalent_ids_from_kb  # noqa: E402
from medlink.linking.annotator import AnnotateOptions, Annotator  # noqa: E402
from medlink.linking.index import build_index  # noqa: E402

NCBI = SHARED_DATA / "ncbi-disease-pubtator"
CDR = SHARED_DATA / "bc5cdr-pubtator"
FILES = {
    "ncbi-train": NCBI / "NCBItrainset_corpus.txt",
    "ncbi-dev": NCBI / "NCBIdevelopset_corpus.txt",
    "ncbi-test": NCBI / "NCBItestset_corpus.txt",
    "bc5cdr-train": CDR / "CDR_TrainingSet.PubTator.txt",
    "bc5cdr-dev": CDR / "CDR_DevelopmentSet.PubTator.txt",
}
TRAININGS = {"none": [], "ncbi": ["ncbi-train"], "bc5cdr": ["bc5cdr-train"], "both": ["ncbi-train", "bc5cdr-train"]}
TESTS = ("ncbi-dev", "ncbi-test", "bc5cdr-dev")
DISEASE = parse_types("Disease")
# medlink train tagger --train ... [--types Disease] --dev pubtator:NCBIdevelopset_corpus.txt --out MODELS/<folder>
TAGGERS = {"ncbi": MODELS / "tagger-ncbi", "bc5cdr": MODELS / "tagger-bc5cdr-disease", "both": MODELS / "tagger-ncbi-bc5cdr-disease"}
MIN_SEEN, MAX_RATE = 2, 0.34  # the exclusions of the documents benchmark (medlink_system.exclusions)


def index_for(workdir: Path, training: str) -> Path:
    """MEDIC's lexical index with the training set's disease mentions as memory (none: no memory), built once per work
    directory; no probabilities, as the documents benchmark (NIL decisions would leave spans unlinked). Mentions of
    concepts MEDIC's 2012 release lacks bring them (``--memory-new-concepts``: BC5CDR's "cardiotoxicity", D066126)."""
    from medlink.linking.config import default_config

    out = workdir / f"medic-{training}-index"
    kb, config = medic_kb(workdir), default_config()
    if not is_built(out, kb, config):
        memory = [f"pubtator:{FILES[name]}" for name in TRAININGS[training]]
        build_index(kb, out, config=config, memory=memory, calibrate="none", memory_types=DISEASE, memory_new_concepts=True)
    return out


def exclusions_for(workdir: Path, training: str, index: Path) -> Path | None:
    """The names ``medlink train exclusions`` learns from the training set's documents (their disease mentions) with
    the training index's dictionary; None without a training set."""
    from medlink.linking.linker import Linker
    from medlink.text.finders.exclusions import rarely_annotated
    from medlink.training.tagger_data import read_annotated

    if not TRAININGS[training]:
        return None
    out = workdir / f"exclude-{training}-{MIN_SEEN}-{MAX_RATE}.txt"
    if not out.exists():
        documents = [d for name in TRAININGS[training] for d in read_annotated(f"pubtator:{FILES[name]}", DISEASE)[0]]
        linker = Linker.load(index)
        names = rarely_annotated(linker.dictionary_finder(), documents, linker.normalize, min_seen=MIN_SEEN, max_rate=MAX_RATE)
        out.write_text("".join(f"{name}\n" for name in names), encoding="utf-8")
    return out


def gold(name: str) -> list:
    """A test set's documents with their disease mentions only."""
    documents = read_pubtator(FILES[name])
    for document in documents:
        document.annotations = of_types(document.annotations, DISEASE)
    return documents


def measure(annotator: Annotator, documents: list, equivalent) -> dict:
    """The annotator's scores on ``documents`` (its disease spans), rounded, and its speed."""
    started = time.perf_counter()
    predicted = list(annotator.annotate(documents))
    seconds = time.perf_counter() - started
    for document in predicted:
        document.annotations = of_types(document.annotations, DISEASE)
    scores = evaluate_documents(documents, predicted, equivalent_ids=equivalent).to_dict()
    row = {m: {k: round(v, 4) if isinstance(v, float) else v for k, v in values.items()} for m, values in scores.items() if isinstance(values, dict)}
    row["intervals"] = {m: {k: [round(x, 4) for x in bounds] for k, bounds in v.items()} for m, v in scores["intervals"].items()}
    return row | {"abstracts_per_second": round(len(documents) / seconds, 1)}


def peer_rows(workdir: Path, documents: list, equivalent) -> list[dict]:
    """Every system of the peers table (``run_peers.SYSTEMS`` and ``VARIANTS``) with the options peers_documents.json
    chose on NCBI dev, over ``documents`` (BC5CDR dev, disease spans), one fresh process each."""
    from benchmarks.peers import run_peers

    chosen = json.loads((RESULTS / "peers_documents.json").read_text())["chosen"]
    systems = {name: (fn, chosen.get(name, {})) for name, fn in run_peers.SYSTEMS.items()}
    systems |= {name: (run_peers.SYSTEMS[base], {**chosen.get(base, {}), **changes}) for name, (base, changes) in run_peers.VARIANTS.items()}
    return run_peers.run(systems, "bc5cdr-dev", workdir=workdir / "peers", equivalent_ids=equivalent, gold=documents)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "medlink-bench-cross-corpus")
    parser.add_argument("--taggers", action="store_true", help="also the tagger rows, for the TAGGERS folders that exist")
    parser.add_argument("--peers", action="store_true", help="also the peers table's systems on BC5CDR dev, everything chosen on NCBI")
    parser.add_argument("--name", default="documents_cross_corpus")
    parser.add_argument("--out", type=Path, default=None, help="write the results here instead of benchmarks/results/<name>.json")
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    equivalent = equivalent_ids_from_kb(medic_kb(args.workdir))
    tests = {name: gold(name) for name in TESTS}
    pipelines = [("dictionary", training, None) for training in TRAININGS]
    if args.taggers:
        pipelines += [("tagger + dictionary", training, tagger) for training, tagger in TAGGERS.items() if (tagger / "medlink_tagger.json").exists()]
    rows = []
    for pipeline, training, tagger in pipelines:
        index = index_for(args.workdir, training)
        finder = "both" if tagger else "dictionary"
        annotator = Annotator.load(index, finder, tagger, AnnotateOptions(), exclusions_for(args.workdir, training, index))
        row = {"pipeline": pipeline, "trained_on": training, "tagger": tagger.name if tagger else None}
        for name, documents in tests.items():
            row[name] = measure(annotator, documents, equivalent)
            r = row[name]
            print(f"{pipeline:20s} trained on {training:7s} {name:11s} linking F1 {r['linking']['f1']:.4f} {r['intervals']['linking']['f1']} "
                  f"concepts F1 {r['concepts']['f1']:.4f} {r['intervals']['concepts']['f1']} mentions F1 {r['mentions']['f1']:.4f}", flush=True)
        rows.append(row)
    peers = peer_rows(args.workdir, tests["bc5cdr-dev"], equivalent) if args.peers else None
    payload = {
        "task": "documents across corpora: NCBI Disease and BC5CDR (disease mentions), KB MEDIC",
        "rows": rows,
        "trainings": {name: [str(FILES[f].relative_to(SHARED_DATA)) for f in files] for name, files in TRAININGS.items()},
        "tests": {name: {"file": str(FILES[name].relative_to(SHARED_DATA)), "documents": len(tests[name]),
                         "disease_mentions": sum(len(d.annotations) for d in tests[name])} for name in TESTS},
        "exclusions": {"min_seen": MIN_SEEN, "max_rate": MAX_RATE},
        **({"peers": {"test": "bc5cdr-dev", "options_from": "peers_documents.json (chosen on NCBI dev)", "rows": peers}} if peers else {}),
        "seconds": round(time.perf_counter() - started, 1),
        "command": command_line(__file__, sys.argv[1:]),
    }
    if args.out:
        args.out.write_text(json.dumps({"commit": git_commit(), "machine": machine(), "date": time.strftime("%Y-%m-%d"), **payload}, indent=2) + "\n")
        print(f"wrote {args.out}")
    else:
        print(f"wrote {write_results(args.name, payload)}")


if __name__ == "__main__":
    main()
