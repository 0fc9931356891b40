"""Coding mode: each mention answered with codes of one namespace (ICD-10-CM), matched directly or reached from the
concept the linker found through mappings, each code's path kept in its evidence.

Why after linking rather than inside it: the linker ranks concepts of every namespace by how well they read as the
mention, and that ranking (with its probabilities) stays what it is. Coding decides which code to write for the
concepts found: the first candidate that is a code, or has a mapping to one, gives the first code; ICD-10-CM's rules
then choose among a concept's codes (``coding_rules``: the code the words support, manifestation codes after the
others). A code's ``probability`` is the chance that this exact code is right (``coding_probability``: the linked
concept's, shared among the codes it leads to, and among a mention's codes as rivals), and a first code under the
NIL threshold makes the mention NIL for coding; a mention none of whose candidates leads to a code is NIL for coding, its candidates
still listed and ``error`` saying why. A Linker is never changed: coding is a function of its results.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from itertools import islice
from pathlib import Path

from medlink.align.predicates import is_residual
from medlink.align.sssom import BROAD
from medlink.core import Candidate, LinkResult, Mention
from medlink.errors import MedlinkError
from medlink.kb.mappings import DEFAULT_MAPPINGS, CodeMapping, read_code_first, read_mappings, xref_mappings
from medlink.linking.coding_probability import EQUIVALENT, UNSAID, code_probabilities, mapped_confidence, outranks, shared_codes
from medlink.linking.coding_readings import found_heads, surer_readings
from medlink.linking.coding_rules import DEFAULT_STEP, LIMB_PART_STEP, UNSAID_STEP, CodeSet, assumed_female
from medlink.linking.coding_words import (
    SHORT_FORM,
    causes_written,
    limbs_holding,
    said_words,
    sides_written,
    spelled_out,
    unasserted,
)
from medlink.text.finders.word_shorthand import shorthand_reading
from medlink.text.normalize import SIDES, normalize

log = logging.getLogger(__name__)
CODING_DEPTH = 10  # candidates read per mention for codes: a code reached from a concept ranked lower than this is no answer
# a concept's codes: an equivalent first, then a broader code (ICD-10-CM is coarser than HPO), a close one, a narrower one
PREDICATE_ORDER = {
    "skos:exactMatch": 0,
    "owl:equivalentClass": 0,
    "xref": 0,
    "skos:broadMatch": 1,
    "skos:closeMatch": 2,
    "skos:narrowMatch": 3,
}
RELATIVE_STRENGTH = 0.5  # nor is one reached from a concept under half the first's probability (its score, uncalibrated)
CODED = "coding"  # the evidence key of a coded candidate's path
NO_CODE = "no {namespace} code reachable"  # how an error of coding starts (front ends tell it from a failure to link)


@dataclass
class Coder:
    """A code set and the mappings into it: ``code`` turns link results into coded ones."""

    codes: CodeSet
    mappings: dict[str, list[CodeMapping]]
    sources: list[str]  # where the mappings came from, for a summary

    @property
    def namespace(self) -> str:
        return self.codes.namespace

    def code(self, results: Sequence[LinkResult], k: int) -> list[LinkResult]:
        """Each result coded: its first ``k`` codes, best first (a result that could not be linked stays as it is)."""
        return [result if result.error else self._coded(result, k) for result in results]

    def _coded(self, result: LinkResult, k: int) -> LinkResult:
        mention = shorthand_reading(result.mention.text, normalize) or result.mention.text  # its shortened words written out
        written = [mention, result.read_as] if result.read_as else [mention]  # and as the stages read it ("achy joints": "pain joints")
        found: dict[str, tuple[tuple, Candidate]] = {}
        strengths = [c.probability if c.probability is not None else c.score for c in result.candidates]
        top = max(strengths, default=0.0)
        near = [strength >= RELATIVE_STRENGTH * top for strength in strengths]  # the others: not what the mention says
        read = sum(near)
        has_short_form = SHORT_FORM.search(mention) is not None
        qualifiers = sides_written(mention) | causes_written(mention)  # "R great toe pain" says "right"; "Opioid-induced", "drug"
        denied = unasserted(mention)  # "acute cystitis without hematuria" does not say "hematuria"
        for rank, (candidate, strength) in enumerate(zip(result.candidates, strengths)):
            if not near[rank]:
                continue
            routes = []
            for position, (code, mapping) in enumerate(self._reached(candidate)):
                said = (
                    said_words(written if mapping is None else [*written, candidate.name, candidate.matched_name]) - denied
                ) | qualifiers
                if has_short_form:  # "SOB" says "shortness of breath"
                    said |= spelled_out(mention, self.codes.family_names(code))
                as_mapped = mapping is not None and (mapping.predicate in EQUIVALENT or mapping.predicate == BROAD)  # kept as named
                chosen, steps = (code, []) if written_code(mention, code) else self.codes.refine(code, said, as_mapped)
                if steps and steps[-1].endswith(LIMB_PART_STEP):  # the limb the words' part belongs to says the code
                    said |= limbs_holding(said)
                said |= assumed_female(said)  # and a breast is a woman's, as the rules read it
                routes.append((chosen, code, mapping, said, steps, position))
            shares = code_probabilities(candidate.probability, self._weighed(mention, routes), self.codes)
            for chosen, code, mapping, said, steps, position in routes:
                order = (0, 1.0) if mapping is None else (PREDICATE_ORDER.get(mapping.predicate, 4), -mapping.confidence)
                own = shares[chosen]
                key = (-(own if own is not None else strength), rank, *order, self.codes.unsaid(chosen, said), position)
                if chosen not in found or key < found[chosen][0]:
                    found[chosen] = (key, self._candidate(chosen, candidate, rank, mapping, code, steps, own))
        if not found:
            return self._uncoded(result, k, read)
        ranked = self._sequenced([c for _key, c in sorted(found.values(), key=lambda item: item[0])])
        for c, p in zip(ranked, shared_codes([c.concept_id for c in ranked], [c.probability for c in ranked])):
            c.probability = None if p is None else round(p, 6)
        ranked = ranked[:k]
        first = ranked[0]
        nil = result.nil
        if first.probability is not None and result.nil_threshold is not None:
            nil = first.probability < result.nil_threshold
        return replace(result, candidates=ranked, nil=nil, probability=first.probability, error=None)

    def _weighed(self, mention: str, routes: list[tuple]) -> list[tuple[str, float | None, bool]]:
        """Each route of one concept as ``code_probabilities`` reads it: the code, its weight for this mention (None: a
        direct code, which weighs 1; ``UNSAID`` for a status code whose words the mention does not say, "Genetic
        susceptibility to colorectal cancer" for "colorectal cancer"; a mapping its confidence, as ``mapped_confidence``
        weighs it) and whether the rules reached it by default."""
        residual = {route[0]: is_residual(self.codes.names[route[0]]) for route in routes}
        plain = any((mapping is None or mapping.predicate in EQUIVALENT) and not residual[chosen] for chosen, _code, mapping, *_ in routes)
        out = []
        for chosen, reached, mapping, said, steps, _position in routes:
            # judged: the chosen code where the words say all it asserts (the rules took the route off what was not said);
            # else the code the route reached, and after a step up to an "unspecified" sibling, the category that sibling
            # stands for ("Old myocardial infarction" gave way to "Chronic ischemic heart disease, unspecified": I25)
            if not self.codes.unsaid(chosen, said):
                judged = chosen
            else:
                judged = self.codes.parent.get(reached, reached) if any(UNSAID_STEP in step for step in steps) else reached
            if mapping is None:
                status = self.codes.is_status(judged) and self.codes.says_more(judged, said)
                confidence = UNSAID if status and not written_code(mention, judged) else None
            else:
                outranked = outranks(mapping.predicate, residual[chosen], plain)
                confidence = mapped_confidence(mapping.confidence, mapping.predicate, self.codes.says_more(judged, said), outranked)
            if said & SIDES and self.codes.leaves_side_open(chosen):  # a side said, none coded
                confidence = UNSAID * (1.0 if confidence is None else confidence)
            out.append((chosen, confidence, by_default(steps)))
        return out

    def _sequenced(self, ranked: list[Candidate]) -> list[Candidate]:
        """ICD-10-CM's sequencing: a manifestation code is never first alone. The best code of a condition goes before
        it; with none reachable it stays first, paired with its "code first" note."""
        condition = next((i for i, c in enumerate(ranked) if not self.codes.is_manifestation(c.concept_id)), None)
        if condition is None:
            ranked[0].evidence[-1][CODED]["manifestation"] = (
                "a manifestation code and no other code reachable: code the underlying condition first"
            )
            return ranked
        if condition:
            for c in ranked[:condition]:
                c.evidence[-1][CODED]["manifestation"] = f"a manifestation code: listed after {ranked[condition].concept_id}"
            ranked.insert(0, ranked.pop(condition))
        return ranked

    def _reached(self, candidate: Candidate) -> list[tuple[str, CodeMapping | None]]:
        """The codes a candidate leads to: itself (or an alt id) when it is a code, else its mappings, best first."""
        direct = next((i for i in candidate.ids if i in self.codes), None)
        if direct is not None:
            return [(direct, None)]
        return [(m.object, m) for i in candidate.ids for m in self.mappings.get(i, ())]

    def _candidate(
        self,
        code: str,
        source: Candidate,
        rank: int,
        mapping: CodeMapping | None,
        reached: str,
        steps: list[str],
        probability: float | None,
    ) -> Candidate:
        path: dict = {"namespace": self.namespace, "from": source.concept_id, "from_name": source.name, "from_rank": rank + 1}
        if mapping is None:
            path["how"] = "direct: the linker's candidate is a code"
        else:
            path.update(how="mapping", **mapping.evidence())
        if code != reached:
            path.update(reached=reached, refined=steps)
        note = self.codes.code_first_note(code)
        if note:
            path["code_first"] = note
        evidence = [e for e in source.evidence if CODED not in e] + [{CODED: path}]
        return Candidate(
            code,
            source.score,
            source.matched_name,
            dict(source.scores_by_stage),
            evidence,
            self.codes.names[code],
            [],
            probability,
        )

    def _uncoded(self, result: LinkResult, k: int, read: int) -> LinkResult:
        """NIL for coding: the candidates listed as linked, the error saying that none of the ``read`` first leads to a code,
        and no probability (the first concept's is no code's: a filter on probability would keep it)."""
        near = ", ".join(f"{c.concept_id} {c.name}" for c in result.candidates[: min(read, 3)]) or "none"
        why = NO_CODE.format(namespace=self.namespace) + (
            f": {'its first candidate' if read == 1 else f'its {read} first candidates'} ({near}{', ...' if read > 3 else ''}) "
            f"{'is' if read == 1 else 'are'} no {self.namespace} code and {'has' if read == 1 else 'have'} no mapping to one"
        )
        return replace(result, candidates=result.candidates[:k], nil=True, probability=None, error=why)


_CODERS: dict[tuple, Coder] = {}
_BUILDING = threading.Lock()


def by_default(steps: Sequence[str]) -> bool:
    """Did the rules reach the code by default (``CodeSet.refine``): a category taken down to its unspecified child, or a
    specific code the words did not support given up for its unspecified sibling?"""
    return any(DEFAULT_STEP in step or UNSAID_STEP in step for step in steps)


def written_code(mention: str, code: str) -> bool:
    """Is the mention the code itself, written in the text ("I21.4")? Then it is the code to write, not refined."""
    return mention.strip().upper() == code.partition(":")[2].upper()


def coder_for(linker, namespace: str, mappings: Sequence[str | Path] = ()) -> Coder:
    """The process's coder for an index's KB and ``namespace`` (built on first use: the KB's codes, its hierarchy and
    cross-references, medlink's packaged mappings and ``mappings`` files)."""
    kb_meta = linker.manifest.get("kb", {})
    key = (kb_meta.get("path"), kb_meta.get("checksum"), namespace, tuple(str(m) for m in mappings))
    with _BUILDING:
        if key not in _CODERS:
            _CODERS[key] = build_coder(linker, namespace, mappings)
        return _CODERS[key]


def build_coder(linker, namespace: str, mappings: Sequence[str | Path] = ()) -> Coder:
    """A coder over the linker's concepts: its KB's is_a hierarchy and xrefs when the KB is there (else the index's
    names alone), medlink's HPO -> ICD-10-CM mappings when the KB is the default KB, and ``mappings`` (SSSOM TSV, or TSV
    of subject and object ids; ``DEFAULT_MAPPINGS`` for a KB of your own holding the same HPO and ICD-10-CM)."""
    from medlink.kb.default import DEFAULT_KB_NAME
    from medlink.kb.store import KB

    kb_path = Path(linker.manifest.get("kb", {}).get("path", ""))
    concepts = list(zip(linker.concept_ids, linker.concept_names))
    code_first = read_code_first() if namespace.upper() == "ICD10CM" else {}
    default_kb = kb_path.name == DEFAULT_KB_NAME  # medlink's own mappings were made for the default KB's HPO and ICD-10-CM
    if kb_path.is_file():
        with KB.open(kb_path) as kb:
            default_kb = "recipe" in kb.meta  # only the default KB records one
            prefix = f"{namespace}:"
            names = [(cid, text) for cid, text, kind in kb.iter_names() if cid.startswith(prefix) and kind != "preferred"]
            is_a = [(head, tail) for head, _r, tail in kb.iter_relations(("is_a",)) if head.startswith(prefix)]
            codes = CodeSet.build(namespace, concepts, names, is_a, code_first)
            found = xref_mappings(kb.iter_xrefs(), namespace, set(codes.names))
    else:
        log.warning("the KB this index was built from (%s) is not there: coding without its hierarchy or cross-references", kb_path)
        codes, found = CodeSet.build(namespace, concepts, code_first=code_first), []
    if not codes.names:
        namespaces = sorted({cid.partition(":")[0] for cid in linker.concept_ids if ":" in cid})
        raise MedlinkError(
            f"this index has no {namespace} code to answer with; its namespaces: {', '.join(namespaces) or 'none (ids without a prefix)'}"
        )
    files = [Path(m) for m in mappings] or []
    if namespace.upper() == "ICD10CM" and default_kb and DEFAULT_MAPPINGS.is_file():
        files = [DEFAULT_MAPPINGS, *files]
    known = set(linker.concept_ids)
    sources = ["the KB's xrefs"] if found else []
    for path in files:
        rows = read_mappings(path)
        kept = [m for m in rows if m.subject in known and m.object in codes]
        if rows and not kept and path != DEFAULT_MAPPINGS:
            raise MedlinkError(f"{path}: none of its {len(rows)} mappings goes from a concept of this index to a {namespace} code of it")
        found.extend(kept)
        sources.append(f"{path.name} ({len(kept):,} of {len(rows):,} mappings)")
    by_subject: dict[str, list[CodeMapping]] = {}
    for mapping in found:
        by_subject.setdefault(mapping.subject, []).append(mapping)
    return Coder(codes, by_subject, sources)


def link_coded(
    linker,
    mentions: Sequence[str | Mention],
    k: int,
    namespace: str,
    generators: Sequence[str] | None = None,
    mappings: Sequence[str | Path] = (),
    heads: Sequence[str | None] | None = None,
) -> list[LinkResult]:
    """``linker.link`` read ``CODING_DEPTH`` deep, then coded: each mention's ``k`` best codes of ``namespace``;
    ``heads``: for each mention, the condition's name it holds if known (an annotator's phrase around a head it found),
    another wording to find its concepts by (``surer_readings``); None: the longest KB name inside it (``found_heads``),
    a partial match as in ``annotate``."""
    coder = coder_for(linker, namespace, mappings)
    depth = max(k, CODING_DEPTH)
    results = linker.link(mentions, k=depth, generators=generators)
    found = heads is None  # no annotator's heads: the index's dictionary finder looks for one in each mention
    return coder.code(surer_readings(linker, results, depth, generators, found_heads(linker, results) if found else heads, found), k)


def coded_stream(
    linker,
    mentions: Iterable[str | Mention],
    k: int,
    namespace: str,
    generators: Sequence[str] | None = None,
    batch_size: int = 2048,
    mappings: Sequence[str | Path] = (),
) -> Iterator[LinkResult]:
    """``link_coded`` over an arbitrarily long stream, in batches, in input order."""
    stream = iter(mentions)
    while batch := list(islice(stream, batch_size)):
        yield from link_coded(linker, batch, k, namespace, generators, mappings)


def is_uncoded(result: LinkResult) -> bool:
    """Whether ``result`` is NIL for coding (linked, but no candidate leads to a code): an answer, not a failure."""
    return bool(result.error and result.nil and result.error.startswith("no ") and " code reachable" in result.error)
