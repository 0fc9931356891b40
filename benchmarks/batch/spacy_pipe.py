"""The spaCy component's ``nlp.pipe`` beside ``medlink annotate`` on the same documents: throughput, and the same spans
and ids.

    python benchmarks/batch/spacy_pipe.py [--repeats 7] [--splits test]

Documents: NCBI Disease's test abstracts (title + " " + abstract), MEDIC's default lexical index (built as 'medlink index
build' builds it). medlink annotate: the annotator ``medlink annotate`` runs, each document rendered as its JSONL line
(in this process, after the index is loaded; the CLI's own wall time, index load included, is recorded too).
spaCy: ``spacy.blank("en")`` + ``nlp.add_pipe("medlink")`` with the same index, ``list(nlp.pipe(texts))`` (tokenising
included). Each repeat starts a fresh annotator (no link results remembered from the repeat before), and the two run
in turn, so a busy machine slows both alike; the medians are compared. Spans: each document's (start, end, ids) from
the JSONL output against the spaCy spans' (start_char, end_char, ``span._.medlink_ids``).
"""

from __future__ import annotations

import argparse
import io
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for benchmarks.* imports
from benchmarks._common.harness import command_line, publish  # noqa: E402
from benchmarks.batch.common import WORKDIR, cpu_name, medic_index, ncbi_texts, write_jsonl  # noqa: E402


def annotate_rate(loaded, documents) -> tuple[float, list[str]]:
    """``medlink annotate``'s loop over ``documents`` with a fresh annotator: seconds, and each document's JSONL line."""
    from medlink.batch.job import finished, signature
    from medlink.corpora.document_files import write_document_line
    from medlink.linking.annotator import Annotator

    annotator = Annotator(loaded.linker, loaded.finders, loaded.options)
    mark, lines = signature(), []
    started = time.perf_counter()
    for document in annotator.annotate(documents):
        out = io.StringIO()
        write_document_line(finished(document, (), mark), out)
        lines.append(out.getvalue())
    return time.perf_counter() - started, lines


def spacy_rate(nlp, loaded, texts: list[str]) -> tuple[float, list]:
    """``nlp.pipe`` over ``texts`` with a fresh annotator in the component: seconds, and the docs."""
    from medlink.linking.annotator import Annotator

    component = nlp.get_pipe("medlink")
    component.annotator = Annotator(loaded.linker, loaded.finders, loaded.options)
    started = time.perf_counter()
    docs = list(nlp.pipe(texts))
    return time.perf_counter() - started, docs


def compare(lines: list[str], docs) -> dict:
    """Spans and ids of the JSONL output against the spaCy docs'."""
    same, differ, examples = 0, 0, []
    for line, doc in zip(lines, docs):
        ours = [(a["start"], a["end"], tuple(a["ids"])) for a in json.loads(line)["annotations"]]
        theirs = [(s.start_char, s.end_char, tuple(s._.medlink_ids)) for s in doc.spans["medlink"]]
        if ours == theirs:
            same += 1
        else:
            differ += 1
            if len(examples) < 5:
                examples.append({"id": json.loads(line)["id"], "annotate": sorted(set(ours) - set(theirs)), "spacy": sorted(set(theirs) - set(ours))})
    spans = sum(len(json.loads(line)["annotations"]) for line in lines)
    return {"documents_identical": same, "documents_differing": differ, "spans": spans, "examples": examples}


def cli_seconds(index: Path, source: Path) -> float:
    """The real command's wall time on ``source`` (Python's start and the index load included)."""
    with tempfile.TemporaryDirectory() as folder:
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "medlink", "annotate", "--index", str(index), "--input", str(source), "--output-format", "jsonl",
                        "--out", str(Path(folder) / "out.jsonl"), "-q"], check=True, capture_output=True)
        return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--splits", default="test", help="NCBI splits, comma-separated")
    parser.add_argument("--name", default="batch_spacy_pipe")
    args = parser.parse_args()
    import spacy

    from medlink.core import Document
    from medlink.linking.annotator import Annotator

    index = medic_index()
    texts = ncbi_texts(tuple(args.splits.split(",")))
    source = write_jsonl(texts, WORKDIR / f"ncbi-{args.splits.replace(',', '-')}.jsonl")
    documents = [Document.from_text(text, doc_id) for doc_id, text in texts]
    started = time.perf_counter()
    loaded = Annotator.load(index)
    load_seconds = time.perf_counter() - started
    nlp = spacy.blank("en")
    nlp.add_pipe("medlink", config={"index": str(index)})
    annotate_rate(loaded, documents[:20])  # warm both paths
    spacy_rate(nlp, loaded, [text for _, text in texts[:20]])
    medlink_seconds, spacy_seconds = [], []
    for _ in range(args.repeats):
        seconds, lines = annotate_rate(loaded, documents)
        medlink_seconds.append(seconds)
        seconds, docs = spacy_rate(nlp, loaded, [text for _, text in texts])
        spacy_seconds.append(seconds)
    medlink_rate = len(texts) / statistics.median(medlink_seconds)
    spacy_rate_ = len(texts) / statistics.median(spacy_seconds)
    spans = compare(lines, docs)
    cli = cli_seconds(index, source)
    cpu = cpu_name()
    print(f"[{cpu}] medlink annotate {medlink_rate:.1f} abstracts/s, spaCy nlp.pipe {spacy_rate_:.1f} abstracts/s "
          f"({spacy_rate_ / medlink_rate:.3f}x); {spans['documents_identical']}/{len(texts)} documents with identical spans and ids")
    publish(args.name, {
        "command": command_line(__file__, sys.argv[1:]),
        "cpu": cpu,
        "dataset": f"NCBI Disease {args.splits} abstracts (title + abstract), {len(texts)} documents",
        "index": "MEDIC (06Jul2012) default lexical index, probabilities fitted on its pseudo-mentions",
        "repeats": args.repeats,
        "index_load_seconds": round(load_seconds, 3),
        "medlink_annotate": {"abstracts_per_second": round(medlink_rate, 1), "seconds_all": [round(s, 3) for s in medlink_seconds],
                             "cli_wall_seconds": round(cli, 2)},
        "spacy_pipe": {"abstracts_per_second": round(spacy_rate_, 1), "seconds_all": [round(s, 3) for s in spacy_seconds],
                       "spacy": spacy.__version__, "pipeline": "spacy.blank('en') + medlink"},
        "throughput_ratio": round(spacy_rate_ / medlink_rate, 3),
        "spans": spans,
    })


if __name__ == "__main__":
    main()
