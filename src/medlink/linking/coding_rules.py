"""A code set's shape and ICD-10-CM's rules for choosing among its codes: which ids are codes, which are manifestation
codes (never first alone), and how specific a code the words of a mention support.

Why apart from ``coding``: the rules read only the code set (names, is_a parents and children, "code first" notes) and
words, so the script that makes the default HPO -> ICD-10-CM mappings chooses codes with the same reading of words as
the coding mode does at link time.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from medlink.align.predicates import NOT_TELLING, is_residual, words
from medlink.linking import coding_words as read
from medlink.linking.coding_words import VAGUE, compared, covered, left_open, left_out, name_word_sets, stem, unasserted
from medlink.text.normalize import SIDES

T = TypeVar("T")
# ids that are codes (not a chapter "9" or a block "I20-I25"), by namespace; a namespace not listed: every id of it
CODE_SHAPES = {"ICD10CM": re.compile(r"[A-Z][0-9][0-9A-Z](?:\.[0-9A-Z]{1,4})?")}
STATUS_CHAPTER = "Z"  # ICD-10-CM's factors influencing health status and contact with health services
MANIFESTATION_NAME = re.compile(r"\bclassified elsewhere\b", re.IGNORECASE)  # "... in diseases classified elsewhere"
ETIOLOGY_FIRST = re.compile(r"^\W*(?:the\s+)?underlying\b", re.IGNORECASE)  # "Code first underlying disease, such as: ..."
IF_ANY = re.compile(r"\bif (?:applicable|known)\b", re.IGNORECASE)  # "underlying etiology, if applicable": first when there is none
# words that say a code is its parent's default reading: "X, unspecified", "X without complications", "X, uncomplicated"
DEFAULT_STEP = "nothing more specific said"  # how a step down to the default child reads (coding_probability weighs it)
UNSAID_STEP = "nothing said of"  # how a step up to the unspecified sibling reads
MORE_SAID_STEP = "the words say more than 'unspecified'"  # how a step from an unspecified code to a told sibling reads
TOLD_STEP = "the words say a sibling"  # how a step from a code whose own words were not said to a told sibling reads
DEFAULT_WORDS = frozenset({"unspecified", "nos", "uncomplicated", "without"})
# words a child may leave unsaid and still be the one meant a level down: "primary" osteoarthritis is the reading when no
# cause is said; "inflammatory" carcinoma of the breast is not
UNSAID_READINGS = frozenset({"primary"})
INITIAL_ENCOUNTER = frozenset({"initial", "encounter"})  # an injury code's 7th character "A"
ENCOUNTER_TOLD = frozenset({"subsequent", "sequela", "open"})  # words that tell another 7th character
# an encounter's words that say nothing beyond the default reading: a closed fracture, healing routinely, type I or II
ENCOUNTER_DEFAULTS = frozenset({"initial", "encounter", "for", "closed", "fracture", "with", "routine", "healing", "type", "i", "ii"})


FEMALE_SAID, FEMALE_ASSUMED = "the words say 'female'", "a breast is a woman's where 'male' is not said"
LIMB_PART_STEP = "the limb that holds the part the words say, where no code says the part"


def assumed_female(said: frozenset[str]) -> frozenset[str]:
    """{"female"} where the words say a breast and no sex: ICD-10-CM splits a breast's malignant neoplasms by sex before
    the side ("left breast cancer": C50.912, of the left female breast), and a coder reads the sex in the chart."""
    return frozenset({"female"}) if "breast" in said and not said & {"male", "female"} else frozenset()


@dataclass
class CodeSet:
    """The codes of one namespace as a KB has them: names (every name's telling words), is_a parent and children among
    codes, and ICD-10-CM's "code first" notes (code -> (the code that carries the note, the note))."""

    namespace: str
    names: dict[str, str]
    aliases: dict[str, list[str]] = field(default_factory=dict)  # other names (inclusion terms, synonyms)
    parent: dict[str, str] = field(default_factory=dict)
    children: dict[str, list[str]] = field(default_factory=dict)
    code_first: dict[str, tuple[str, str]] = field(default_factory=dict)
    limbs: bool = True  # "lower limb" read as "leg" (``coding_words.limbs_named``): the coding mode's reading
    _word_sets: dict[str, list[frozenset[str]]] = field(default_factory=dict, repr=False, compare=False)
    _memo: dict[tuple[str, str], Any] = field(default_factory=dict, repr=False, compare=False)  # (rule, code) -> its answer

    @classmethod
    def build(
        cls,
        namespace: str,
        concepts: Iterable[tuple[str, str]],
        names: Iterable[tuple[str, str]] = (),
        is_a: Iterable[tuple[str, str]] = (),
        code_first: dict[str, tuple[str, str]] | None = None,
    ) -> CodeSet:
        """From (id, preferred name) pairs, (id, other name) pairs and (child, parent) is_a pairs; ids outside the
        namespace's codes are left out."""
        shape = CODE_SHAPES.get(namespace.upper())
        prefix = f"{namespace}:"
        is_code = lambda cid: cid.startswith(prefix) and (shape is None or bool(shape.fullmatch(cid[len(prefix) :])))  # noqa: E731
        out = cls(namespace, {cid: name for cid, name in concepts if is_code(cid)})
        for cid, text in names:
            if cid in out.names:
                out.aliases.setdefault(cid, []).append(text)
        for child, parent in is_a:
            if child in out.names and parent in out.names and child not in out.parent:
                out.parent[child] = parent
                out.children.setdefault(parent, []).append(child)
        for kids in out.children.values():
            kids.sort()
        out.code_first = {code: note for code, note in (code_first or {}).items() if code in out.names}
        return out

    def __contains__(self, concept_id: str) -> bool:
        return concept_id in self.names

    def word_sets(self, code: str) -> list[frozenset[str]]:
        """The telling words of each of a code's names, the preferred one's first (read on first use: a link touches
        a few codes of 98,000)."""
        cached = self._word_sets.get(code)
        if cached is None:
            cached = []
            for name in self.all_names(code):
                cached.extend(s for s in name_word_sets(name, self.limbs) if s not in cached)
            self._word_sets[code] = cached
        return cached

    def is_manifestation(self, code: str) -> bool:
        """A code ICD-10-CM lists only after the condition behind it: named "... in diseases classified elsewhere", or
        whose "code first" note asks for the underlying disease."""
        note = self.code_first.get(code)
        asks = bool(note and ETIOLOGY_FIRST.search(note[1]) and not IF_ANY.search(note[1]))
        return asks or bool(MANIFESTATION_NAME.search(self.names.get(code, "")))

    def family_names(self, code: str) -> list[str]:
        """The names of a code, its parent, its children and its siblings: the codes ``refine`` may move to from it."""
        parent = self.parent.get(code)
        family = [code, *self.children.get(code, ()), *([parent, *self.children.get(parent, ())] if parent else ())]
        return [name for member in dict.fromkeys(family) for name in self.all_names(member)]

    def unsaid_words(self, code: str, said: frozenset[str]) -> frozenset[str]:
        """The telling words of the code's closest name that the words said leave out, those it does not assert aside
        ("complications" of "... without complications"); none: some name of it is said."""
        return min((left_out(name, said) - self._unasserted(code) for name in self.word_sets(code) or [frozenset()]), key=len)

    def _unasserted(self, code: str) -> frozenset[str]:
        """``unasserted`` and ``covered`` over every name of the code."""
        return self._remembered(
            "unasserted", code, lambda: frozenset().union(*(unasserted(name) | covered(name) for name in self.all_names(code)))
        )

    def all_names(self, code: str) -> list[str]:
        """The code's preferred name, then its other names."""
        return [self.names.get(code, ""), *self.aliases.get(code, ())]

    def _remembered(self, rule: str, code: str, answer: Callable[[], T]) -> T:
        """``answer()``, worked out once per code set: the rules ask the same few codes again and again."""
        key = (rule, code)
        if key not in self._memo:
            self._memo[key] = answer()
        return self._memo[key]

    def unsaid(self, code: str, said: frozenset[str]) -> int:
        """How many telling words of the code's closest name the words said leave out (0: some name of it is said)."""
        return len(self.unsaid_words(code, said))

    def _added(self, code: str, parent: str) -> frozenset[str]:
        """The telling words ``code``'s preferred name adds to its parent's ("NSTEMI" for I21.4 under I21)."""
        return self._own(code, parent)[0]

    def _own(self, code: str, parent: str) -> list[frozenset[str]]:
        """The telling words each of ``code``'s names adds to its parent's names and to what all its siblings say ("upper
        limb" of "Carpal tunnel syndrome, left upper limb" is every G56.0 code's), the preferred name's first."""
        theirs = frozenset().union(*(self.word_sets(parent) or [frozenset()])) | self._said_by_all(parent) | self._unasserted(code)
        return [name - theirs for name in self.word_sets(code) or [frozenset()]]

    def _said_by_all(self, parent: str) -> frozenset[str]:
        """The telling words the preferred name of every child of ``parent`` asserts (none for an only child)."""
        kids = self.children.get(parent, ())
        if len(kids) < 2:
            return frozenset()
        return self._remembered(
            "said by all", parent, lambda: frozenset.intersection(*(self.word_sets(k)[0] - self._unasserted(k) for k in kids))
        )

    def _specifics_unsaid(self, code: str, parent: str, said: frozenset[str]) -> frozenset[str]:
        """What makes ``code`` more specific than its parent and the words said leave out: its preferred name's own words
        when none of them was said; else the words its closest name misses, when all of them are its own ("mutilans" of
        "Psoriatic arthritis mutilans" for "psoriatic arthritis"). Nothing when some name's own words were all said."""
        own = self._own(code, parent)
        if any(words_of and not left_out(words_of, said) for words_of in own):
            return frozenset()
        if not own[0] & said:
            return own[0]
        missing = self.unsaid_words(code, said)
        return missing if any(missing <= words_of for words_of in own) else frozenset()

    def default_child(self, code: str) -> str | None:
        """The child that is the parent's reading when nothing more is said: "X, unspecified", "X without
        complications", "X, uncomplicated", "X with Y, unspecified" under "X and Y" (not "X with unspecified
        complications"); for an injury, its initial encounter."""
        return self._remembered("default child", code, lambda: self._default_child(code))

    def _default_child(self, code: str) -> str | None:
        same, plainest = None, None
        for child in self.children.get(code, ()):
            new = self._new_words(child, code)  # "..., unspecified ear" under "Unspecified ...": one more
            # "with unspecified complications" says more; "unspecified as acute or chronic" leaves "acute" open
            told = {stem(w) for w in new if w not in NOT_TELLING} - VAGUE - left_open(self.names[child])
            if DEFAULT_WORDS & new.keys() and not ("with" in new and told):
                # the one that says least besides: "Proteinuria, unspecified", not "Persistent proteinuria, unspecified"
                if plainest is None or len(told) < plainest[0]:
                    plainest = (len(told), child)
        if plainest is not None:
            return plainest[1]
        for child in self.children.get(code, ()):
            new = self._new_words(child, code)
            if not new and same is None and not is_residual(self.names[child]):
                same = (
                    child  # "Pneumonia, unspecified organism" under its namesake; "Unspecified asthma" under "Other and unspecified asthma"
                )
        return same or self._first_encounter(code)

    def _new_words(self, child: str, parent: str) -> Counter:
        """The words of the child's preferred name beyond its parent's, as written and counted ("unspecified", "ear")."""
        return Counter(words(self.names[child])) - self._remembered("words", parent, lambda: Counter(words(self.names.get(parent, ""))))

    def _first_encounter(self, code: str) -> str | None:
        """An injury's 7th character when the words say no encounter: the initial one, of a closed fracture where the
        children tell closed from open (ICD-10-CM: "A fracture not indicated as open or closed should be coded to
        closed"), the child whose name adds the fewest words to "initial encounter"."""
        first = None
        for child in self.children.get(code, ()):
            new = self._new_words(child, code)
            if INITIAL_ENCOUNTER <= new.keys() and not new.keys() & {"open"} and (first is None or sum(new.values()) < first[0]):
                first = (sum(new.values()), child)
        return first[1] if first else None

    def _encounter_told(self, code: str, said: frozenset[str]) -> tuple[str | None, str]:
        """An injury's 7th character the words tell: a subsequent encounter, a sequela, an open fracture; of the children
        that say every such word said (and "open" only if said), the one saying least the words did not ("... with
        routine healing", not "... with nonunion", unless said; type I or II, not IIIA)."""
        wanted = said & ENCOUNTER_TOLD
        best, best_key = None, None
        for child in self.children.get(code, ()) if wanted else ():
            new = self._new_words(child, code).keys()
            if not new & {"encounter", "sequela"} or not wanted <= new or ("open" in new and "open" not in wanted):
                continue
            if not new & {"subsequent", "sequela"} - wanted or new & {"subsequent", "sequela"} <= wanted:
                key = (len(new - said - ENCOUNTER_DEFAULTS), -len(new & said), len(new))
                if best_key is None or key < best_key:
                    best, best_key = child, key
        return best, (f"the words say '{' '.join(sorted(wanted))}'" if best else "")

    def is_status(self, code: str) -> bool:
        """A code of a circumstance rather than a condition: ICD-10-CM's chapter of factors influencing health status
        (Z00-Z99: "Family history of ...", "Genetic susceptibility to ...", "Encounter for ..."). Text that names the
        condition alone means the condition."""
        return self.namespace.upper() == "ICD10CM" and code.partition(":")[2].startswith(STATUS_CHAPTER)

    def says_more(self, code: str, said: frozenset[str]) -> bool:
        """Does ``code`` say something the words said do not, beyond its parent's default reading ("Family history of
        sudden cardiac death" for "sudden cardiac death"; not "Flank pain, unspecified side" for "flank pain")?"""
        parent = self.parent.get(code)
        return bool(self.unsaid(code, said)) and (parent is None or self.default_child(parent) != code)

    def leaves_side_open(self, code: str) -> bool:
        """Is ``code`` its family's "unspecified" side, where siblings tell a side ("Pain in unspecified hip")? Words that
        said a side were not coded there: "bilateral hip pain" is two codes, the right hip's and the left's."""
        parent = self.parent.get(code)
        return (
            parent is not None
            and "unspecified" in words(self.names[code])
            and not self._added(code, parent) & SIDES  # "Otitis media, unspecified, right ear" says its side
            and any(self._added(sibling, parent) & SIDES for sibling in self.children[parent] if sibling != code)
        )

    def refine(self, code: str, said: frozenset[str], equivalent: bool = False) -> tuple[str, list[str]]:
        """The code the words support, from ``code``, and each step taken in words.

        Sideways: the "unspecified" code, or any named "unspecified", gives way to the sibling the words tell ("left knee
        osteoarthritis" matches "Osteoarthritis of knee, unspecified": M17.1 holds M17.12, which says "left").
        Sideways too: a code whose own words were not said gives way to the sibling the words tell ("Pain in left toe(s)"
        for "R great toe pain"), if any.
        Up: a code whose own words (those its name adds to its parent's and siblings') were not said, or whose closest
        name misses only such words, gives way to the sibling reading "unspecified" or "without ..." that fits the words
        best; a code whose parent's own words were not said, to the parent's such sibling ("..., ruptured, unspecified"
        to "..., without rupture" for "abdominal aortic aneurysm").
        Down: a code with children takes the child whose added words were said (a side, a type), else its default child
        ("unspecified"), else stays.
        A breast is a woman's unless "male" is said; a limb's part is the limb's where the words lead to "unspecified".
        A code ``equivalent`` to what the mention was read as (a mapping's exact match: "Angioneurotic edema" for HPO's
        Angioedema), or a broader one ("Cardiomegaly" for HPO's Left ventricular hypertrophy), is not given up for words
        its name spells otherwise."""
        chosen, steps = self._refine(code, said | assumed_female(said), equivalent)
        steps = [step.replace(FEMALE_SAID, FEMALE_ASSUMED) for step in steps] if assumed_female(said) else steps
        limbs = read.limbs_to_add(said, self.word_sets(chosen)) if "unspecified" in words(self.names[chosen]) else frozenset()
        if limbs:  # a more specific code through the limb, or none
            wider, wider_steps = self.refine(code, said | limbs, equivalent)
            if wider != chosen and "unspecified" not in words(self.names[wider]):
                return wider, [*wider_steps, f"{' '.join(sorted(read.limbs_holding(said)))}: {LIMB_PART_STEP}"]
        return chosen, steps

    def _refine(self, code: str, said: frozenset[str], equivalent: bool) -> tuple[str, list[str]]:
        steps = []
        parent = self.parent.get(code)
        unspecified = parent is not None and (code == self.default_child(parent) or "unspecified" in words(self.names[code]))
        told = self._told(parent, said, code) if unspecified else None
        if told not in (None, code):
            steps.append(f"{code} -> {told}: {MORE_SAID_STEP}")
            code = told
        elif parent is not None and not equivalent and self.unsaid(code, said) and (told := self._told(parent, said, code)) is not None:
            steps.append(f"{code} -> {told}: {TOLD_STEP}")  # "Pain in left toe(s)" for "R great toe pain": the right one
            code = told
        elif parent is not None and not equivalent and self.unsaid(code, said):
            for level, above in ((code, parent), (parent, self.parent.get(parent))):  # its own words, then its parent's
                missing = self._specifics_unsaid(level, above, said) if above is not None else frozenset()
                sibling = self._fitting_default(level, above, said) if missing else None
                if sibling is not None and (level == code or self.unsaid_words(code, said) <= missing):
                    steps.append(f"{code} -> {sibling}: {UNSAID_STEP} '{' '.join(self._as_written(level, missing))}'")
                    code = sibling
                    break
        while self.children.get(code):
            chosen, why = self._encounter_told(code, said)  # before the words of "... with nonunion" tell a child
            if chosen is None:
                chosen, why = self._told_child(code, said)
            if chosen is None:
                chosen, why = self._told_grandchild(code, said)
            if chosen is None:
                chosen, why = self.default_child(code), DEFAULT_STEP
            if chosen is None:
                break
            steps.append(f"{code} -> {chosen}: {why}")
            code = chosen
        return code, steps

    def _fitting_default(self, code: str, parent: str, said: frozenset[str]) -> str | None:
        """The sibling a code whose own words were not said gives way to: of those that read "unspecified", "without ..."
        (the default readings), the one leaving fewest of its asserted words unsaid, then keeping most of those said
        ("Abdominal aortic aneurysm, without rupture" for "abdominal aortic aneurysm", not "... of unspecified site");
        None when there is none."""
        default = self.default_child(parent)
        best, best_key = None, None
        for sibling in self.children.get(parent, ()):
            new = self._new_words(sibling, parent)
            if sibling == code or is_residual(self.names[sibling]) or not DEFAULT_WORDS & new.keys():
                continue
            asserted = self.word_sets(sibling)[0] - self._unasserted(sibling)
            key = (len(asserted - said), -len(asserted & said), sibling != default, sibling)
            if best_key is None or key < best_key:
                best, best_key = sibling, key
        return best

    def _told(self, code: str, said: frozenset[str], leaving: str) -> str | None:
        """The child of ``code`` (not ``leaving``) the words say all the added words of (but a default reading, "primary"), the one saying most where several
        are ("Pain in right toe(s)" before "Pain in right foot" for "right great toe pain"), else the one whose child they
        give a side (``_told_grandchild``), if any: not "Systolic (congestive) heart failure" for "congestive heart failure"."""
        theirs = self._added(leaving, code)
        told = sorted(
            (-len(added), child)
            for child in self.children.get(code, ())
            if child != leaving
            and not is_residual(self.names[child])
            and (added := self._added(child, code) - UNSAID_READINGS) <= said
            and added - theirs
        )
        if told and (len(told) == 1 or told[0][0] < told[1][0]):
            return told[0][1]
        return self._told_grandchild(code, said)[0]

    def _told_child(self, code: str, said: frozenset[str]) -> tuple[str | None, str]:
        """The child whose added words the words said more of than they left out ("left" for a side), if any."""
        best, best_key = None, (0, 0)
        for child in self.children[code]:
            added = self._added(child, code)
            told, untold = added & said, added - said
            key = (len(told), -len(untold))
            if told and len(told) >= len(untold) and key > best_key:
                best, best_key = child, key
        if best is None:
            return None, ""
        return best, f"the words say '{' '.join(sorted(self._added(best, code) & said))}'"

    def _as_written(self, code: str, stems: frozenset[str]) -> list[str]:
        """The words of the code's names that read as ``stems`` (the rules' stems: "mutilans" for "mutilan"), in their
        order; a stem none spells as it stands."""
        written = [w for name in self.all_names(code) for w in words(name) if compared([w]) & stems]
        shown = list(dict.fromkeys(written))
        return shown + sorted(stems - compared(shown))

    def _told_grandchild(self, code: str, said: frozenset[str]) -> tuple[str | None, str]:
        """Where no child is told, the child one of whose own children differs from it by a side the words say ("left"
        of "..., left knee"), the child that leaves the fewest of its own words unsaid ("Unilateral primary
        osteoarthritis of knee" before "Unilateral post-traumatic ..."; one side says "unilateral"), and at most one:
        ICD-10-CM often tells a side a level down, but "cataract OU" is no "Drug-induced cataract, bilateral", nor
        "carcinoma of the left breast" "Malignant inflammatory neoplasm of left breast"."""
        found = set()
        told = said | ({"unilateral"} if said & {"left", "right"} else set())
        for child in self.children[code]:
            if is_residual(self.names[child]) or not self._added(child, code) - told <= UNSAID_READINGS:
                continue
            for grandchild in self.children.get(child, ()):
                added = self._added(grandchild, child)
                if added and added <= said and added <= SIDES:
                    found.add((len(self._added(child, code) - told), child))
        options = sorted(found)
        if not options or (len(options) > 1 and options[0][0] == options[1][0]):  # none, or no more reason for one than another
            return None, ""
        return options[0][1], "a level down, the words say what it holds"

    def code_first_note(self, code: str) -> str | None:
        """ICD-10-CM's "code first" note that applies to ``code`` (its own or its category's), one line."""
        note = self.code_first.get(code)
        if note is None:
            return None
        holder, text = note
        at = f" ({holder.partition(':')[2]})" if holder != code else ""
        return "code first" + at + ": " + " ".join(text.split()).lstrip(" ,;:")  # the XML's "Code first, if applicable, ..."
