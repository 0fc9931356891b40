import pytest

from medlink.errors import InputFormatError, MedlinkError, MissingInputError
from medlink.eval import LabeledMention, load_askapatient, load_biosyn, load_dataset, load_pubtator, load_pubtator_documents
from medlink.kb.errors_policy import InvalidLinePolicy


@pytest.fixture
def eval_fixtures(fixtures):
    return fixtures / "eval"


def test_biosyn_directory_in_file_name_order_with_composites_and_alternatives(eval_fixtures):
    mentions = load_biosyn(eval_fixtures / "biosyn_processed")
    assert len(mentions) == 8  # README.txt is not a .concept file
    assert [m.doc_id for m in mentions] == ["10021369"] * 3 + ["8751855"] * 2 + ["8954016"] + ["9620771"] * 2
    first = mentions[0]
    assert first == LabeledMention("adenomatous polyposis coli", ("adenomatous polyposis coli",), frozenset({"D011125"}), "10021369", 0, 26, "SpecificDisease")
    composite = mentions[3]
    assert composite.text == "breast cancer|ovarian cancer"
    assert composite.parts == ("breast cancer", "ovarian cancer") and composite.is_composite
    assert composite.gold == {"D001943", "D010051"}
    plus = mentions[5]
    assert plus.parts == ("renal", "hamartomas") and plus.gold == {"D007674", "D006222"}
    alternatives = mentions[6]
    assert alternatives.parts == ("acth deficiency",) and not alternatives.is_composite
    assert alternatives.gold == {"201400", "C535668"}  # OMIM|MeSH alternatives: either one counts


def test_biosyn_single_file_and_dispatcher(eval_fixtures):
    path = eval_fixtures / "biosyn_processed" / "8751855.concept"
    assert load_biosyn(path) == load_dataset(f"biosyn:{path}")
    assert len(load_dataset(f"biosyn:{eval_fixtures / 'biosyn_processed'}")) == 8


def test_biosyn_malformed_lines_name_file_and_line(eval_fixtures):
    path = eval_fixtures / "malformed.concept"
    with pytest.raises(InputFormatError) as error:
        load_biosyn(path)
    assert error.value.line == 2 and str(path) in str(error.value)
    policy = InvalidLinePolicy(skip_invalid=True)
    assert [m.start for m in load_biosyn(path, policy=policy)] == [40]
    assert policy.total_skipped == 2


def test_non_utf8_line_is_a_format_error(tmp_path):
    path = tmp_path / "bad.concept"
    path.write_bytes(b"1||0|3||Disease||flu||D1\n1||4|9||Disease||caf\xe9 au lait||D2\n")
    with pytest.raises(InputFormatError, match=r"bad.concept:2: not valid UTF-8"):
        load_biosyn(path)


def test_unlinked_mentions_are_skipped_unless_asked(tmp_path):
    path = tmp_path / "x.concept"
    path.write_text("1||0|3||Disease||flu||D1\n1||4|9||Disease||thing||-1\n")
    assert len(load_biosyn(path)) == 1
    assert len(load_biosyn(path, keep_unlinked=True)) == 2


def test_askapatient_fold_is_latin1(eval_fixtures):
    train = load_askapatient(eval_fixtures / "askapatient" / "AskAPatient.fold-0.train.txt")
    test = load_dataset(f"askapatient:{eval_fixtures / 'askapatient' / 'AskAPatient.fold-0.test.txt'}")
    assert len(train) == 5 and len(test) == 3
    assert train[3].text == "sorgren's syndrome" and train[3].gold_name == "Sjögren's syndrome"
    assert train[3].gold == {"83901003"} and train[3].parts == ("sorgren's syndrome",) and train[3].doc_id is None


def test_askapatient_malformed_line(eval_fixtures):
    with pytest.raises(InputFormatError) as error:
        load_askapatient(eval_fixtures / "askapatient" / "AskAPatient.fold-0.bad.txt")
    assert error.value.line == 2 and "concept_id<TAB>concept_name<TAB>mention" in str(error.value)


def test_pubtator_documents_keep_text_offsets_alternatives_and_composites(eval_fixtures):
    documents = load_pubtator_documents(eval_fixtures / "pubtator_small.txt")
    assert [d.doc_id for d in documents] == ["8751855", "9620771"]
    assert [len(d.mentions) for d in documents] == [3, 3]
    for document in documents:
        for m in document.mentions:
            assert document.text[m.start : m.end] == m.text
    composite = documents[0].mentions[0]
    assert composite.semantic_type == "CompositeMention" and composite.parts == ("breast or ovarian cancer",)
    assert composite.gold == {"D001943", "D010051"}
    assert documents[0].mentions[2].gold == {"D007674", "D006222"}  # '+' joins ids too
    acth = documents[1].mentions[0]
    assert acth.gold == {"201400", "C535668"}  # OMIM: stripped to match MEDIC's bare OMIM ids
    kept = load_pubtator_documents(eval_fixtures / "pubtator_small.txt", strip_id_prefixes=())
    assert kept[1].mentions[0].gold == {"OMIM:201400", "C535668"}
    assert load_pubtator(eval_fixtures / "pubtator_small.txt") == documents[0].mentions + documents[1].mentions
    assert len(load_dataset(f"pubtator:{eval_fixtures / 'pubtator_small.txt'}")) == 6


def test_pubtator_parts_column_relation_lines_and_duplicates(tmp_path):
    path = tmp_path / "cdr.txt"
    doc = "1|t|Breast and ovarian cancers.\n1|a|None.\n1\t0\t26\tBreast and ovarian cancers\tDisease\tD1|D2\tBreast cancers|ovarian cancers\n1\tCID\tC9\tD1\n"
    path.write_text(doc + "\n" + doc)
    documents = load_pubtator_documents(path)
    assert len(documents) == 2 and documents[0].mentions[0].parts == ("Breast cancers", "ovarian cancers")
    assert len(load_pubtator_documents(path, skip_duplicate_documents=True)) == 1


def test_pubtator_offsets_outside_the_text(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_text("1|t|Flu.\n1|a|Cough.\n1\t0\t99\tFlu\tDisease\tD1\n")
    with pytest.raises(InputFormatError) as error:
        load_pubtator(path)
    assert error.value.line == 3


def test_dispatcher_lists_known_formats(tmp_path):
    with pytest.raises(MedlinkError, match="biosyn.*askapatient.*pubtator"):
        load_dataset("conll:x.txt")
    with pytest.raises(MedlinkError, match="no path"):
        load_dataset("biosyn")
    with pytest.raises(MissingInputError, match="nope"):
        load_dataset(f"biosyn:{tmp_path / 'nope'}")
