"""A memory whose corpus is newer than the KB (issue 53): a mention of a concept the KB lacks is left out and counted,
or, asked for, brings that concept into the index named by its mentions; a condition's adjective before another
condition is then one span of both ("hemorrhagic cystitis")."""

from __future__ import annotations

import pytest

from medlink.kb.build import build_kb
from medlink.kb.store import KB
from medlink.linking.memory import memory_from_datasets
from tests.conftest import FIXTURES
from tests.test_cli_kb import medlink

NEWER = f"pubtator:{FIXTURES / 'types' / 'cdr_newer.pubtator'}"  # "cardiotoxicity", D066126, is no concept of the KB below


@pytest.fixture(scope="module")
def older_kb(tmp_path_factory):
    folder = tmp_path_factory.mktemp("older")
    (folder / "kb.tsv").write_text(
        "id\tname\nD006470\tHemorrhage\nD003556\tCystitis\nD004317\tDoxorubicin\nD002318\tCardiovascular disease\n"
    )
    path = build_kb(folder / "kb.sqlite", [f"tsv:{folder / 'kb.tsv'}"], progress=False).path
    with KB.open(path) as kb:
        yield kb


def test_a_mention_of_a_concept_the_kb_lacks_is_counted_or_kept(older_kb):
    left_out = memory_from_datasets(older_kb, [NEWER], frozenset({"disease"}))
    parts = [("hemorrhagic", "D006470"), ("cystitis", "D003556")] * 2  # a composite's parts, each with its own concept
    assert left_out.pairs == [*parts, ("hemorrhagic", "D006470")] and left_out.summary()["composite_parts"] == 4
    assert left_out.skipped_unknown_concept == 2 and left_out.skipped_composite == 0 and "new_concepts" not in left_out.summary()
    kept = memory_from_datasets(older_kb, [NEWER], frozenset({"disease"}), new_concepts=True)
    assert sorted(set(kept.pairs) - set(parts)) == [("Cardiotoxicity", "D066126"), ("cardiotoxicity", "D066126")]
    assert kept.skipped_unknown_concept == 0 and kept.summary()["new_concepts"] == 1


@pytest.mark.slow
def test_an_index_links_and_finds_the_concepts_its_memory_brings(tmp_path, older_kb):
    index = tmp_path / "index"
    built = medlink(
        "index",
        "build",
        "--kb",
        older_kb.path,
        "--out",
        index,
        "--memory",
        NEWER,
        "--memory-types",
        "Disease",
        "--memory-new-concepts",
        "--calibrate",
        "none",
        "--quiet",
    )
    assert "1 concept(s) the KB lacks kept (--memory-new-concepts): D066126 ('cardiotoxicity')" in built.stderr
    first = medlink("link", "--index", index, "--k", "1", "Cardiotoxicity").stdout.split("\t")
    assert first[2:4] == ["D066126", "cardiotoxicity"]  # its name: its most frequent mention, the first written of a tie
    text = tmp_path / "note.txt"
    text.write_text("Cardiotoxicity and hemorrhagic cystitis were seen; the biopsy was hemorrhagic, cystitis resolved.")
    rows = medlink(
        "annotate",
        "--index",
        index,
        "--finder",
        "dictionary",
        "--input",
        text,
        "--format",
        "text",
        "--output-format",
        "jsonl",
        "--no-assertion",
    ).stdout
    annotations = __import__("json").loads(rows.splitlines()[0])["annotations"]
    assert annotations[0]["type"] == "Disease"  # a concept the memory brought: the type of the mentions it kept
    spans = [(a["text"], a["ids"]) for a in annotations]
    assert spans == [
        ("Cardiotoxicity", ["D066126"]),
        ("hemorrhagic cystitis", ["D006470", "D003556"]),
        ("hemorrhagic", ["D006470"]),
        ("cystitis", ["D003556"]),
    ]  # a comma parts two conditions
    refused = medlink("index", "build", "--kb", older_kb.path, "--out", tmp_path / "other", "--memory-new-concepts", check=False)
    assert refused.returncode != 0 and "give --memory too" in refused.stderr


def test_a_composites_ids_pair_with_its_parts_only_when_the_counts_agree():
    from medlink.corpora.datasets import load_dataset
    from medlink.corpora.mentions import ordered_ids, paired_ids

    assert ordered_ids("D006470|D003556+D006470") == ("D006470", "D003556")  # the file's order, each once
    assert paired_ids(("hemorrhagic", "cystitis"), ("D006470", "D003556")) == ("D006470", "D003556")
    assert paired_ids(("breast cancer", "ovarian cancer"), ("D001943",)) == () and paired_ids(("cancer",), ("D1",)) == ()
    composite = next(m for m in load_dataset(NEWER) if m.is_composite)
    assert composite.parts == ("hemorrhagic", "cystitis") and composite.part_ids == ("D006470", "D003556")
