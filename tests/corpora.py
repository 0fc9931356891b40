"""Small corpora of the organ KB's conditions (``test_calibration.organ_kb``) for the annotate engines' tests."""

import json
from pathlib import Path

from tests.test_calibration import CONDITIONS, ORGANS


def text(number: int) -> str:
    (organ, adjective), condition = ORGANS[number % len(ORGANS)], CONDITIONS[number % len(CONDITIONS)]
    other = CONDITIONS[(number * 7) % len(CONDITIONS)]
    return (f"Patient {number} denies {organ} {condition}. {adjective.capitalize()} {other} ({organ[0].upper()}X) was seen; "
            f"{organ[0].upper()}X grew. Mother had {organ} and {ORGANS[(number + 3) % len(ORGANS)][0]} {other}.")


def jsonl_corpus(path: Path, count: int, prefix: str = "d", extra: tuple = ()) -> Path:
    records = [{"id": f"{prefix}{n}", "text": text(n)} for n in range(count)]
    records.insert(3, {"id": "passages", "passages": [{"offset": 0, "text": "Liver failure.", "type": "title"},
                                                      {"offset": 15, "text": text(99), "type": "abstract"}]})
    for position, record in extra:
        records.insert(position, record)
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    return path
