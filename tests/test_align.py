"""medlink align: candidates from alias sets, SSSOM out, NoTermFound, bad input (tests/fixtures/align: a mini DO in OBO,
a mini ICD-10-CM-like TSV, and the known mappings between them)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from medlink.align import sssom
from medlink.align.aligner import AlignOptions, align, mappings, write_mappings
from medlink.align.candidates import CandidateSet, SourceQueries, TargetIndex, generate
from medlink.align.inputs import open_pair
from medlink.align.metrics import best_threshold, gold_ranks, mapping_prf, ranking_measures
from medlink.errors import InputFormatError, MedlinkError, MissingInputError
from medlink.kb.build import build_kb
from medlink.kb.store import KB


@pytest.fixture(scope="module")
def kbs(tmp_path_factory):
    from pathlib import Path

    fixtures = Path(__file__).parent / "fixtures" / "align"
    folder = tmp_path_factory.mktemp("align")
    build_kb(folder / "source.sqlite", [f"obo:{fixtures / 'source.obo'}"], progress=False)
    build_kb(folder / "target.sqlite", [f"tsv=ICD10CM:{fixtures / 'target.tsv'}"], progress=False)
    return folder / "source.sqlite", folder / "target.sqlite", fixtures / "gold.tsv"


@pytest.fixture(scope="module")
def pair(kbs):
    source, target = open_pair(kbs[0], kbs[1])
    return source, target, sssom.read_gold(kbs[2], source, target)


@pytest.fixture(scope="module")
def ranking(pair):
    return align(pair[0], pair[1], progress=False)


def test_alias_sets_find_every_known_mapping(pair, ranking):
    source, target, gold = pair
    measures = ranking_measures(gold_ranks(ranking.ranked_ids(), gold))
    assert measures["recall@4"] == 1.0  # every gold target among the first four
    assert measures["recall@1"] >= 7 / 9
    # a synonym finds what the preferred name does not: "high blood pressure" is an inclusion term of I10
    assert ranking.ranked_ids()["DOID:10763"][0] == "ICD10CM:I10"


def test_ancestors_of_strong_candidates_join(pair):
    """Prader-Willi's gold is the category Q87.1 (later split): it is a candidate through its child Q87.11."""
    source, target, _ = pair
    index = TargetIndex.build(target)
    queries = SourceQueries.from_kb(source, target.normalize)
    with_parents = generate(index, queries, 64, ancestors=8)
    without = generate(index, queries, 64, ancestors=0)
    row = queries.concept_ids.index("DOID:11983")
    found = lambda c: {index.concept_ids[i] for i in c.hits.concepts[c.hits.row(row)]}  # noqa: E731
    assert found(with_parents) > found(without)
    assert "ICD10CM:C34" in found(with_parents) - found(without)  # the parent of a candidate (C34.90) joins
    ranked = [index.concept_ids[i] for i in with_parents.hits.concepts[with_parents.hits.row(row)]]
    assert ranked.index("ICD10CM:Q87.11") < ranked.index("ICD10CM:Q87.1")  # below the child that brought it


def test_sssom_rows_and_no_term_found(pair, ranking, tmp_path):
    source, target, _ = pair
    rows = mappings(ranking, threshold=0.8, top_k=2)
    by_subject = {}
    for row in rows:
        by_subject.setdefault(row.subject_id, []).append(row)
    assert set(by_subject) == set(ranking.candidates.queries.concept_ids)  # one or more rows per source concept
    nonsense = by_subject["DOID:9999999"]
    assert [r.object_id for r in nonsense] == [sssom.NO_TERM] and nonsense[0].confidence is None
    assert by_subject["DOID:9352"][0].predicate_id == sssom.EXACT and by_subject["DOID:9352"][0].object_id == "ICD10CM:E11"
    assert all(r.predicate_id == sssom.CLOSE for rows_ in by_subject.values() for r in rows_[1:])
    out = write_mappings(tmp_path / "m.sssom.tsv", rows, source, target)
    read = list(sssom.read_sssom(out))
    assert len(read) == len(rows) and sssom.is_medlink_sssom(out)
    assert {m.subject_id for m in read} >= {"DOID:9352", "DOID:9999999"}


@pytest.mark.slow  # importing sssom (linkml, pandas, rdflib) takes ~6 s
def test_sssom_validates_with_the_sssom_package(pair, ranking, tmp_path):
    pytest.importorskip("sssom")
    from sssom.constants import SchemaValidationType
    from sssom.parsers import parse_sssom_table
    from sssom.validators import validate

    out = write_mappings(tmp_path / "m.sssom.tsv", mappings(ranking, 0.8, 2), pair[0], pair[1])
    parsed = parse_sssom_table(out)
    assert len(parsed.df) == len(list(sssom.read_sssom(out)))
    assert set(parsed.df["predicate_id"]) <= {sssom.EXACT, sssom.CLOSE, sssom.BROAD, sssom.NARROW}
    first = parsed.df[parsed.df["comment"].str.startswith("rank 1")]
    assert dict(zip(first["subject_id"], first["predicate_id"])).get("DOID:5844") == sssom.NARROW  # myocardial infarction -> Acute myocardial infarction: the target says more
    assert {"DOID", "ICD10CM", "skos", "semapv"} <= set(parsed.converter.prefix_map)
    validate(parsed, [SchemaValidationType.JsonSchema, SchemaValidationType.PrefixMapCompleteness, SchemaValidationType.StrictCurieFormat],
             fail_on_error=True)


def test_unprefixed_ids_get_the_kb_prefix():
    assert sssom.curie("D003924", "MEDIC") == "MEDIC:D003924"
    assert sssom.curie("DOID:9352", "DO") == "DOID:9352"


