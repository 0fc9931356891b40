import json

import pytest

from tests.test_cli_kb import medlink, medlink_without

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory):
    from tests.conftest import FIXTURES

    work = tmp_path_factory.mktemp("cli-link")
    medlink("kb", "build", work / "kb.sqlite", f"biosyn:{FIXTURES / 'eval' / 'dictionary.txt'}", "-q")
    medlink("index", "build", "--kb", work / "kb.sqlite", "--out", work / "index", "--memory", f"biosyn:{FIXTURES / 'eval' / 'biosyn_processed'}")
    return work / "index"


def json_lines(text):
    return [json.loads(line) for line in text.splitlines()]


def test_link_arguments_json(index_dir, tmp_path):
    result = medlink("link", "--index", index_dir, "--json", "--k", "2", "colorectal cancer", "", "?!")
    out = json_lines(result.stdout)
    assert out[0]["mention"] == "colorectal cancer"
    best = out[0]["candidates"][0]
    assert (best["id"], best["name"], best["matched"]) == ("D015179", "colorectal neoplasms", "colorectal cancer")
    assert set(best["scores"]) == {"exact", "words", "tfidf", "bm25"} and len(out[0]["candidates"]) == 2
    assert out[1] == {"mention": "", "candidates": [], "error": "empty mention"}
    assert out[2]["candidates"] == [] and "only punctuation" in out[2]["error"]
    assert "2 mention(s) not linked (number 2, 3 in input order)" in result.stderr
    nothing = medlink("link", "--index", index_dir, "", "?!", check=False)  # nothing linkable: a failure a script sees
    assert nothing.returncode == 1 and "2 mention(s) not linked" in nothing.stderr
    (tmp_path / "empty.txt").write_text("")
    empty = medlink("link", "--index", index_dir, "--input", tmp_path / "empty.txt", check=False)  # nothing to do: no failure, but said
    assert empty.returncode == 0 and empty.stdout == "" and "no mentions read from" in empty.stderr


def test_generators_that_leave_a_stage_out_say_the_probabilities_are_left_out(index_dir):
    some = medlink("link", "--index", index_dir, "--generators", "exact,tfidf", "colorectal cancer")
    assert "with --generators the candidates have scores only, and no mention is NIL" in some.stderr
    every = medlink("link", "--index", index_dir, "--generators", "exact,words,thesaurus,completion,tfidf,bm25", "colorectal cancer")
    assert "--generators" not in every.stderr and "p=" in every.stdout


def test_link_reads_stdin_and_files(index_dir, tmp_path):
    import subprocess
    import sys

    piped = subprocess.run([sys.executable, "-m", "medlink", "link", "--index", str(index_dir), "--json", "--k", "1"],
                           input="hamartoma\nrenal\n", capture_output=True, text=True, check=True)
    assert [o["candidates"][0]["id"] for o in json_lines(piped.stdout)] == ["D006222", "D007674"]
    tsv = tmp_path / "mentions.tsv"
    tsv.write_text("doc1\tbreast cancer\ndoc2\ttumour\n")
    out = json_lines(medlink("link", "--index", index_dir, "--input", tsv, "--column", "1", "--json", "--k", "1").stdout)
    assert [o["mention"] for o in out] == ["breast cancer", "tumour"]
    jsonl = tmp_path / "mentions.jsonl"
    jsonl.write_text('{"mention": "ovarian cancer"}\n\n{"text": "kidney diseases"}\n')
    out = json_lines(medlink("link", "--index", index_dir, "--input", jsonl, "--json", "--k", "1").stdout)
    assert [o["candidates"][0]["id"] for o in out] == ["D010051", "D007674"]


def blank_note(result) -> bool:
    return "no mentions to link" in result.stderr and "blank" in result.stderr


