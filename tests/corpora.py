"""Small corpora of the organ KB's conditions (``test_calibration.organ_kb``) for the annotate engines' tests."""

import json
import subprocess
import time
from pathlib import Path

from medlink.batch.resume import progress_path
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


def documents_done_when_running(process: subprocess.Popen, out: Path, at_least: int, poll: float = 0.05, within: float = 240) -> int:
    """How many documents the run ``process`` has recorded for ``out`` once it recorded ``at_least`` (or gave up waiting);
    the run is asserted to be still running then, ready to be killed half-way."""
    done = 0
    deadline = time.monotonic() + within
    while time.monotonic() < deadline and process.poll() is None and done < at_least:
        time.sleep(poll)
        try:
            done = json.loads(progress_path(out).read_text())["progress"]["documents"]
        except (OSError, ValueError, KeyError):
            pass
    assert process.poll() is None, process.communicate()[1][-3000:]
    return done