def test_metrics():
    ranks = gold_ranks({"a": ["x", "y"], "b": ["z"], "c": []}, {"a": {"y"}, "b": {"z"}, "c": {"w"}})
    assert ranks == {"a": 2, "b": 1, "c": None}
    measures = ranking_measures(ranks, ks=(1, 2))
    assert measures["recall@1"] == pytest.approx(1 / 3) and measures["recall@2"] == pytest.approx(2 / 3)
    assert measures["normalised_recall@1"] == pytest.approx(1 / 2)  # c (gold never retrieved) left out
    assert measures["mrr"] == pytest.approx((0.5 + 1) / 3)
    prf = mapping_prf({"a": ["x"], "b": ["z"]}, {"a": {"y"}, "b": {"z"}, "c": {"w"}})
    assert (prf["precision"], prf["recall"]) == (0.5, pytest.approx(1 / 3))
    threshold, best = best_threshold({"a": ("x", 0.4), "b": ("z", 0.9)}, {"a": {"y"}, "b": {"z"}})
    assert 0.4 < threshold <= 0.9 and best["f1"] == pytest.approx(2 / 3)


def test_sides_given_as_source_specs_are_named_after_their_files(tmp_path):
    from medlink.align.aligner import side_prefix

    fixtures = Path(__file__).parent / "fixtures" / "align"
    source, target = open_pair(f"obo:{fixtures / 'source.obo'}", f"tsv:{fixtures / 'target.tsv'}")
    assert (Path(source.path).name, Path(target.path).name) == ("source.sqlite", "target.sqlite")
    assert side_prefix(target) == "TARGET" and target.meta.get("name") == "target.tsv"  # not a placeholder shared by both sides
    rows = mappings(align(source, target, AlignOptions(), progress=False), 0.0)
    written = write_mappings(tmp_path / "m.sssom.tsv", rows, source, target).read_text()
    assert "\tmedlinkkb:source\tmedlinkkb:target\t" in written and "TARGET:" in written  # entity references, not file names
    assert "#   medlinkkb: https://w3id.org/medlink/kb/" in written
    # a file name that is no valid prefix, and two sides of the same name (two versions of one code list)
    (tmp_path / "a").mkdir(), (tmp_path / "b").mkdir()
    for folder in ("a", "b"):
        (tmp_path / folder / "2025.tsv").write_text((fixtures / "target.tsv").read_text())
    old, new = open_pair(f"obo:{fixtures / 'source.obo'}", f"tsv:{tmp_path / 'a' / '2025.tsv'}")[1], open_pair(f"obo:{fixtures / 'source.obo'}", f"tsv:{tmp_path / 'b' / '2025.tsv'}")[1]
    assert side_prefix(old) == "KB2025"
    from medlink.align.aligner import side_prefixes

    assert side_prefixes(old, new) == ("KB2025_SOURCE", "KB2025_TARGET")


def test_bad_input(kbs, tmp_path):
    source, target, _ = kbs
    with pytest.raises(MissingInputError, match="--source .*no such KB file"):
        open_pair(tmp_path / "nope.sqlite", target)
    with pytest.raises(MissingInputError, match="--target"):
        open_pair(source, tmp_path / "nope.sqlite")
    with pytest.raises(MedlinkError, match="same"):
        open_pair(source, source)
    with pytest.raises(MedlinkError, match="--target: .*nope.obo"):
        open_pair(source, f"obo:{tmp_path / 'nope.obo'}")
    (tmp_path / "not-a-kb.sqlite").write_text("hello")
    with pytest.raises(MedlinkError, match="--target: .*not a medlink KB") as refused:
        open_pair(source, tmp_path / "not-a-kb.sqlite")
    assert "FORMAT:" in str(refused.value)  # a file that is no database: how to have the run build a KB from it
    (tmp_path / "names.tsv").write_text("id\tname\nX:1\tfracture\n")
    with pytest.raises(MedlinkError, match=f"--source: .*not a medlink KB.*give tsv:{tmp_path / 'names.tsv'}"):
        open_pair(tmp_path / "names.tsv", target)
    empty = _empty_kb(tmp_path / "empty.sqlite")
    with pytest.raises(MedlinkError, match="--source .*no concepts"):
        open_pair(empty, target)
    with pytest.raises(MedlinkError, match="--target .*no names"):
        open_pair(source, empty)


def _empty_kb(path):
    from medlink.kb.writer import KBWriter
    from medlink.text.normalize import normalize

    writer = KBWriter(path, normalize)
    writer.finish({"sources": "", "built_at": "now"})
    return path


def test_a_source_spec_is_built_for_the_run(kbs):
    from pathlib import Path

    target_spec = f"tsv=ICD10CM:{Path(__file__).parent / 'fixtures' / 'align' / 'target.tsv'}"
    source, target = open_pair(kbs[0], target_spec)
    assert "ICD10CM:E11" in target and len(target) == len(open_pair(kbs[0], kbs[1])[1])


def test_output_replaces_only_its_own_kind(pair, ranking, tmp_path):
    rows = mappings(ranking, 0.8)
    precious = tmp_path / "notes.tsv"
    precious.write_text("mine\n")
    with pytest.raises(MedlinkError, match="not an SSSOM file medlink wrote"):
        write_mappings(precious, rows, pair[0], pair[1])
    assert precious.read_text() == "mine\n"
    with pytest.raises(MedlinkError, match="one of the sources"):
        write_mappings(pair[0].path, rows, pair[0], pair[1])
    out = write_mappings(tmp_path / "m.tsv", rows, pair[0], pair[1])
    write_mappings(out, rows, pair[0], pair[1])  # an earlier medlink SSSOM is replaced


