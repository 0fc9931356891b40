"""Gilda's own server beside medlink's, on the same machine, dictionary and mentions: latency and Acc@1 of /ground.

    python benchmarks/install/get_gilda.py                     # once: gilda 1.6.1 in its own environment
    python benchmarks/service/peer.py [--seconds 30] [--users 16]

Gilda's default terms are downloaded at its first start (from its authors' storage), so its server runs here on a
terms file made from NCBI Disease's test dictionary (MEDIC + the train and dev mentions, the published setting):
``python -m gilda.app --terms FILE``. medlink serves an index built over the same dictionary (the default lexical
config). Both are asked the same NCBI test mentions (the distinct single-part ones) through the same client code:
``POST /ground`` with ``{"text": ...}``, one mention per request (no context: Gilda downloads a disambiguation model
for it). medlink's /ground answers NIL mentions with an empty list, as Gilda does; its /link first candidate,
NIL or not, is scored too. Figures: each server's start (to its first answer), sequential latency p50 / p99 (one client), Acc@1 of the
first match (an empty answer is wrong), and locust's requests/s and p50 / p99 with ``--users`` clients for
``--seconds``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for benchmarks.* imports
from benchmarks._common.data import NCBI, ncbi_kb, require  # noqa: E402
from benchmarks._common.harness import command_line, publish, scratch  # noqa: E402
from benchmarks.peers.speed import accuracy, mention_sets  # noqa: E402
from benchmarks.service.load import run_locust  # noqa: E402
from benchmarks.service.server import free_port, medlink_serve  # noqa: E402

HERE = Path(__file__).resolve().parent
LOAD_AT_START = [round(x, 2) for x in os.getloadavg()]  # the machine is shared: how busy it was when the run began
GILDA = "gilda==1.6.1"


def gilda_server(python: str, terms: Path, log: Path):
    """Gilda's server on a free port (GILDA_TERMS too: its package builds an app at import, from the default terms)."""
    port = free_port()
    started = time.perf_counter()
    command = [python, "-m", "gilda.app", "--host", "127.0.0.1", "--port", str(port), "--terms", str(terms)]
    process = subprocess.Popen(command, stdout=log.open("w"), stderr=subprocess.STDOUT, env={**os.environ, "GILDA_TERMS": str(terms)})
    url = f"http://127.0.0.1:{port}"
    while True:
        try:
            if httpx.post(f"{url}/ground", json={"text": "x"}, timeout=5).status_code == 200:
                return process, url, time.perf_counter() - started
        except httpx.TransportError:
            pass
        if process.poll() is not None:
            raise SystemExit(f"Gilda's server stopped ({process.returncode}): see {log}")
        time.sleep(0.1)


def first_ids(url: str, texts: list[str]) -> tuple[list[str | None], list[float]]:
    """The first match's id (as the KB writes it: a bare MeSH or OMIM id) and the latency of each request, in ms."""
    firsts, times = [], []
    with httpx.Client(base_url=url, timeout=60) as http:
        for text in texts:
            started = time.perf_counter()
            matches = http.post("/ground", json={"text": text}).json()
            times.append((time.perf_counter() - started) * 1000)
            firsts.append(matches[0]["term"]["id"] if matches else None)
    return firsts, times


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 2)


def row(name: str, start: float, firsts, times, gold, same, load: dict) -> dict:
    return {"server": name, "start_seconds": round(start, 2), "mentions": len(gold), "acc1": accuracy(firsts, gold, same),
            "answered": sum(f is not None for f in firsts), "sequential_p50_ms": round(statistics.median(times), 2),
            "sequential_p99_ms": percentile(times, 0.99), "load": load}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=int, default=30)
    parser.add_argument("--users", type=int, default=16)
    parser.add_argument("--workdir", type=Path, default=scratch("medlink-bench-service-peer"))
    parser.add_argument("--gilda-python", default=str(scratch("medlink-bench-gilda") / "bin" / "python"))
    args = parser.parse_args()
    from medlink.linking.index import build_index

    args.workdir.mkdir(parents=True, exist_ok=True)
    kb = ncbi_kb(args.workdir, "test")
    from medlink.eval.metrics import equivalent_ids_from_kb

    same = equivalent_ids_from_kb(kb)  # Acc@1 as 'medlink eval' counts it: a gold id, or one of its alt ids
    index = args.workdir / "medic-index"
    if not (index / "manifest.json").is_file():
        build_index(kb, index)
    terms = args.workdir / "gilda-medic-terms.tsv.gz"
    subprocess.run([args.gilda_python, str(HERE / "gilda_terms.py"), str(require(NCBI / "test_dictionary.txt")), str(terms)], check=True)
    items = mention_sets(kb, 0)["ncbi_test_parts"]
    texts, gold = [t for t, _ in items], [g for _, g in items]
    folder = Path(tempfile.mkdtemp(prefix="medlink-bench-peer-"))
    data = folder / "mentions.json"
    data.write_text(json.dumps({"mentions": texts, "abstracts": []}))
    rows = []
    process, url, start = gilda_server(args.gilda_python, terms, folder / "gilda.log")
    try:
        firsts, times = first_ids(url, texts)
        rows.append(row(GILDA, start, firsts, times, gold, same, run_locust(url, "ground", args.users, args.seconds, data, folder)))
    finally:
        process.terminate()
        process.wait(timeout=60)
    print(json.dumps(rows[-1]), flush=True)
    with medlink_serve(str(index), "--workers", "2", log=folder / "medlink.log") as (url, start, _process):
        firsts, times = first_ids(url, texts)
        rows.append(row("medlink serve --workers 2", start, firsts, times, gold, same, run_locust(url, "ground", args.users, args.seconds, data, folder)))
        linked = httpx.post(f"{url}/link", json={"mentions": texts, "top_k": 1}, timeout=600).json()  # NIL or not: the first candidate
        rows[-1]["acc1_first_candidate_nil_ignored"] = accuracy([r["candidates"][0]["id"] if r["candidates"] else None for r in linked], gold, same)
    print(json.dumps(rows[-1]), flush=True)
    publish(
        "service_peer_gilda",
        {
            "command": command_line(__file__, sys.argv[1:]),
            "load_average_at_start": LOAD_AT_START,
            "dictionary": "NCBI Disease test dictionary (MEDIC + train and dev mentions)",
            "mentions": "NCBI Disease test, distinct single-part mentions",
            "note": "Gilda's default terms need a download at first start; its server here reads a terms file made from the same dictionary",
            "rows": rows,
        },
    )


if __name__ == "__main__":
    main()
