"""``medlink score`` as a user runs it: another program's PubTator output scored against gold, KB equivalences, errors, bad input."""

import json

import pytest

from tests.conftest import FIXTURES
from tests.test_cli_kb import medlink

GOLD = FIXTURES / "eval" / "pubtator_small.txt"
TITLE_1 = "Mutations of BRCA1 in breast or ovarian cancer families."


def predicted_file(tmp_path, lines: list[str], name: str = "predicted.pubtator"):
    """The gold texts with other annotations: what a tagger run over the gold file writes."""
    text = GOLD.read_text()
    blocks = [b.splitlines()[:2] for b in text.strip().split("\n\n")]
    out = tmp_path / name
    out.write_text("\n\n".join("\n".join(b + [line for line in lines if line.startswith(b[0].split("|")[0] + "\t")]) for b in blocks) + "\n")
    return out


def test_scores_another_programs_output_with_intervals(tmp_path):
    predicted = predicted_file(tmp_path, [
        "8751855\t68\t81\tbreast cancer\tDisease\tD001943",  # right span, right concept
        "8751855\t119\t129\thamartomas\tDisease\tD006222",  # a span gold does not have
        "9620771\t0\t15\tACTH deficiency\tDisease\tC535668",  # right span; C535668 is one of the gold's alternatives
        "9620771\t98\t116\tLamellar cataracts\tDisease\tD002386",  # right span, wrong concept
    ])
    result = medlink("score", "--gold", GOLD, "--predicted", predicted, "--json", "--errors", tmp_path / "errors.jsonl")
    scores = json.loads(result.stdout)
    assert (scores["mentions"]["tp"], scores["mentions"]["fp"], scores["mentions"]["fn"]) == (3, 1, 3)
    assert (scores["linking"]["tp"], scores["linking"]["fp"], scores["linking"]["fn"]) == (2, 2, 4)
    low, high = scores["intervals"]["mentions"]["f1"]
    assert low <= scores["mentions"]["f1"] <= high
    errors = [json.loads(line) for line in (tmp_path / "errors.jsonl").read_text().splitlines()]
    assert {"measure": "linking", "kind": "fp", "doc_id": "9620771", "start": 98, "end": 116, "text": "Lamellar cataracts",
            "ids": ["D002386"], "other_ids": ["C535342", "116800"]} in errors  # the gold's ids in its file's order
    assert len([e for e in errors if e["measure"] == "mentions"]) == 4
    table = medlink("score", "--gold", f"pubtator:{GOLD}", "--predicted", f"pubtator:{predicted}").stdout
    assert "| mention finding (strict span) | 3 | 1 | 3 | 75.0 | 50.0 | 60.0 |" in table
    assert "2 gold document(s); intervals: the documents resampled 1,000 times." in table


def test_a_baseline_gets_a_paired_difference(tmp_path):
    ours = predicted_file(tmp_path, ["8751855\t68\t81\tbreast cancer\tDisease\tD001943"], "ours.pubtator")
    theirs = predicted_file(tmp_path, [], "theirs.pubtator")
    result = medlink("score", "--gold", GOLD, "--predicted", ours, "--baseline", theirs, "--json")
    compared = json.loads(result.stdout)["against_baseline"]
    assert compared["linking"]["f1_difference"] == pytest.approx(2 / 7)  # one of six gold mentions linked: F1 2/7 against 0
    table = medlink("score", "--gold", GOLD, "--predicted", ours, "--baseline", theirs).stdout
    assert "Against --baseline, F1 difference in points" in table and "linking +28.6" in table
    other_text = tmp_path / "other.pubtator"
    other_text.write_text(GOLD.read_text().replace(TITLE_1, TITLE_1.replace("BRCA1", "BRCA2")))
    refused = medlink("score", "--gold", GOLD, "--predicted", ours, "--baseline", other_text, check=False)
    assert refused.returncode == 2 and "--baseline: 1 document(s) whose text differs" in refused.stderr


def test_a_kb_makes_alternative_ids_one_concept(tmp_path):
    kb = tmp_path / "kb.sqlite"
    dictionary = tmp_path / "dictionary.txt"
    dictionary.write_text("C535342|116800||lamellar cataracts\nD001943||breast cancer\n")  # ids as the PubTator reader gives them
    medlink("kb", "build", kb, f"biosyn:{dictionary}", "-q")
    predicted = predicted_file(tmp_path, ["9620771\t98\t116\tLamellar cataracts\tDisease\tC535342"])
    apart = json.loads(medlink("score", "--gold", GOLD, "--predicted", predicted, "--json").stdout)["concepts"]
    together = json.loads(medlink("score", "--gold", GOLD, "--predicted", predicted, "--json", "--kb", kb).stdout)["concepts"]
    assert together["fn"] == apart["fn"] - 1  # C535342 and its OMIM alias no longer count as two gold concepts
    elsewhere = predicted_file(tmp_path, ["9620771\t98\t116\tLamellar cataracts\tDisease\tHP:0000523"], "hpo.pubtator")
    assert "no predicted id matched a gold id" in medlink("score", "--gold", GOLD, "--predicted", elsewhere).stderr