@pytest.mark.parametrize("content, message", [
    ("hello\tworld\n", "lacks subject_id, predicate_id, object_id"),
    ("# only metadata\n", "no header row"),
    ("subject_id\tpredicate_id\tobject_id\tconfidence\nDOID:1\tskos:exactMatch\tICD10CM:E11\thigh\n", r":2: confidence 'high' is not a number"),
    ("subject_id\tpredicate_id\tobject_id\tconfidence\nDOID:1\tskos:exactMatch\tICD10CM:E11\t1.5\n", r":2: confidence 1.5 is outside"),
    ("subject_id\tpredicate_id\tobject_id\nDOID:1\tskos:exactMatch\n", r":2: 2 fields, the header has 3"),
    ("subject_id\tpredicate_id\tobject_id\n9352\tskos:exactMatch\tICD10CM:E11\n", r":2: subject_id '9352' is not a CURIE"),
])
def test_malformed_sssom_names_file_line_and_field(tmp_path, content, message):
    path = tmp_path / "bad.sssom.tsv"
    path.write_text(content)
    with pytest.raises(InputFormatError, match=message):
        list(sssom.read_sssom(path))


def test_gold_ids_must_exist(pair, tmp_path):
    path = tmp_path / "gold.tsv"
    path.write_text("DOID:9352\tICD10CM:E11\nDOID:9352\tICD10CM:Z99\n")
    with pytest.raises(InputFormatError, match=r"gold.tsv:2: object_id 'ICD10CM:Z99' is not in"):
        sssom.read_gold(path, pair[0], pair[1])


def test_cli_align(kbs, tmp_path):
    from medlink.cli import command

    out = tmp_path / "cli.sssom.tsv"
    result = CliRunner().invoke(command(), ["align", "--source", str(kbs[0]), "--target", str(kbs[1]), "--out", str(out), "-q"])
    assert result.exit_code == 0, result.output
    assert "9 of 11 source concepts mapped" in result.output
    rows = {r.subject_id: r for r in sssom.read_sssom(out)}
    assert [s for s, r in rows.items() if r.object_id == sssom.NO_TERM] == ["DOID:9351", "DOID:9999999"]
    # "diabetes mellitus": its best, the block "Diabetes mellitus (E08-E13)", spells it at 0.71; "Type 1 diabetes mellitus"
    # names a type it does not, and no longer passes for it
    same = CliRunner().invoke(command(), ["align", "--source", str(kbs[0]), "--target", str(kbs[0]), "--out", str(out), "-q"])
    assert same.exit_code != 0 and "same file" in str(same.exception)


def test_calibration_only_aligner(kbs, pair, tmp_path):
    """``--no-cross-encoder``: a calibration over lexical and hierarchy evidence, fitted in seconds, no model; by default
    both kinds are compared out of fold, but 8 sources are too few to: logistic, and the file says why."""
    from medlink.align.scoring import LEXICAL_FEATURES, Calibration
    from medlink.cli import command

    out = tmp_path / "aligner"
    result = CliRunner().invoke(command(), ["train", "aligner", "--source", str(kbs[0]), "--target", str(kbs[1]), "--gold", str(kbs[2]),
                                            "--out", str(out), "--no-cross-encoder"])
    assert result.exit_code == 0, result.output + repr(result.exception)
    calibration = Calibration.load(out)
    assert calibration.inputs() == LEXICAL_FEATURES and not (out / "config.json").exists()
    assert calibration.model == "logistic" and "too few" in calibration.fitted_on["model_choice"]["why"]
    assert "calibration logistic (only 8 source(s) to fit on" in result.output
    ranking = align(pair[0], pair[1], AlignOptions(aligner=out), progress=False)
    assert ranking.method == "calibrated"
    assert ((0 <= ranking.confidence) & (ranking.confidence <= 1)).all()
    assert ranking_measures(gold_ranks(ranking.ranked_ids(), pair[2]))["recall@4"] == 1.0
    rows = mappings(ranking, calibration.threshold)
    assert {r.justification for r in rows} == {sssom.LEXICAL}
    # 2 held-out sources cannot choose a threshold (one right top would choose 0 and keep nonsense): 0.5, said aloud
    assert calibration.threshold == 0.5 and "fewer than 20" in calibration.fitted_on["threshold_note"] and "warning:" in result.output
    assert next(r.object_id for r in rows if r.subject_id == "DOID:9999999") == sssom.NO_TERM  # "zygomorphic quokka fever"
    # training again into the aligner folder it wrote is allowed (-q: no progress); --dev may not be --gold itself
    again = CliRunner().invoke(command(), ["train", "aligner", "--source", str(kbs[0]), "--target", str(kbs[1]), "--gold", str(kbs[2]),
                                           "--out", str(out), "--no-cross-encoder", "--calibration", "trees", "-q"])
    assert again.exit_code == 0 and Calibration.load(out).model == "trees", again.output + repr(again.exception)
    assert "do nothing without --bi-encoder" not in again.output
    same = CliRunner().invoke(command(), ["train", "aligner", "--source", str(kbs[0]), "--target", str(kbs[1]), "--gold", str(kbs[2]),
                                          "--dev", str(kbs[2]), "--out", str(tmp_path / "other"), "--no-cross-encoder"])
    assert same.exit_code != 0 and "is the --gold file" in str(same.exception)
    lonely = CliRunner().invoke(command(), ["train", "aligner", "--source", str(kbs[0]), "--target", str(kbs[1]), "--gold", str(kbs[2]),
                                            "--out", str(out), "--no-cross-encoder", "--no-dense-candidates", "-q"])
    assert lonely.exit_code == 0 and "do nothing without --bi-encoder" in lonely.output


