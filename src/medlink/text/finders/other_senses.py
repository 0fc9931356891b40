"""Short forms a clinical note writes for something that is no condition, where the KB has them as a condition's name.

"Sats 98% on RA" is room air, not rheumatoid arthritis; "follow up with her PCP" a primary care provider, not
phencyclidine (ICD-10-CM's hallucinogen disorders); "LFTs elevated" liver function tests, not a lipoma of the filum
terminale (HPO's "LFT"). A dictionary finder matches the letters; these rules read the words around them, and the
annotator drops a span whose context names the other sense. A sense that is another condition is read instead: "c/o
CP" is chest pain (``infons["read_as"]``, what the linker then links), where HPO's "CP" is cerebral palsy. Each rule is narrow on purpose: "the effect of
methotrexate on RA" and "patients with PCP" keep their conditions, since neither a saturation nor a visit is near.
A curated list, like the clinical shorthand the default KB adds (``kb/data/clinical_shorthand.jsonl``); no annotated
corpus of these senses ships with medlink.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from medlink.core import READ_AS, Annotation

_NEAR = 40  # characters read either side


@dataclass(frozen=True)
class OtherSense:
    """``short_form`` (as written: "RA", or a word such as "depression") means ``sense`` where the text before it matches
    ``before`` or the text after it matches ``after`` (both None: everywhere)."""

    short_form: str
    sense: str
    before: re.Pattern[str] | None = None
    after: re.Pattern[str] | None = None
    condition: bool = False  # the sense is a condition too: the span stays, read as ``sense``

    def here(self, text: str, start: int, end: int) -> bool:
        if self.before is None and self.after is None:
            return True
        return bool(
            self.before
            and self.before.search(text[max(0, start - _NEAR) : start])
            or self.after
            and self.after.match(text[end : end + _NEAR])
        )


def _rule(short_form: str, sense: str, before: str | None = None, after: str | None = None, condition: bool = False) -> OtherSense:
    return OtherSense(
        short_form, sense, before and re.compile(before, re.IGNORECASE), after and re.compile(after, re.IGNORECASE), condition
    )


OTHER_SENSES: tuple[OtherSense, ...] = (
    # an oxygen saturation near: "98% on RA", "satting 95% RA", "on RA, sats 97%"
    _rule(
        "RA",
        "room air",
        before=r"(?:(?:%|\bsats?\b|\bsatting|\bsaturating|\bsaturation|\bspo2|\bo2\b)[^.;\n]{0,14}|\b(?:is|was|remains|"
        r"remained|stable|comfortable|comfortably|now|currently|back|breathing|weaned\s+to)\s+on\s+)$",
        after=r"^[^.;\n]{0,16}(?:\bsats?\b|\bsaturation|\bspo2|%|\bweaned|\boxygen\b|\bo2\b|\bnasal cannula|\bnc\b)",
    ),
    # an echocardiogram's chamber: "dilated RA", "RA is mildly enlarged", "RA pressure"
    _rule(
        "RA",
        "right atrium",
        before=r"\b(?:dilated|enlarged|normal|small|mildly|moderately|severely|normal-sized)\s+$",
        after=r"^\s*(?:(?:is|was|appears)\s+)?(?:(?:mildly|moderately|severely)\s+)?(?:enlarge\w*|dilat\w*|size\b|pressure|volume|"
        r"thromb\w*|mass\b|lead\b|appendage|and\s+RV\b)",
    ),
    # a visit: "follow up with PCP", "per her PCP", "PCP appointment", "PCP in 1 week"
    _rule(
        "PCP",
        "primary care provider",
        before=r"(?:\bfollow[\s-]?up|\bf/u|\bfu|\bsee|\bcall|\bcontact|\bnotify|\bdiscussed|\bper|\byour|\bhis|\bher|\btheir|\bnew|"
        r"\bestablished|\bthe patient's|\bpt's)\s+(?:with\s+)?(?:(?:his|her|their|your)\s+)?$",
        after=r"^\s*(?:appointment|appt|visit|office|clinic|follow|f/u|dr\b|in\s+\d|within|next\b|to\b|who\b|recommended|referred|"
        r"notified|aware|updated|contacted|called|paged|informed)",
    ),
    # the costovertebral angle an examiner taps: "no CVA tenderness", "CVA TTP"
    _rule("CVA", "costovertebral angle", after=r"^\s*(?:tenderness|ttp\b|pain\b|percussion)"),
    # a physical examination: "PE: lungs clear", "on PE", "PE unremarkable"
    _rule(
        "PE",
        "physical examination",
        before=r"\b(?:on|limited|brief|focused|full|complete|detailed)\s+$",  # not "his PE"
        after=r"^\s*(?::|-\s|reveals|revealed|notable|unremarkable|shows|showed|significant|otherwise|wnl\b|(?:was|is)\s+"
        r"(?:notable|unremarkable|significant|normal|benign))",
    ),
    # an electrocardiogram's segment, not a mood: "ST depressions in V4-V6"
    _rule("depression", "ST-segment depression", before=r"\bST(?:[\s-]segment)?[\s-]+$"),
    _rule("Depression", "ST-segment depression", before=r"\bST(?:[\s-]segment)?[\s-]+$"),
    # chest pain, as an adult's note writes it: "c/o CP", "no CP/SOB", "atypical CP", "CP radiating to the jaw"
    _rule(
        "CP",
        "chest pain",
        condition=True,
        before=r"(?:\bc/o|\bcomplains? of|\bcomplaining of|\bdenies|\bdenied|\bno|\batypical|\btypical|\bpleuritic|\bsubsternal|"
        r"\bexertional|\bintermittent|\brecurrent|\bworsening|\bongoing|\bpersistent|\breports|\bendorses|\bnew)\s+$",
        after=r"^\s*(?:/\s*SOB|radiat|x\s*\d|free\b|resolved|improved|started|began|onset|with\s+exertion|at\s+rest|and\s+SOB|,\s*SOB)",
    ),
    # ... or in a list of a patient's symptoms: "no dyspnea or CP", "palpitations, CP"
    _rule(
        "CP",
        "chest pain",
        condition=True,
        before=r"\b(?:SOB|dyspnea|DOE|orthopnea|palpitations?|diaphoresis|syncope|presyncope|lightheadedness|nausea|N/V|cough|"
        r"fevers?|chills|HA|headaches?|edema|leg swelling|claudication)\s*(?:,|/|\bor\b|\band\b|,\s*(?:or|and)\b)\s*$",
    ),
    # glutamic acid decarboxylase, an antibody's antigen: "anti-GAD", "GAD65 antibodies", "GAD ab positive"
    _rule(
        "GAD", "glutamic acid decarboxylase", before=r"\banti[\s-]*$", after=r"^[\s-]*(?:65|67|ab\b|abs\b|antibod|autoantibod|titer|level)"
    ),
    # the sacroiliac joint, or the units: "SI joint", "SI joint dysfunction", "SI units"
    _rule("SI", "sacroiliac joint", after=r"^\s*(?:joints?\b|jt\b|dysfunction|injection|units?\b)"),
    # hemagglutinin, hyaluronic acid: "HA titer", "HA injection"
    _rule("HA", "hemagglutinin or hyaluronic acid", after=r"^\s*(?:titers?|antibod|injections?|filler|gel\b|tag\b)"),
    # an echocardiogram's valves are MR, AR, TR; elsewhere they are magnetic resonance ("MR brain", "on MR"), the androgen
    # receptor ("AR positive", "AR-V7") and a radial compression band ("TR band")
    _rule(
        "MR",
        "magnetic resonance",
        before=r"\b(?:on|by|per|repeat|prior|recent|outside|follow-up|f/u|dedicated|cardiac|breast|prostate|"
        r"pelvic|liver|brain)\s+$",
        after=r"^[\s-]*(?:brain|head|spine|c-spine|t-spine|l-spine|angio|veno|imaging|image|scan|study|studies|enterogra|arthrogra|"
        r"elastogra|cholangio|perfusion|spectroscopy|guided|fusion|compatible|conditional|safe|of\b|with\b|w/|without\b|pelvis|abd|"
        r"abdomen|liver|cardiac|heart|knee|shoulder|hip|orbits?|neck|chest|breast|prostate|sequence|#|number|no\.?\s*\d)",
    ),
    _rule(
        "AR",
        "androgen receptor",
        after=r"^(?:\s*[+-]|[\s-]*(?:positive|negative|pos\b|neg\b|expression|staining|status|v7|gene|"
        r"mutation|antagonist|inhibitor|blocker|signaling|signalling|amplification|splice))",
    ),
    _rule("TR", "radial compression band", after=r"^\s*band"),
    # always liver function tests in a note ("LFTs elevated", "repeat LFT")
    _rule("LFT", "liver function tests"),
)
_BY_FORM: dict[str, tuple[OtherSense, ...]] = {}
for _sense in OTHER_SENSES:
    _BY_FORM[_sense.short_form] = _BY_FORM.get(_sense.short_form, ()) + (_sense,)


def sense_here(text: str, start: int, end: int) -> OtherSense | None:
    """The rule whose other sense the span ``text[start:end]`` has here (its plural "LFTs" too), or None."""
    written = text[start:end]
    rules = _BY_FORM.get(written) or (_BY_FORM.get(written[:-1]) if written.endswith("s") else None)
    return next((rule for rule in rules or () if rule.here(text, start, end)), None)


def other_sense(text: str, start: int, end: int) -> str | None:
    """The other sense the span ``text[start:end]`` has here, or None."""
    rule = sense_here(text, start, end)
    return rule.sense if rule else None


def without_other_senses(text: str, spans: Iterable[Annotation]) -> list[Annotation]:
    """``spans`` less those whose short form means something that is no condition here; one whose sense here is another
    condition is read as it (``infons["read_as"]``)."""
    kept = []
    for span in spans:
        rule = sense_here(text, span.start, span.end)
        if rule is not None and rule.condition:
            span.infons[READ_AS] = rule.sense
        if rule is None or rule.condition:
            kept.append(span)
    return kept
