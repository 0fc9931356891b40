"""The entity types annotations carry, and how corpus labels and KB types map onto them.

Why one vocabulary: corpora name one kind of mention differently (NCBI Disease's SpecificDisease, DiseaseClass,
Modifier and CompositeMention, BC5CDR's Disease, BioRED's DiseaseOrPhenotypicFeature), and KBs say what a concept
is in their own terms (UMLS semantic types, MeSH tree branches, SNOMED CT semantic tags, an ontology's namespace, or
only their source). Filters (``medlink score --types``, the training commands' ``--types``) and the tagger's labels
compare all of them through one name per kind: ``ENTITY_TYPES``, PubTator Central's kinds.

A corpus label outside the vocabulary is kept as written (a user's own type, "Procedure"); comparisons ignore case.
An annotation without a type passes every filter: nothing says it is of another type (a tool that writes none is
scored on all its spans). Files keep the label they were read with; only comparisons map it.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Iterable, Sequence
from contextlib import closing
from pathlib import Path
from typing import TYPE_CHECKING

from medlink.errors import MedlinkError

if TYPE_CHECKING:
    from medlink.core import Annotation
    from medlink.kb.store import KB

DISEASE, CHEMICAL, GENE, SPECIES, VARIANT, CELL_LINE = "Disease", "Chemical", "Gene", "Species", "Variant", "CellLine"
ENTITY_TYPES = (DISEASE, CHEMICAL, GENE, SPECIES, VARIANT, CELL_LINE)  # their order is the dictionary finder's type bits

# Corpus labels for the vocabulary's kinds (lower case): NCBI Disease's four classes, BioRED's and PubTator3's names
_CORPUS_LABELS = {
    **{name.lower(): name for name in ENTITY_TYPES},
    **dict.fromkeys(("specificdisease", "diseaseclass", "modifier", "compositemention", "diseaseorphenotypicfeature"), DISEASE),
    **dict.fromkeys(("chemicalentity", "drug"), CHEMICAL),
    **dict.fromkeys(("geneorgeneproduct", "protein"), GENE),
    **dict.fromkeys(("organismtaxon", "organism"), SPECIES),
    **dict.fromkeys(("sequencevariant", "mutation", "dnamutation", "proteinmutation", "snp"), VARIANT),
    "cell_line": CELL_LINE,
}

# KB types (lower case) that say a concept's kind: UMLS semantic types (the Disorders, Chemicals & Drugs and Living
# Beings groups), SNOMED CT semantic tags, MeSH tree branches (``tree:C``), OBO namespaces. ICD-10-CM's node kinds
# (chapter, category, billable) say nothing of it: its source does (``_SOURCES``).
_UMLS_DISORDERS = (
    "acquired abnormality|anatomical abnormality|cell or molecular dysfunction|congenital abnormality|disease or syndrome|"
    "experimental model of disease|finding|injury or poisoning|mental or behavioral dysfunction|neoplastic process|"
    "pathologic function|sign or symptom"
)
_UMLS_CHEMICALS = (
    "amino acid, peptide, or protein|antibiotic|biologically active substance|biomedical or dental material|carbohydrate|"
    "chemical|chemical viewed functionally|chemical viewed structurally|clinical drug|eicosanoid|element, ion, or isotope|"
    "enzyme|hazardous or poisonous substance|hormone|immunologic factor|indicator, reagent, or diagnostic aid|"
    "inorganic chemical|lipid|neuroreactive substance or biogenic amine|nucleic acid, nucleoside, or nucleotide|"
    "organic chemical|organophosphorus compound|pharmacologic substance|receptor|steroid|vitamin"
)
_UMLS_ORGANISMS = "amphibian|animal|archaeon|bacterium|bird|eukaryote|fish|fungus|human|mammal|organism|plant|reptile|vertebrate|virus"
_KB_TYPES = {
    **{name.lower(): name for name in ENTITY_TYPES},
    **dict.fromkeys(_UMLS_DISORDERS.split("|"), DISEASE),
    **dict.fromkeys(_UMLS_CHEMICALS.split("|"), CHEMICAL),
    **dict.fromkeys(_UMLS_ORGANISMS.split("|"), SPECIES),
    "gene or genome": GENE,
    **dict.fromkeys(("disorder", "morphologic abnormality"), DISEASE),  # SNOMED CT ("finding" is above)
    **dict.fromkeys(("substance", "product", "medicinal product", "medicinal product form"), CHEMICAL),
    **{"tree:c": DISEASE, "tree:d": CHEMICAL, "tree:b": SPECIES},  # MeSH: Diseases, Chemicals and Drugs, Organisms
    **dict.fromkeys(("disease_ontology", "human_phenotype", "mondo"), DISEASE),
    "chebi_ontology": CHEMICAL,
    "ncbi_taxonomy": SPECIES,
}
# A concept the KB gives no such type takes its source's kind: source names as the readers write them (lower case, the
# start of the name: an OBO file's stem "doid_2016-09-01"), or a BioSyn dictionary's path (its "biosyn" source says
# nothing: MEDIC and a CTD chemical list are both BioSyn files)
_SOURCES = (
    (("icd-10-cm", "icd10cm", "hp", "hpo", "doid", "mondo", "medic", "ctd_diseases", "orphanet"), DISEASE),
    (("chebi", "ctd_chemicals"), CHEMICAL),
)
_PATH_WORDS = ((("medic", "disease"), DISEASE), (("chemical", "chebi"), CHEMICAL))


def entity_type(label: str | None) -> str | None:
    """A corpus label's type in the vocabulary ("SpecificDisease" -> "Disease"); a label outside it as written
    (stripped); None for none."""
    label = (label or "").strip()
    return _CORPUS_LABELS.get(label.lower(), label) if label else None


def parse_types(value: str | Iterable[str] | None) -> frozenset[str] | None:
    """The types an option names ("Disease,Chemical", or several options), each as ``entity_type`` reads it, in lower
    case (comparisons ignore case); None when none is named (no filter)."""
    items = [value] if isinstance(value, str) else list(value or ())
    named = [part.strip() for item in items for part in item.split(",") if part.strip()]
    return frozenset(entity_type(name).lower() for name in named) or None


def known_types(value: str | Iterable[str] | None) -> frozenset[str] | None:
    """``parse_types`` for a filter of output (``medlink annotate --types``), where a misspelt name would silently keep
    nothing: each name must be a vocabulary type or a corpus label of one, else a MedlinkError naming the vocabulary."""
    items = [value] if isinstance(value, str) else list(value or ())
    unknown = [part.strip() for item in items for part in item.split(",") if part.strip() and part.strip().lower() not in _CORPUS_LABELS]
    if unknown:
        raise MedlinkError(
            f"unknown entity type(s) {', '.join(map(repr, unknown))}; known: {', '.join(ENTITY_TYPES)} "
            "(corpus labels such as SpecificDisease map onto them: docs/annotate.md#entity-types)"
        )
    return parse_types(items)


def has_type(label: str | None, wanted: frozenset[str] | None) -> bool:
    """Whether an annotation typed ``label`` passes the filter ``wanted`` (``parse_types``): untyped ones always do."""
    kind = entity_type(label)
    return wanted is None or kind is None or kind.lower() in wanted


def of_types(annotations: Iterable[Annotation], wanted: frozenset[str] | None) -> list[Annotation]:
    """The annotations that pass the filter ``wanted``."""
    return [a for a in annotations if has_type(a.type, wanted)]


def type_counts(labels: Iterable[str | None]) -> Counter:
    """How many labels of each type (``entity_type``; None for untyped): what a command reports of its data."""
    return Counter(entity_type(label) for label in labels)


def describe_counts(counts: Counter) -> str:
    """``type_counts`` in words: "4,182 Disease, 5,203 Chemical, 3 untyped"."""
    return ", ".join(f"{n:,} {kind or 'untyped'}" for kind, n in sorted(counts.items(), key=lambda item: (item[0] is None, -item[1])))


def kb_type(name: str) -> str | None:
    """The vocabulary's type that a KB type says (a UMLS semantic type, a SNOMED CT tag, a MeSH branch, an ontology's
    namespace, or a vocabulary name itself), or None."""
    return _KB_TYPES.get(name.strip().lower())


def source_type(source: str | None, paths: Sequence[str] = ()) -> str | None:
    """The type a concept's source implies (ICD-10-CM, HPO, MEDIC: Disease), or None; ``paths``: the KB's BioSyn
    dictionaries, which say it for a source of "biosyn" when they agree."""
    name = (source or "").strip().lower()
    for starts, kind in _SOURCES:
        if name.startswith(starts):
            return kind
    if name == "biosyn" and paths:
        kinds = {next((kind for words, kind in _PATH_WORDS if any(w in path.lower() for w in words)), None) for path in paths}
        return kinds.pop() if len(kinds) == 1 else None
    return None


def concept_types(kb: KB) -> dict[str, str]:
    """Each concept's type: the first of its KB types that says one (``kb_type``), else its source's (``source_type``);
    a concept with neither is left out."""
    typed, sources, biosyn_paths = _kb_rows(Path(kb.path))
    by_source = {source: source_type(source, biosyn_paths) for source in set(sources.values())}
    for concept_id, source in sources.items():
        kind = by_source[source]
        if kind and concept_id not in typed:
            typed[concept_id] = kind
    return typed


def _kb_rows(path: Path) -> tuple[dict[str, str], dict[str, str], list[str]]:
    """From the KB file's tables (kb/schema.py): the concepts whose KB types say a type (the first in the file's order),
    each concept's source, and the paths of its BioSyn sources. Read with SQL, not the KB's reader: it has no bulk query
    for sources, and its descriptions read every definition too (seconds for a large KB, at every index build)."""
    typed: dict[str, str] = {}
    try:
        with closing(sqlite3.connect(f"file:{path.resolve()}?mode=ro", uri=True)) as connection:
            saying = {name: kind for (name,) in connection.execute("SELECT DISTINCT type FROM types") if (kind := kb_type(name))}
            if saying:
                marks = ",".join("?" * len(saying))
                for concept_id, name in connection.execute(
                    f"SELECT concept_id, type FROM types WHERE type IN ({marks}) ORDER BY rowid", list(saying)
                ):
                    typed.setdefault(concept_id, saying[name])
            sources = {cid: source or "" for cid, source in connection.execute("SELECT id, source FROM concepts")}
            paths = [p or "" for (p,) in connection.execute("SELECT path FROM sources WHERE format = 'biosyn'")]
    except sqlite3.Error as error:
        raise MedlinkError(f"{path}: cannot read its concepts' types and sources ({error})") from error
    return typed, sources, paths


def type_bit(kind: str | None) -> int:
    """The bit (0-based position in ``ENTITY_TYPES``, as a mask) of a vocabulary type; 0 for None or another type."""
    return 1 << ENTITY_TYPES.index(kind) if kind in ENTITY_TYPES else 0


def type_of_mask(mask: int, vocabulary: Sequence[str] = ENTITY_TYPES) -> str | None:
    """The one type a mask of ``type_bit``s holds; None for none or several (a name several kinds of concept share:
    the linked concept tells)."""
    if mask and not mask & (mask - 1):
        position = mask.bit_length() - 1
        return vocabulary[position] if position < len(vocabulary) else None
    return None