def test_a_flat_target_without_hierarchy_aligns(pair, tmp_path):
    """A target with no is_a relation at all (MEDIC's CTD file) has depth 0 everywhere instead of an IndexError."""
    from medlink.kb.build import build_kb
    from medlink.kb.store import KB

    flat = tmp_path / "flat.tsv"
    flat.write_text("id\tname\nD1\tAsthma\nD2\tPsoriasis\nD3\tMyocardial infarction\n", encoding="utf-8")
    build_kb(tmp_path / "flat.sqlite", [f"tsv=MESH:{flat}"], progress=False)
    with KB.open(tmp_path / "flat.sqlite") as target:
        index = TargetIndex.build(target)
        assert index.depth().tolist() == [0, 0, 0] and index.children().tolist() == [0, 0, 0]
        ranking = align(pair[0], target, progress=False)
    assert ranking.top()["DOID:2841"][0] == "MESH:D1"  # asthma


def test_logistic_calibration_on_request_and_damaged_aligners_refused(kbs, pair, tmp_path):
    """``--calibration logistic`` keeps one weight per feature; an unknown model, an unknown feature or damaged trees
    in medlink_aligner.json are refused naming the file."""
    import json

    from medlink.align.scoring import ALIGNER_FILE, LEXICAL_FEATURES, Calibration
    from medlink.cli import command

    args = ["train", "aligner", "--source", str(kbs[0]), "--target", str(kbs[1]), "--gold", str(kbs[2]), "--no-cross-encoder"]
    out = tmp_path / "logistic"
    result = CliRunner().invoke(command(), [*args, "--out", str(out), "--calibration", "logistic"])
    assert result.exit_code == 0, result.output + repr(result.exception)
    calibration = Calibration.load(out)
    assert calibration.model == "logistic" and set(calibration.weights) == set(LEXICAL_FEATURES) and calibration.trees is None
    assert align(pair[0], pair[1], AlignOptions(aligner=out), progress=False).method == "calibrated"
    unknown = CliRunner().invoke(command(), [*args, "--out", str(tmp_path / "x"), "--calibration", "forest"])
    assert unknown.exit_code != 0 and "logistic, trees, auto" in str(unknown.exception)
    trees = tmp_path / "trees"
    assert CliRunner().invoke(command(), [*args, "--out", str(trees), "--calibration", "trees"]).exit_code == 0
    saved = json.loads((trees / ALIGNER_FILE).read_text())
    logistic = json.loads((out / ALIGNER_FILE).read_text())
    for base, damage in [(saved, {"features": [*saved["features"][:-1], "horoscope"]}), (saved, {"features": [*saved["features"], "tfidf"]}),
                         (saved, {"trees": {**saved["trees"], "trees": [{"left": [5]}]}}), (saved, {"trees": {**saved["trees"], "trees": []}}),
                         (saved, {"model": "forest"}), (saved, {"threshold": "high"}), (saved, {"threshold": 7}), (saved, {"depth": -3}),
                         (saved, {"kind": "something else"}), (logistic, {"weights": {"fused": "abc"}}), (logistic, {"weights": {"horoscope": 1.0}}),
                         (saved, {"dense_strip": 123}), (saved, {"dense_strip": "("}), (saved, {"horoscope": 1})]:
        (trees / ALIGNER_FILE).write_text(json.dumps({**base, **damage}))
        with pytest.raises(MedlinkError, match=ALIGNER_FILE):
            Calibration.load(trees)
    # what a user reads names the field, not Python's argument list
    (trees / ALIGNER_FILE).write_text(json.dumps({"kind": saved["kind"]}))
    with pytest.raises(MedlinkError, match='no "weights" field'):
        Calibration.load(trees)
    (trees / ALIGNER_FILE).write_text(json.dumps({**saved, "dense_strip": 123}))
    with pytest.raises(MedlinkError, match='"dense_strip" 123 must be a regular expression'):
        Calibration.load(trees)
    with pytest.raises(MedlinkError, match="give the aligner's folder"):
        Calibration.load(out / ALIGNER_FILE)
    (trees / ALIGNER_FILE).write_text(json.dumps({**logistic, "bi_encoder": str(tmp_path / "gone")}))
    with pytest.raises(MedlinkError, match=f"{ALIGNER_FILE}: its bi-encoder cannot be used"):
        Calibration.load(trees)


def test_auto_calibration_keeps_the_kind_that_ranks_better_out_of_fold():
    """Which of a source's candidates is right depends on two features together (x0 > x1 where x2 says so, x1 > x0
    elsewhere): no single weight per feature ranks that, boosted trees do; with a plain rule (the higher x0) the
    logistic model is the better one (its steps are finer than the trees')."""
    from medlink.align.scoring import out_of_fold_top1

    rng = np.random.default_rng(0)
    sources = 400
    source = np.repeat(np.arange(sources), 2)
    x0, x1 = rng.random(2 * sources), rng.random(2 * sources)
    flag = np.repeat(rng.integers(0, 2, sources), 2).astype(float)
    matrix = np.column_stack([x0, x1, flag])
    names = ["a", "b", "c"]
    higher = np.where(flag == 1, x0 - x1, x1 - x0)
    labels = np.zeros(2 * sources, bool)
    labels[np.arange(sources) * 2 + (higher[1::2] > higher[0::2])] = True
    trees, logistic = (out_of_fold_top1(kind, matrix, labels, source, names) for kind in ("trees", "logistic"))
    assert trees > 0.8 and logistic < 0.7, (trees, logistic)
    plain = np.zeros(2 * sources, bool)
    plain[np.arange(sources) * 2 + (x0[1::2] > x0[0::2])] = True
    trees, logistic = (out_of_fold_top1(kind, matrix, plain, source, names) for kind in ("trees", "logistic"))
    assert logistic > 0.95 and logistic > trees > 0.7, (trees, logistic)


