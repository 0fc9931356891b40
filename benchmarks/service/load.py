"""The service under load on loopback: locust headless, 16 clients for 60 s, the default lexical index.

    pip install locust                                   # a benchmark tool, not a dependency of medlink
    python benchmarks/service/load.py [--index default] [--workers 1,2] [--seconds 60] [--users 16] [--starts 3]

For each worker count: `/link` with 10 NCBI Disease test mentions per request (the next 10 each time) and
`/annotate` with one NCBI Disease test abstract per request (the dictionary finder), each its own run: requests,
errors, requests per second, p50 / p95 / p99 latency (locust's figures, ms), and each worker's peak RSS. Worker start:
``--starts`` fresh ``medlink serve`` processes timed from the command to the first healthy answer, with the index
load the worker itself measured (/info's load_seconds). One client, one request at a time: /link over HTTP beside the
same linking in this process (what the service adds). locust runs on the same 2 cores as the service.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for benchmarks.* imports
from benchmarks._common.harness import SHARED_DATA, command_line, publish  # noqa: E402
from benchmarks.service.server import medlink_serve  # noqa: E402

HERE = Path(__file__).resolve().parent
LOAD_AT_START = [round(x, 2) for x in os.getloadavg()]  # the machine is shared: how busy it was when the run began
NCBI_TEST = SHARED_DATA / "ncbi-disease-pubtator" / "NCBItestset_corpus.txt"
NAMES = {"link": "/link (10 mentions)", "annotate": "/annotate (1 abstract)", "ground": "/ground (1 mention)"}


def ncbi_test_data(out: Path) -> Path:
    """NCBI Disease test's mentions (every annotation's text, in corpus order) and abstracts (title and text)."""
    from medlink.corpora.document_files import read_documents

    if not NCBI_TEST.is_file():
        raise SystemExit(f"benchmark data not found: {NCBI_TEST}")
    documents = list(read_documents(NCBI_TEST, "pubtator"))
    data = {"mentions": [a.text for d in documents for a in d.annotations], "abstracts": [d.text for d in documents]}
    out.write_text(json.dumps(data), encoding="utf-8")
    return out


def worker_peak_rss_mb(process: subprocess.Popen) -> list[float]:
    """Each serving process's peak RSS (VmHWM): the process itself with one worker, its worker children with several."""
    parent = psutil.Process(process.pid)
    workers = [c for c in parent.children(recursive=True) if "spawn_main" in " ".join(c.cmdline())] or [parent]
    peaks = []
    for worker in workers:
        for line in Path(f"/proc/{worker.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                peaks.append(round(int(line.split()[1]) / 1024, 1))
    return peaks


def run_locust(url: str, scenario: str, users: int, seconds: int, data: Path, folder: Path) -> dict:
    """locust headless against ``url``; its summary row for the scenario's requests."""
    prefix = folder / f"{scenario}-{users}u"
    command = ["locust", "-f", str(HERE / "locustfile.py"), "--headless", "-u", str(users), "-r", str(users), "-t", f"{seconds}s"]
    command += ["--host", url, "--csv", str(prefix), "--only-summary", "--exit-code-on-error", "0", "--loglevel", "WARNING"]
    subprocess.run(command, env={**os.environ, "SCENARIO": scenario, "MEDLINK_BENCH_DATA": str(data)}, check=True, capture_output=True)
    with open(f"{prefix}_stats.csv", encoding="utf-8") as handle:
        row = next(r for r in csv.DictReader(handle) if r["Name"] == NAMES[scenario])
    return {
        "requests": int(row["Request Count"]),
        "errors": int(row["Failure Count"]),
        "requests_per_second": round(float(row["Requests/s"]), 1),
        "p50_ms": float(row["50%"]),
        "p95_ms": float(row["95%"]),
        "p99_ms": float(row["99%"]),
        "mean_ms": round(float(row["Average Response Time"]), 1),
    }


def sequential(url: str, index: str, data: Path, requests: int) -> dict:
    """One client, one request at a time: /link's latency over HTTP beside the same call in this process (the library
    alone), p50 of each, so what HTTP and the service add shows apart from linking itself."""
    import medlink
    from medlink.linking.output import result_json

    mentions = json.loads(data.read_text())["mentions"]
    batches = [(mentions * 2)[(n * 10) % len(mentions) :][:10] for n in range(requests)]
    linker = medlink.load_index(index).prepare()
    over_http, in_process = [], []
    with httpx.Client(base_url=url, timeout=60) as http:
        for batch in batches:
            started = time.perf_counter()
            http.post("/link", json={"mentions": batch}).raise_for_status()
            over_http.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            json.dumps([result_json(r) for r in linker.link(batch, k=5)])
            in_process.append((time.perf_counter() - started) * 1000)
    return {"requests": requests, "http_p50_ms": round(statistics.median(over_http), 1), "library_p50_ms": round(statistics.median(in_process), 1)}


def start_times(index: str, starts: int) -> dict:
    runs = []
    for _ in range(starts):
        with medlink_serve(index) as (url, seconds, _process):
            runs.append({"seconds_to_healthy": round(seconds, 2), "index_load_seconds": httpx.get(f"{url}/info", timeout=30).json()["load_seconds"]})
    return {
        "runs": runs,
        "seconds_to_healthy_median": statistics.median(r["seconds_to_healthy"] for r in runs),
        "index_load_seconds_median": statistics.median(r["index_load_seconds"] for r in runs),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--index", default="default")
    parser.add_argument("--workers", default="1,2", help="Worker counts to run, comma-separated.")
    parser.add_argument("--scenarios", default="link,annotate")
    parser.add_argument("--seconds", type=int, default=60)
    parser.add_argument("--users", type=int, default=16)
    parser.add_argument("--starts", type=int, default=3)
    parser.add_argument("--sequential", type=int, default=200, help="Requests of the one-client run (HTTP beside the library).")
    parser.add_argument("--name", default="service_load", help="The results file: benchmarks/results/NAME.json.")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="medlink-bench-service-"))
    data = ncbi_test_data(folder / "ncbi-test.json")
    started = start_times(args.index, args.starts) if args.starts else None
    print(json.dumps({"start": started}), flush=True)
    rows, one_client = [], None
    for workers in (int(w) for w in args.workers.split(",")):
        with medlink_serve(args.index, "--workers", str(workers), log=folder / f"serve-{workers}.log") as (url, _seconds, process):
            if workers == 1 and args.sequential:
                one_client = sequential(url, args.index, data, args.sequential)
                print(json.dumps({"one_client": one_client}), flush=True)
            for scenario in [s for s in args.scenarios.split(",") if s]:
                httpx.post(f"{url}/annotate", json={"text": "warm up: chest pain"}, timeout=60)
                measured = run_locust(url, scenario, args.users, args.seconds, data, folder)
                rows.append({"workers": workers, "scenario": NAMES[scenario], "users": args.users, "seconds": args.seconds,
                             **measured, "worker_peak_rss_mb": worker_peak_rss_mb(process)})  # fmt: skip
                print(json.dumps(rows[-1]), flush=True)
    publish(
        args.name,
        {
            "command": command_line(__file__, sys.argv[1:]),
            "load_average_at_start": LOAD_AT_START,
            "index": args.index,
            "tool": "locust (headless, FastHttpUser, no wait between requests), on the same machine as the service",
            "data": "NCBI Disease test (PubTator): its mentions, 10 per /link request; its abstracts, 1 per /annotate request",
            "start": started,
            "one_client": one_client,
            "rows": rows,
        },
    )


if __name__ == "__main__":
    main()
