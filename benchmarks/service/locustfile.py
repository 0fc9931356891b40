"""The load locust runs against a medlink service (benchmarks/service/load.py starts both): one scenario per run.

SCENARIO=link: POST /link with 10 NCBI Disease test mentions per request, the next 10 each time.
SCENARIO=annotate: POST /annotate with one NCBI Disease test abstract (title and text) per request, the next one each time.
SCENARIO=ground: POST /ground with one mention per request (Gilda's endpoint, for medlink and Gilda's own server alike).
Data: the JSON file named by MEDLINK_BENCH_DATA ({"mentions": [...], "abstracts": [...]}).
"""

from __future__ import annotations

import itertools
import json
import os
import threading

from locust import FastHttpUser, constant, task

DATA = json.loads(open(os.environ["MEDLINK_BENCH_DATA"], encoding="utf-8").read())
SCENARIO = os.environ.get("SCENARIO", "link")
_next = itertools.count()
_lock = threading.Lock()


def turn() -> int:
    with _lock:
        return next(_next)


class Client(FastHttpUser):
    wait_time = constant(0)  # each client sends its next request as soon as the last is answered

    @task
    def one_request(self) -> None:
        n = turn()
        if SCENARIO == "link":
            mentions = DATA["mentions"]
            start = (n * 10) % len(mentions)
            body = {"mentions": (mentions + mentions[:10])[start : start + 10]}
            name = "/link (10 mentions)"
        elif SCENARIO == "annotate":
            body = {"text": DATA["abstracts"][n % len(DATA["abstracts"])]}
            name = "/annotate (1 abstract)"
        else:
            body = {"text": DATA["mentions"][n % len(DATA["mentions"])]}
            name = "/ground (1 mention)"
        path = name.split(" ")[0]
        with self.client.post(path, json=body, name=name, catch_response=True) as response:
            if response.status_code != 200:
                response.failure(f"status {response.status_code}")