def test_bi_encoder_similarity_sees_meaning_beyond_spelling(pair):
    """Each candidate pair's best alias-to-name cosine: 'heart attack' shares no word with 'Acute myocardial infarction'
    yet scores it above an unrelated target."""
    from medlink.align.dense import KeyVectors, bi_encoder_similarity
    from medlink.retrieval.hits import Hits

    pytest.importorskip("torch")
    source, target, _gold = pair
    index = TargetIndex.build(target)
    encoder = KeyVectors(index, "packaged")
    candidates = generate(index, SourceQueries.from_kb(source, target.normalize))
    scores = bi_encoder_similarity(candidates, encoder)
    assert scores.shape == candidates.hits.concepts.shape and np.all((-1 <= scores) & (scores <= 1 + 1e-6))
    query = SourceQueries(["X:1"], ["heart attack"], ["heart attack"], np.zeros(1, np.int64), [["heart attack"]])
    wanted = [index.concept_ids.index(c) for c in ("ICD10CM:I21", "ICD10CM:J45")]
    hits = Hits(np.array([0, 2]), np.array(wanted, np.int32), np.array([1.0, 0.9], np.float32), np.zeros(2, np.int32),
                np.zeros(2, np.int8), np.zeros(2, np.float64))
    infarction, asthma = bi_encoder_similarity(CandidateSet(query, index, hits, {}), encoder)
    assert infarction > asthma + 0.05, (infarction, asthma)  # the untrained MiniLM: ~0.51 against ~0.42


def test_bi_encoder_proposes_candidates_no_string_measure_finds(pair):
    """With a bi-encoder the target index has a third generator: 'heart attack' shares no word with 'Acute myocardial
    infarction', so BM25 and character n-grams miss it in a short list; the bi-encoder's nearest names do not."""
    pytest.importorskip("torch")
    _source, target, _gold = pair
    query = SourceQueries(["X:1"], ["heart attack"], [target.normalize("heart attack")], np.zeros(1, np.int64), [["heart attack"]])
    lexical = generate(TargetIndex.build(target), query, k=2, ancestors=0)
    from medlink.align.dense import with_dense_candidates

    index = with_dense_candidates(TargetIndex.build(target), "packaged")
    assert set(index.generators) >= {"bm25", "tfidf", "dense"}
    with_dense = generate(index, query, k=2, ancestors=0)
    infarction = index.concept_ids.index("ICD10CM:I21")
    assert infarction not in lexical.hits.concepts and infarction in with_dense.hits.concepts
    assert with_dense.stage_score("dense")[list(with_dense.hits.concepts).index(infarction)] > 0


def test_bi_encoder_similarities_encode_nothing_the_candidates_encoded(pair):
    """With the bi-encoder's candidates, its similarities read the target's names from the index and the source aliases
    from what the searches encoded (an alignment encoded both twice: 51 s of a 10k-concept run); without that
    generator the bi-encoder encodes the same texts, and the two ways agree."""
    from medlink.align.dense import KeyVectors, bi_encoder_similarity, with_dense_candidates

    pytest.importorskip("torch")
    source, target, _gold = pair
    index = with_dense_candidates(TargetIndex.build(target), "packaged")
    candidates = generate(index, SourceQueries.from_kb(source, target.normalize))
    generator = index.generators["dense"]
    encode = generator.encoder.encode
    generator.encoder.encode = lambda *a, **k: pytest.fail("encoded again")
    shared = bi_encoder_similarity(candidates, KeyVectors(index, "packaged"))
    generator.encoder.encode = encode
    plain = TargetIndex.build(target)
    alone = bi_encoder_similarity(CandidateSet(candidates.queries, plain, candidates.hits, {}), KeyVectors(plain, "packaged"))
    assert len(shared) == len(candidates.hits.concepts) and (shared > 0).mean() > 0.9
    assert np.allclose(shared, alone, atol=0.02), np.abs(shared - alone).max()


def test_calibration_with_a_bi_encoder(kbs, pair, tmp_path):
    """``--bi-encoder packaged``: the calibration weighs the bi-encoder's similarity too, and aligning recomputes it."""
    from medlink.align.scoring import LEXICAL_FEATURES, Calibration
    from medlink.cli import command

    pytest.importorskip("torch")
    out = tmp_path / "aligner"
    args = ["train", "aligner", "--source", str(kbs[0]), "--target", str(kbs[1]), "--gold", str(kbs[2]), "--no-cross-encoder"]
    result = CliRunner().invoke(command(), [*args, "--out", str(out), "--bi-encoder", "packaged"])
    assert result.exit_code == 0, result.output + repr(result.exception)
    calibration = Calibration.load(out)
    assert calibration.inputs() == (*LEXICAL_FEATURES, "dense") and calibration.bi_encoder == "packaged" and calibration.dense_candidates
    ranking = align(pair[0], pair[1], AlignOptions(aligner=out), progress=False)
    assert ranking.method == "calibrated + bi-encoder" and ranking_measures(gold_ranks(ranking.ranked_ids(), pair[2]))["recall@4"] == 1.0
    assert {r.justification for r in mappings(ranking, calibration.threshold)} == {sssom.SEMANTIC}  # a model that reads meaning decided
    missing = CliRunner().invoke(command(), [*args, "--out", str(tmp_path / "other"), "--bi-encoder", str(tmp_path / "no-model")])
    assert missing.exit_code != 0 and f"--bi-encoder {tmp_path / 'no-model'}: no such model folder" in str(missing.exception)