def test_whitespace_only_input_is_an_empty_input_not_a_failure(index_dir, tmp_path):
    """docs/reference.md: an empty input links nothing, says so on stderr and exits 0; blank mentions are such an input."""
    for mentions in (["  "], [""], ["\t", " "]):
        result = medlink("link", "--index", index_dir, "--json", *mentions, check=False)
        assert result.returncode == 0 and blank_note(result), result.stderr
        assert [o["error"] for o in json_lines(result.stdout)] == ["empty mention"] * len(mentions)  # one answer per mention
    files = {"blank.txt": "  \n\t\n\n", "blank.tsv": "\n \t \n", "blank.jsonl": '{"mention": "  "}\n\n{"text": ""}\n'}
    for name, content in files.items():
        (tmp_path / name).write_text(content)
        result = medlink("link", "--index", index_dir, "--input", tmp_path / name, "--column", "1", check=False)
        assert result.returncode == 0 and blank_note(result) and str(tmp_path / name) in result.stderr, (name, result.stderr)
    import subprocess
    import sys

    piped = subprocess.run([sys.executable, "-m", "medlink", "link", "--index", str(index_dir)], input="   \n\n", capture_output=True, text=True)
    assert piped.returncode == 0 and blank_note(piped) and "stdin" in piped.stderr


def test_a_blank_mention_among_others_is_answered_in_its_place_and_fails_nothing(index_dir, tmp_path):
    tsv = tmp_path / "mentions.tsv"
    tsv.write_text("doc1\tbreast cancer\n\ndoc3\t \n")  # a blank row, then a blank cell: not rows short of a column
    result = medlink("link", "--index", index_dir, "--input", tsv, "--column", "1", "--json", "--k", "1", check=False)
    out = json_lines(result.stdout)
    assert result.returncode == 0 and [o.get("error") for o in out] == [None, "empty mention", "empty mention"]
    assert "2 mention(s) not linked (number 2, 3 in input order): 2 blank (empty or whitespace only)" in result.stderr
    piped = medlink("link", "--index", index_dir, "", "?!", "  ", check=False)  # text that cannot be linked still fails the run
    assert piped.returncode == 1 and "3 mention(s) not linked" in piped.stderr and "2 blank" in piped.stderr


def test_link_bad_input_is_reported_with_file_and_line(index_dir, tmp_path):
    latin1 = tmp_path / "latin1.txt"
    latin1.write_bytes("fine\nna\xefve\n".encode("latin-1"))
    result = medlink("link", "--index", index_dir, "--input", latin1, check=False)
    assert result.returncode == 2 and f"{latin1}:2: not valid UTF-8" in result.stderr
    jsonl = tmp_path / "bad.jsonl"
    jsonl.write_text('{"mention": "ok"}\n{"name": "no mention key"}\n')
    result = medlink("link", "--index", index_dir, "--input", jsonl, check=False)
    assert result.returncode == 2 and f"{jsonl}:2:" in result.stderr and '"mention"' in result.stderr
    missing = medlink("link", "--index", tmp_path / "nowhere", "x", check=False)
    assert missing.returncode == 2 and "no index folder" in missing.stderr
    both = medlink("link", "--index", index_dir, "--input", tmp_path / "nope.tsv", "fever", check=False)
    assert both.returncode == 2 and "not both" in both.stderr  # the file is not silently ignored


