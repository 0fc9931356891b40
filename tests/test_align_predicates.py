"""A best target that reads as broader (narrower) than its source is a skos:broadMatch (narrowMatch), not an exactMatch."""

from medlink.align.predicates import is_residual, predicate, telling_words
from medlink.align.sssom import BROAD, EXACT, NARROW


def is_broader(sources, targets):
    return predicate(sources, targets) == BROAD


def test_a_target_saying_less_is_broader():
    assert is_broader(["X-linked chondrodysplasia punctata"], ["Chondrodysplasia punctata"])
    assert is_broader(["transient neonatal diabetes mellitus", "TNDM"], ["Neonatal diabetes mellitus"])
    assert is_broader(["Astrakhan spotted fever"], ["Spotted fever, unspecified"])  # "unspecified" tells nothing


def test_a_residual_class_is_broader_unless_the_source_is_one():
    assert is_residual("Other deletions of part of a chromosome") and is_residual("Congenital malformations of lips, not elsewhere classified")
    assert not is_residual("Migraine, unspecified")  # where a classification keeps migraine itself
    assert is_broader(["chromosome 18q deletion syndrome"], ["Other deletions of part of a chromosome"])
    assert not is_broader(["other specified leukemia"], ["Other specified leukemias"])


def test_a_name_in_common_word_for_word_is_an_equivalent():
    assert telling_words("Asperger's syndrome") == telling_words("Asperger syndrome") == {"asperger"}
    assert not is_broader(["Asperger syndrome"], ["Asperger's syndrome"])
    assert not is_broader(["hypertension", "high blood pressure"], ["Essential (primary) hypertension", "Hypertension"])
    assert not is_broader(["amino acid metabolic disorder"], ["Disorder of amino-acid metabolism, unspecified"])
    assert predicate(["Hepatitis B"], ["Hepatitis C"]) == EXACT  # a different concept, not a broader one: the ranking's business
    assert predicate(["HER2 negative"], ["HER2-"]) == EXACT  # the sign says "negative": no word left out


def test_a_target_saying_more_is_narrower():
    assert predicate(["myocardial infarction", "heart attack"], ["Acute myocardial infarction"]) == NARROW
    assert predicate(["myocardial infarction"], ["Acute myocardial infarction", "Myocardial infarction"]) == EXACT


def test_brackets_name_the_same_concept_and_a_grouping_is_broader():
    assert predicate(["Kawasaki disease"], ["Mucocutaneous lymph node syndrome [Kawasaki]"]) == EXACT
    assert predicate(["essential hypertension"], ["Essential (primary) hypertension"]) == EXACT
    assert predicate(["syringomyelia"], ["Syringomyelia and syringobulbia"]) == BROAD
    assert predicate(["ovarian cancer", "ovary neoplasm"], ["Malignant neoplasm of ovary"]) == EXACT  # a looser synonym says nothing
