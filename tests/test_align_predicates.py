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


def test_a_code_that_groups_a_condition_or_two_more_with_and_is_broader_in_the_default_mappings():
    """benchmarks/coding/make_mappings.py reads "Orchitis and epididymitis" as broader than "Epididymitis", as
    ``predicate`` does; not a code whose other name says more, nor a list of qualifiers."""
    from benchmarks.coding.make_mappings import grouped_by_name
    from medlink.linking.coding_rules import CodeSet
    from medlink.linking.coding_words import name_word_sets

    codes = CodeSet.build(
        "ICD10CM",
        [("ICD10CM:N45", "Orchitis and epididymitis"), ("ICD10CM:F44", "Dissociative and conversion disorders"),
         ("ICD10CM:F03.A0", "Unspecified dementia, mild, without behavioral disturbance, psychotic disturbance, mood disturbance, and anxiety")],
        [("ICD10CM:F44", "Hysterical psychosis")],
    )

    def grouped(code: str, source: str) -> bool:
        return grouped_by_name(codes, code, name_word_sets(source), [source])

    assert grouped("ICD10CM:N45", "Epididymitis")
    assert not grouped("ICD10CM:F44", "Psychosis") and not grouped("ICD10CM:F03.A0", "Dementia")
    assert not grouped("ICD10CM:N45", "Orchitis and epididymitis")  # the source groups them too: the same


def test_a_code_sharing_a_third_of_the_words_fits_only_where_the_source_is_a_condition_and_joins():
    """"Hypo-osmolality and hyponatremia" (E87.1) is the code for "Hyponatremia", though they share a third of their
    words; "Pica of infancy and childhood" is no code for every "Pica": "and" joins qualifiers there."""
    from benchmarks.coding.make_mappings import names_a_conjunct
    from medlink.linking.coding_words import name_word_sets

    hyponatremia, pica = name_word_sets("Hyponatremia"), name_word_sets("Pica")
    assert names_a_conjunct("Hypo-osmolality and hyponatremia", hyponatremia)
    assert names_a_conjunct("Dyslexia and other symbolic dysfunctions, not elsewhere classified", name_word_sets("Dyslexia"))
    assert not names_a_conjunct("Pica of infancy and childhood", pica)
    assert not names_a_conjunct("Cerebral vasospasm and vasoconstriction", name_word_sets("Vasospasm"))


def test_a_codes_fit_is_read_through_the_sources_preferred_name_first():
    """"Syncope and collapse" (R55) fits HPO's "Syncope" through its preferred name (the code says more, with "and":
    broader), not through R55's "Fainting" against the synonym "Fainting spell": read so, it was ranked after "Cough
    syncope" and left out of the default mappings."""
    from benchmarks.coding.make_mappings import fit
    from medlink.linking.coding_words import name_word_sets

    source = [name_word_sets("Syncope"), name_word_sets("Fainting spell")]
    r55 = [told for name in ("Syncope and collapse", "Fainting", "Vasovagal attack") for told in name_word_sets(name)]
    kind, via, apart, _shared = fit(source, r55)
    assert (kind, via, apart) == (2, 0, 1)  # the preferred name's reading, which ``grouped_by_name`` then calls broader
    assert fit(source, name_word_sets("Fainting"))[:2] == (1, 1)  # only the synonym fits: says less, through it
    assert fit(source, name_word_sets("Syncope"))[:2] == (0, 0)


def test_an_organs_adjective_fits_the_organ_and_a_broader_code_keeps_the_site():
    """ICD-10-CM names a site with its noun ("... of ovary"), HPO with the adjective; and a code that drops the site while
    naming another ("Fracture of neck" for "Femoral neck fracture") or a neoplasm of no site is no broader code."""
    from benchmarks.coding.make_mappings import fit
    from medlink.linking.coding_words import name_word_sets

    femoral_neck = [name_word_sets("Femoral neck fracture")]
    assert fit(femoral_neck, name_word_sets("Fracture of unspecified part of neck of femur"))[0] == 0
    assert fit(femoral_neck, name_word_sets("Fracture of neck, unspecified")) is None
    ovarian = [name_word_sets("Ovarian carcinoma")]
    assert fit(ovarian, name_word_sets("Malignant neoplasm of ovary"))[0] == 0
    assert fit(ovarian, name_word_sets("Malignant (primary) neoplasm, unspecified")) is None
    assert fit([name_word_sets("Hepatic amyloidosis")], name_word_sets("Amyloidosis, unspecified"))[0] == 1  # no other site


def test_a_short_form_in_parentheses_that_spells_the_name_is_a_reading():
    from medlink.align.predicates import readings

    assert "PTSD" in readings("Post-traumatic stress disorder (PTSD)")
    assert predicate(["PTSD"], ["Post-traumatic stress disorder (PTSD)"]) == EXACT
    assert readings("Essential (primary) hypertension") == ["Essential (primary) hypertension", "Essential hypertension"]
    # a short form that spells only part of the name is no reading of it: a personal history is no TIA
    assert "TIA" not in readings("Personal history of transient ischemic attack (TIA), and cerebral infarction without residual deficits")
    assert "FGR" not in readings("Encounter for antenatal screening for fetal growth retardation (FGR)")
