"""People's words for a symptom read as the word a name uses: "sore knees" is *Knee pain*, "sore muscles" *Muscle pain*.

Why: people write "my hip hurts", "sore muscles", "achy joints", "hard to fall asleep"; terminologies say "Hip pain",
"Muscle pain", "Joint pain", "Difficulty falling asleep". The word-set match (``retrieval.exact``, words form) then
finds nothing, and the character and word scores find a name that shares the lay word itself: "sore knees" met
*Pressure sore*, "fingers hurt" *Hurthle cell adenoma*, "swollen ankles" *Finger swelling*. HPO's own synonyms pair
these words with the clinical one ("Sore throat" and "Throat pain", "Stomach ache" and "Stomach pain", "Swollen
throat" and "Throat swelling"), but only for a few body parts.

A curated list, like the clinical shorthand (``kb/data/clinical_shorthand.jsonl``): each lay word or phrase and the
word names use. A mention is read so only when its own words match no name and the reading's words do (the words
stage's ``lay_reading``); every stage then searches the reading. "Pressure sore" and "can't sleep" are names, and stay
theirs.
"""

from __future__ import annotations

# lay word or phrase, normalised ("can't" reads "can t") -> the words names use in its place
LAY_WORDS: dict[str, str] = {
    **dict.fromkeys(("hurt", "hurts", "hurting", "sore", "soreness", "ache", "aches", "aching", "achy", "achiness", "painful"), "pain"),
    **dict.fromkeys(("swollen", "puffy", "puffiness"), "swelling"),
    **dict.fromkeys(("tired", "tiredness", "exhausted", "exhaustion"), "fatigue"),
    **dict.fromkeys(("itchy", "itchiness"), "itching"),
    "dizzy": "dizziness",
    **dict.fromkeys(("nauseous", "nauseated"), "nausea"),
    "stiff": "stiffness",
    "weak": "weakness",
    "numb": "numbness",
    "tingly": "tingling",
    "sleepy": "sleepiness",
    "drowsy": "drowsiness",
    **dict.fromkeys(("hard to", "trouble", "trouble with"), "difficulty"),
    # the verb as names say it ("Difficulty falling asleep"), read whole: "fall" alone is a name of its own
    "hard to fall asleep": "difficulty falling asleep",
    **dict.fromkeys(("unable to", "can t", "cant", "cannot", "couldn t", "couldnt", "could not"), "inability to"),
    # plurals a stemmer does not take back to the word names use ("sore feet": Foot pain)
    "feet": "foot",
    "teeth": "tooth",
}
# the limbs as ICD-10-CM names them ("Cellulitis of left lower limb" for "cellulitis of the left leg"): read only where the
# lay words alone find no name, since other names say "leg" and "arm" ("Arm pain")
LIMB_WORDS = {
    **dict.fromkeys(("leg", "legs", "lower leg", "lower legs"), "lower limb"),
    **dict.fromkeys(("arm", "arms", "upper arm", "upper arms"), "upper limb"),
}
_WITH_LIMBS = {**LAY_WORDS, **LIMB_WORDS}
_LONGEST = max(len(phrase.split()) for phrase in _WITH_LIMBS)
# a mention without one of these has nothing to read
_FIRST_WORDS = {False: frozenset(p.split()[0] for p in LAY_WORDS), True: frozenset(p.split()[0] for p in _WITH_LIMBS)}


def lay_reading(words: list[str], limbs: bool = False) -> str | None:
    """The normalised mention's ``words`` with each lay word or phrase (the longest first) read as the word names use,
    and with ``limbs`` each limb as ICD-10-CM names it; None when it has none."""
    if _FIRST_WORDS[limbs].isdisjoint(words):
        return None
    table = _WITH_LIMBS if limbs else LAY_WORDS
    read, i, changed = [], 0, False
    while i < len(words):
        for width in range(min(_LONGEST, len(words) - i), 0, -1):
            phrase = " ".join(words[i : i + width])
            if phrase in table:
                read.append(table[phrase])
                i, changed = i + width, True
                break
        else:
            read.append(words[i])
            i += 1
    return " ".join(read) if changed else None