@pytest.mark.slow  # importing sssom (linkml, pandas, rdflib) takes ~6 s
def test_sssom_converts_to_rdf_and_owl(pair, ranking, tmp_path):
    """subject_source / object_source are CURIEs in the curie map (file names made 'sssom convert -O rdf|owl' fail)."""
    pytest.importorskip("sssom")
    from sssom.constants import SchemaValidationType
    from sssom.parsers import parse_sssom_table
    from sssom.validators import validate
    from sssom.writers import write_owl, write_rdf

    out = write_mappings(tmp_path / "m.sssom.tsv", mappings(ranking, 0.8, 2), pair[0], pair[1])
    parsed = parse_sssom_table(out)
    assert set(parsed.df["subject_source"]) == {"medlinkkb:source"} and set(parsed.df["object_source"]) == {"medlinkkb:target"}
    validate(parsed, [SchemaValidationType.JsonSchema, SchemaValidationType.PrefixMapCompleteness, SchemaValidationType.StrictCurieFormat],
             fail_on_error=True)
    with open(tmp_path / "m.ttl", "w") as rdf, open(tmp_path / "m.owl", "w") as owl:
        write_rdf(parsed, rdf)
        write_owl(parsed, owl)
    assert "https://w3id.org/medlink/kb/" in (tmp_path / "m.ttl").read_text()


ODD_IDS = ["A 01", "http://x.org/1", "http://x.org/a b", "B%41", "C|1", "Dé", "E:1"]  # no CURIE local part can hold them as they are


@pytest.fixture(scope="module")
def odd_kbs(tmp_path_factory):
    """A local code list whose ids no CURIE holds as written, built with a prefix (LOCAL:A 01) and without (A 01)."""
    folder = tmp_path_factory.mktemp("odd")
    names = ["asthma", "psoriasis", "hypertension", "lung cancer", "myocardial infarction", "type 2 diabetes mellitus",
             "type 1 diabetes mellitus"]
    (folder / "codes.tsv").write_text("id\tname\n" + "".join(f"{i}\t{n}\n" for i, n in zip(ODD_IDS, names)), encoding="utf-8")
    fixtures = Path(__file__).parent / "fixtures" / "align"
    build_kb(folder / "source.sqlite", [f"obo:{fixtures / 'source.obo'}"], progress=False)
    build_kb(folder / "prefixed.sqlite", [f"tsv=LOCAL:{folder / 'codes.tsv'}"], progress=False)
    build_kb(folder / "bare.sqlite", [f"tsv:{folder / 'codes.tsv'}"], progress=False)
    return folder


@pytest.mark.parametrize("target", ["prefixed", "bare"])
def test_ids_no_curie_holds_are_encoded_and_read_back(odd_kbs, target, tmp_path):
    source, codes = open_pair(odd_kbs / "source.sqlite", odd_kbs / f"{target}.sqlite")
    rows = mappings(align(source, codes, progress=False), 0.5)
    mapped = {r.object_id for r in rows if r.object_id != sssom.NO_TERM}
    assert len(mapped) == len(ODD_IDS)  # every odd id is some source's best target
    out = write_mappings(tmp_path / "m.sssom.tsv", rows, source, codes)
    text = out.read_text(encoding="utf-8")
    written = {m.object_id for m in sssom.read_sssom(out) if m.object_id != sssom.NO_TERM}
    assert all(" " not in w and "|" not in w and w.isascii() for w in written)
    prefix = "LOCAL" if target == "prefixed" else "BARE"
    assert f"{prefix}:A%2001" in written and f"{prefix}:B%2541" in written and f"{prefix}:D%C3%A9" in written
    # a well-formed URI is written as it is, and brings no "http" prefix into the curie map
    assert ("http://x.org/1" in written) == (target == "bare") and "#   http:" not in text
    assert {sssom.resolve(codes, w) for w in written} == mapped  # each reads back to the id the KB keeps


def test_sssom_ids_written_before_the_encoding_still_resolve(odd_kbs):
    with open_pair(odd_kbs / "source.sqlite", odd_kbs / "prefixed.sqlite")[1] as codes:
        assert sssom.resolve(codes, "LOCAL:A 01") == "LOCAL:A 01" and sssom.resolve(codes, "LOCAL:B%41") == "LOCAL:B%41"
        assert sssom.resolve(codes, "LOCAL:B%2541") == "LOCAL:B%41" and sssom.resolve(codes, "LOCAL:Z%2099") is None


@pytest.mark.slow  # importing sssom takes ~6 s
def test_the_sssom_package_keeps_every_row_with_an_odd_id(odd_kbs, tmp_path):
    """sssom drops a row whose id is neither a CURIE nor a URI with only a warning ('not well-formed'), so 'sssom
    validate' still passes: the count of rows it keeps is the check."""
    pytest.importorskip("sssom")
    from sssom.parsers import parse_sssom_table
    from sssom.writers import write_rdf

    for target in ("prefixed", "bare"):
        source, codes = open_pair(odd_kbs / "source.sqlite", odd_kbs / f"{target}.sqlite")
        out = write_mappings(tmp_path / f"{target}.sssom.tsv", mappings(align(source, codes, progress=False), 0.5), source, codes)
        parsed = parse_sssom_table(out)
        assert len(parsed.df) == len(list(sssom.read_sssom(out)))
        with open(tmp_path / f"{target}.ttl", "w") as rdf:
            write_rdf(parsed, rdf)