def test_skipped_records_are_counted_and_medlinks_format_names_are_read(tmp_path):
    predicted = predicted_file(tmp_path, ["8751855\t68\t81\tbreast cancer\tDisease\tD001943", "8751855\tx\t81\tbroken\tDisease\tD1"])
    result = medlink("score", "--gold", GOLD, "--predicted", predicted, "--skip-invalid")
    assert "1 malformed record(s) skipped" in result.stdout and "skipped" in result.stderr
    assert json.loads(medlink("score", "--gold", GOLD, "--predicted", predicted, "--skip-invalid", "--json").stdout)["skipped_records"] == 1
    from medlink.corpora.document_files import read_documents, write_documents

    as_bioc = tmp_path / "predicted.bioc-json"  # the name --output-format bioc-json suggests
    with open(as_bioc, "w", encoding="utf-8") as out:
        write_documents(read_documents(predicted_file(tmp_path, [], "plain.pubtator"), "pubtator"), out, "bioc-json")
    assert json.loads(medlink("score", "--gold", GOLD, "--predicted", as_bioc, "--json").stdout)["mentions"]["fn"] == 6


@pytest.mark.parametrize("problem, expected", [
    ("another text", "whose text differs from the gold one's"),
    ("gold twice", "--gold: 1 document id(s) given twice"),
    ("empty gold", "no documents in it"),
    ("errors folder", "--errors"),
    ("unknown document", "not among the gold documents"),
    ("plain text", "plain text carries no annotations"),
    ("missing", "no such file"),
])
def test_bad_input_is_one_clear_line(tmp_path, problem, expected):
    gold, extra = GOLD, []
    predicted = predicted_file(tmp_path, [])
    if problem == "another text":
        predicted = tmp_path / "p.pubtator"
        predicted.write_text(GOLD.read_text().replace(TITLE_1, TITLE_1.replace("BRCA1", "BRCA2")))
    elif problem == "gold twice":
        gold = tmp_path / "twice.pubtator"
        gold.write_text(GOLD.read_text().replace("9620771", "8751855"))
    elif problem == "empty gold":
        gold = tmp_path / "empty.pubtator"
        gold.write_text("")
    elif problem == "errors folder":
        extra = ["--errors", tmp_path]
    elif problem == "unknown document":
        predicted = tmp_path / "p.pubtator"
        predicted.write_text("123|t|Another abstract.\n123|a|\n")
    elif problem == "plain text":
        predicted = tmp_path / "p.txt"
        predicted.write_text("Fever and cough.\n")
    elif problem == "missing":
        predicted = tmp_path / "absent.pubtator"
    result = medlink("score", "--gold", gold, "--predicted", predicted, *extra, check=False)
    assert result.returncode == 2 and expected in result.stderr and "Traceback" not in result.stderr


def test_errors_replaces_only_its_own_earlier_output_never_an_input(tmp_path):
    gold = tmp_path / "gold.pubtator"
    gold.write_text(GOLD.read_text())
    refused = medlink("score", "--gold", gold, "--predicted", gold, "--errors", gold, check=False)
    assert refused.returncode != 0 and "one of the sources being read" in refused.stderr
    assert gold.read_text() == GOLD.read_text()
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    refused = medlink("score", "--gold", gold, "--predicted", f"pubtator:{gold}", "--errors", notes, check=False)
    assert refused.returncode != 0 and "is not an --errors file of 'medlink score'" in refused.stderr and notes.read_text() == "my notes\n"
    blank_first = tmp_path / "draft.txt"
    blank_first.write_text("\nmy draft\n")  # starts with a blank line: not an empty file, not medlink's
    refused = medlink("score", "--gold", gold, "--predicted", f"pubtator:{gold}", "--errors", blank_first, check=False)
    assert refused.returncode != 0 and blank_first.read_text() == "\nmy draft\n"
    errors = tmp_path / "errors.jsonl"
    predicted = predicted_file(tmp_path, ["8751855\t119\t129\thamartomas\tDisease\tD006222"])
    medlink("score", "--gold", gold, "--predicted", predicted, "--errors", errors)
    first = errors.read_text()
    assert first and json.loads(first.splitlines()[0])["measure"]
    medlink("score", "--gold", gold, "--predicted", gold, "--errors", errors)  # its own earlier output: replaced
    assert errors.read_text() == ""
