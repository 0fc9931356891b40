from collections import Counter

import pytest

from medlink.errors import InputFormatError, MissingInputError
from medlink.kb.errors_policy import InvalidLinePolicy
from medlink.kb.readers.biosyn import read_biosyn
from medlink.kb.records import ConceptRecord, IdAliasRecord, NameRecord


def test_medic_style_lines_keep_every_name_and_alt_ids(fixtures):
    records = list(read_biosyn(fixtures / "biosyn" / "medic_small.txt"))
    concepts = [r for r in records if isinstance(r, ConceptRecord)]
    names = [r for r in records if isinstance(r, NameRecord)]
    assert [c.id for c in concepts] == ["C565588", "C567755", "D003924", "D009203", "D006331"]
    assert concepts[1].name == "Tooth Agenesis, Selective, 6"
    assert len(names) == 1 + 2 + 4 + 4 + 3
    mi = [(n.text, n.kind) for n in names if n.concept_id == "D009203"]
    assert mi[0] == ("Myocardial Infarction", "preferred")
    assert ("Heart Attack", "synonym") in mi
    assert [r for r in records if isinstance(r, IdAliasRecord)] == [IdAliasRecord("613097", "C567755", "alt_id")]


def test_dictionary_style_first_line_of_an_id_is_preferred(fixtures):
    records = list(read_biosyn(fixtures / "biosyn" / "dictionary_small.txt", prefix="MESH"))
    kinds = Counter((r.concept_id, r.kind) for r in records if isinstance(r, NameRecord))
    assert kinds[("MESH:D003924", "preferred")] == 1
    assert kinds[("MESH:D003924", "synonym")] == 2
    aliases = [r for r in records if isinstance(r, IdAliasRecord)]
    assert aliases == [IdAliasRecord("MESH:613097", "MESH:C567755", "alt_id")]  # deduplicated across lines


def test_malformed_line_names_file_and_line(fixtures):
    path = fixtures / "biosyn" / "malformed.txt"
    with pytest.raises(InputFormatError) as error:
        list(read_biosyn(path))
    assert error.value.line == 2
    assert str(path) in str(error.value) and "ids||name" in str(error.value)


def test_skip_invalid_counts_every_bad_line(fixtures):
    policy = InvalidLinePolicy(skip_invalid=True)
    records = list(read_biosyn(fixtures / "biosyn" / "malformed.txt", policy=policy))
    assert policy.total_skipped == 2
    assert {r.id for r in records if isinstance(r, ConceptRecord)} == {"D003924", "D009203"}


def test_missing_file_is_named(tmp_path):
    with pytest.raises(MissingInputError, match="nope.txt"):
        list(read_biosyn(tmp_path / "nope.txt"))