def test_a_file_not_in_utf8_names_file_line_and_byte(pair, tmp_path):
    path = tmp_path / "latin1.sssom.tsv"
    path.write_bytes(b"subject_id\tpredicate_id\tobject_id\nDOID:9352\tskos:exactMatch\tICD10CM:E11\nDOID:1\tskos:exactMatch\tX:caf\xe9\n")
    with pytest.raises(InputFormatError, match=r"latin1.sssom.tsv:3: not UTF-8 \(byte 0xe9 at byte offset 100\)"):
        list(sssom.read_sssom(path))
    with pytest.raises(InputFormatError, match=r"latin1.sssom.tsv:3: not UTF-8"):
        sssom.read_gold(path, pair[0], pair[1])
    gold = tmp_path / "gold.tsv"
    gold.write_bytes(b"latin\xe9\tx\n")
    with pytest.raises(InputFormatError, match=r"gold.tsv:1: not UTF-8 \(byte 0xe9 at byte offset 5\)"):
        sssom.read_gold(gold, pair[0], pair[1])


@pytest.mark.slow  # a subprocess: the user's exit code and stderr
def test_train_aligner_with_a_gold_file_not_in_utf8_exits_2(kbs, tmp_path):
    import subprocess
    import sys

    gold = tmp_path / "m.tsv"
    gold.write_bytes(b"latin\xe9\tx\n")
    result = subprocess.run([sys.executable, "-m", "medlink", "train", "aligner", "--source", str(kbs[0]), "--target", str(kbs[1]),
                             "--gold", str(gold), "--out", str(tmp_path / "aligner"), "--no-cross-encoder", "-q"], capture_output=True, text=True)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert f"error: {gold}:1: not UTF-8 (byte 0xe9" in result.stderr


def test_a_bi_encoder_without_an_aligner_adds_candidates(pair):
    """--bi-encoder packaged: the MiniLM's nearest target names join the lexical candidates (no training needed)."""
    pytest.importorskip("torch")
    source, target, gold = pair
    ranking = align(source, target, AlignOptions(bi_encoder="packaged"), progress=False)
    assert ranking.method == "lexical + bi-encoder candidates"
    assert ranking_measures(gold_ranks(ranking.ranked_ids(), gold))["recall@4"] == 1.0
    with pytest.raises(MedlinkError, match="--bi-encoder is for aligning without an aligner"):
        align(source, target, AlignOptions(bi_encoder="packaged", aligner=Path("any-aligner")), progress=False)


def test_a_lexical_runner_up_never_claims_more_than_the_first(ranking):
    """Ranked by the fused score, confidences by string similarity: capped down the list, so a threshold keeps a prefix."""
    for i in range(len(ranking.candidates.queries.concept_ids)):
        kept = ranking.confidence[ranking.row(i)]
        assert np.all(np.diff(kept) <= 1e-12), (ranking.candidates.queries.names[i], kept[:4])


def test_a_bi_encoder_folder_that_is_not_there_is_named(kbs, tmp_path):
    from tests.test_cli_kb import medlink

    refused = medlink("align", "--source", kbs[0], "--target", kbs[1], "--out", tmp_path / "m.sssom.tsv", "--bi-encoder",
                      tmp_path / "nowhere", check=False)
    assert refused.returncode == 2 and "--bi-encoder" in refused.stderr and "no such model folder" in refused.stderr
    (tmp_path / "empty").mkdir()  # a folder, but not a model: named as the option's, before any work
    empty = medlink("align", "--source", kbs[0], "--target", kbs[1], "--out", tmp_path / "m.sssom.tsv", "--bi-encoder",
                    tmp_path / "empty", check=False)
    assert empty.returncode == 2 and "--bi-encoder" in empty.stderr and "not a transformer model folder" in empty.stderr, empty.stderr
    training = medlink("train", "aligner", "--source", kbs[0], "--target", kbs[1], "--gold", kbs[2], "--out", tmp_path / "aligner",
                       "--bi-encoder", tmp_path / "empty", check=False)  # training checks it the same way, before any work
    assert training.returncode == 2 and f"--bi-encoder {tmp_path / 'empty'}: " in training.stderr, training.stderr
    assert not (tmp_path / "aligner").exists()


def test_first_aliases_are_each_concepts_own_in_order():
    """What a bi-encoder searches and compares: a concept's first own aliases, never a substitution's twin."""
    aliases = ["a1", "a2", "a3", "b1", "a2 twin", "c1", "c2"]
    owner = np.array([0, 0, 0, 1, 0, 2, 2])
    order = np.argsort(owner, kind="stable")  # as substitutions.expand leaves them: a concept's aliases together
    moved = np.empty(len(order), np.int64)
    moved[order] = np.arange(len(order))
    reads = moved[np.array([0, 1, 2, 3, 1, 5, 6])][order]  # the twin reads "a2"
    queries = SourceQueries(["A", "B", "C"], ["a1", "b1", "c1"], [aliases[i] for i in order], owner[order], [], reads)
    assert [queries.aliases[i] for i in queries.first_aliases(2)] == ["a1", "a2", "b1", "c1", "c2"]
    assert [queries.aliases[i] for i in queries.first_aliases(8)] == ["a1", "a2", "a3", "b1", "c1", "c2"]
    twice = queries.followed_by(queries)  # the second copy's twin still reads its own "a2"
    assert [twice.aliases[i] for i in twice.first_aliases(2)] == ["a1", "a2", "b1", "c1", "c2"] * 2
    assert twice.owner.tolist() == [*owner[order].tolist(), *(owner[order] + 3).tolist()] and twice.reads[10] == 8