def test_eval_json_and_report_files(index_dir, tmp_path):
    from tests.conftest import FIXTURES

    out_dir = tmp_path / "report"
    result = medlink("eval", "--index", index_dir, "--dataset", f"biosyn:{FIXTURES / 'eval' / 'biosyn_processed'}",
                     "--train", f"biosyn:{FIXTURES / 'eval' / 'biosyn_processed'}", "--json", "--out", out_dir)
    report = json.loads(result.stdout)
    assert {"n", "acc@1", "acc@5", "mrr", "recall@64"} <= set(report)
    assert report["n"] > 0 and 0 <= report["acc@1"] <= report["acc@5"] <= 1
    assert report["acc@1"] == 1.0  # every test mention is in the memory (train = test here)
    assert (out_dir / "subpopulations.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (out_dir / "report.md").read_text().startswith("|")
    assert sum(1 for _ in open(out_dir / "records.jsonl")) == report["n"]


def test_eval_against_a_baseline_report(index_dir, tmp_path):
    from tests.conftest import FIXTURES

    dataset = f"biosyn:{FIXTURES / 'eval' / 'biosyn_processed'}"
    medlink("eval", "--index", index_dir, "--dataset", dataset, "--out", tmp_path / "before")
    result = medlink("eval", "--index", index_dir, "--dataset", dataset, "--baseline", tmp_path / "before", "--json")
    versus = json.loads(result.stdout)["against_baseline"]
    assert versus["acc@1"] == {"difference": 0.0, "interval": [0.0, 0.0]} and versus["better"] == versus["worse"] == 0
    assert "Against the baseline, in points" in medlink("eval", "--index", index_dir, "--dataset", dataset, "--baseline", tmp_path / "before").stdout
    other = tmp_path / "other"
    other.mkdir()
    (other / "records.jsonl").write_text(json.dumps({"text": "something else", "doc_id": None, "rank": 1}) + "\n")
    refused = medlink("eval", "--index", index_dir, "--dataset", dataset, "--baseline", other, check=False)
    assert refused.returncode == 2 and "evaluate the baseline on the same --dataset" in refused.stderr
    (other / "records.jsonl").write_text("{not json\n")
    broken = medlink("eval", "--index", index_dir, "--dataset", dataset, "--baseline", other, check=False)
    assert broken.returncode == 2 and "records.jsonl:1: not a JSON record" in broken.stderr
    empty = medlink("eval", "--index", index_dir, "--dataset", dataset, "--baseline", tmp_path, check=False)
    assert empty.returncode == 2 and "no records.jsonl" in empty.stderr


def test_eval_refuses_a_kb_other_than_the_index_s(index_dir, tmp_path):
    from tests.conftest import FIXTURES

    dictionary = tmp_path / "dictionary.txt"
    dictionary.write_text((FIXTURES / "eval" / "dictionary.txt").read_text() + "D999999||made up disease\n")
    medlink("kb", "build", tmp_path / "other.sqlite", f"biosyn:{dictionary}", "-q")
    result = medlink("eval", "--index", index_dir, "--dataset", f"biosyn:{FIXTURES / 'eval' / 'biosyn_processed'}",
                     "--kb", tmp_path / "other.sqlite", check=False)
    assert result.returncode == 2 and "built from a KB with checksum" in result.stderr and "medlink index build" in result.stderr


def test_eval_without_the_recorded_kb_asks_for_one(tmp_path):
    from tests.conftest import FIXTURES

    medlink("kb", "build", tmp_path / "gone.sqlite", f"biosyn:{FIXTURES / 'eval' / 'dictionary.txt'}", "-q")
    medlink("index", "build", "--kb", tmp_path / "gone.sqlite", "--out", tmp_path / "index")
    (tmp_path / "gone.sqlite").unlink()
    result = medlink("eval", "--index", tmp_path / "index", "--dataset", f"biosyn:{FIXTURES / 'eval' / 'biosyn_processed'}", check=False)
    assert result.returncode == 2 and "gone.sqlite) is not there; give it with --kb" in result.stderr


def test_default_index_links_out_of_the_box():
    out = json_lines(medlink("link", "--json", "--k", "1", "heart attack", "chest pain").stdout)
    assert [o["candidates"][0]["id"] for o in out] == ["HP:0001658", "HP:0100749"]


def test_people_words_and_a_note_shortened_words_link_on_the_default_index():
    """Issue 52's lay wording and shorthand, as `medlink link` gives them: lay words read as names say them, a shortened
    word written out, common lay names in the shorthand list, a long word two edits from a name's; "RUL nodule" is no *Skin nodule*."""
    mentions = ["sore knees", "my hip hurts", "hard to fall asleep", "breast ca", "L knee pain", "baby blues", "sugar diabetes",
                "can't catch my breath", "diabeetus", "RUL nodule"]
    out = json_lines(medlink("link", "--json", "--k", "1", *mentions).stdout)
    firsts = {o["mention"]: o["candidates"][0]["id"] for o in out}
    assert firsts == {"sore knees": "HP:0030839", "my hip hurts": "HP:0030838", "hard to fall asleep": "HP:0031354",
                      "breast ca": "HP:0003002", "L knee pain": "ICD10CM:M25.562", "baby blues": "ICD10CM:O90.6",
                      "sugar diabetes": "HP:0000819", "can't catch my breath": "HP:0002094", "diabeetus": "HP:0000819",
                      "RUL nodule": "HP:0033608"}
    assert not any(o["nil"] for o in out[:-1])  # the last, a nodule of a lobe no name says, may be NIL
    assert [o.get("read_as") for o in out[:2]] == ["pain knees", "my hip pain"]  # what was searched is said
    coded = json_lines(medlink("link", "--json", "--k", "1", "--target-namespace", "ICD10CM", "achy joints", "pulmonary HTN", "R hip fx").stdout)
    # the code rules read the mention as the stages did: "pain" said, "hypertension" said, the right side kept
    assert [o["candidates"][0]["id"] for o in coded] == ["ICD10CM:M25.50", "ICD10CM:I27.20", "ICD10CM:S72.001A"]
    assert coded[2]["read_as"] == "right hip fracture"


def test_the_readme_sentence_finds_its_shorthand_on_the_default_index():
    """The default KB adds medlink's clinical shorthand list ("T2DM", "can't sleep") to ICD-10-CM and HPO concepts."""
    document = json.loads(medlink("annotate", "--json", "Pt with hx of MI and T2DM, c/o chest pain and can't sleep.").stdout)
    found = {a["text"]: a["ids"][0] for a in document["annotations"]}
    assert set(found) == {"MI", "T2DM", "chest pain", "can't sleep"}
    status = {a["text"]: (a["infons"]["assertion"], a["infons"].get("historical")) for a in document["annotations"]}
    assert status["MI"] == ("present", "true") and status["chest pain"] == ("present", "false")  # "hx of" reaches MI, not past "c/o"
    assert found["T2DM"] in ("ICD10CM:E11", "HP:0005978") and found["can't sleep"] in ("ICD10CM:G47.00", "HP:0100785")
    assert "HTN" not in {a["text"] for a in json.loads(medlink("annotate", "--json", "The htn was not mentioned.").stdout)["annotations"]}
    design = json.loads(medlink("annotate", "--json", "We used computer-aided design (CAD). The CAD model fitted.").stdout)
    assert design["annotations"] == []  # the document says what its CAD is
    note = json.loads(medlink("annotate", "--json", "HER2- breast cancer; left hip fracture; morbid obesity; ER+/PR+; primary "
                              "hypertension; denies fever; sats 98% on RA; f/u with PCP; LFTs normal; c/o CP.").stdout)
    found = {a["text"]: a["ids"][0] for a in note["annotations"]}
    assert found["primary hypertension"] == "ICD10CM:I10" and found["fever"] == "HP:0001945"  # not I27.0, primary *pulmonary* hypertension
    assert [a["infons"]["assertion"] for a in note["annotations"] if a["text"] == "fever"] == ["absent"]
    assert not {"RA", "PCP", "LFTs"} & set(found)  # room air, a primary care provider, liver function tests: no conditions
    assert found["CP"] == "HP:0100749"  # chest pain, read so in a note, where HPO's "CP" is cerebral palsy
    # the sign read; "Fracture of hip NOS" turned, the span the whole phrase as clinical notes mark it
    assert found["HER2-"] == "ICD10CM:Z17.32" and found["left hip fracture"] == "ICD10CM:S72.00"
    assert found["morbid obesity"] == "HP:0025501" and found["ER+"] == "ICD10CM:Z17.0" and found["PR+"] == "ICD10CM:Z17.21"
    report = json.loads(medlink("annotate", "--json", "CT: bilateral pulmonary emboli and brain metastases. R-sided weakness. "
                                "Echo: LVH.").stdout)
    found = {a["text"]: a["ids"][0] for a in report["annotations"]}
    assert found == {"bilateral pulmonary emboli": "HP:0002204", "brain metastases": "ICD10CM:C79.31", "R-sided weakness": "HP:0001269",
                     "LVH": "HP:0001712"}  # a Latin plural read as the singular the names spell; not Asthenia for the weakness
    note = json.loads(medlink("annotate", "--json", "Mother w/ breast ca. Hx of GDM. Denies SI/HI. No dyspnea or CP. Echo: pulmonary "
                              "HTN. CXR: pnuemonia. Dietary counseling.").stdout)
    found = {a["text"]: (a["ids"][0], a["infons"]["assertion"]) for a in note["annotations"]}
    assert found == {"breast ca": ("HP:0003002", "someone_else"), "GDM": ("ICD10CM:O24.4", "present"), "SI": ("HP:0031589", "absent"),
                     "HI": ("ICD10CM:R45.850", "absent"), "dyspnea": ("HP:0002094", "absent"), "CP": ("HP:0100749", "absent"),
                     "pulmonary HTN": ("ICD10CM:I27.20", "present"), "pnuemonia": ("HP:0002090", "present")}  # no counseling code
    juvenile = json.loads(medlink("annotate", "--json", "Juvenile diabetes.").stdout)["annotations"]
    assert [(a["text"], a["ids"][0]) for a in juvenile] == [("Juvenile diabetes", "HP:0100651")]  # Type I, not its head's E11


@pytest.fixture(scope="module")
def lay_kb(tmp_path_factory):
    """139 HPO sleep / heart / nausea / pain terms (a slice of the default KB): small enough to encode in seconds on any CPU."""
    from tests.conftest import FIXTURES

    work = tmp_path_factory.mktemp("lay")
    medlink("kb", "build", work / "kb.sqlite", f"tsv:{FIXTURES / 'lay' / 'hpo_subset.tsv'}", "-q")
    return work / "kb.sqlite"


@pytest.mark.dense
def test_default_dense_preset_links_lay_wording_the_lexical_preset_misses(lay_kb, tmp_path):
    pytest.importorskip("torch")
    mentions = ["can't sleep", "feeling sick", "heart attack"]
    for preset in ("default", "default-dense"):
        medlink("index", "build", "--kb", lay_kb, "--config", preset, "--out", tmp_path / preset)
    lexical = json_lines(medlink("link", "--index", tmp_path / "default", "--json", "--k", "1", *mentions).stdout)
    dense = json_lines(medlink("link", "--index", tmp_path / "default-dense", "--json", "--k", "1", *mentions).stdout)
    assert [o["candidates"][0]["id"] for o in lexical][:2] == ["HP:0033063", "HP:0025089"]  # Shortened sleep phase, Feculent vomiting
    assert [o["candidates"][0]["id"] for o in dense][::2] == ["HP:0002360", "HP:0001658"]  # Sleep abnormality, MI
    assert "dense" in dense[0]["candidates"][0]["scores"]


@pytest.mark.dense
def test_default_dense_index_is_the_preset_over_the_default_kb(lay_kb, tmp_path, monkeypatch):
    """What '--index default-dense' builds on first use, checked over a small KB standing in for the default one
    (the full build is benchmarks' default_dense: 150k names take minutes, more on a CPU without bf16)."""
    pytest.importorskip("torch")
    from medlink.kb import default
    from medlink.kb.store import KB
    from medlink.linking.config import default_dense_config
    from medlink.linking.index import built_config, resolve_index
    from medlink.linking.manifest import read_manifest

    monkeypatch.setenv("MEDLINK_HOME", str(tmp_path))
    monkeypatch.setattr(default, "default_kb_path", lambda: lay_kb)
    manifest = read_manifest(resolve_index("default-dense"))  # its calibration stage aside (a small KB gets the fallback)
    assert built_config(manifest) == default_dense_config().to_dict() and manifest["kb"]["checksum"] == KB.open(lay_kb).checksum


@pytest.mark.dense
def test_a_misspelt_default_index_is_named():
    result = medlink("link", "--index", "defualt", "asthma", check=False)
    assert result.returncode == 2 and "did you mean 'default'" in result.stderr


def test_default_dense_without_faiss_says_what_to_install():
    result = medlink_without("faiss", "link", "--index", "default-dense", "can't sleep")
    assert result.returncode == 2 and "neural models need faiss: install medlink's dense extra (in medlink's source folder: pip install '.[dense]'" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_default_index_is_rebuilt_when_its_config_changes(monkeypatch):
    from medlink.linking import index
    from medlink.linking.config import LinkerConfig
    from medlink.linking.manifest import read_manifest

    def exact_only(weight):
        return lambda: LinkerConfig.from_dict({"generators": [{"name": "exact", "type": "exact"}], "fusion": {"weights": {"exact": weight}}})

    monkeypatch.setitem(index.DEFAULT_INDEXES, "default", ("exact-only-index", exact_only(1.0)))
    directory = index.resolve_index("default")
    built = (directory / "manifest.json").stat().st_mtime_ns
    assert index.resolve_index("default") == directory and (directory / "manifest.json").stat().st_mtime_ns == built  # reused
    monkeypatch.setitem(index.DEFAULT_INDEXES, "default", ("exact-only-index", exact_only(2.0)))
    assert index.resolve_index("default") == directory
    assert read_manifest(directory)["config"]["fusion"]["weights"] == {"exact": 2.0}  # rebuilt with the new config
    from medlink.retrieval import exact

    words = lambda: LinkerConfig.from_dict({"generators": [{"name": "exact", "type": "exact", "params": {"words": True}}]})
    monkeypatch.setitem(index.DEFAULT_INDEXES, "default", ("exact-only-index", words))
    built = (index.resolve_index("default") / "manifest.json").stat().st_mtime_ns
    assert (index.resolve_index("default") / "manifest.json").stat().st_mtime_ns == built
    monkeypatch.setattr(exact, "FUNCTION_WORDS", exact.FUNCTION_WORDS - {"unspecified"})  # word keys made by another version's rule
    assert (index.resolve_index("default") / "manifest.json").stat().st_mtime_ns != built  # rebuilt
    # its mention finder leaves out HPO's qualifiers: linked as strings, never reported as findings in text
    from medlink.kb.default import NOT_FINDINGS
    from medlink.linking.annotator import AnnotateOptions, Annotator

    assert read_manifest(directory)["dictionary"]["skip_under"] == sorted(NOT_FINDINGS)
    finder_only = AnnotateOptions(modifiers="off")  # the finder's spans, not a head's phrase (the default indexes take it)
    found = [a.text for a in Annotator.load(directory, options=finder_only).annotate_text("Mild headache, episodic; acute onset.").annotations]
    assert "headache" in found and not {"Mild", "episodic", "acute onset"} & set(found)


def test_a_column_asked_of_input_that_is_not_tsv_is_said(index_dir, tmp_path):
    (tmp_path / "m.txt").write_text("1\tcolorectal cancer\n")
    result = medlink("link", "--index", index_dir, "--input", tmp_path / "m.txt", "--column", "1", "--json", "--top-k", "1")
    assert "--column 1 is for TSV input" in result.stderr and "--format tsv" in result.stderr
