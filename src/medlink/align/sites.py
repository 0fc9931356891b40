"""Body sites in names' words: an organ's adjective read as the organ ("ovarian" as "ovary"), and the site words a
broader code may not drop.

Why: ICD-10-CM classifies by site and names it with the noun ("Malignant neoplasm of ovary"), where HPO and clinicians
use the adjective ("Ovarian neoplasm"); and a code that drops the site is another condition, not a broader one ("Fracture
of neck" is no broader code for "Femoral neck fracture", nor "Malignant (primary) neoplasm, unspecified" for an
ovarian one). Alignment reads both; the phrase step reads a site after "in" ("Pain in the left hip"); the coding rules
compare a mention's words as written.
"""

from __future__ import annotations

from collections.abc import Iterable

SITE_OF_ADJECTIVE = {
    "adrenal": "adrenal",
    "anal": "anus",
    "aortic": "aorta",
    "bronchial": "bronchus",
    "cardiac": "heart",
    "cerebral": "brain",
    "colonic": "colon",
    "cutaneous": "skin",
    "duodenal": "duodenum",
    "esophageal": "esophagus",
    "femoral": "femur",
    "fibular": "fibula",
    "gastric": "stomach",
    "hepatic": "liver",
    "humeral": "humerus",
    "laryngeal": "larynx",
    "lingual": "tongue",
    "mammary": "breast",
    "nasal": "nose",
    "ocular": "eye",
    "ovarian": "ovary",
    "pancreatic": "pancreas",
    "pelvic": "pelvis",
    "penile": "penis",
    "pharyngeal": "pharynx",
    "pleural": "pleura",
    "prostatic": "prostate",
    "pulmonary": "lung",
    "rectal": "rectum",
    "renal": "kidney",
    "splenic": "spleen",
    "testicular": "testis",
    "thyroidal": "thyroid",
    "tibial": "tibia",
    "tracheal": "trachea",
    "ulnar": "ulna",
    "ureteral": "ureter",
    "urethral": "urethra",
    "uterine": "uterus",
    "vaginal": "vagina",
    "vertebral": "vertebra",
    "vesical": "bladder",
    "vulvar": "vulva",
}
SITES = frozenset(SITE_OF_ADJECTIVE.values()) | frozenset(
    {
        "neck",
        "head",
        "hip",
        "knee",
        "ankle",
        "foot",
        "hand",
        "wrist",
        "elbow",
        "shoulder",
        "arm",
        "leg",
        "finger",
        "toe",
        "spine",
        "skull",
        "rib",
        "ear",
        "lip",
        "mouth",
        "gum",
        "jaw",
        "bone",
        "joint",
        "muscle",
        "tendon",
        "nerve",
        "bowel",
        "intestine",
        "gallbladder",
        "bile",
        "appendix",
        "cervix",
        "endometrium",
        "placenta",
        "retina",
        "cornea",
        "lens",
        "eyelid",
        "orbit",
        "sinus",
        "tonsil",
        "salivary",
        "parotid",
        "lymph",
        "marrow",
        "artery",
        "vein",
    }
)


def as_sites(found: Iterable[str]) -> frozenset[str]:
    """Words with each organ's adjective read as the organ's noun."""
    return frozenset(SITE_OF_ADJECTIVE.get(word, word) for word in found)


def drops_a_site(source: frozenset[str], broader: frozenset[str]) -> bool:
    """Does a code reading as ``broader`` leave out a site the source names while naming another site, or a neoplasm
    (ICD-10-CM classifies neoplasms by site)? Then it is no broader code of it; "Amyloidosis, unspecified" still is
    one of "Hepatic amyloidosis"."""
    return bool((source - broader) & SITES) and bool(broader & (SITES | {"neoplasm"}))