def test_candidate_sets_joined_keep_each_sources_aliases(pair):
    """Train and dev candidates joined for one calibration fit (an aligner without a cross-encoder) keep every source's
    aliases: the joined set's bi-encoder similarities are each part's (they were -1 throughout, the queries' aliases
    dropped, so a calibration learnt a constant and its confidences came out near 1 at align time)."""
    from medlink.align.dense import KeyVectors, bi_encoder_similarity, with_dense_candidates

    pytest.importorskip("torch")
    source, target, _gold = pair
    index = with_dense_candidates(TargetIndex.build(target), "packaged")
    queries = SourceQueries.from_kb(source, target.normalize)
    half = len(queries.concept_ids) // 2
    first, second = (generate(index, queries.subset(part)) for part in (range(half), range(half, len(queries.concept_ids))))
    vectors = KeyVectors(index, "packaged")
    joined = first.followed_by(second)
    together = bi_encoder_similarity(joined, vectors)
    assert np.array_equal(together, np.concatenate([bi_encoder_similarity(first, vectors), bi_encoder_similarity(second, vectors)]))
    assert (together > -1).all() and joined.queries.concept_ids == queries.concept_ids
    aliasless = CandidateSet(SourceQueries(joined.queries.concept_ids, joined.queries.names, [], np.zeros(0, np.int64)), index, joined.hits, {})
    with pytest.raises(ValueError, match="do not belong together"):
        bi_encoder_similarity(aliasless, vectors)


def test_align_writes_a_concept_under_its_id_in_the_namespace_asked_for(tmp_path, caplog):
    """MEDIC keeps "605027|D008228": its concept id is the OMIM number, its MeSH id an alt id. By default the OMIM
    number is written under the target's prefix; ``--prefer-prefix MESH`` writes the MeSH id as a MESH CURIE, which
    reads back to the concept; a concept without one falls to the next prefix asked for. An alt id that is another
    concept's own id (MEDIC's 260350) is not used, and a UMLS CUI (C + 7 digits) is no MeSH id."""
    from medlink.cli import command

    (tmp_path / "source.txt").write_text(
        "S1||Non-Hodgkin lymphoma\nS2||Fragile X syndrome\nS3||Pancreatic neoplasms\nS4||Pancreatic acinar carcinoma\nS5||Lupus nephritis\n"
    )
    (tmp_path / "medic.txt").write_text(
        "605027|D008228||Lymphoma, Non-Hodgkin|Non-Hodgkin lymphoma\n300624||Fragile X syndrome\n"
        "260350||Pancreatic acinar carcinoma\nD010190|260350||Pancreatic Neoplasms\nC0024143||Lupus nephritis\n"
    )
    build_kb(tmp_path / "source.sqlite", [f"biosyn:{tmp_path / 'source.txt'}"], progress=False)
    build_kb(tmp_path / "medic.sqlite", [f"biosyn:{tmp_path / 'medic.txt'}"], progress=False)
    align_to = lambda out, *more: CliRunner().invoke(  # noqa: E731
        command(), ["align", "--source", str(tmp_path / "source.sqlite"), "--target", str(tmp_path / "medic.sqlite"), "--out", str(out), "-q", *more]
    )

    def objects(out) -> dict[str, str]:
        return {r.subject_id: r.object_id for r in sssom.read_sssom(out)}

    assert align_to(tmp_path / "plain.tsv").exit_code == 0
    assert objects(tmp_path / "plain.tsv") == {
        "SOURCE:S1": "MEDIC:605027", "SOURCE:S2": "MEDIC:300624", "SOURCE:S3": "MEDIC:D010190", "SOURCE:S4": "MEDIC:260350", "SOURCE:S5": "MEDIC:C0024143"
    }
    done = align_to(tmp_path / "mesh.tsv", "--prefer-prefix", "mesh", "--prefer-prefix", "OMIM")
    assert done.exit_code == 0, done.output
    assert objects(tmp_path / "mesh.tsv") == {
        "SOURCE:S1": "MESH:D008228", "SOURCE:S2": "OMIM:300624", "SOURCE:S3": "MESH:D010190", "SOURCE:S4": "OMIM:260350", "SOURCE:S5": "MEDIC:C0024143"
    }
    omim = align_to(tmp_path / "omim.tsv", "--prefer-prefix", "OMIM")
    assert omim.exit_code == 0 and objects(tmp_path / "omim.tsv")["SOURCE:S3"] == "MEDIC:D010190"  # 260350 is another concept's
    with KB.open(tmp_path / "medic.sqlite") as medic:
        assert sssom.resolve(medic, "MESH:D008228") == "605027"
    with caplog.at_level("WARNING", logger="medlink"):
        assert align_to(tmp_path / "none.tsv", "--prefer-prefix", "SNOMEDCT").exit_code == 0
    assert any("--prefer-prefix SNOMEDCT: no id of either KB is in it" in r.getMessage() for r in caplog.records)
    assert objects(tmp_path / "none.tsv") == objects(tmp_path / "plain.tsv")
    refused = align_to(tmp_path / "bad.tsv", "--prefer-prefix", "me sh")
    assert refused.exit_code != 0 and "no CURIE prefix" in str(refused.exception) and not (tmp_path / "bad.tsv").exists()
    shown = CliRunner().invoke(command(), ["kb", "show", str(tmp_path / "medic.sqlite"), "MESH:D008228"])
    assert shown.exit_code == 0 and shown.output.startswith("605027  Lymphoma, Non-Hodgkin  (requested MESH:D008228)"), shown.output
    backwards = CliRunner().invoke(command(), [
        "kb", "augment", str(tmp_path / "medic.sqlite"), "--from", str(tmp_path / "mesh.tsv"), "--with", str(tmp_path / "source.sqlite"),
        "--out", str(tmp_path / "medic+source.sqlite"),
    ])  # the file maps source -> medic: medic is the KB it carries facts into only the other way round
    assert backwards.exit_code != 0 and "the mappings go from" in str(backwards.exception) and "augment " in str(backwards.exception)
